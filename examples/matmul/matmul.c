/* Matrix multiply C = A B with A of N x TILE and B of TILE x N (seed 001):
 *   matmul          simpleMultiply: every work-item of a row re-reads that
 *                   row of A from global memory in its loop
 *   matmul --fixed  coalescedMultiply: the work-group loads its tile of A
 *                   into __local memory once, the loop reads it from there */
#include "../common/example.h"

#define TILE 16
static const char *src =
    "#define TILE_DIM 16\n"
    "kernel void simpleMultiply(global const float *a, global const float *b, global float *c, int N) {\n"
    "    int row = get_global_id(1);\n"
    "    int col = get_global_id(0);\n"
    "    float sum = 0.0f;\n"
    "    for (int i = 0; i < TILE_DIM; i++) {\n"
    "        sum += a[row*TILE_DIM+i] * b[i*N+col];\n"
    "    }\n"
    "    c[row*N+col] = sum;\n"
    "}\n"
    "kernel void coalescedMultiply(global const float *a, global const float *b, global float *c, int N) {\n"
    "    local float aTile[TILE_DIM][TILE_DIM];\n"
    "    int row = get_global_id(1);\n"
    "    int col = get_global_id(0);\n"
    "    float sum = 0.0f;\n"
    "    int x = get_local_id(0);\n"
    "    int y = get_local_id(1);\n"
    "    aTile[y][x] = a[row*TILE_DIM+x];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int i = 0; i < TILE_DIM; i++) {\n"
    "        sum += aTile[y][i] * b[i*N+col];\n"
    "    }\n"
    "    c[row*N+col] = sum;\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    const int N = 512;
    float *a = malloc(sizeof(float) * N * TILE), *b = malloc(sizeof(float) * TILE * N);
    float *c = malloc(sizeof(float) * N * N);
    for (int i = 0; i < N * TILE; i++) {
        a[i] = (float)(i % 7) * 0.25f;
        b[i] = (float)(i % 5) * 0.5f;
    }
    /* both versions build the same way: the only change is the kernel */
    cl_program p = ex_build(&e, src, "-cl-mad-enable");
    cl_kernel k = ex_kernel(p, e.fixed ? "coalescedMultiply" : "simpleMultiply");
    cl_mem da = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof(float) * N * TILE, a);
    cl_mem db = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof(float) * TILE * N, b);
    cl_mem dc = ex_buffer(&e, CL_MEM_WRITE_ONLY, sizeof(float) * N * N, NULL);
    CHECK(clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
    CHECK(clSetKernelArg(k, 3, sizeof N, &N));
    size_t gws[2] = { (size_t)N, (size_t)N }, lws[2] = { TILE, TILE };
    CHECK(clEnqueueNDRangeKernel(e.q, k, 2, NULL, gws, lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e.q, dc, CL_TRUE, 0, sizeof(float) * N * N, c, 0, NULL, NULL));
    ex_checksum("c", c, (size_t)N * N);
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
