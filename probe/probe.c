/* cltrace-probe (`cltrace probe`): a short calibration run on each OpenCL
 * device — host<->device transfer time over sizes (pageable and pinned
 * memory), launch latency, global memory bandwidth — saved per device in
 * the user's cache (common/probe_file.h). Traces made afterwards carry it,
 * and cltrace-report uses it (what "small" means on this device, the
 * bandwidth a transfer should reach) instead of its fixed defaults.
 * Seed 003's point: measure a device's latencies and bandwidths, do not
 * assume them. Never run under the shim (the launcher unsets it). */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/cache.h"
#include "common/probe_file.h"

#define NSIZES 7
static const uint64_t sizes[NSIZES] = { 4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20 };

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The fastest of `reps` blocking transfers of n bytes from/to host memory h. */
static double transfer_ns(cl_command_queue q, cl_mem b, void *h, uint64_t n, int write, int reps)
{
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        cl_int e = write ? clEnqueueWriteBuffer(q, b, CL_TRUE, 0, n, h, 0, NULL, NULL)
                         : clEnqueueReadBuffer(q, b, CL_TRUE, 0, n, h, 0, NULL, NULL);
        double t = now_ns() - t0;
        if (e != CL_SUCCESS)
            return -1;
        if (!best || t < best)
            best = t;
    }
    return best;
}

static const char *kernels =
    "kernel void empty(void) {}\n"
    "kernel void copy(global const float4 *a, global float4 *b) { size_t i = get_global_id(0); b[i] = a[i]; }\n";

static double event_ns(cl_event ev)
{
    cl_ulong s = 0, e = 0;
    clWaitForEvents(1, &ev);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    clReleaseEvent(ev);
    return e > s ? (double)(e - s) : 0;
}

/* Transfers: the fastest of several, each direction, pageable and pinned,
 * each size; a line fitted to each (bandwidth, fixed cost). */
static void probe_transfers(cl_command_queue q, cl_mem buf, void *page, void *pinned, unsigned ns,
                            struct clt_probe *p, struct clt_probe_fit fit[4])
{
    static const char *const what[4] = { "h2d_pageable", "d2h_pageable", "h2d_pinned", "d2h_pinned" };
    double t_all[4][NSIZES] = { { 0 } };
    /* a warm-up pass (first touches, a driver's threads waking), then the
     * sizes and directions interleaved, so a busy moment on a shared
     * machine spoils one sample of each, not one size's every sample */
    for (int rep = -1; rep < 12; rep++)
        for (unsigned i = 0; i < ns; i++)
            for (int w = 0; w < 4; w++) {
                double t1 = transfer_ns(q, buf, w < 2 ? page : pinned, sizes[i], !(w & 1), sizes[i] <= 262144 ? 3 : 1);
                if (rep >= 0 && t1 > 0 && (!t_all[w][i] || t1 < t_all[w][i]))
                    t_all[w][i] = t1;
            }
    for (int w = 0; w < 4; w++) {
        double *t_ns = t_all[w];
        for (unsigned i = 0; i < ns; i++) {
            char key[40];
            snprintf(key, sizeof key, "%s_ns_%llu", what[w], (unsigned long long)sizes[i]);
            clt_probe_set(p, key, "%.0f", t_ns[i]);
        }
        clt_probe_fit(sizes, t_ns, ns, &fit[w]);
        char key[40];
        snprintf(key, sizeof key, "%s_gbps", what[w]);
        clt_probe_set(p, key, "%.3f", fit[w].gbps);
        snprintf(key, sizeof key, "%s_latency_ns", what[w]);
        clt_probe_set(p, key, "%.0f", fit[w].latency_ns);
    }
}

