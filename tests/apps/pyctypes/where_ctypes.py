"""OpenCL through ctypes (no binding; every call releases the GIL), a
problem of each kind at a marked line: tests/python.sh here, and on the GPU
hosts (CPython 3.12) scripts/gpu-python.sh. CLTEST_PLATFORM=<part of a
name> picks the platform (else the first)."""
import ctypes as C
import os
import sys

cl = C.CDLL("libOpenCL.so.1")
vp, u32, sz, i32 = C.c_void_p, C.c_uint32, C.c_size_t, C.c_int32
for f in ("clCreateContext", "clCreateCommandQueue", "clCreateProgramWithSource", "clCreateKernel",
          "clCreateBuffer"):
    getattr(cl, f).restype = vp
SRC = b"__kernel void scale(__global float *x, float a) { x[get_global_id(0)] *= a; }"


def pick():
    platforms, n = (vp * 16)(), u32(0)
    assert cl.clGetPlatformIDs(u32(16), platforms, C.byref(n)) == 0
    name = C.create_string_buffer(256)
    for i in range(min(n.value, 16)):
        cl.clGetPlatformInfo(vp(platforms[i]), u32(0x0902), sz(256), name, None)
        if os.environ.get("CLTEST_PLATFORM", "") in name.value.decode():
            dev = vp()
            assert cl.clGetDeviceIDs(vp(platforms[i]), C.c_uint64(0xFFFFFFFF), u32(1), C.byref(dev), None) == 0
            return dev, name.value.decode()
    sys.exit("no platform matches CLTEST_PLATFORM")


def small_writes(q, buf, host):
    for _ in range(40):
        cl.clEnqueueWriteBuffer(q, buf, u32(1), sz(0), sz(64), host, u32(0), None, None)  # SMALL-LINE


def launch(q, k, n, local):
    g, l = sz(n), sz(local)
    return cl.clEnqueueNDRangeKernel(q, k, u32(1), None, C.byref(g), C.byref(l), u32(0), None, None)  # ODD-LINE


def make_buffer(ctx, nbytes):
    err = i32(0)
    return vp(cl.clCreateBuffer(ctx, C.c_uint64(1), sz(nbytes), None, C.byref(err)))  # LEAK-LINE


def setup():
    """The picked platform's name, a context, its queue, SRC built, its kernel."""
    dev, pname = pick()
    err = i32(0)
    ctx = vp(cl.clCreateContext(None, u32(1), C.byref(dev), None, None, C.byref(err)))
    q = vp(cl.clCreateCommandQueue(ctx, dev, C.c_uint64(0), C.byref(err)))
    src = C.c_char_p(SRC)
    prg = vp(cl.clCreateProgramWithSource(ctx, u32(1), C.byref(src), None, C.byref(err)))
    assert cl.clBuildProgram(prg, u32(0), None, None, None, None) == 0
    k = vp(cl.clCreateKernel(prg, b"scale", C.byref(err)))
    return pname, ctx, q, prg, k


def main():
    pname, ctx, q, prg, k = setup()
    n = 7 * 128
    host = (C.c_float * n)(*range(n))
    buf = make_buffer(ctx, 4 * n)
    small_writes(q, buf, host)
    cl.clSetKernelArg(k, u32(0), sz(8), C.byref(buf))
    a = C.c_float(2.0)
    cl.clSetKernelArg(k, u32(1), sz(4), C.byref(a))
    for _ in range(20):
        launch(q, k, n, 7)
    bad = i32(0)
    cl.clCreateKernel(prg, b"no_such_kernel", C.byref(bad))  # FAIL-LINE
    out = (C.c_float * n)()
    cl.clEnqueueReadBuffer(q, buf, u32(1), sz(0), sz(4 * n), out, u32(0), None, None)
    print("platform %s: clCreateKernel(no_such_kernel) %d, out[3] %.1f" % (pname.split()[0], bad.value, out[3]))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
