/* All-pairs N-body, one step of accelerations (seed 004), float4:
 *   nbody          every work-item reads all N positions from global memory
 *                  (N x N reads)
 *   nbody --fixed  the work-group loads a tile of positions into __local
 *                  memory once and all its work-items use it (N reads per group) */
#include "../common/example.h"

static const char *src =
    "kernel void nbody_naive(global const float4 *pos, global float4 *acc_out, int n) {\n"
    "    int gid = get_global_id(0);\n"
    "    float4 my = pos[gid], acc = (float4)(0.0f);\n"
    "    for (int j = 0; j < n; j++) {\n"
    "        float4 r = pos[j] - my;\n"
    "        float d = r.x * r.x + r.y * r.y + r.z * r.z + 1e-3f;\n"
    "        float inv = rsqrt(d);\n"
    "        acc += (pos[j].w * inv * inv * inv) * r;\n"
    "    }\n"
    "    acc_out[gid] = (float4)(acc.x, acc.y, acc.z, 0.0f);\n"
    "}\n"
    "kernel void nbody_tiled(global const float4 *pos, global float4 *acc_out, int n, local float4 *localPos) {\n"
    "    int gid = get_global_id(0), tid = get_local_id(0), localSize = get_local_size(0);\n"
    "    float4 my = pos[gid], acc = (float4)(0.0f);\n"
    "    for (int i = 0; i < n / localSize; ++i) {\n"
    "        int idx = i * localSize + tid;\n"
    "        localPos[tid] = pos[idx];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int j = 0; j < localSize; ++j) {\n"
    "            float4 r = localPos[j] - my;\n"
    "            float d = r.x * r.x + r.y * r.y + r.z * r.z + 1e-3f;\n"
    "            float inv = rsqrt(d);\n"
    "            acc += (localPos[j].w * inv * inv * inv) * r;\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    acc_out[gid] = (float4)(acc.x, acc.y, acc.z, 0.0f);\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    const int N = 4096, LOCAL = 128;
    cl_float4 *pos = malloc(sizeof *pos * N), *acc = malloc(sizeof *acc * N);
    for (int i = 0; i < N; i++) {
        pos[i].s[0] = (float)(i % 64);
        pos[i].s[1] = (float)((i / 64) % 64);
        pos[i].s[2] = (float)(i % 17) * 0.5f;
        pos[i].s[3] = 1.0f + (float)(i % 3);      /* mass */
    }
    /* fast math in both versions: the only change is where positions are read */
    cl_program p = ex_build(&e, src, "-cl-mad-enable");
    cl_kernel k = ex_kernel(p, e.fixed ? "nbody_tiled" : "nbody_naive");
    cl_mem dpos = ex_buffer(&e, CL_MEM_READ_ONLY, sizeof *pos * N, pos);
    cl_mem dacc = ex_buffer(&e, CL_MEM_WRITE_ONLY, sizeof *acc * N, NULL);
    CHECK(clSetKernelArg(k, 0, sizeof dpos, &dpos));
    CHECK(clSetKernelArg(k, 1, sizeof dacc, &dacc));
    CHECK(clSetKernelArg(k, 2, sizeof N, &N));
    if (e.fixed)
        CHECK(clSetKernelArg(k, 3, sizeof(cl_float4) * LOCAL, NULL));
    size_t gws = N, lws = LOCAL;
    CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e.q, dacc, CL_TRUE, 0, sizeof *acc * N, acc, 0, NULL, NULL));
    ex_checksum("acc", (const float *)acc, (size_t)N * 4);
    clReleaseMemObject(dpos);
    clReleaseMemObject(dacc);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    free(pos);
    free(acc);
    return 0;
}
