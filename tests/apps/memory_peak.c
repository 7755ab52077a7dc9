/* Known allocations in two contexts on one device, for the device memory
 * counters and the report's peak (tests/run.sh t_device_memory_peak):
 *   context 1: a 1 MiB, b 2 MiB; a released; c 4 MiB        (its own peak 6 MiB)
 *   context 2: e 3 MiB while b and c live                    (the device's peak 9 MiB)
 *   then b, c and e released; d 1 MiB in context 1, held at exit.
 * The peak's holders, largest first: c 4 MiB, e 3 MiB, b 2 MiB. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define MIB (1024 * 1024)
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static cl_mem make(cl_context c, size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    return m;
}

int main(void)
{
    cl_platform_id p;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &p, NULL));
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context c1 = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_context c2 = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(c1, dev, NULL, &err);   /* the device described */
    CHECK(err);
    cl_mem a = make(c1, 1 * MIB), b = make(c1, 2 * MIB);
    CHECK(clReleaseMemObject(a));
    cl_mem c = make(c1, 4 * MIB);
    cl_mem e = make(c2, 3 * MIB);
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseMemObject(c));
    CHECK(clReleaseMemObject(e));
    cl_mem d = make(c1, 1 * MIB);
    (void)d;                    /* held at exit */
    CHECK(clReleaseContext(c2));
    CHECK(clReleaseCommandQueue(q));
    puts("ok");
    return 0;
}
