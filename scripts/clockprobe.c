/* How closely a device's profiling clock can be tied to the host's, on
 * this driver: the evidence cltrace's clock model can use, measured one
 * kind at a time (writer/device.c, "the clock").
 *
 *   marker   an enqueue of a marker with an event brackets its QUEUED time:
 *            offset (host - device) in [before - QUEUED, after - QUEUED];
 *            polled to completion, its END seen over at host time `seen`
 *            bounds the offset from above: offset <= seen - END
 *   kernel   the same with a one-work-item kernel
 *   seen     a marker's END seen by polling its status (what cltrace does),
 *            by polling its END, by clWaitForEvents, by clFinish, by its
 *            status without the clFlush before (flushed only if it is still
 *            CL_QUEUED): which way shows the host sooner that it is over
 *            (the upper bound)?
 *   gtimer   (NVIDIA) a kernel that reads %globaltimer: is it the clock of
 *            the profiling times (START <= globaltimer <= END)?
 *   pingpong (NVIDIA) a kernel that waits for a flag the host sets in
 *            host-visible memory and answers with %globaltimer: the host
 *            brackets the answer by [flag set, answer seen]
 *   linearity bursts of 4 polled markers every 10 ms for 3 s (what cltrace
 *            takes where the app pauses): is the offset a straight line
 *            over hundreds of ms? For each burst, the chord of the bursts
 *            s ms before and after it against its own interval: a chord
 *            that misses the interval contradicts the straight line
 *            (writer/device.c, "chords"); the chord's width against the
 *            burst's own and against aging one burst by 25 ppm over s
 *
 * For each, the bounds' widths (min / median), and the narrowest interval
 * the evidence of a window of 16 to 1,024 samples leaves after the clocks'
 * drift is taken out (offset = lower bound fitted over time): does the
 * floor fall with more samples? Host times: CLOCK_MONOTONIC.
 *
 *   cc -O2 -o clockprobe scripts/clockprobe.c -lOpenCL
 *   CLBENCH_PLATFORM=NVIDIA ./clockprobe [samples] */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clbench_platform.h"

#define CHECK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: %d\n", __FILE__, __LINE__, e_); exit(1); } } while (0)

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t med(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return v[n / 2];
}

/* One piece of evidence: offset in [lo, hi] at host time t. */
struct ev { int64_t t, lo, hi; };

/* Width of the narrowest interval a window of w consecutive samples leaves
 * (their bounds intersected), min and median over the windows, after the
 * clocks' drift is taken out: the slope of the lower bounds over the whole
 * run (least squares), where it is one a clock can have. Left in, it
 * narrows a window by drift x its length: 0.35 us for 1,024 markers over
 * 14 ms at 24 us/s, which looked like more markers narrowing the interval. */
static void windows(const char *what, const struct ev *e, int n, int w)
{
    if (n < w) {
        printf("  %-34s too few samples\n", what);
        return;
    }
    double st = 0, sl = 0, stt = 0, stl = 0;
    for (int i = 0; i < n; i++) {
        double t = (double)(e[i].t - e[0].t), l = (double)(e[i].lo - e[0].lo);
        st += t; sl += l; stt += t * t; stl += t * l;
    }
    double den = n * stt - st * st, drift = den > 0 ? (n * stl - st * sl) / den : 0;
    /* beyond 100 ppm it is the noise of a short run (PoCL's 64 markers over
     * 1.4 ms gave 300), not a clock's drift: left in */
    double out = drift > -100e-6 && drift < 100e-6 ? drift : 0;
    int64_t widths[4096] = { 0 };
    int nw = 0;
    for (int s = 0; s + w <= n && nw < 4096; s += w / 2) {
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        for (int i = s; i < s + w; i++) {
            int64_t d = (int64_t)(out * (double)(e[i].t - e[s].t));
            if (e[i].lo - d > lo) lo = e[i].lo - d;
            if (e[i].hi - d < hi) hi = e[i].hi - d;
        }
        widths[nw++] = hi - lo;
    }
    int64_t mn = widths[0];
    for (int i = 1; i < nw; i++)
        if (widths[i] < mn) mn = widths[i];
    printf("  %-34s window of %d: interval %lld ns min, %lld median (%d windows; drift %.1f us/s over %.1f ms%s)%s\n",
           what, w, (long long)mn, (long long)med(widths, nw), nw, drift * 1e6, (e[n - 1].t - e[0].t) / 1e6,
           out == drift ? "" : ", not taken out",
           mn < 0 ? "  NEGATIVE: the bounds contradict each other" : "");
}

