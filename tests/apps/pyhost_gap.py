#!/usr/bin/python3
"""pyopencl, the host keeping the device idle in pure Python: each step's
input built by build_inputs() (a Python loop, ~10 ms) before a short kernel,
waited for. The CPU samples must name build_inputs at its line."""
import sys

import numpy as np
import pyopencl as cl


def build_inputs(step, n):
    acc = 0.0
    for i in range(n):
        acc += (i ^ step) * 1e-9
    return acc


def main(steps):
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    n = 40000
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    prg = cl.Program(ctx, "__kernel void scale(__global float *x) { x[get_global_id(0)] *= 2.0f; }").build()
    host = np.empty(n, dtype=np.float32)
    for s in range(steps):
        host.fill(build_inputs(s, 4 * n))
        cl.enqueue_copy(q, buf, host)
        prg.scale(q, (n,), None, buf)
        q.finish()
    print("pyhost_gap: %d steps" % steps)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
