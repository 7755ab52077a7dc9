/* An app that loads OpenCL the way hashcat does: dlopen("libOpenCL.so.1")
 * and dlsym for every function. Prints its result.
 *   dlopen_app [LIBRARY [dlmopen|unload]]   another name or a full path;
 *                                    dlmopen: into a new link-map namespace;
 *                                    unload: dlclose it at the end, as hashcat
 *                                    does, then run on 300 ms
 * Built with -DLINKED (and -lOpenCL) it also calls the linked library
 * directly: one program, both routes. */
#define CL_TARGET_OPENCL_VERSION 300
#define _GNU_SOURCE
#include <CL/cl.h>
#include <string.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FN(name) static __typeof__(name) *p_##name;
#define LOAD(name) if (!(p_##name = (__typeof__(name) *)dlsym(lib, #name))) { fprintf(stderr, "no %s\n", #name); return 1; }
FN(clGetPlatformIDs) FN(clGetPlatformInfo) FN(clGetDeviceIDs) FN(clCreateContext) FN(clCreateCommandQueueWithProperties)
FN(clCreateProgramWithSource) FN(clBuildProgram) FN(clCreateKernel) FN(clCreateBuffer) FN(clSetKernelArg)
FN(clEnqueueNDRangeKernel) FN(clEnqueueReadBuffer) FN(clFinish) FN(clReleaseMemObject) FN(clReleaseKernel)
FN(clReleaseProgram) FN(clReleaseCommandQueue) FN(clReleaseContext)

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "libOpenCL.so.1";
    void *lib = argc > 2 && strcmp(argv[2], "dlmopen") == 0 ? dlmopen(LM_ID_NEWLM, name, RTLD_NOW | RTLD_LOCAL)
                                                         : dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    LOAD(clGetPlatformIDs) LOAD(clGetPlatformInfo) LOAD(clGetDeviceIDs) LOAD(clCreateContext) LOAD(clCreateCommandQueueWithProperties)
    LOAD(clCreateProgramWithSource) LOAD(clBuildProgram) LOAD(clCreateKernel) LOAD(clCreateBuffer)
    LOAD(clSetKernelArg) LOAD(clEnqueueNDRangeKernel) LOAD(clEnqueueReadBuffer) LOAD(clFinish)
    LOAD(clReleaseMemObject) LOAD(clReleaseKernel) LOAD(clReleaseProgram) LOAD(clReleaseCommandQueue)
    LOAD(clReleaseContext)
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
#ifdef LINKED
    cl_uint n_direct = 0;
    if (clGetPlatformIDs(0, NULL, &n_direct) || n_direct == 0)
        return 1;
#endif
    const char *src = "__kernel void iota(__global int *x) { x[get_global_id(0)] = (int)get_global_id(0); }";
    /* CLTEST_PLATFORM=<part of a name>: that platform, else the first */
    cl_platform_id ps[16];
    cl_uint np = 0;
    const char *want = getenv("CLTEST_PLATFORM");
    if (p_clGetPlatformIDs(16, ps, &np) || np == 0)
        return 1;
    p = ps[0];
    for (cl_uint i = 0; want && i < np && i < 16; i++) {
        char pname[256] = "";
        p_clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        if (strstr(pname, want)) {
            p = ps[i];
            break;
        }
    }
    if (p_clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 1;
    cl_context ctx = p_clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = p_clCreateCommandQueueWithProperties(ctx, d, NULL, &err);
    cl_program prog = p_clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (p_clBuildProgram(prog, 1, &d, NULL, NULL, NULL))
        return 1;
    cl_kernel k = p_clCreateKernel(prog, "iota", &err);
    cl_mem buf = p_clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, 256 * sizeof(int), NULL, &err);
    p_clSetKernelArg(k, 0, sizeof buf, &buf);
    int out[256];
    long sum = 0;
    for (int i = 0; i < 4; i++) {
        size_t gws = 256;
        p_clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL);
        p_clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
        for (int j = 0; j < 256; j++)
            sum += out[j];
    }
    p_clFinish(q);
    printf("sum=%ld\n", sum);
    p_clReleaseMemObject(buf);
    p_clReleaseKernel(k);
    p_clReleaseProgram(prog);
    p_clReleaseCommandQueue(q);
    p_clReleaseContext(ctx);
    if (argc > 2 && strcmp(argv[2], "unload") == 0) {
        dlclose(lib);
        struct timespec ts = { 0, 300000000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}
