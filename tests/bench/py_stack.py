"""make bench: what one call stack with Python frames costs. clCreateBuffer
(a creation call: always a stack) made N times from 20 Python frames deep,
through ctypes, on tests/apps' fake vendor library.
    py_stack.py LIBRARY N    prints ns_per_call (thread CPU) and the depth"""
import ctypes as C
import sys
import time

cl = C.CDLL(sys.argv[1])
n = int(sys.argv[2])
cl.clCreateBuffer.restype = C.c_void_p
err = C.c_int32(0)


def deep(d):
    if d > 1:
        return deep(d - 1)
    t0 = time.thread_time_ns()
    for _ in range(n):
        cl.clCreateBuffer(None, C.c_uint64(1), C.c_size_t(64), None, C.byref(err))
    return time.thread_time_ns() - t0


ns = deep(19)      # + the module's frame: 20
print("ns_per_call %.0f depth 20" % (ns / n))
