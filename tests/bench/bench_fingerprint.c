/* What fingerprints cost (make bench, scripts/gpu-fingerprint.sh):
 *   bench_fingerprint digest            GB/s of the hash alone and of hash +
 *                                       float statistics, on 256 MiB (from
 *                                       memory) and on 256 KiB (in cache), one core
 *   bench_fingerprint launch MIB N      N launches of a kernel writing a float
 *                                       buffer of MIB MiB, then clFinish: wall
 *                                       ns per launch (run untraced, traced, and
 *                                       traced with CLTRACE_FINGERPRINT=1 to
 *                                       compare); OCL_PLATFORM picks a platform
 *                                       by name part */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/digest.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int digest(void)
{
    size_t bytes = 256u << 20, n = bytes / 4;
    float *v = malloc(bytes);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % 1000) * 0.5f;
    struct clt_digest d;
    double best[2] = { 1e30, 1e30 };
    for (int rep = 0; rep < 5; rep++)
        for (int k = 0; k < 2; k++) {
            double t0 = now_ns();
            clt_digest(v, bytes, k ? CLT_ELEM_FLOAT : CLT_ELEM_BYTES, &d);
            double t = now_ns() - t0;
            best[k] = t < best[k] ? t : best[k];
        }
    printf("hash_gbps %.1f\nhash_float_stats_gbps %.1f\n", (double)bytes / best[0], (double)bytes / best[1]);
    size_t small = 256u << 10;      /* in cache: what the code does, memory aside */
    best[0] = best[1] = 1e30;
    for (int rep = 0; rep < 5; rep++)
        for (int k = 0; k < 2; k++) {
            double t0 = now_ns();
            for (int i = 0; i < 256; i++)
                clt_digest(v, small, k ? CLT_ELEM_FLOAT : CLT_ELEM_BYTES, &d);
            double t = (now_ns() - t0) / 256;
            best[k] = t < best[k] ? t : best[k];
        }
    printf("in_cache_hash_gbps %.1f\nin_cache_hash_float_stats_gbps %.1f\n", (double)small / best[0],
           (double)small / best[1]);
    free(v);
    return d.nan != 0;
}

static int launch(size_t mib, long n)
{
    cl_platform_id ps[8], p;
    cl_uint np = 0;
    cl_device_id d;
    cl_int err;
    clGetPlatformIDs(8, ps, &np);
    p = ps[0];
    const char *want = getenv("OCL_PLATFORM");
    for (cl_uint i = 0; want && i < np; i++) {
        char name[256] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, want))
            p = ps[i];
    }
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
        return 1;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
    const char *src = "kernel void advance(global float *x, float a) { size_t i = get_global_id(0); x[i] = x[i] * 0.5f + a; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &d, NULL, NULL, NULL) != CL_SUCCESS)
        return 1;
    cl_kernel k = clCreateKernel(prog, "advance", &err);
    size_t g = mib << 18, l = 64;       /* floats */
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, g * 4, NULL, &err);
    float zero = 0, a = 1;
    clEnqueueFillBuffer(q, x, &zero, 4, 0, g * 4, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof x, &x);
    clSetKernelArg(k, 1, sizeof a, &a);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL);   /* warm */
    clFinish(q);
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL);
    clFinish(q);
    printf("wall_ns_per_launch %.0f\n", (now_ns() - t0) / (double)n);
    clReleaseMemObject(x);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "digest"))
        return digest();
    if (argc >= 4 && !strcmp(argv[1], "launch"))
        return launch((size_t)atol(argv[2]), atol(argv[3]));
    fprintf(stderr, "usage: bench_fingerprint digest | launch MIB N\n");
    return 2;
}
