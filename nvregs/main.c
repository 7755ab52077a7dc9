/* cltrace-nvregs: NVIDIA's register counts of one program, compiled in a
 * process of its own. The shim (capture/nvbuild.c) runs it after the app's
 * clBuildProgram for an NVIDIA device, with the program's source on
 * standard input:
 *
 *     cltrace-nvregs PLATFORM DEVICE INDEX OPTIONS CACHE_FILE DEFER_MS
 *
 * It builds the source for the device named DEVICE (the INDEX-th of the
 * platform named PLATFORM where that one is so named, else the first so
 * named) with OPTIONS (the app's plus -cl-nv-verbose), an empty kernel of
 * its own added (new to NVIDIA's compute cache), writes the build log
 * on standard output and keeps it in CACHE_FILE (written whole or not at
 * all) where it tells counts, so that later runs compile nothing.
 *
 * Why a process: built on a thread of cltrace's beside the app, NVIDIA's
 * compiler (580.159, an H200 host) crashed in it on every run of the copy
 * example while the app went on calling the driver; built inside the app's
 * clBuildProgram it doubled a first build (nbody: 2.24x). A process of its
 * own shares nothing with the app's driver, and the app's build is its own.
 * Never run under the shim (the shim leaves LD_PRELOAD out of its
 * environment). It starts the driver once the app has ended, or DEFER_MS
 * after it was started, whichever comes first (the shim gives
 * CLT_NVREGS_DEFER_MS, or 0 where every command is timed).
 * Exit status: 0 built (the log written), 1 not. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/nvregs_cache.h"

/* With CLTRACE_DEBUG_NV: each step's time on standard error */
static void step(const char *what)
{
    static struct timespec t0;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (!t0.tv_sec)
        t0 = t;
    if (getenv("CLTRACE_DEBUG_NV"))
        fprintf(stderr, "cltrace-nvregs: %s at %.1f ms\n", what,
                (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6);
}

/* The driver's start begun beside the app slowed the app's last calls: a
 * first run of nbody, copy --fixed, underfill took 1.10-1.18x a warm run's
 * time (75-90 ms more inside the process, an H200, 2026-12-01, 7 each),
 * with a stand-in helper that does not touch the driver 0.96-1.06x. So it
 * waits for its parent, the app, to end (reparented: the app's files and
 * memory are gone by then), defer_ms at most: a run that goes on longer
 * still gets its counts, a shorter one leaves them to the next run. */
static void wait_for_app(unsigned defer_ms)
{
    pid_t app = getppid();
    unsigned waited = 0;
    for (; waited < defer_ms && getppid() == app; waited += 10)
        usleep(10000);
    if (defer_ms)
        step(waited < defer_ms ? "the app ended" : "the app still runs");
}

/* Standard input whole, NUL-terminated (NULL: none, or no memory) */
static char *read_all(FILE *in)
{
    size_t n = 0, cap = 1 << 16;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, in)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    if (s)
        s[n] = 0;
    return s && n ? s : (free(s), NULL);
}

static int named(cl_platform_id p, cl_device_id d, const char *want)
{
    char name[256] = "";
    if (p)
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL);
    else
        clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL);
    name[sizeof name - 1] = 0;
    return strcmp(name, want) == 0;
}

/* The device: the index-th of the named platform where so named, else its first so named */
static cl_device_id find_device(const char *platform, const char *device, unsigned index)
{
    cl_platform_id ps[16];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(16, ps, &np);
    int debug = getenv("CLTRACE_DEBUG_NV") != NULL;
    if (debug)
        fprintf(stderr, "cltrace-nvregs: %u platforms (error %d), '%s' '%s' #%u wanted\n", np, err, platform, device, index);
    if (err != CL_SUCCESS)
        return NULL;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_device_id ds[64];
        cl_uint nd = 0;
        if (debug) {
            char name[256] = "";
            clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
            fprintf(stderr, "cltrace-nvregs: platform %u '%s'\n", i, name);
        }
        if (!named(ps[i], NULL, platform) || clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 64, ds, &nd) != CL_SUCCESS)
            continue;
        if (nd > 64)
            nd = 64;
        if (index < nd && named(NULL, ds[index], device))
            return ds[index];
        for (cl_uint k = 0; k < nd; k++)
            if (named(NULL, ds[k], device))
                return ds[k];
    }
    return NULL;
}

/* The build's log (malloc'd), or NULL where it did not build */
static char *build_log(cl_device_id dev, const char *src, const char *options)
{
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!ctx)
        return NULL;
    step("context made");
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    char *log = NULL;
    size_t n = 0;
    if (prog && clBuildProgram(prog, 1, &dev, options, NULL, NULL) == CL_SUCCESS &&
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS &&
        (log = calloc(1, n + 1)) != NULL &&
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS)
        log[0] = 0;
    if (prog)
        clReleaseProgram(prog);
    clReleaseContext(ctx);
    return log;
}

int main(int argc, char **argv)
{
    sigset_t none;             /* the shim's thread that started it blocks every signal */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (argc != 7) {
        fprintf(stderr, "usage: cltrace-nvregs PLATFORM DEVICE INDEX OPTIONS CACHE_FILE DEFER_MS < SOURCE\n");
        return 2;
    }
    step("started");
    char *src = read_all(stdin);
    step("source read");
    wait_for_app((unsigned)strtoul(argv[6], NULL, 10));
    cl_device_id dev = src ? find_device(argv[1], argv[2], (unsigned)strtoul(argv[3], NULL, 10)) : NULL;
    step("device found");
    /* a kernel of its own, new each run: NVIDIA's compute cache answers a
     * build it holds (the same PTX) with no ptxas lines, whatever the
     * options; turned off (CUDA_CACHE_DISABLE) the driver compiles its own
     * modules again at the context's start (1.5 s on an H200 host) */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char *unique = NULL;
    if (src && asprintf(&unique, "%s\n__kernel void cltrace_nvregs_%ld_%ld(void) {}\n", src, (long)now.tv_sec,
                        now.tv_nsec) < 0)
        unique = NULL;
    char *log = dev && unique ? build_log(dev, unique, argv[4]) : NULL;
    step("built");
    if (!log)
        return 1;
    /* kept first (the shim may have stopped waiting: its exit closes the
     * pipe), and only where it tells the counts (or in the tests, whose
     * devices tell none) */
    if (argv[5][0] && (strstr(log, "registers") || getenv("CLTRACE_TEST_NVBUILD_ANY")))
        clt_nvregs_cache_write(argv[5], log);
    signal(SIGPIPE, SIG_IGN);
    fputs(log, stdout);
    fflush(stdout);
    free(log);
    free(unique);
    free(src);
    return 0;
}
