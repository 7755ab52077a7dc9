/* Kernel-source hints (report/model/source.c) on the seeds' own kernels: the
 * problem versions are found, their fixes are not. */
#include <stdio.h>
#include <string.h>
#include "report/model/model.h"

static int failed;
#define EXPECT(c) do { if (!(c)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); failed = 1; } } while (0)

/* seed 001: offsetCopy, strideCopy, simpleMultiply, coalescedMultiply */
static const char *seed001 =
    "__kernel void offsetCopy(__global float *odata, __global float* idata, int offset)\n"
    "{\n    int xid = get_global_id(0) + offset;\n    odata[xid] = idata[xid];\n}\n"
    "__kernel void strideCopy(__global float* odata, __global float* idata, int stride)\n"
    "{\n    int xid = get_global_id(0) * stride;\n    odata[xid] = idata[xid];\n}\n"
    "__kernel void simpleMultiply(__global float* a, __global float* b, __global float* c, int N)\n"
    "{\n    int row = get_global_id(1);\n    int col = get_global_id(0);\n    float sum = 0.0f;\n"
    "    for (int i = 0; i < TILE_DIM; i++) {\n        sum += a[row*TILE_DIM+i] * b[i*N+col];\n    }\n"
    "    c[row*N+col] = sum;\n}\n"
    "__kernel void coalescedMultiply(__global float* a, __global float* b, __global float* c, int N,\n"
    "                                __local float aTile[TILE_DIM][TILE_DIM])\n"
    "{\n    int row = get_global_id(1);\n    int col = get_global_id(0);\n    float sum = 0.0f;\n"
    "    int x = get_local_id(0);\n    int y = get_local_id(1);\n    aTile[y][x] = a[row*TILE_DIM+x];\n"
    "    for (int i = 0; i < TILE_DIM; i++) {\n        sum += aTile[y][i]* b[i*N+col];\n    }\n"
    "    c[row*N+col] = sum;\n}\n";

/* seed 004: all-pairs N-body, per-work-item reads vs a tile in local memory */
static const char *seed004 =
    "__kernel void nbody_naive(__global float4 *pos, __global float4 *acc_out, int n) {\n"
    "    int gid = get_global_id(0);\n    float4 my = pos[gid], acc = (float4)(0.0f);\n"
    "    for (int j = 0; j < n; j++) {\n        float4 r = pos[j] - my; /* every work-item reads pos[j] */\n"
    "        float d = r.x * r.x + r.y * r.y + r.z * r.z + 1e-3f;\n        acc += r * (1.0f / sqrt(d));\n    }\n"
    "    acc_out[gid] = acc;\n}\n"
    "__kernel void nbody_tiled(__global float4 *pos, __global float4 *acc_out, int n, __local float4 *localPos) {\n"
    "    int gid = get_global_id(0), tid = get_local_id(0), localSize = get_local_size(0);\n"
    "    float4 myPos = pos[gid], acc = (float4)(0.0f);\n"
    "    for (int i = 0; i < n / localSize; ++i) {\n        int idx = i * localSize + tid;\n"
    "        localPos[tid] = pos[idx];\n        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int j = 0; j < localSize; ++j) {\n            float4 r = localPos[j] - myPos;\n"
    "            float distSqr = r.x * r.x + r.y * r.y + r.z * r.z;\n"
    "            acc += r * (1.0f / sqrt(distSqr + 1e-3f));\n        }\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n"
    "    acc_out[gid] = acc;\n}\n";

static const char *transpose =
    "// naive: the write strides by height\n"
    "kernel void transpose_naive(global float *odata, global const float *idata, int width, int height) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n    odata[x * height + y] = idata[y * width + x];\n}\n"
    "kernel void transpose_local(global float *odata, global const float *idata, int width, int height,\n"
    "                            local float *tile) {\n"
    "    int lx = get_local_id(0), ly = get_local_id(1);\n"
    "    tile[ly * 17 + lx] = idata[get_global_id(1) * width + get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int ox = get_group_id(1) * 16 + lx, oy = get_group_id(0) * 16 + ly;\n"
    "    odata[oy * height + ox] = tile[lx * 17 + ly];\n}\n"
    "kernel void scale(global float *a) { a[get_global_id(0)] *= 2.0; /* a double literal */ }\n";

static const struct rm_hint *find(const struct rm_model *m, const char *rule, const char *kernel)
{
    for (unsigned i = 0; i < m->n_hints; i++)
        if (!strcmp(m->hints[i].rule, rule) && !strcmp(m->hints[i].kernel, kernel))
            return &m->hints[i];
    return NULL;
}

int main(void)
{
    static struct rm_model m;
    rm_scan_source(&m, 1, seed001);
    rm_scan_source(&m, 2, seed004);
    rm_scan_source(&m, 3, transpose);
    const struct rm_hint *h;
    EXPECT((h = find(&m, "strided-access", "strideCopy")) && h->line == 9 && !strcmp(h->code, "odata[xid]") &&
           h->count == 2);
    EXPECT((h = find(&m, "redundant-global-reads", "simpleMultiply")) && h->line == 17 &&
           !strcmp(h->code, "a[row*TILE_DIM+i]") && h->count == 1);
    EXPECT((h = find(&m, "redundant-global-reads", "nbody_naive")) && !strcmp(h->code, "pos[j]"));
    EXPECT((h = find(&m, "strided-access", "transpose_naive")) && !strcmp(h->code, "odata[x*height+y]"));
    EXPECT((h = find(&m, "double-literals", "scale")) && !strcmp(h->code, "2.0"));
    EXPECT(m.n_hints == 5);   /* and nothing in offsetCopy, coalescedMultiply, nbody_tiled, transpose_local */
    for (unsigned i = 0; i < m.n_hints; i++)
        printf("  %s %s line %u: %s\n", m.hints[i].rule, m.hints[i].kernel, m.hints[i].line, m.hints[i].code);
    EXPECT(m.n_programs == 3 && m.programs[0].uses_float && m.programs[1].uses_float);
    rm_free(&m);
    return failed;
}
