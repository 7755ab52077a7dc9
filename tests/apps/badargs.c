/* Bad input from the app: NULL pointers, NULL handles, unknown enums and
 * flags, absurd sizes and counts. Prints every return code: the output must
 * be the same with and without the tracer, and the tracer must not crash. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>

#define SHOW(x) printf("%-70s %d\n", #x, (int)(x))

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int err = 0;
    int x = 1;
    char buf[64];
    size_t gws = 64, huge = (size_t)1 << 62;
    setvbuf(stdout, NULL, _IONBF, 0);
    SHOW(clGetPlatformIDs(0, NULL, NULL));
    SHOW(clGetPlatformIDs(1, &p, NULL));
    SHOW(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    SHOW(clGetDeviceInfo(NULL, CL_DEVICE_NAME, sizeof buf, buf, NULL));
    SHOW(clGetDeviceInfo(d, 0xDEAD, sizeof buf, buf, NULL));
    SHOW(clGetDeviceInfo(d, CL_DEVICE_NAME, 1, buf, NULL));
    cl_context none = clCreateContext(NULL, 0, NULL, NULL, NULL, &err);
    SHOW(none == NULL);
    SHOW(err);
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0xFFFF0000, &err);
    SHOW(err);
    q = clCreateCommandQueueWithProperties(ctx, d, NULL, &err);
    cl_mem big = clCreateBuffer(ctx, CL_MEM_READ_WRITE, huge, NULL, &err);
    SHOW(big == NULL);
    SHOW(err);
    clCreateBuffer(ctx, 0xFFFF0000, 16, NULL, &err);
    SHOW(err);
    clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, 16, NULL, &err);
    SHOW(err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 256, NULL, &err);
    clCreateProgramWithSource(ctx, 0, NULL, NULL, &err);
    SHOW(err);
    SHOW(clBuildProgram(NULL, 0, NULL, NULL, NULL, NULL));
    const char *src = "__kernel void k(__global int *a) { a[get_global_id(0)] = 1; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    SHOW(clBuildProgram(prog, 1, &d, "-bogus-option", NULL, NULL));
    SHOW(clBuildProgram(prog, 1, &d, NULL, NULL, NULL));
    clCreateKernel(prog, NULL, &err);
    SHOW(err);
    cl_kernel k = clCreateKernel(prog, "k", &err);
    SHOW(clSetKernelArg(k, 0, (size_t)1 << 40, &x));
    SHOW(clSetKernelArg(k, 0, sizeof m, NULL));
    SHOW(clSetKernelArg(k, 7, sizeof m, &m));
    SHOW(clSetKernelArg(k, 0, sizeof m, &m));
    SHOW(clEnqueueNDRangeKernel(q, k, 1000, NULL, &gws, NULL, 0, NULL, NULL));
    /* (not here: a NULL global size, or a wait-list count with a NULL list,
     * or a NULL kernel, crash PoCL 3.1 itself) */
    SHOW(clEnqueueReadBuffer(q, m, CL_TRUE, 0, huge, buf, 0, NULL, NULL));
    SHOW(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 16, NULL, 0, NULL, NULL));
    SHOW(clEnqueueWriteBuffer(q, NULL, CL_TRUE, 0, 16, buf, 0, NULL, NULL));
    SHOW(clWaitForEvents(3, NULL));
    SHOW(clWaitForEvents(0, NULL));
    SHOW(clGetEventProfilingInfo(NULL, CL_PROFILING_COMMAND_START, 8, buf, NULL));
    SHOW(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, 1, buf, NULL));
    SHOW(clGetCommandQueueInfo(NULL, CL_QUEUE_PROPERTIES_ARRAY, sizeof buf, buf, NULL));
    SHOW(clReleaseMemObject(NULL));
    SHOW(clRetainKernel(NULL));
    SHOW(clFinish(q));
    SHOW(clReleaseKernel(k));
    SHOW(clReleaseProgram(prog));
    SHOW(clReleaseMemObject(m));
    SHOW(clReleaseCommandQueue(q));
    SHOW(clReleaseContext(ctx));
    SHOW(clGetExtensionFunctionAddressForPlatform(p, NULL) == NULL);
    SHOW(clGetExtensionFunctionAddressForPlatform(NULL, "clNoSuchThing") == NULL);
    return 0;
}
