/* A buffer made ten frames deep and never released: the text report shows
 * the first frames of its creation stack, JSON and HTML all of them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

__attribute__((noinline)) static cl_mem nest(cl_context c, int depth)
{
    if (depth) {
        cl_mem m = nest(c, depth - 1);
        __asm__ volatile("" ::: "memory");   /* not a tail call: each frame stays */
        return m;
    }
    cl_int err;
    return clCreateBuffer(c, CL_MEM_READ_WRITE, 64, NULL, &err);
}

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    nest(c, 8);
    clReleaseContext(c);
    return 0;
}
