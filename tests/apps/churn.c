/* Objects made and released over and over: `churn N`. Each round creates a
 * queue, a buffer and a kernel, writes, launches, finishes and releases
 * them: the tracer must draw every command (more queues than it keeps at
 * once) and keep its own memory bounded. `churn N contexts`: each round has
 * a context (and program) of its own, released at its end, while cltrace's
 * collector may be taking clock markers in it (capture/clock.c); it prints
 * the context's reference count. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    const char *src = "__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }";
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 1;
    int contexts = argc > 2 && !strcmp(argv[2], "contexts");
    cl_context ctx = NULL;
    cl_program prog = NULL;
    int host[64] = { 0 };
    for (int i = 0; i < n; i++) {
        if (!ctx) {
            ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
            prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
            if (clBuildProgram(prog, 1, &d, NULL, NULL, NULL))
                return 1;
        }
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, &err);
        if (contexts) {     /* what the app reads of it is what it would read untraced */
            cl_uint refs = 0;
            clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
            printf("round %d: context references %u\n", i, refs);
        }
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
        if (contexts || i == n - 1) {
            clReleaseProgram(prog);
            clReleaseContext(ctx);
            ctx = NULL;
        }
    }
    printf("host[0]=%d\n", host[0]);
    return 0;
}
