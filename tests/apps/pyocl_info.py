#!/usr/bin/python3
"""pyopencl: what a device says about itself, a fill and a copy between buffers,
events waited for and their profiling times read (the demo-style calls)."""
import numpy as np
import pyopencl as cl
for p in cl.get_platforms():
    print(p.name, p.version)
    for d in p.get_devices():
        print(" ", d.name, d.version, d.max_compute_units > 0, d.global_mem_size > 0)
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
n = 1024
src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
host = np.arange(n, dtype=np.int32)
e1 = cl.enqueue_copy(q, src, host)
e2 = cl.enqueue_copy(q, dst, src, wait_for=[e1])
e2.wait()
print("profiled", e2.profile.end >= e2.profile.start)
out = np.empty_like(host)
cl.enqueue_copy(q, out, dst).wait()
print("copied", int(out.sum()))
