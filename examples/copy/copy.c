/* Offset and strided copies (seed 001's offsetCopy and strideCopy):
 *   copy          strideCopy with stride 2: neighbouring work-items touch
 *                 every other word, half of each transaction is wasted; and
 *                 offsetCopy with offset 1 (misaligned by one word)
 *   copy --fixed  the same copies with unit stride and offset 0
 * cltrace flags the stride from the kernel source; a misaligned offset is a
 * run-time value it cannot see there (compare the kernels' device times). */
#include "../common/example.h"

static const char *src =
    "kernel void offsetCopy(global float *odata, global const float *idata, int offset) {\n"
    "    int xid = get_global_id(0) + offset;\n"
    "    odata[xid] = idata[xid];\n"
    "}\n"
    "kernel void strideCopy(global float *odata, global const float *idata, int stride) {\n"
    "    int xid = get_global_id(0) * stride;\n"
    "    odata[xid] = idata[xid];\n"
    "}\n"
    "kernel void unitCopy(global float *odata, global const float *idata) {\n"
    "    int xid = get_global_id(0);\n"
    "    odata[xid] = idata[xid];\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    enum { N = 1 << 20 };
    float *in = malloc(sizeof(float) * 2 * N), *out = calloc(2 * N, sizeof(float));
    for (int i = 0; i < 2 * N; i++)
        in[i] = (float)(i % 977);
    cl_program p = ex_build(&e, src, NULL);
    cl_mem din = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof(float) * 2 * N, in);
    cl_mem dout = ex_buffer(&e, CL_MEM_READ_WRITE, sizeof(float) * 2 * N, out);
    size_t gws = N, lws = 128;
    /* the strided copy: every other word (problem) or all words of the first half */
    cl_kernel ks = ex_kernel(p, e.fixed ? "unitCopy" : "strideCopy");
    CHECK(clSetKernelArg(ks, 0, sizeof dout, &dout));
    CHECK(clSetKernelArg(ks, 1, sizeof din, &din));
    int stride = 2;
    if (!e.fixed)
        CHECK(clSetKernelArg(ks, 2, sizeof stride, &stride));
    CHECK(clEnqueueNDRangeKernel(e.q, ks, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e.q, dout, CL_TRUE, 0, sizeof(float) * 2 * N, out, 0, NULL, NULL));
    int ok = 1;            /* each version copied what it should have */
    for (int i = 0; i < N; i++)
        ok &= e.fixed ? out[i] == in[i] : out[2 * i] == in[2 * i];
    printf("strided copy %s\n", ok ? "correct" : "WRONG");
    /* the offset copy */
    cl_kernel ko = ex_kernel(p, "offsetCopy");
    int offset = e.fixed ? 0 : 1;
    CHECK(clSetKernelArg(ko, 0, sizeof dout, &dout));
    CHECK(clSetKernelArg(ko, 1, sizeof din, &din));
    CHECK(clSetKernelArg(ko, 2, sizeof offset, &offset));
    CHECK(clEnqueueNDRangeKernel(e.q, ko, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e.q, dout, CL_TRUE, 0, sizeof(float) * 2 * N, out, 0, NULL, NULL));
    for (int i = 0; i < N; i += 101)
        ok &= out[i + offset] == in[i + offset];
    printf("offset copy %s\n", ok ? "correct" : "WRONG");
    clReleaseMemObject(din);
    clReleaseMemObject(dout);
    clReleaseKernel(ks);
    clReleaseKernel(ko);
    clReleaseProgram(p);
    ex_done(&e);
    free(in);
    free(out);
    return ok ? 0 : 1;
}
