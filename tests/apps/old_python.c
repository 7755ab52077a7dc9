/* A program that looks like an interpreter cltrace cannot read: it exports
 * Py_GetVersion saying CPython 3.10 (and no Py_Version), then calls OpenCL
 * and fails once: one line says why there are no Python frames, and the
 * stacks are C frames as before (tests/python.sh). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>

const char *Py_GetVersion(void)
{
    return "3.10.12 (main, Nov 20 2023) [GCC 11.4.0]";
}

int main(void)
{
    cl_platform_id p;
    cl_int e = clGetPlatformIDs(1, &p, NULL);
    cl_context c = clCreateContext(NULL, 0, NULL, NULL, NULL, &e);     /* fails: no devices */
    printf("clCreateContext with no devices: %d\n", c ? 0 : e);
    return 0;
}
