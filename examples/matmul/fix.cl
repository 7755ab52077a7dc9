// The fix of matmul.c as an override: simpleMultiply, its name and arguments
// kept, loads its work-group's tile of A into local memory once (as
// coalescedMultiply does) instead of every work-item re-reading its row.
//   cltrace try --override examples/matmul/fix.cl -- build/examples/matmul
#define TILE_DIM 16
kernel void simpleMultiply(global const float *a, global const float *b, global float *c, int N) {
    local float aTile[TILE_DIM][TILE_DIM];   // launched with 16 x 16 work-items a group
    int row = get_global_id(1), col = get_global_id(0);
    int x = get_local_id(0), y = get_local_id(1);
    float sum = 0.0f;
    aTile[y][x] = a[row * TILE_DIM + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TILE_DIM; i++)
        sum += aTile[y][i] * b[i * N + col];
    c[row * N + col] = sum;
}
kernel void coalescedMultiply(global const float *a, global const float *b, global float *c, int N) {
    local float aTile[TILE_DIM][TILE_DIM];
    int row = get_global_id(1), col = get_global_id(0);
    int x = get_local_id(0), y = get_local_id(1);
    float sum = 0.0f;
    aTile[y][x] = a[row * TILE_DIM + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TILE_DIM; i++)
        sum += aTile[y][i] * b[i * N + col];
    c[row * N + col] = sum;
}