static int64_t prof(cl_event e, cl_profiling_info p)
{
    cl_ulong v = 0;
    CHECK(clGetEventProfilingInfo(e, p, sizeof v, &v, NULL));
    return (int64_t)v;
}

/* The moment e is seen over, polled from host time c (100 ms at most; then waited for). */
static int64_t poll_over(cl_event e, int64_t c)
{
    cl_int st = 1;
    int64_t seen;
    do {
        CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        seen = now_ns();
    } while (st > 0 && seen - c < 100000000);
    if (st > 0) {   /* a loaded machine (two test runs on 2 cores): seen over only after the wait */
        CHECK(clWaitForEvents(1, &e));
        seen = now_ns();
    }
    return seen;
}

/* marker or kernel: brackets and polled ENDs. Where the driver stamps
 * SUBMIT (or START) inside the clFlush that follows the enqueue, the flush
 * call brackets it too: the "in the flush" windows say whether it does (no
 * NEGATIVE: the bounds agree) and how narrow that bracket is. */
static void bracket_probe(const char *name, cl_kernel k, int n)
{
    enum { BR, BOTH, SUB_FLUSH, START_FLUSH, SUB_BOTH, N_SETS };
    static const char *what[N_SETS] = { "QUEUED in the enqueue", "+ polled END", "SUBMIT in the flush",
                                        "START in the flush", "SUBMIT in the flush + polled END" };
    struct ev *sets[N_SETS];
    for (int j = 0; j < N_SETS; j++)
        sets[j] = calloc((size_t)n, sizeof **sets);
    int64_t *call = calloc((size_t)n, 8), *poll = calloc((size_t)n, 8), *run = calloc((size_t)n, 8),
            *single = calloc((size_t)n, 8), *flush = calloc((size_t)n, 8);
    size_t one = 1;
    for (int i = 0; i < n; i++) {
        cl_event e;
        int64_t a = now_ns();
        if (k)
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, &e));
        else
            CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
        int64_t c = now_ns();
        CHECK(clFlush(q));
        int64_t f1 = now_ns();
        int64_t seen = poll_over(e, c);
        int64_t Q = prof(e, CL_PROFILING_COMMAND_QUEUED), E = prof(e, CL_PROFILING_COMMAND_END),
                S = prof(e, CL_PROFILING_COMMAND_SUBMIT), St = prof(e, CL_PROFILING_COMMAND_START);
        clReleaseEvent(e);
        int64_t up = seen - E;
        sets[BR][i] = (struct ev){ a, a - Q, c - Q };
        sets[BOTH][i] = (struct ev){ a, a - Q, up < c - Q ? up : c - Q };
        sets[SUB_FLUSH][i] = (struct ev){ c, c - S, f1 - S };
        sets[START_FLUSH][i] = (struct ev){ c, c - St, f1 - St };
        sets[SUB_BOTH][i] = (struct ev){ c, c - S, up < f1 - S ? up : f1 - S };
        call[i] = c - a;
        flush[i] = f1 - c;
        poll[i] = seen - c;
        run[i] = E - Q;
        single[i] = sets[BOTH][i].hi - sets[BOTH][i].lo;
    }
    int64_t call_med = med(call, n);   /* sorted: call[0] is the shortest */
    printf("%s (%d): enqueue call %lld ns median (min %lld); flush %lld; seen over %lld ns after the call;"
           " END - QUEUED %lld; one sample's interval %lld median\n", name, n, (long long)call_med,
           (long long)call[0], (long long)med(flush, n), (long long)med(poll, n), (long long)med(run, n),
           (long long)med(single, n));
    for (int j = 0; j < N_SETS; j++) {
        for (int w = 16; w <= n && w <= 1024; w *= 4)    /* does the floor fall with more samples? */
            windows(what[j], sets[j], n, w);
        free(sets[j]);
    }
    free(call); free(poll); free(run); free(single); free(flush);
}

