/* How to time a sample of commands without turning profiling on for the
 * whole queue: on NVIDIA's driver a queue with profiling on makes every
 * host-to-device write ~7 us slower (scripts/evcollect.c), which a sampled
 * trace cannot avoid while profiling is a property of the app's queue.
 * Measured side by side (min and median of interleaved reps, us per
 * iteration of the loop, wall time), with the data checked after each run:
 *
 *   plain      the app's queue as the app made it: no profiling
 *   profiling  the queue with profiling on (what cltrace does today)
 *   toggle/K   plain queue; every K-th iteration profiling is switched on
 *              for its commands with clSetCommandQueueProperty (OpenCL 1.0,
 *              deprecated) and off again
 *   shadow/K   plain queue; every K-th iteration its commands go to a second
 *              queue of the same device with profiling on, ordered by a
 *              marker on the app's queue before and a barrier after
 *
 * Loops: write (4 KiB write + kernel + clFinish) and launch (kernels back to
 * back, one clFinish).
 *
 *   cc -O2 -o profq scripts/profq.c -lOpenCL
 *   CLBENCH_PLATFORM=NVIDIA ./profq 4000 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clbench_platform.h"

#define CHECK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: %d\n", __FILE__, __LINE__, e_); exit(1); } } while (0)

static cl_context ctx;
static cl_device_id dev;
static cl_kernel kern;
static cl_mem buf;
static int host[1024];
static int can_toggle;      /* clSetCommandQueueProperty works on this driver */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

enum { PLAIN, PROFILING, TOGGLE, SHADOW, N_MODES };
static const char *names[] = { "plain", "profiling", "toggle", "shadow" };

struct timed { cl_event ev[2]; int n; };

/* One iteration's commands on q, or on s ordered after and before q's. */
static void commands(cl_command_queue q, cl_command_queue s, int write, struct timed *t)
{
    size_t gws = 1024, lws = 64;
    cl_command_queue on = s ? s : q;
    cl_event before = NULL;
    if (s)
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &before));
    cl_event *ev = t ? t->ev : NULL;
    if (write)
        CHECK(clEnqueueWriteBuffer(on, buf, CL_FALSE, 0, sizeof host, host, s ? 1 : 0, s ? &before : NULL,
                                   ev ? &ev[0] : NULL));
    CHECK(clEnqueueNDRangeKernel(on, kern, 1, NULL, &gws, &lws, s && !write ? 1 : 0, s && !write ? &before : NULL,
                                 ev ? &ev[write] : NULL));
    if (t)
        t->n = write + 1;
    if (s) {
        clFlush(s);
        CHECK(clEnqueueBarrierWithWaitList(q, 1, &ev[write], NULL));
        clReleaseEvent(before);
    }
}

/* us per iteration; *ok: the timed commands had profiling data and the
 * buffer holds what the loop computed */
static double run(int mode, int write, int every, long n, int *ok)
{
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, mode == PROFILING ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    CHECK(e);
    cl_command_queue s = NULL;
    if (mode == SHADOW) {
        s = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
        CHECK(e);
    }
    memset(host, 0, sizeof host);
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    long timed = 0, with_times = 0;
    cl_event *kept = calloc(2 * (size_t)n, sizeof *kept);    /* read after the loop, as a tracer would */
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        int sample = (mode == TOGGLE || mode == SHADOW) && i % every == 0;
        struct timed t = { { NULL, NULL }, 0 };
        if (sample && mode == TOGGLE)
            CHECK(clSetCommandQueueProperty(q, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, NULL));
        commands(q, sample && mode == SHADOW ? s : NULL, write, sample ? &t : NULL);
        if (sample && mode == TOGGLE)
            CHECK(clSetCommandQueueProperty(q, CL_QUEUE_PROFILING_ENABLE, CL_FALSE, NULL));
        if (write)
            clFinish(q);
        for (int k = 0; k < t.n; k++)
            kept[timed++] = t.ev[k];
    }
    clFinish(q);
    double us = (now_ns() - t0) / 1e3 / n;
    for (long k = 0; k < timed; k++) {
        cl_ulong a = 0, b = 0;
        if (clGetEventProfilingInfo(kept[k], CL_PROFILING_COMMAND_START, 8, &a, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(kept[k], CL_PROFILING_COMMAND_END, 8, &b, NULL) == CL_SUCCESS && b >= a && a)
            with_times++;
        clReleaseEvent(kept[k]);
    }
    free(kept);
    int out[1024];
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    /* each write sets 0, then the kernel adds 1: 1 at the end; the launch
     * loop adds 1 per launch */
    int want = write ? 1 : (int)n;
    *ok = out[0] == want && out[1023] == want && with_times == timed;
    clReleaseCommandQueue(q);
    if (s)
        clReleaseCommandQueue(s);
    return us;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4000;
    cl_platform_id p = clbench_platform();
    char pname[128] = "";
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int e;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    const char *src = "__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }";
    cl_program pr = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(pr, 1, &dev, "", NULL, NULL));
    kern = clCreateKernel(pr, "k", &e);
    CHECK(e);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
    CHECK(e);
    CHECK(clSetKernelArg(kern, 0, sizeof buf, &buf));
    if (strstr(pname, "NVIDIA")) {   /* does the driver let a queue's profiling be switched? (PoCL
                                        through ocl-icd has no entry for it: a NULL call) */
        cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
        CHECK(e);
        cl_command_queue_properties old = 0;
        cl_int st = clSetCommandQueueProperty(q, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, &old);
        printf("clSetCommandQueueProperty: %d\n", st);
        can_toggle = st == CL_SUCCESS;
        clReleaseCommandQueue(q);
    }
    enum { REPS = 5 };
    static const int every[] = { 1, 64 };
    for (int write = 1; write >= 0; write--) {
        long iters = write ? n : n * 4;
        for (unsigned ev = 0; ev < 2; ev++) {
            double us[N_MODES][REPS];
            int ok[N_MODES] = { 1, 1, 1, 1 };
            for (int r = 0; r < REPS; r++)
                for (int m = 0; m < N_MODES; m++) {
                    int good = 0;
                    if (m == TOGGLE && !can_toggle) {
                        us[m][r] = 0;
                        continue;
                    }
                    us[m][r] = run(m, write, every[ev], iters, &good);
                    ok[m] &= good;
                }
            printf("%s loop, %ld iterations, sample 1 in %d: us per iteration, min / median of %d\n",
                   write ? "write 4 KiB + kernel + finish" : "launch", iters, every[ev], REPS);
            for (int m = 0; m < N_MODES; m++) {
                qsort(us[m], REPS, sizeof(double), cmp);
                printf("  %-10s %8.2f %8.2f  %s\n", names[m], us[m][0], us[m][REPS / 2], ok[m] ? "ok" : "WRONG");
            }
        }
    }
    return 0;
}
