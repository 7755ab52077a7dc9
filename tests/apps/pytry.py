#!/usr/bin/python3
"""pyopencl, for cltrace try (tests/try.sh): a kernel of the script's own,
launched with no local size, and an array operation (a kernel pyopencl
generates); the answers printed."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
n = 1 << 16
a = np.arange(n, dtype=np.float32) * np.float32(0.25)
prg = cl.Program(ctx, """
kernel void smooth(global const float *a, global float *c, int n) {
    int i = get_global_id(0);
    float l = a[i > 0 ? i - 1 : i], r = a[i < n - 1 ? i + 1 : i];
    c[i] = (l + a[i] + r) / 3.0f;
}
""").build()
da = cla.to_device(q, a)
dc = cla.empty_like(da)
prg.smooth(q, (n,), None, da.data, dc.data, np.int32(n))
total = (dc + da).get()                     # pyopencl's generated elementwise kernel
print("sum %.3f" % float(total.astype(np.float64).sum()))
