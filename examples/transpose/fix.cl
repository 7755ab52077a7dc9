// The fix of transpose.c as an override: transpose_naive, its name and
// arguments kept, goes through a 16 x 17 tile in local memory (as
// transpose_local does): both its global read and its global write coalesced.
//   cltrace try --override examples/transpose/fix.cl -- build/examples/transpose
kernel void transpose_naive(global float *odata, global const float *idata, int width, int height) {
    local float tile[16 * 17];   // launched with 16 x 16 work-items a group; 17: no bank conflicts
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly * 17 + lx] = idata[get_global_id(1) * width + get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * 16 + lx, oy = get_group_id(0) * 16 + ly;
    odata[oy * height + ox] = tile[lx * 17 + ly];
}
kernel void transpose_local(global float *odata, global const float *idata, int width, int height) {
    local float tile[16 * 17];
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly * 17 + lx] = idata[get_global_id(1) * width + get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * 16 + lx, oy = get_group_id(0) * 16 + ly;
    odata[oy * height + ox] = tile[lx * 17 + ly];
}
