/* Matrix transpose (seed 001):
 *   transpose          naive: reads are coalesced, writes stride by the
 *                      matrix height (one transaction per work-item)
 *   transpose --fixed  through a 16 x 17 tile in __local memory: both the
 *                      global read and the global write are coalesced */
#include "../common/example.h"

static const char *src =
    "kernel void transpose_naive(global float *odata, global const float *idata, int width, int height) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    odata[x * height + y] = idata[y * width + x];\n"
    "}\n"
    "kernel void transpose_local(global float *odata, global const float *idata, int width, int height) {\n"
    "    local float tile[16 * 17];   /* 17: no bank conflicts on the column read */\n"
    "    int lx = get_local_id(0), ly = get_local_id(1);\n"
    "    tile[ly * 17 + lx] = idata[get_global_id(1) * width + get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int ox = get_group_id(1) * 16 + lx, oy = get_group_id(0) * 16 + ly;\n"
    "    odata[oy * height + ox] = tile[lx * 17 + ly];\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    const int W = 1024, H = 512;
    float *in = malloc(sizeof(float) * W * H), *out = malloc(sizeof(float) * W * H);
    for (int i = 0; i < W * H; i++)
        in[i] = (float)(i % 1000) * 0.125f + (float)(i / W);
    cl_program p = ex_build(&e, src, NULL);
    cl_kernel k = ex_kernel(p, e.fixed ? "transpose_local" : "transpose_naive");
    cl_mem din = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof(float) * W * H, in);
    cl_mem dout = ex_buffer(&e, CL_MEM_WRITE_ONLY, sizeof(float) * W * H, NULL);
    CHECK(clSetKernelArg(k, 0, sizeof dout, &dout));
    CHECK(clSetKernelArg(k, 1, sizeof din, &din));
    CHECK(clSetKernelArg(k, 2, sizeof W, &W));
    CHECK(clSetKernelArg(k, 3, sizeof H, &H));
    size_t gws[2] = { (size_t)W, (size_t)H }, lws[2] = { 16, 16 };
    CHECK(clEnqueueNDRangeKernel(e.q, k, 2, NULL, gws, lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e.q, dout, CL_TRUE, 0, sizeof(float) * W * H, out, 0, NULL, NULL));
    int ok = 1;   /* out is H x W... transposed: out[x * H + y] == in[y * W + x] */
    for (int y = 0; y < H && ok; y += 37)
        for (int x = 0; x < W && ok; x += 41)
            ok = out[x * H + y] == in[y * W + x];
    printf("transposed %s\n", ok ? "correctly" : "WRONG");
    ex_checksum("out", out, (size_t)W * H);
    clReleaseMemObject(din);
    clReleaseMemObject(dout);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    free(in);
    free(out);
    return ok ? 0 : 1;
}
