// copy.c's fix as an override: strideCopy, its name and arguments kept,
// copies with unit stride as unitCopy does. `cltrace try` says what this
// costs: a different answer. The fixed example copies other words (the first
// half, contiguous) and checks those; a strided access is fixed by changing
// the data's layout, not the kernel alone. (offsetCopy's misalignment is its
// argument, not its code.)
//   cltrace try --override examples/copy/fix.cl -- build/examples/copy   (exit 1)
kernel void offsetCopy(global float *odata, global const float *idata, int offset) {
    int xid = get_global_id(0) + offset;
    odata[xid] = idata[xid];
}
kernel void strideCopy(global float *odata, global const float *idata, int stride) {
    int xid = get_global_id(0);   // stride not used: unit stride
    odata[xid] = idata[xid];
}
kernel void unitCopy(global float *odata, global const float *idata) {
    int xid = get_global_id(0);
    odata[xid] = idata[xid];
}
