/* Phases: a program that marks its own phases with cltrace.h -- setup,
 * upload, solver (one nested range per iteration), download -- plus an
 * instant when the solver is done and a counter of a probed value. Under
 * cltrace the ranges are slices around the OpenCL calls they contain and
 * cltrace-report breaks API time, device time and transfers down by phase;
 * without cltrace the header's calls do nothing and the program prints the
 * same numbers. (--fixed runs the same program: the phases are the point.) */
#include <cltrace.h>
#include "../common/example.h"

static const char *src =
    "__kernel void relax(__global const float *in, __global float *out, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i == 0 || i >= n - 1) { out[i] = in[i]; return; }\n"
    "    out[i] = 0.5f * in[i] + 0.25f * (in[i - 1] + in[i + 1]);\n"
    "}\n";

int main(int argc, char **argv)
{
    enum { N = 1 << 16, ITERS = 40 };
    struct ex e;
    cl_int err;
    cltrace_range_push("setup");
    ex_init(&e, argc, argv);
    cl_program p = ex_build(&e, src, NULL);
    cl_kernel k = clCreateKernel(p, "relax", &err);
    CHECK(err);
    cl_mem a = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    cltrace_range_pop();

    float *host = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++)
        host[i] = (i % 64) < 32 ? 1.0f : 0.0f;
    cltrace_range_push("upload");
    CHECK(clEnqueueWriteBuffer(e.q, a, CL_TRUE, 0, N * sizeof(float), host, 0, NULL, NULL));
    cltrace_range_pop();

    cltrace_range_push("solver");
    int n = N;
    size_t gws = N, lws = 64;
    for (int it = 0; it < ITERS; it++) {
        cltrace_range_push("iteration");
        cl_mem in = it % 2 ? b : a, out = it % 2 ? a : b;
        CHECK(clSetKernelArg(k, 0, sizeof in, &in));
        CHECK(clSetKernelArg(k, 1, sizeof out, &out));
        CHECK(clSetKernelArg(k, 2, sizeof n, &n));
        CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &gws, &lws, 0, NULL, NULL));
        /* a convergence check after every iteration: one float read back,
         * blocking -- small transfers and a wait after every launch, which
         * the report finds in this phase */
        float probe;
        CHECK(clEnqueueReadBuffer(e.q, out, CL_TRUE, (N / 2) * sizeof(float), sizeof probe, &probe, 0, NULL, NULL));
        cltrace_counter("probe", probe);
        cltrace_range_pop();
    }
    CHECK(clFinish(e.q));
    cltrace_mark("solver done");
    cltrace_range_pop();

    cltrace_range_push("download");
    CHECK(clEnqueueReadBuffer(e.q, ITERS % 2 ? b : a, CL_TRUE, 0, N * sizeof(float), host, 0, NULL, NULL));
    cltrace_range_pop();
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += host[i];
    printf("sum %.3f\n", sum);

    free(host);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    return 0;
}
