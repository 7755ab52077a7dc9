/* Objects made and released over and over: `churn N`. Each round creates a
 * queue, a buffer and a kernel, writes, launches, finishes and releases
 * them: the tracer must draw every command (more queues than it keeps at
 * once) and keep its own memory bounded. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    const char *src = "__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }";
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 1;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &d, NULL, NULL, NULL))
        return 1;
    int host[64] = { 0 };
    for (int i = 0; i < n; i++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, &err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
        cl_kernel k = clCreateKernel(prog, "k", &err);
        size_t gws = 64;
        clSetKernelArg(k, 0, sizeof b, &b);
        clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL);
        clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL);
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
        clReleaseKernel(k);
        clReleaseMemObject(b);
        clReleaseCommandQueue(q);
    }
    printf("host[0]=%d\n", host[0]);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    return 0;
}
