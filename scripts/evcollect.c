/* How to time every command cheaply on a driver: what the calling thread pays
 * per kernel launch for each way of collecting completions, measured side by
 * side (min of reps). Also what an event costs on a marker, a small write, a
 * fill and a kernel (cltrace measures its own event cost on one of them) and how tightly the device clock can be tied
 * to the host's with enqueue brackets.
 *
 *   cc -O2 -pthread -o evcollect scripts/evcollect.c -lOpenCL
 *   CLBENCH_PLATFORM=NVIDIA ./evcollect 20000
 *
 * Modes (n launches back to back, one clFinish):
 *   plain       no event, on a queue without profiling (the app's queue
 *               untraced: cltrace turns profiling on, so the price of
 *               timing a launch is event - plain, as issue 12 measured it)
 *   none        no event (on the profiling queue, as every mode below)
 *   event       an event per launch, released right away by the caller
 *   held        an event per launch, all kept until the clFinish and read
 *               and released after it (what cltrace's collector does while
 *               the app enqueues): does the driver charge for live events?
 *   poll        events handed to a collector thread that polls the oldest
 *               (CL_PROFILING_COMMAND_END first; the status only when that fails)
 *   wait        a collector thread that clWaitForEvents on the oldest
 *   callback    clSetEventCallback on every launch (what cltrace did)
 *   cb64        a callback on every 64th launch; the collector reads the rest */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clbench_platform.h"

#define CHECK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: %d\n", __FILE__, __LINE__, e_); exit(1); } } while (0)

static double now_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

enum { PLAIN, NONE, EVENT, HELD, POLL, WAIT, CALLBACK, CB64, N_MODES };
static const char *mode_names[] = { "plain", "none", "event", "held", "poll", "wait", "callback", "cb64" };

/* The hand-over: a bounded ring the caller fills and the collector empties. */
#define RING 65536
static cl_event ring[RING];
static _Atomic long ring_head, ring_tail, collected;
static _Atomic int stop, mode;
static _Atomic long cb_mark;

static void CL_CALLBACK on_done(cl_event e, cl_int st, void *u)
{
    (void)e; (void)st;
    __atomic_store_n(&cb_mark, (long)(intptr_t)u, __ATOMIC_RELEASE);
}

static int read_times(cl_event e)
{
    cl_ulong t[4];
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &t[3], NULL) != CL_SUCCESS) {
        cl_int st = 1;
        clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        if (st > 0)
            return 0;
    }
    for (int i = 0; i < 3; i++)
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED + i, 8, &t[i], NULL);
    clReleaseEvent(e);
    return 1;
}

static void *collector(void *arg)
{
    (void)arg;
    long idle_ns = 20000;
    for (;;) {
        long tail = __atomic_load_n(&ring_tail, __ATOMIC_RELAXED);
        long head = __atomic_load_n(&ring_head, __ATOMIC_ACQUIRE);
        if (tail == head) {
            if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
                return NULL;
        } else {
            cl_event e = ring[tail % RING];
            int m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
            if (m == WAIT)
                clWaitForEvents(1, &e);
            if (m == CB64 && __atomic_load_n(&cb_mark, __ATOMIC_ACQUIRE) < tail && head - tail < 64 &&
                !__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
                /* nothing signalled yet: wait */
            } else if (read_times(e)) {
                __atomic_store_n(&ring_tail, tail + 1, __ATOMIC_RELEASE);
                __atomic_fetch_add(&collected, 1, __ATOMIC_RELAXED);
                idle_ns = 20000;
                continue;
            }
        }
        struct timespec ts = { 0, idle_ns };
        nanosleep(&ts, NULL);
        if (idle_ns < 1000000)
            idle_ns *= 2;
    }
}

static cl_command_queue q, plain_q;      /* with profiling; without */
static cl_kernel k;