/* One burst of 4 markers: the tightest lower and upper bound of the offset
 * it gives, each with the host time it held at. */
struct burst { int64_t tl, l, tu, u; };

static struct burst marker_burst(void)
{
    struct burst b = { 0, INT64_MIN, 0, INT64_MAX };
    for (int i = 0; i < 4; i++) {
        cl_event e;
        int64_t a = now_ns();
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
        int64_t c = now_ns();
        CHECK(clFlush(q));
        int64_t seen = poll_over(e, c);
        int64_t Q = prof(e, CL_PROFILING_COMMAND_QUEUED), E = prof(e, CL_PROFILING_COMMAND_END);
        clReleaseEvent(e);
        if (a - Q > b.l) b.l = a - Q, b.tl = a;
        if (c - Q < b.u) b.u = c - Q, b.tu = c;
        if (seen - E < b.u) b.u = seen - E, b.tu = seen;
    }
    return b;
}

static int64_t chord(int64_t ta, int64_t va, int64_t tb, int64_t vb, int64_t t)
{
    return tb == ta ? va : va + (int64_t)((double)(vb - va) * (double)(t - ta) / (double)(tb - ta));
}

/* How a marker's completion is seen, the upper bound's width being the
 * time from its END to the moment the host sees it: its status polled
 * (what cltrace does), its END polled (clGetEventProfilingInfo fails until
 * the command is complete), clWaitForEvents, clFinish (a driver may wait on
 * the device's own semaphore there rather than on the event's state).
 * Interleaved, n of each. */
static void end_seen_probe(int n)
{
    enum { STATUS, END_POLL, WAIT, FINISH, NO_FLUSH, N_WAYS };
    static const char *what[N_WAYS] = { "marker, END seen by status", "marker, END seen by polling END",
                                        "marker, END seen by clWaitForEvents", "marker, END seen by clFinish",
                                        "marker, status, flushed if queued" };
    struct ev *sets[N_WAYS];
    int64_t *lat[N_WAYS];
    for (int j = 0; j < N_WAYS; j++) {
        sets[j] = calloc((size_t)n, sizeof **sets);
        lat[j] = calloc((size_t)n, sizeof **lat);
    }
    for (int i = 0; i < N_WAYS * n; i++) {
        int way = i % N_WAYS;
        cl_event e;
        int64_t a = now_ns();
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
        int64_t c = now_ns();
        if (way != NO_FLUSH)
            CHECK(clFlush(q));
        int64_t seen = c;
        if (way == NO_FLUSH) {
            /* no clFlush where the enqueue has submitted it already: the
             * flush (~1.5 us on NVIDIA) delays the first look at it */
            cl_int st = 1;
            int flushed = 0;
            do {
                CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
                seen = now_ns();
                if (st == CL_QUEUED && !flushed) {
                    CHECK(clFlush(q));
                    flushed = 1;
                }
            } while (st > 0 && seen - c < 100000000);
        } else if (way == END_POLL) {
            cl_ulong v = 0;
            do {
                cl_int st = clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof v, &v, NULL);
                seen = now_ns();
                if (st == CL_SUCCESS && v)
                    break;
            } while (seen - c < 100000000);
        } else if (way == WAIT) {
            CHECK(clWaitForEvents(1, &e));
            seen = now_ns();
        } else if (way == FINISH) {
            CHECK(clFinish(q));
            seen = now_ns();
        } else {
            seen = poll_over(e, c);
        }
        int64_t Q = prof(e, CL_PROFILING_COMMAND_QUEUED), E = prof(e, CL_PROFILING_COMMAND_END);
        clReleaseEvent(e);
        sets[way][i / N_WAYS] = (struct ev){ a, a - Q, seen - E < c - Q ? seen - E : c - Q };
        lat[way][i / N_WAYS] = seen - c;
    }
    for (int j = 0; j < N_WAYS; j++) {
        windows(what[j], sets[j], n, 16);
        printf("    seen %lld ns after the enqueue returned (median)\n", (long long)med(lat[j], n));
        free(sets[j]);
        free(lat[j]);
    }
}

