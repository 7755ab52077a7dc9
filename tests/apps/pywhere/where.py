"""A pyopencl program with one problem of each kind at a known line (the
LINE markers): tests/python.sh checks that each finding names its line."""
import os
import sys
import threading

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import helper

SRC = """
__kernel void scale(__global float *x, float a) { size_t i = get_global_id(0); x[i] *= a; }
"""


def small_transfers(queue, buf, host):
    for i in range(40):
        cl.enqueue_copy(queue, buf, host[:16], is_blocking=False)  # SMALL-LINE


def odd_groups(queue, prg, buf, n):
    prg.scale(queue, (n,), (7,), buf, np.float32(1.0))  # ODD-LINE


def main():
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    n = 7 * 64
    host = np.arange(n, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    small_transfers(queue, buf, host)
    for _ in range(20):
        odd_groups(queue, prg, buf, n)
    if os.environ.get("WHERE_THREAD", "1") == "1":
        t = threading.Thread(target=lambda: [odd_groups(queue, prg, buf, n) for _ in range(10)])  # THREAD-LINE
        t.start()
        t.join()
    try:
        cl.Kernel(prg, "no_such_kernel")  # FAIL-LINE
    except cl.Error as e:
        print("expected failure:", e.code)
    a = cla.to_device(queue, host)
    b = (a * 2 + 1).get()  # ARRAY-LINE
    out = np.empty_like(host)
    cl.enqueue_copy(queue, out, buf, is_blocking=True)  # BLOCKING-LINE
    helper.scratch(ctx, 4096)
    queue.finish()
    if os.environ.get("WHERE_FORK") == "1":     # a forked worker: its own trace, ended by os._exit
        pid = os.fork()
        if pid == 0:
            child = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)  # FORK-LINE
            child.get_info(cl.mem_info.SIZE)
            os._exit(0)
        os.waitpid(pid, 0)
    print("sum", float(out.sum()), float(b.sum()))
    sys.stdout.flush()
    if os.environ.get("WHERE_EXIT", "_exit") == "_exit":
        os._exit(0)


main()