/* Launches of the empty kernel back to back, then clFinish (ns; -1: failed). */
static double launches_ns(cl_command_queue q, cl_kernel ke, unsigned n)
{
    size_t one = 1;
    double t0 = now_ns();
    for (unsigned i = 0; i < n; i++)
        if (clEnqueueNDRangeKernel(q, ke, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS)
            return -1;
    return clFinish(q) == CL_SUCCESS ? now_ns() - t0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What a queue with profiling on adds to each command, events or not
 * (PoCL reads the clock four times a command): cltrace pays it where it
 * turns profiling on and the driver cannot switch it per command, and
 * counts it in its figure from here. Batches of launches on a plain queue
 * and on a profiling one, each first in turn; the median of the pairs'
 * differences (PoCL, 2 cores: single batches differ by more than the price). */
#define PRICE_PAIRS 21
#define PRICE_BATCH 4000
static void probe_profiling_price(cl_context ctx, cl_device_id dev, cl_kernel ke, struct clt_probe *p)
{
    cl_int err;
    cl_command_queue q[2] = { clCreateCommandQueue(ctx, dev, 0, &err),
                              clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err) };
    double diff[PRICE_PAIRS];
    unsigned n = 0;
    if (q[0] && q[1] && launches_ns(q[0], ke, PRICE_BATCH) > 0 && launches_ns(q[1], ke, PRICE_BATCH) > 0)
        for (unsigned r = 0; r < PRICE_PAIRS; r++) {
            double t[2];
            t[r & 1] = launches_ns(q[r & 1], ke, PRICE_BATCH);
            t[!(r & 1)] = launches_ns(q[!(r & 1)], ke, PRICE_BATCH);
            if (t[0] > 0 && t[1] > 0)
                diff[n++] = (t[1] - t[0]) / PRICE_BATCH;
        }
    if (n > PRICE_PAIRS / 2) {
        qsort(diff, n, sizeof *diff, cmp_double);
        clt_probe_set(p, "profiling_price_ns", "%.1f", diff[n / 2] > 0 ? diff[n / 2] : 0);
    }
    for (unsigned i = 0; i < 2; i++)
        if (q[i])
            clReleaseCommandQueue(q[i]);
}

/* Launches (an empty kernel, enqueue + finish, and its device time) and
 * global memory (a float4 copy over the largest buffer, read + written). */
static void probe_kernels(cl_context ctx, cl_device_id dev, cl_command_queue q, cl_mem buf, uint64_t top,
                          struct clt_probe *p)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernels, NULL, &err);
    if (prog && clBuildProgram(prog, 1, &dev, "", NULL, NULL) == CL_SUCCESS) {
        cl_kernel ke = clCreateKernel(prog, "empty", &err), kc = clCreateKernel(prog, "copy", &err);
        size_t one = 1;
        double launch = 0, dev_ns = 0;
        for (int r = 0; r < 50 && ke; r++) {
            cl_event ev;
            double t0 = now_ns();
            clEnqueueNDRangeKernel(q, ke, 1, NULL, &one, NULL, 0, NULL, &ev);
            clFinish(q);
            double tl = now_ns() - t0, d = event_ns(ev);
            if (!launch || tl < launch)
                launch = tl;
            if (!dev_ns || (d > 0 && d < dev_ns))
                dev_ns = d;
        }
        clt_probe_set(p, "launch_ns", "%.0f", launch);
        clt_probe_set(p, "kernel_min_ns", "%.0f", dev_ns);
        if (ke)
            probe_profiling_price(ctx, dev, ke, p);
        /* global memory: a float4 copy over the largest buffer, read + written */
        cl_mem dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, top, NULL, &err);
        double best = 0;
        size_t items = (size_t)(top / 16);
        for (int r = 0; r < 5 && kc && dst; r++) {
            cl_event ev;
            clSetKernelArg(kc, 0, sizeof buf, &buf);
            clSetKernelArg(kc, 1, sizeof dst, &dst);
            if (clEnqueueNDRangeKernel(q, kc, 1, NULL, &items, NULL, 0, NULL, &ev) != CL_SUCCESS)
                break;
            double d = event_ns(ev);
            if (d > 0 && (!best || d < best))
                best = d;
        }
        if (best)
            clt_probe_set(p, "global_gbps", "%.3f", 2.0 * (double)top / best);
        if (dst)
            clReleaseMemObject(dst);
        if (ke)
            clReleaseKernel(ke);
        if (kc)
            clReleaseKernel(kc);
    }
    if (prog)
        clReleaseProgram(prog);
}

