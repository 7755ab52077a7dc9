// The fix of nbody.c as an override: nbody_naive, its name and arguments
// kept, loads each tile of positions into local memory once for its whole
// work-group (as nbody_tiled does) instead of every work-item reading all N.
//   cltrace try --override examples/nbody/fix.cl -- build/examples/nbody
kernel void nbody_naive(global const float4 *pos, global float4 *acc_out, int n) {
    local float4 tile[256];                  // launched with 128 work-items a group
    int gid = get_global_id(0), tid = get_local_id(0), size = get_local_size(0);
    float4 my = pos[gid], acc = (float4)(0.0f);
    for (int i = 0; i < n / size; ++i) {
        tile[tid] = pos[i * size + tid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < size; ++j) {
            float4 r = tile[j] - my;
            float d = r.x * r.x + r.y * r.y + r.z * r.z + 1e-3f;
            float inv = rsqrt(d);
            acc += (tile[j].w * inv * inv * inv) * r;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc_out[gid] = (float4)(acc.x, acc.y, acc.z, 0.0f);
}
kernel void nbody_tiled(global const float4 *pos, global float4 *acc_out, int n, local float4 *localPos) {
    int gid = get_global_id(0), tid = get_local_id(0), localSize = get_local_size(0);
    float4 my = pos[gid], acc = (float4)(0.0f);
    for (int i = 0; i < n / localSize; ++i) {
        localPos[tid] = pos[i * localSize + tid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < localSize; ++j) {
            float4 r = localPos[j] - my;
            float d = r.x * r.x + r.y * r.y + r.z * r.z + 1e-3f;
            float inv = rsqrt(d);
            acc += (localPos[j].w * inv * inv * inv) * r;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc_out[gid] = (float4)(acc.x, acc.y, acc.z, 0.0f);
}
