#!/usr/bin/python3
"""OpenCL from Python's ctypes (no binding library): the loader is dlopen'ed
and every function looked up at run time. Prints the platform's name and a
kernel's result.  ctypes_app.py [LIBRARY]"""
import ctypes as C
import os
import sys

cl = C.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libOpenCL.so.1")
vp, u32, sz = C.c_void_p, C.c_uint32, C.c_size_t
cl.clCreateContext.restype = vp
cl.clCreateCommandQueue.restype = vp
cl.clCreateProgramWithSource.restype = vp
cl.clCreateKernel.restype = vp
cl.clCreateBuffer.restype = vp
for f in ("clCreateContext", "clCreateCommandQueue", "clCreateProgramWithSource", "clCreateKernel",
          "clCreateBuffer", "clSetKernelArg", "clEnqueueNDRangeKernel", "clEnqueueReadBuffer",
          "clReleaseMemObject", "clReleaseKernel", "clReleaseProgram", "clReleaseCommandQueue",
          "clReleaseContext", "clBuildProgram", "clGetPlatformInfo", "clGetDeviceIDs", "clFinish"):
    getattr(cl, f).argtypes = None

err = C.c_int32(0)
platforms, n_platforms = (vp * 16)(), u32(0)
assert cl.clGetPlatformIDs(u32(16), platforms, C.byref(n_platforms)) == 0
platform, device = vp(platforms[0]), vp()
name = C.create_string_buffer(256)
for i in range(min(n_platforms.value, 16)):      # CLTEST_PLATFORM=<part of a name>, else the first
    cl.clGetPlatformInfo(vp(platforms[i]), u32(0x0902), sz(256), name, None)       # CL_PLATFORM_NAME
    if os.environ.get("CLTEST_PLATFORM", "\0") in name.value.decode():
        platform = vp(platforms[i])
        break
cl.clGetPlatformInfo(platform, u32(0x0902), sz(256), name, None)
assert cl.clGetDeviceIDs(platform, C.c_uint64(0xFFFFFFFF), u32(1), C.byref(device), None) == 0
ctx = vp(cl.clCreateContext(None, u32(1), C.byref(device), None, None, C.byref(err)))
queue = vp(cl.clCreateCommandQueue(ctx, device, C.c_uint64(0), C.byref(err)))
src = C.c_char_p(b"__kernel void sq(__global int *x) { int i = get_global_id(0); x[i] = i * i; }")
prog = vp(cl.clCreateProgramWithSource(ctx, u32(1), C.byref(src), None, C.byref(err)))
assert cl.clBuildProgram(prog, u32(1), C.byref(device), None, None, None) == 0
kern = vp(cl.clCreateKernel(prog, b"sq", C.byref(err)))
n = 64
buf = vp(cl.clCreateBuffer(ctx, C.c_uint64(1 << 1), sz(4 * n), None, C.byref(err)))  # CL_MEM_WRITE_ONLY
cl.clSetKernelArg(kern, u32(0), sz(C.sizeof(buf)), C.byref(buf))
gws = sz(n)
assert cl.clEnqueueNDRangeKernel(queue, kern, u32(1), None, C.byref(gws), None, u32(0), None, None) == 0
out = (C.c_int32 * n)()
assert cl.clEnqueueReadBuffer(queue, buf, u32(1), sz(0), sz(4 * n), out, u32(0), None, None) == 0
cl.clFinish(queue)
print(name.value.decode(), sum(out))
for f, h in (("clReleaseMemObject", buf), ("clReleaseKernel", kern), ("clReleaseProgram", prog),
             ("clReleaseCommandQueue", queue), ("clReleaseContext", ctx)):
    getattr(cl, f)(h)
