#!/usr/bin/python3
"""pyopencl: a kernel and transfers on the first platform (PYOPENCL_CTX)."""
import numpy as np
import pyopencl as cl
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
a = np.arange(4096, dtype=np.float32)
mf = cl.mem_flags
ba = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
bc = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
prg = cl.Program(ctx, "__kernel void twice(__global const float *a, __global float *c)"
                      "{ int i = get_global_id(0); c[i] = 2 * a[i]; }").build()
prg.twice(q, a.shape, None, ba, bc)
c = np.empty_like(a)
cl.enqueue_copy(q, c, bc)
print("sum", float(c.sum()))
