/* Waiting after every launch vs queueing the work (seed 001: keep the device
 * busy; synchronize only when the host needs the data):
 *   sync          each of 32 steps: launch, then a blocking read of the result
 *   sync --fixed  32 launches queued back to back, one blocking read at the end */
#include "../common/example.h"

static const char *src =
    "kernel void relax(global float *u, global const float *f, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i > 0 && i < n - 1) u[i] = 0.5f * u[i] + 0.25f * (f[i - 1] + f[i + 1]);\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    const int N = 1 << 18, STEPS = 32;
    float *u = malloc(sizeof(float) * N), *f = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        u[i] = 0.0f;
        f[i] = (float)(i % 10);
    }
    cl_program p = ex_build(&e, src, NULL);
    cl_kernel k = ex_kernel(p, "relax");
    cl_mem du = ex_buffer(&e, CL_MEM_READ_WRITE, sizeof(float) * N, u);
    cl_mem df = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof(float) * N, f);
    CHECK(clSetKernelArg(k, 0, sizeof du, &du));
    CHECK(clSetKernelArg(k, 1, sizeof df, &df));
    CHECK(clSetKernelArg(k, 2, sizeof N, &N));
    size_t gws = N, lws = 128;
    for (int s = 0; s < STEPS; s++) {
        CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &gws, &lws, 0, NULL, NULL));
        if (!e.fixed)   /* the host does not need u until the end */
            CHECK(clEnqueueReadBuffer(e.q, du, CL_TRUE, 0, sizeof(float) * N, u, 0, NULL, NULL));
    }
    if (e.fixed)
        CHECK(clEnqueueReadBuffer(e.q, du, CL_TRUE, 0, sizeof(float) * N, u, 0, NULL, NULL));
    ex_checksum("u", u, N);
    clReleaseMemObject(du);
    clReleaseMemObject(df);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    free(u);
    free(f);
    return 0;
}
