/* The same kernel launched with different work-group (local) sizes (seed 001:
 * a multiple of the warp/wavefront, at least 64 work-items):
 *   workgroup          local size 100 (not a multiple of the kernel's
 *                      preferred multiple) and NULL (left to the driver)
 *   workgroup --fixed  local sizes 128 and 256
 * The fix is the local size alone: cltrace try --local saxpy=128 -- build/examples/workgroup */
#include "../common/example.h"

/* Arithmetic per work-item (64 multiply-adds on a CPU, 4096 on a GPU), so
 * the kernel's time goes with the warps it issues: what an idle lane costs
 * shows. */
static const char *src =
    "kernel void saxpy(global float *y, global const float *x, float a, int n, int steps) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) {\n"
    "        float v = x[i];\n"
    "        for (int k = 0; k < steps; k++)\n"
    "            v = a * v + 0.5f;\n"
    "        y[i] = v + y[i];\n"
    "    }\n"
    "}\n";

static void launch(struct ex *e, cl_kernel k, size_t n, const size_t *lws)
{
    size_t gws = lws ? (n + *lws - 1) / *lws * *lws : n;   /* rounded up to whole groups */
    CHECK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &gws, lws, 0, NULL, NULL));
}

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    const int N = 4100 * 256;   /* a multiple of 100, 128 and 256: every version launches N work-items */
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 100) * 0.01f;
        y[i] = 1.0f;
    }
    cl_program p = ex_build(&e, src, "-cl-mad-enable");
    cl_kernel k = ex_kernel(p, "saxpy");
    cl_mem dx = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof(float) * N, x);
    cl_mem dy = ex_buffer(&e, CL_MEM_READ_WRITE, sizeof(float) * N, y);
    float a = 0.5f;
    CHECK(clSetKernelArg(k, 0, sizeof dy, &dy));
    CHECK(clSetKernelArg(k, 1, sizeof dx, &dx));
    CHECK(clSetKernelArg(k, 2, sizeof a, &a));
    CHECK(clSetKernelArg(k, 3, sizeof N, &N));
    cl_device_type type = 0;
    CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    int steps = type & CL_DEVICE_TYPE_CPU ? 64 : 4096;
    CHECK(clSetKernelArg(k, 4, sizeof steps, &steps));
    size_t l100 = 100, l128 = 128, l256 = 256;
    for (int r = 0; r < 5; r++)         /* 5 each: device times to compare */
        launch(&e, k, N, e.fixed ? &l128 : &l100);
    for (int r = 0; r < 5; r++)
        launch(&e, k, N, e.fixed ? &l256 : NULL);
    CHECK(clEnqueueReadBuffer(e.q, dy, CL_TRUE, 0, sizeof(float) * N, y, 0, NULL, NULL));
    ex_checksum("y", y, N);
    clReleaseMemObject(dx);
    clReleaseMemObject(dy);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    free(x);
    free(y);
    return 0;
}