/* The figures saved in the user's cache, whole or not at all: 0, or 1 said. */
static int probe_save(const char *name, const struct clt_probe *p, char *path, size_t path_cap)
{
    char dir[600], tmp[720];
    if (clt_probe_path(name, path, path_cap) != 0 || clt_probe_dir(dir, sizeof dir) != 0 ||
        clt_make_dirs(dir, 0755) != 0) {
        fprintf(stderr, "cltrace probe: no cache folder to write to (set CLTRACE_PROBE_DIR or HOME)\n");
        return 1;
    }
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) {
        fprintf(stderr, "cltrace probe: cannot write %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    fprintf(f, "cltrace-probe 1\n");
    for (unsigned i = 0; i < p->n; i++)
        fprintf(f, "%s %s\n", p->key[i], p->val[i]);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {     /* whole or not at all */
        fprintf(stderr, "cltrace probe: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return 1;
    }
    return 0;
}

static int probe_device(cl_device_id dev, const char *only, int quiet)
{
    char name[256] = "", vendor[256] = "", driver[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof driver, driver, NULL);
    if (only && !strstr(name, only))
        return 0;
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!ctx) {
        fprintf(stderr, "cltrace probe: %s: no context (error %d)\n", name, err);
        return 1;
    }
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    unsigned ns = NSIZES;
    while (ns > 2 && sizes[ns - 1] * 4 > max_alloc)
        ns--;
    uint64_t top = sizes[ns - 1];
    cl_mem buf = q ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, top, NULL, &err) : NULL;
    cl_mem pin = buf ? clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, top, NULL, &err) : NULL;
    void *page = malloc(top), *pinned = NULL;
    if (pin)
        pinned = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, top, 0, NULL, NULL, &err);
    if (!q || !buf || !page || !pinned) {
        fprintf(stderr, "cltrace probe: %s: cannot set up (error %d)\n", name, err);
        return 1;
    }
    memset(page, 1, top);
    memset(pinned, 1, top);
    struct clt_probe p = { 0 };
    char date[32];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    clt_probe_set(&p, "device", "%s", name);
    clt_probe_set(&p, "vendor", "%s", vendor);
    clt_probe_set(&p, "driver", "%s", driver);
    clt_probe_set(&p, "date", "%s", date);
    struct clt_probe_fit fit[4];
    probe_transfers(q, buf, page, pinned, ns, &p, fit);
    /* "small": below the size where the fixed cost of a host-to-device
     * transfer equals its time at full bandwidth (pageable: what most apps use) */
    clt_probe_set(&p, "small_transfer_bytes", "%llu", (unsigned long long)fit[0].small_bytes);
    probe_kernels(ctx, dev, q, buf, top, &p);
    clEnqueueUnmapMemObject(q, pin, pinned, 0, NULL, NULL);
    clFinish(q);
    clReleaseMemObject(pin);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(page);

    char path[700];
    if (probe_save(name, &p, path, sizeof path) != 0)
        return 1;
    if (!quiet) {
        printf("%s (%s, driver %s)\n", name, vendor, driver);
        printf("  host->device: %.2f GB/s pageable, %.2f GB/s pinned; %.1f us per transfer\n", fit[0].gbps,
               fit[2].gbps, fit[0].latency_ns / 1e3);
        printf("  device->host: %.2f GB/s pageable, %.2f GB/s pinned; %.1f us per transfer\n", fit[1].gbps,
               fit[3].gbps, fit[1].latency_ns / 1e3);
        printf("  small transfers: below %llu bytes (the fixed cost equals the time at full bandwidth)\n",
               (unsigned long long)fit[0].small_bytes);
        const char *l = clt_probe_get(&p, "launch_ns"), *g = clt_probe_get(&p, "global_gbps");
        if (l)
            printf("  launch + finish of an empty kernel: %.1f us\n", atof(l) / 1e3);
        if (g)
            printf("  global memory (copy kernel): %.1f GB/s\n", atof(g));
        const char *pp = clt_probe_get(&p, "profiling_price_ns");
        if (pp)
            printf("  a command on a queue with profiling on: +%.2f us\n", atof(pp) / 1e3);
        printf("  saved to %s\n", path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q"))
            quiet = 1;
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: cltrace probe [--device NAME-PART] [-q]\n\n"
                            "Measures each OpenCL device (a few seconds): transfer time over sizes, pageable\n"
                            "and pinned; launch latency; global memory bandwidth. Saves it per device in\n"
                            "$CLTRACE_PROBE_DIR, else $XDG_CACHE_HOME/cltrace/probe, else ~/.cache/cltrace/probe.\n"
                            "Traces made afterwards carry it; cltrace-report uses it (what \"small\" means on\n"
                            "this device) and says when it falls back to its defaults.\n");
            return !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") ? 0 : 2;
        }
    }
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np) {
        fprintf(stderr, "cltrace probe: no OpenCL platform\n");
        return 1;
    }
    int rc = 0, seen = 0;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 16; d++) {
            rc |= probe_device(devs[d], only, quiet);
            seen++;
        }
    }
    if (!seen)
        fprintf(stderr, "cltrace probe: no OpenCL device\n");
    return rc || !seen;
}
