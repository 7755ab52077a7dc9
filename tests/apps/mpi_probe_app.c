/* A program linked with an MPI library (tests/apps/fakempi.c) whose MPI_Init
 * probes OpenCL; the program itself then makes one failing call of its own. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>

int MPI_Init(int *argc, char ***argv);
int MPI_Finalize(void);

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 0, NULL, &e);       /* PROGRAM-LINE: size 0 fails */
    printf("clCreateBuffer of 0 bytes: %d\n", e);
    if (m)
        clReleaseMemObject(m);
    clReleaseContext(c);
    return MPI_Finalize();
}
