/* A real OpenCL program: buffers, transfers, a kernel, events. Prints its
 * results, so runs with and without the shim can be compared byte for byte. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

/* The platform whose name contains $OCL_PLATFORM (default: the first). */
static cl_platform_id pick_platform(void)
{
    cl_platform_id ps[8];
    cl_uint n = 0;
    const char *want = getenv("OCL_PLATFORM");
    CHECK(clGetPlatformIDs(8, ps, &n));
    for (cl_uint i = 0; want && i < n; i++) {
        char name[256];
        CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (strstr(name, want))
            return ps[i];
    }
    return ps[0];
}

static const char *src =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c, const unsigned n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1024;
    int iters = argc > 2 ? atoi(argv[2]) : 3;
    cl_platform_id plat;
    cl_device_id dev;
    plat = pick_platform();
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    char name[256];
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "vadd", &err);
    CHECK(err);
    /* an error the app expects: the shim must return exactly this code */
    cl_kernel bad = clCreateKernel(prog, "no_such_kernel", &err);
    printf("missing kernel: %p err=%d\n", (void *)bad, err);

    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    for (unsigned i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }
    cl_mem ba = clCreateBuffer(ctx, CL_MEM_READ_ONLY, n * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem bb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), b, &err);
    CHECK(err);
    cl_mem bc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof ba, &ba));
    CHECK(clSetKernelArg(k, 1, sizeof bb, &bb));
    CHECK(clSetKernelArg(k, 2, sizeof bc, &bc));
    CHECK(clSetKernelArg(k, 3, sizeof n, &n));
    double sum = 0;
    for (int it = 0; it < iters; it++) {
        cl_event w, kev;
        CHECK(clEnqueueWriteBuffer(q, ba, CL_FALSE, 0, n * sizeof(float), a, 0, NULL, &w));
        size_t gws = (n + 63) / 64 * 64, lws = 64;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, &lws, 1, &w, &kev));
        CHECK(clEnqueueReadBuffer(q, bc, CL_TRUE, 0, n * sizeof(float), c, 1, &kev, NULL));
        CHECK(clReleaseEvent(w));
        CHECK(clReleaseEvent(kev));
        for (unsigned i = 0; i < n; i++)
            sum += c[i];
    }
    CHECK(clFinish(q));
    printf("n=%u iters=%d sum=%.1f\n", n, iters, sum);
    /* invalid arguments: same codes with and without the shim */
    printf("null kernel setarg: %d\n", clSetKernelArg(NULL, 0, 4, &n));
    printf("bad index: %d\n", clSetKernelArg(k, 99, 4, &n));
    printf("null queue finish: %d\n", clFinish(NULL));
    clReleaseMemObject(ba);
    clReleaseMemObject(bb);
    clReleaseMemObject(bc);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(a);
    free(b);
    free(c);
    return 0;
}
