// The fix of copy.c's strided copy as an override, with the same answer:
// strideCopy, its name and arguments kept, copies every stride-th word as
// before, but each work-group reads and writes its whole span of words
// (local size x stride) with unit stride: the words it does not copy are
// written back as they were. Every global access is coalesced. (offsetCopy's
// misalignment is its argument, not its code: not a kernel fix.)
//   cltrace try --override examples/copy/fix.cl -- build/examples/copy
kernel void offsetCopy(global float *odata, global const float *idata, int offset) {
    int xid = get_global_id(0) + offset;
    odata[xid] = idata[xid];
}
kernel void strideCopy(global float *odata, global const float *idata, int stride) {
    int n = get_local_size(0), base = get_group_id(0) * n * stride;
    for (int k = 0; k < stride; k++) {
        int x = base + k * n + get_local_id(0);
        odata[x] = x % stride == 0 ? idata[x] : odata[x];
    }
}
kernel void unitCopy(global float *odata, global const float *idata) {
    int xid = get_global_id(0);
    odata[xid] = idata[xid];
}
