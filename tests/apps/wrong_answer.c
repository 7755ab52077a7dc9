/* A small solver whose answer can go wrong in the ways cltrace's
 * fingerprints find (tests/fingerprint.sh):
 *   wrong_answer [--nan-at N] [--scale C] [--reorder] [--host-no-access]
 * Each of 8 steps: clear (fill) the flux buffer, `flux` (a float kernel
 * writing it from the state), `update` (the state from the flux: the one
 * that goes wrong), `count` (an int kernel). With --nan-at N, `update`'s
 * N-th launch writes a NaN at element 3 (0/0), and every later step carries
 * it. --scale changes a constant of `flux` (a second build that differs
 * from its first command on); --reorder sums `flux`'s terms in another order
 * (results that differ by rounding only). --host-no-access makes the state
 * a buffer the host may not read. Prints a checksum of the state.
 * OCL_PLATFORM picks the platform whose name contains it (default: the first). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define STEPS 8
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static const char *src =
    "kernel void flux(global const float *x, global float *f, float scale) {\n"
    "    int i = get_global_id(0);\n"
    "    float a = x[i] * 0.1f, b = x[(i + 1) % get_global_size(0)] * scale, c = 1e-3f * (float)i;\n"
    "#ifdef REORDER\n"
    "    f[i] = a + (b + c);\n"
    "#else\n"
    "    f[i] = (a + b) + c;\n"
    "#endif\n"
    "}\n"
    "kernel void update(global float *x, global const float *f, int step, int nan_at) {\n"
    "    int i = get_global_id(0);\n"
    "    float d = (float)(step + 1 - nan_at);\n"
    "    float one = (i == 3 && nan_at > 0) ? d / d : 1.0f;\n"
    "    x[i] = (x[i] + 0.25f * f[i]) * one;\n"
    "}\n"
    "kernel void count(global const float *x, global int *n) {\n"
    "    int i = get_global_id(0);\n"
    "    n[i] = x[i] > 1.0f;\n"
    "}\n";

int main(int argc, char **argv)
{
    int nan_at = 0, reorder = 0, no_access = 0;
    float scale = 0.5f;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nan-at") && i + 1 < argc)
            nan_at = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = (float)atof(argv[++i]);
        else if (!strcmp(argv[i], "--reorder"))
            reorder = 1;
        else if (!strcmp(argv[i], "--host-no-access"))
            no_access = 1;
        else {
            fprintf(stderr, "usage: wrong_answer [--nan-at N] [--scale C] [--reorder] [--host-no-access]\n");
            return 2;
        }
    }
    cl_platform_id plats[8], plat;
    cl_uint np = 0;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(8, plats, &np));
    plat = plats[0];
    for (cl_uint i = 0; getenv("OCL_PLATFORM") && i < np; i++) {
        char name[256] = "";
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, getenv("OCL_PLATFORM")))
            plat = plats[i];
    }
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, reorder ? "-DREORDER" : "", NULL, NULL));
    cl_kernel kf = clCreateKernel(p, "flux", &err);
    CHECK(err);
    cl_kernel ku = clCreateKernel(p, "update", &err);
    CHECK(err);
    cl_kernel kc = clCreateKernel(p, "count", &err);
    CHECK(err);
    float *host = malloc(N * sizeof *host);
    for (int i = 0; i < N; i++)
        host[i] = (float)(i % 97) * 0.01f;
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (no_access ? CL_MEM_HOST_NO_ACCESS | CL_MEM_COPY_HOST_PTR : 0),
                              N * sizeof(float), no_access ? host : NULL, &err);
    CHECK(err);
    cl_mem f = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem n = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    CHECK(err);
    if (!no_access)
        CHECK(clEnqueueWriteBuffer(q, x, CL_FALSE, 0, N * sizeof(float), host, 0, NULL, NULL));
    size_t g = N, l = 64;
    for (int step = 0; step < STEPS; step++) {
        float zero = 0;
        CHECK(clEnqueueFillBuffer(q, f, &zero, sizeof zero, 0, N * sizeof(float), 0, NULL, NULL));
        CHECK(clSetKernelArg(kf, 0, sizeof x, &x));
        CHECK(clSetKernelArg(kf, 1, sizeof f, &f));
        CHECK(clSetKernelArg(kf, 2, sizeof scale, &scale));
        CHECK(clEnqueueNDRangeKernel(q, kf, 1, NULL, &g, &l, 0, NULL, NULL));
        CHECK(clSetKernelArg(ku, 0, sizeof x, &x));
        CHECK(clSetKernelArg(ku, 1, sizeof f, &f));
        CHECK(clSetKernelArg(ku, 2, sizeof step, &step));
        CHECK(clSetKernelArg(ku, 3, sizeof nan_at, &nan_at));
        CHECK(clEnqueueNDRangeKernel(q, ku, 1, NULL, &g, &l, 0, NULL, NULL));
        CHECK(clSetKernelArg(kc, 0, sizeof x, &x));
        CHECK(clSetKernelArg(kc, 1, sizeof n, &n));
        CHECK(clEnqueueNDRangeKernel(q, kc, 1, NULL, &g, &l, 0, NULL, NULL));
    }
    double sum = 0;
    if (!no_access) {
        CHECK(clEnqueueReadBuffer(q, x, CL_TRUE, 0, N * sizeof(float), host, 0, NULL, NULL));
        for (int i = 0; i < N; i++)
            sum += host[i];
    }
    CHECK(clFinish(q));
    printf("checksum %.9g\n", sum);
    clReleaseMemObject(x);
    clReleaseMemObject(f);
    clReleaseMemObject(n);
    clReleaseKernel(kf);
    clReleaseKernel(ku);
    clReleaseKernel(kc);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(host);
    return 0;
}
