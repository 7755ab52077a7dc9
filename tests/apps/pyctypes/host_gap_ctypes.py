"""OpenCL through ctypes (no pyopencl: the GPU hosts have none), the host
keeping the device idle in pure Python: each step's input built by
build_inputs() (a Python loop) before a short kernel, waited for. The CPU
samples must name build_inputs at its line. CLTEST_PLATFORM as where_ctypes.py."""
import ctypes as C
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from where_ctypes import cl, i32, setup, sz, u32, vp  # noqa: E402


def build_inputs(step, n):
    acc = 0.0
    for i in range(n):
        acc += (i ^ step) * 1e-9
    return acc


def main(steps):
    pname, ctx, q, _, k = setup()
    err = i32(0)
    n = 4096
    host = (C.c_float * n)()
    buf = vp(cl.clCreateBuffer(ctx, C.c_uint64(1), sz(4 * n), None, C.byref(err)))
    cl.clSetKernelArg(k, u32(0), sz(8), C.byref(buf))
    a = C.c_float(2.0)
    cl.clSetKernelArg(k, u32(1), sz(4), C.byref(a))
    g = sz(n)
    for s in range(steps):
        host[0] = build_inputs(s, 160000)
        cl.clEnqueueWriteBuffer(q, buf, u32(1), sz(0), sz(4 * n), host, u32(0), None, None)
        cl.clEnqueueNDRangeKernel(q, k, u32(1), None, C.byref(g), None, u32(0), None, None)
        cl.clFinish(q)
    print("host_gap_ctypes on %s: %d steps" % (pname.split()[0], steps))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