static void run(int m, long n, double *wall, double *cpu)
{
    size_t g = 64, l = 16;
    pthread_t thr;
    __atomic_store_n(&mode, m, __ATOMIC_RELAXED);
    __atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cb_mark, -1, __ATOMIC_RELAXED);
    int threaded = m == POLL || m == WAIT || m == CB64;
    if (threaded)
        pthread_create(&thr, NULL, collector, NULL);
    double t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < n; i++) {
        cl_event e = NULL;
        CHECK(clEnqueueNDRangeKernel(m == PLAIN ? plain_q : q, k, 1, NULL, &g, &l, 0, NULL,
                                     m == NONE || m == PLAIN ? NULL : &e));
        if (m == EVENT)
            clReleaseEvent(e);
        if (m == HELD)
            ring[i % RING] = e;       /* n <= RING (main) */
        if (m == CALLBACK)
            CHECK(clSetEventCallback(e, CL_COMPLETE, on_done, (void *)(intptr_t)i));
        if (m == CB64 && i % 64 == 63)
            CHECK(clSetEventCallback(e, CL_COMPLETE, on_done, (void *)(intptr_t)i));
        if (threaded) {
            long head = __atomic_load_n(&ring_head, __ATOMIC_RELAXED);
            while (head - __atomic_load_n(&ring_tail, __ATOMIC_ACQUIRE) >= RING)
                ;
            ring[head % RING] = e;
            __atomic_store_n(&ring_head, head + 1, __ATOMIC_RELEASE);
        }
    }
    CHECK(clFinish(m == PLAIN ? plain_q : q));
    *wall = (now_ns(CLOCK_MONOTONIC) - t0) / n;
    *cpu = (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / n;
    for (long i = 0; m == HELD && i < n; i++)      /* collected at the pause, untimed */
        read_times(ring[i]);
    if (threaded) {
        __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        pthread_join(thr, NULL);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* An event's cost on other commands, each with and without one: what
 * cltrace can measure without running the app's kernels (it uses one). */
static cl_mem small;
static int enqueue_kind(int kind, cl_event *e)
{
    static int word;
    static const int zero = 0;
    switch (kind) {
    case 0: return clEnqueueMarkerWithWaitList(q, 0, NULL, e);
    case 1: return clEnqueueWriteBuffer(q, small, CL_FALSE, 0, 4, &word, 0, NULL, e);
    case 2: return clEnqueueFillBuffer(q, small, &zero, 4, 0, 4, 0, NULL, e);
    default: {
        size_t g = 64, l = 16;
        return clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, e);
    }
    }
}

static void event_costs(long n)
{
    static const char *kinds[] = { "marker", "write 4 B", "fill 4 B", "kernel" };
    for (int kind = 0; kind < 4; kind++) {
        double best[2] = { 1e30, 1e30 };
        for (int rep = 0; rep < 5; rep++)
            for (int ev = 0; ev < 2; ev++) {
                double t0 = now_ns(CLOCK_MONOTONIC);
                for (long i = 0; i < n; i++) {
                    cl_event e;
                    CHECK(enqueue_kind(kind, ev ? &e : NULL));
                    if (ev)
                        clReleaseEvent(e);
                }
                double t = (now_ns(CLOCK_MONOTONIC) - t0) / n;
                CHECK(clFinish(q));
                if (t < best[ev])
                    best[ev] = t;
            }
        printf("%-10s %8.0f ns without an event, %8.0f ns with one: an event costs %6.0f ns\n", kinds[kind],
               best[0], best[1], best[1] - best[0]);
    }
    /* the same, interleaved one by one (what cltrace does on a queue) */
    for (int kind = 0; kind < 4; kind++) {
        double sum[2] = { 0, 0 };
        for (long i = 0; i < 64; i++)
            for (int ev = 0; ev < 2; ev++) {
                cl_event e;
                double t0 = now_ns(CLOCK_MONOTONIC);
                CHECK(enqueue_kind(kind, ev ? &e : NULL));
                sum[ev] += now_ns(CLOCK_MONOTONIC) - t0;
                if (ev)
                    clReleaseEvent(e);
            }
        CHECK(clFinish(q));
        printf("%-10s interleaved x64: %8.0f ns without, %8.0f ns with an event\n", kinds[kind], sum[0] / 64,
               sum[1] / 64);
    }
}

/* Command(s) + clFinish on a queue without and with profiling (cltrace
 * turns profiling on for every queue): no events either way. Which command
 * shows the difference decides what cltrace calibrates with. */
static void profiling_queue(cl_context ctx, cl_device_id d, long n)
{
    cl_int e;
    static char host[4096];
    static const int zero = 0;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
    CHECK(e);
    static const char *what[] = { "write 4 KiB + kernel + finish", "fill 4 B + finish", "write 4 B + finish",
                                  "write 4 KiB + finish", "kernel + finish" };
    for (int kind = 0; kind < 5; kind++) {
        double best[2] = { 1e30, 1e30 };
        for (int rep = 0; rep < 5; rep++)
            for (int prof = 0; prof < 2; prof++) {
                cl_command_queue pq = clCreateCommandQueue(ctx, d, prof ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
                CHECK(e);
                size_t g = 64, l = 16;
                double t0 = now_ns(CLOCK_MONOTONIC);
                for (long i = 0; i < n; i++) {
                    if (kind == 0 || kind == 3)
                        CHECK(clEnqueueWriteBuffer(pq, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
                    if (kind == 1)
                        CHECK(clEnqueueFillBuffer(pq, buf, &zero, 4, 0, 4, 0, NULL, NULL));
                    if (kind == 2)
                        CHECK(clEnqueueWriteBuffer(pq, buf, CL_FALSE, 0, 4, host, 0, NULL, NULL));
                    if (kind == 0 || kind == 4)
                        CHECK(clEnqueueNDRangeKernel(pq, k, 1, NULL, &g, &l, 0, NULL, NULL));
                    CHECK(clFinish(pq));
                }
                double t = (now_ns(CLOCK_MONOTONIC) - t0) / n;
                if (t < best[prof])
                    best[prof] = t;
                clReleaseCommandQueue(pq);
            }
        printf("%-30s %8.0f ns per iteration on a plain queue, %8.0f with profiling on\n", what[kind], best[0],
               best[1]);
    }
    clReleaseMemObject(buf);
}

/* Enqueue brackets: the device's QUEUED time was taken while the host clock
 * was inside [t0, t1]; the offset host - device is then inside [t0-Q, t1-Q]. */
static void brackets(cl_device_id d, long n)
{
    cl_ulong dev = 0, host = 0;
    cl_int st = clGetDeviceAndHostTimer(d, &dev, &host);
    printf("clGetDeviceAndHostTimer: status %d (device %llu host %llu)\n", st, (unsigned long long)dev,
           (unsigned long long)host);
    double *w = malloc(sizeof(double) * n), lo = -1e30, hi = 1e30, lo1 = -1e30, hi1 = 1e30;
    double first_mid = 0, last_mid = 0, t_first = 0, t_last = 0;
    for (long i = 0; i < n; i++) {
        cl_event e;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
        clock_gettime(CLOCK_MONOTONIC, &b);
        CHECK(clWaitForEvents(1, &e));
        cl_ulong qd;
        CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, 8, &qd, NULL));
        clReleaseEvent(e);
        double h0 = a.tv_sec * 1e9 + a.tv_nsec, h1 = b.tv_sec * 1e9 + b.tv_nsec;
        w[i] = h1 - h0;
        double l_ = h0 - (double)qd, u_ = h1 - (double)qd;
        if (l_ > lo) lo = l_;
        if (u_ < hi) hi = u_;
        if (i >= n - 64) {
            if (l_ > lo1) lo1 = l_;
            if (u_ < hi1) hi1 = u_;
        }
        if (i == 0) { first_mid = (l_ + u_) / 2; t_first = h0; }
        t_last = h0;
        last_mid = (l_ + u_) / 2;
        struct timespec z = { 0, 200000 };
        nanosleep(&z, NULL);
    }
    qsort(w, (size_t)n, sizeof *w, cmp);
    printf("brackets over %ld markers, %.1f ms: width min %.0f median %.0f ns; all-sample window %.0f ns; "
           "last 64: %.0f ns; drift %.2f us/s\n", n, (t_last - t_first) / 1e6, w[0], w[n / 2], hi - lo,
           hi1 - lo1, (last_mid - first_mid) / ((t_last - t_first) / 1e9) / 1e3);
    free(w);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    if (n > RING)
        n = RING;
    cl_platform_id p = clbench_platform();
    cl_device_id d;
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    CHECK(e);
    const char *src = "__kernel void k(__global int *a, int v) { a[get_global_id(0)] += v; }";
    cl_program pr = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(pr, 1, &d, "", NULL, NULL));
    k = clCreateKernel(pr, "k", &e);
    CHECK(e);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    CHECK(e);
    int v = 1;
    CHECK(clSetKernelArg(k, 0, sizeof b, &b));
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    q = clCreateCommandQueue(ctx, d, CL_QUEUE_PROFILING_ENABLE, &e);
    CHECK(e);
    plain_q = clCreateCommandQueue(ctx, d, 0, &e);
    CHECK(e);
    enum { REPS = 5 };
    double wall[N_MODES][REPS], cpu[N_MODES][REPS];
    for (int rep = 0; rep < REPS; rep++)       /* interleaved: every mode sees the same machine */
        for (int m = 0; m < N_MODES; m++)
            run(m, n, &wall[m][rep], &cpu[m][rep]);
    /* the event's price paired within each rep (the two ran back to back):
     * a median of differences, which one slow untraced run cannot skew */
    double paired[REPS], held[REPS], timed[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        paired[rep] = wall[EVENT][rep] - wall[NONE][rep];
        held[rep] = wall[HELD][rep] - wall[EVENT][rep];
        timed[rep] = wall[EVENT][rep] - wall[PLAIN][rep];
    }
    qsort(paired, REPS, sizeof(double), cmp);
    qsort(held, REPS, sizeof(double), cmp);
    qsort(timed, REPS, sizeof(double), cmp);
    printf("%-10s %14s %14s %14s   (ns per launch on the calling thread, %ld launches, %d reps)\n", "mode",
           "wall min", "wall median", "cpu min", n, REPS);
    for (int m = 0; m < N_MODES; m++) {
        qsort(wall[m], REPS, sizeof(double), cmp);
        qsort(cpu[m], REPS, sizeof(double), cmp);
        printf("%-10s %14.0f %14.0f %14.0f\n", mode_names[m], wall[m][0], wall[m][REPS / 2], cpu[m][0]);
    }
    printf("paired     event - none in each rep: %.0f ns median, %.0f min\n", paired[REPS / 2], paired[0]);
    printf("paired     event - plain in each rep: %.0f ns median, %.0f min (an event and profiling on the queue: "
           "the driver's price of timing a launch)\n", timed[REPS / 2], timed[0]);
    printf("paired     held - event in each rep: %.0f ns median, %.0f min (what keeping %ld events alive costs)\n",
           held[REPS / 2], held[0], n);
    small = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &e);
    CHECK(e);
    event_costs(n / 4);
    profiling_queue(ctx, d, n / 4);
    brackets(d, 2000);
    return 0;
}