static void linearity_probe(void)
{
    enum { N = 300 };                     /* 3 s at 10 ms */
    static struct burst b[N];
    for (int i = 0; i < N; i++) {
        int64_t t0 = now_ns();
        b[i] = marker_burst();
        while (now_ns() - t0 < 10000000)
            ;
    }
    static const int spans[] = { 5, 10, 20, 40 };        /* bursts each side: 50 .. 400 ms */
    for (unsigned s = 0; s < sizeof spans / sizeof spans[0]; s++) {
        int k = spans[s], n = 0, bad = 0;
        int64_t worst = INT64_MIN, cw[N], ow[N], aged[N];
        for (int m = k; m + k < N; m++) {
            const struct burst *x = &b[m - k], *y = &b[m + k], *z = &b[m];
            int64_t lo = chord(x->tl, x->l, y->tl, y->l, z->tl), hi = chord(x->tu, x->u, y->tu, y->u, z->tu);
            int64_t miss = lo - z->u > z->l - hi ? lo - z->u : z->l - hi;    /* > 0: the chord misses it */
            bad += miss > 0;
            if (miss > worst) worst = miss;
            cw[n] = hi - lo;
            ow[n] = z->u - z->l;
            int64_t dist = z->tl - x->tl;
            aged[n] = (x->u - x->l) + 2 * dist / 1000 * 25 / 1000;
            n++;
        }
        printf("linearity, chords over %d ms: %d bursts, %d missed by the chord (worst %+lld ns); chord %lld ns wide"
               " (median), a burst %lld, one burst aged 25 ppm over the distance %lld\n", 2 * k * 10, n, bad,
               (long long)worst, (long long)med(cw, n), (long long)med(ow, n), (long long)med(aged, n));
    }
}

static const char *gt_src =
    "ulong gt(void) { ulong t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
    "__kernel void stamp(__global ulong *out) { out[0] = gt(); }\n"
    "__kernel void pingpong(volatile __global uint *flag, volatile __global ulong *out) {\n"
    "  ulong t0 = gt(); flag[1] = 1; mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "  while (flag[0] == 0 && gt() - t0 < 2000000) ;\n"
    "  out[0] = gt(); mem_fence(CLK_GLOBAL_MEM_FENCE); flag[1] = 2; }\n";

