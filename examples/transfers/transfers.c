/* Many small host->device transfers vs one batched transfer (seed 001:
 * "one large transfer much better than many small ones").
 *   transfers          writes the inputs 1 KiB at a time (2 x 256 writes)
 *   transfers --fixed  writes each input in one 256 KiB transfer */
#include "../common/example.h"

static const char *src =
    "kernel void vadd(global const float *a, global const float *b, global float *c) {\n"
    "    size_t i = get_global_id(0);\n"
    "    c[i] = a[i] + b[i];\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    enum { N = 65536, CHUNK = 256 };      /* 256 floats = 1 KiB */
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)(N - i);
    }
    cl_program p = ex_build(&e, src, NULL);
    cl_kernel k = ex_kernel(p, "vadd");
    cl_mem da = ex_buffer(&e, CL_MEM_READ_ONLY, N * sizeof *a, NULL);
    cl_mem db = ex_buffer(&e, CL_MEM_READ_ONLY, N * sizeof *b, NULL);
    cl_mem dc = ex_buffer(&e, CL_MEM_WRITE_ONLY, N * sizeof *c, NULL);
    if (e.fixed) {
        CHECK(clEnqueueWriteBuffer(e.q, da, CL_FALSE, 0, N * sizeof *a, a, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(e.q, db, CL_FALSE, 0, N * sizeof *b, b, 0, NULL, NULL));
    } else {
        for (size_t off = 0; off < N; off += CHUNK) {
            CHECK(clEnqueueWriteBuffer(e.q, da, CL_FALSE, off * 4, CHUNK * 4, a + off, 0, NULL, NULL));
            CHECK(clEnqueueWriteBuffer(e.q, db, CL_FALSE, off * 4, CHUNK * 4, b + off, 0, NULL, NULL));
        }
    }
    CHECK(clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
    size_t gws = N, lws = 64;
    CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e.q, dc, CL_TRUE, 0, N * sizeof *c, c, 0, NULL, NULL));
    ex_checksum("c", c, N);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    free(a);
    free(b);
    free(c);
    return 0;
}
