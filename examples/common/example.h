/* What every example shares: pick a device, build a program, run the
 * problem or the fixed version (--fixed), print a checksum so the two can be
 * compared. Each example is one .c file plus this header. */
#ifndef CLTRACE_EXAMPLE_H
#define CLTRACE_EXAMPLE_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

struct ex {
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    int fixed;           /* --fixed: the version with the problem solved */
};

/* The device of the platform whose name contains $OCL_PLATFORM (default: first). */
static inline void ex_init(struct ex *e, int argc, char **argv)
{
    memset(e, 0, sizeof *e);
    for (int i = 1; i < argc; i++)
        e->fixed |= strcmp(argv[i], "--fixed") == 0;
    cl_platform_id ps[8];
    cl_uint n = 0;
    const char *want = getenv("OCL_PLATFORM");
    CHECK(clGetPlatformIDs(8, ps, &n));
    e->plat = ps[0];
    for (cl_uint i = 0; want && i < n; i++) {
        char name[256];
        CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (strstr(name, want))
            e->plat = ps[i];
    }
    /* OCL_DEVICE=N: the platform's device N; OCL_DEVICE=rank: device (launcher rank) % count */
    cl_device_id devs[16];
    cl_uint nd = 0;
    CHECK(clGetDeviceIDs(e->plat, CL_DEVICE_TYPE_ALL, 16, devs, &nd));
    const char *dsel = getenv("OCL_DEVICE"), *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r)
        r = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("SLURM_PROCID");
    unsigned di = !dsel ? 0 : strcmp(dsel, "rank") == 0 ? (unsigned)(r ? atoi(r) : 0) : (unsigned)atoi(dsel);
    e->dev = devs[nd ? di % (nd < 16 ? nd : 16) : 0];
    cl_int err;
    e->ctx = clCreateContext(NULL, 1, &e->dev, NULL, NULL, &err);
    CHECK(err);
    e->q = clCreateCommandQueueWithProperties(e->ctx, e->dev, NULL, &err);
    CHECK(err);
}

static inline cl_program ex_build(struct ex *e, const char *src, const char *options)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
    CHECK(err);
    if (clBuildProgram(p, 1, &e->dev, options, NULL, NULL) != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(p, e->dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(1);
    }
    return p;
}

static inline cl_kernel ex_kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK(err);
    return k;
}

static inline cl_mem ex_buffer(struct ex *e, cl_mem_flags flags, size_t bytes, void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, host, &err);
    CHECK(err);
    return m;
}

static inline void ex_done(struct ex *e)
{
    CHECK(clReleaseCommandQueue(e->q));
    CHECK(clReleaseContext(e->ctx));
}

/* The result, to compare the problem and fixed versions: sum of |x|. */
static inline void ex_checksum(const char *what, const float *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += fabs((double)x[i]);
    printf("checksum %s %.6e\n", what, s);
}
#endif