static void gtimer_probe(int n)
{
    cl_int err;
    cl_program pr = clCreateProgramWithSource(ctx, 1, &gt_src, NULL, &err);
    if (err || clBuildProgram(pr, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        printf("globaltimer: the program does not build here (not NVIDIA): skipped\n");
        return;
    }
    cl_kernel ks = clCreateKernel(pr, "stamp", &err);
    CHECK(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(ks, 0, sizeof out, &out));
    size_t one = 1;
    int inside = 0;
    int64_t *from_start = calloc((size_t)n, 8), *to_end = calloc((size_t)n, 8);
    for (int i = 0; i < n; i++) {
        cl_event e;
        CHECK(clEnqueueNDRangeKernel(q, ks, 1, NULL, &one, &one, 0, NULL, &e));
        cl_ulong g = 0;
        CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, 8, &g, 0, NULL, NULL));
        int64_t S = prof(e, CL_PROFILING_COMMAND_START), E = prof(e, CL_PROFILING_COMMAND_END);
        clReleaseEvent(e);
        inside += S <= (int64_t)g && (int64_t)g <= E;
        from_start[i] = (int64_t)g - S;
        to_end[i] = E - (int64_t)g;
    }
    printf("globaltimer: %d of %d kernels read it within [START, END]; globaltimer - START %lld ns median,"
           " END - globaltimer %lld\n", inside, n, (long long)med(from_start, n), (long long)med(to_end, n));
    free(from_start); free(to_end);

    /* ping-pong through host-visible memory */
    cl_kernel kp = clCreateKernel(pr, "pingpong", &err);
    CHECK(err);
    cl_mem fb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 64, NULL, &err);
    CHECK(err);
    cl_mem ob = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 64, NULL, &err);
    CHECK(err);
    volatile cl_uint *flag = clEnqueueMapBuffer(q, fb, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 64, 0, NULL, NULL, &err);
    CHECK(err);
    volatile cl_ulong *o = clEnqueueMapBuffer(q, ob, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 64, 0, NULL, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(kp, 0, sizeof fb, &fb));
    CHECK(clSetKernelArg(kp, 1, sizeof ob, &ob));
    struct ev *pp = calloc((size_t)n, sizeof *pp);
    int64_t *w = calloc((size_t)n, 8), *startwait = calloc((size_t)n, 8);
    int ok = 0, started = 0;
    for (int i = 0; i < n; i++) {
        flag[0] = 0;
        flag[1] = 0;
        o[0] = 0;
        __sync_synchronize();
        cl_event e;
        int64_t t0 = now_ns();
        CHECK(clEnqueueNDRangeKernel(q, kp, 1, NULL, &one, &one, 0, NULL, &e));
        CHECK(clFlush(q));
        while (flag[1] == 0 && now_ns() - t0 < 50000000)
            ;
        int64_t h1 = now_ns();
        if (flag[1] == 1) {
            started++;
            flag[0] = 1;
            __sync_synchronize();
            while (flag[1] != 2 && now_ns() - h1 < 50000000)
                ;
        }
        int64_t h2 = now_ns();
        CHECK(clWaitForEvents(1, &e));
        clReleaseEvent(e);
        if (flag[1] == 2 && o[0]) {
            pp[ok] = (struct ev){ h1, h1 - (int64_t)o[0], h2 - (int64_t)o[0] };
            w[ok] = h2 - h1;
            startwait[ok] = h1 - t0;
            ok++;
        }
    }
    printf("pingpong: %d of %d kernels saw the host's flag (%d started visibly)", ok, n, started);
    if (ok) {
        printf("; round trip %lld ns median, launch to start seen %lld\n", (long long)med(w, ok),
               (long long)med(startwait, ok));
        windows("pingpong", pp, ok, 16);
        windows("pingpong", pp, ok, 64);
    } else {
        printf("\n");
    }
    clEnqueueUnmapMemObject(q, fb, (void *)flag, 0, NULL, NULL);
    clEnqueueUnmapMemObject(q, ob, (void *)o, 0, NULL, NULL);
    clFinish(q);
    free(pp); free(w); free(startwait);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512;
    if (n < 64) n = 64;
    if (n > 4096) n = 4096;
    cl_platform_id p = clbench_platform();
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    char name[256];
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("device: %s\n", name);
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
    q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
    CHECK(err);
    cl_ulong dt = 0, ht = 0;
    int64_t a = now_ns();
    err = clGetDeviceAndHostTimer(dev, &dt, &ht);
    printf("clGetDeviceAndHostTimer: %d (%lld ns call)\n", err, (long long)(now_ns() - a));
    const char *src = "__kernel void nop(__global int *x) { if (get_global_id(0) == 12345678) x[0] = 1; }";
    cl_program pr = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(pr, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pr, "nop", &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof b, &b));
    bracket_probe("marker", NULL, n);
    bracket_probe("kernel", k, n);
    end_seen_probe(n);
    gtimer_probe(n);
    linearity_probe();
    return 0;
}
