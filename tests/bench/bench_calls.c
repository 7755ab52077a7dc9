/* Benchmark loops, each timed in thread CPU time on the calling thread:
 *   bench_calls setarg N [--fake]   N x clSetKernelArg
 *   bench_calls enqueue N           N x (write 4 KiB + kernel + clFinish)
 *   bench_calls small N             N x blocking 1 KiB clEnqueueWriteBuffer (many small
 *                                   transfers: the self-cost check, scripts/selfcost-check.py)
 *   bench_calls smallev N           the same on a profiling queue, each write asking for an
 *                                   event (released after the loop): the driver's price
 *   bench_calls enqueueev N         the write loop on a profiling queue, the write and the
 *                                   kernel each asking for an event (released after the loop)
 *   bench_calls ndrange N --fake    N x clEnqueueNDRangeKernel, no event, no sync
 *   bench_calls launch N            N x clEnqueueNDRangeKernel back to back, one clFinish
 *                                   (launch-bound: scripts/gpu-overhead.sh)
 *   bench_calls busy N              N launches of a kernel looping 200 times an item
 *                                   (~0.1 ms on PoCL, 2 cores), one clFinish: a loop
 *                                   bound by the device, which PoCL runs on the app's cores
 *   bench_calls launchev N          the same on a profiling queue, each launch asking
 *                                   for an event (released after the loop, as cltrace's
 *                                   collector does): the floor the driver sets for
 *                                   timing every launch of this program
 *   bench_calls create N --fake     N x (clCreateBuffer + clReleaseMemObject),
 *                                   made 12 calls deep (a creation call stack)
 *   bench_calls touch N             no OpenCL: N fresh pages written once each, then
 *                                   again; prints "first_touch_ns X" and "again_ns X" a
 *                                   page (what a page cltrace touches costs this host)
 * --nap-us N: idle N us after the loop, before main returns (a program whose
 * exit comes later: scripts/teardown-check.py).
 * --pause-us N: idle N us just before the loop (outside its time): a
 * control for what the threads made at the start (the driver's, a tool's)
 * leave behind in the scheduler's accounts, which decays within tenths of a
 * second.
 * --steps S --step-pause-us N: the loop in S steps (each ending as its loop
 * does: a launch loop in clFinish), N us idle after each, outside its time
 * (a program that pauses: cltrace's collector collects then).
 * --last-dso PATH: load PATH (tests/bench/last_fini.c) just before main
 * returns: loaded after the driver and everything else, it is finalized
 * after them, and its destructor prints "last_fini_mono_ns T", the user
 * space's end; what follows is the kernel's end of the process.
 * Prints "ns_per_call X" (thread CPU), "wall_ns_per_call X", with --mem
 * VmHWM after each tenth of N, and "phases_mono_ns START LOOP0 LOOP1 END":
 * CLOCK_MONOTONIC at main's start, the loop's start and end, and main's
 * return, then "setup_mono_ns CONTEXT QUEUE BUILD": when the context, the
 * queue and the program build were made (scripts/selfcost-check.py splits a
 * run's slowdown with them). OCL_PLATFORM=<substring> picks a platform
 * (none of that name: exit 2).
 * bench_loop_* are separate functions so callgrind can count just them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static cl_kernel kern, spin;
static cl_command_queue queue;
static cl_mem buf;
static float host[1024];

static long hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

__attribute__((noinline)) void bench_loop_setarg(long n)
{
    for (long i = 0; i < n; i++) {
        cl_int v = (cl_int)i;
        clSetKernelArg(kern, 1, sizeof v, &v);   /* succeeds: a failing call would also capture its stack */
    }
}

static cl_event *held;      /* launchev, smallev, enqueueev: the events, released after the loop */

__attribute__((noinline)) void bench_loop_enqueue(long n)
{
    size_t gws = 1024, lws = 64;
    for (long i = 0; i < n; i++) {
        clEnqueueWriteBuffer(queue, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, held ? &held[2 * i] : NULL);
        clEnqueueNDRangeKernel(queue, kern, 1, NULL, &gws, &lws, 0, NULL, held ? &held[2 * i + 1] : NULL);
        clFinish(queue);
    }
}

__attribute__((noinline)) void bench_loop_small(long n)
{
    for (long i = 0; i < n; i++)
        clEnqueueWriteBuffer(queue, buf, CL_TRUE, (size_t)(i % 4) * 1024, 1024, host, 0, NULL, held ? &held[i] : NULL);
}


__attribute__((noinline)) void bench_loop_launch(long n)
{
    size_t gws = 1024, lws = 64;
    for (long i = 0; i < n; i++)
        clEnqueueNDRangeKernel(queue, kern, 1, NULL, &gws, &lws, 0, NULL, held ? &held[i] : NULL);
    clFinish(queue);
}

__attribute__((noinline)) void bench_loop_busy(long n)
{
    size_t gws = 1024, lws = 64;
    for (long i = 0; i < n; i++)
        clEnqueueNDRangeKernel(queue, spin, 1, NULL, &gws, &lws, 0, NULL, NULL);
    clFinish(queue);
}

__attribute__((noinline)) void bench_loop_ndrange(long n)
{
    size_t gws = 1024, lws = 64;
    for (long i = 0; i < n; i++)
        clEnqueueNDRangeKernel(queue, kern, 1, NULL, &gws, &lws, 0, NULL, NULL);
}

static cl_context ctx;

__attribute__((noinline)) void bench_loop_create(long n)
{
    for (long i = 0; i < n; i++) {
        cl_int err;
        cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        clReleaseMemObject(m);
    }
}

/* A creating call rarely comes straight from main: 12 frames deeper. */
__attribute__((noinline)) static void deep(int depth, long n)
{
    if (depth > 0)
        deep(depth - 1, n);
    else
        bench_loop_create(n);
    __asm__ volatile("" ::: "memory");   /* not a tail call: each frame stays */
}

static double clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void idle_us(long us)
{
    struct timespec left = { us / 1000000, us % 1000000 * 1000 };
    while (us > 0 && nanosleep(&left, &left) != 0)
        ;
}

static double thread_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The first write to a fresh page faults (the kernel zeroes and maps it;
 * under a hypervisor with shadow page tables, it traps there too); the
 * second is a store. */
static int bench_touch(long n)
{
    size_t page = 4096, len = (size_t)n * page;
    volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (n < 1 || p == MAP_FAILED)
        return 1;
    double t[3];
    t[0] = clock_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < len; i += page)
        p[i] = 1;
    t[1] = clock_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < len; i += page)
        p[i] = 2;
    t[2] = clock_ns(CLOCK_MONOTONIC);
    printf("first_touch_ns %.0f\nagain_ns %.0f\n", (t[1] - t[0]) / n, (t[2] - t[1]) / n);
    return munmap((void *)p, len) != 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    if (!strcmp(argv[1], "touch"))
        return bench_touch(atol(argv[2]));
    double main0 = clock_ns(CLOCK_MONOTONIC), loop0 = 0, loop1 = 0, t_ctx = 0, t_queue = 0, t_build = 0;
    const char *what = argv[1];
    /* launchev, smallev, enqueueev: the loop of that name on a profiling queue, asking for events */
    int asks_events = !strcmp(what, "launchev") || !strcmp(what, "smallev") || !strcmp(what, "enqueueev");
    long n = atol(argv[2]);
    int fake = 0, mem = 0;
    long nap_us = 0, pause_us = 0, steps = 1, step_pause_us = 0;
    const char *last_dso = NULL;
    for (int i = 3; i < argc; i++) {
        fake |= strcmp(argv[i], "--fake") == 0;
        mem |= strcmp(argv[i], "--mem") == 0;
        if (strcmp(argv[i], "--nap-us") == 0 && i + 1 < argc)
            nap_us = atol(argv[++i]);
        if (strcmp(argv[i], "--pause-us") == 0 && i + 1 < argc)
            pause_us = atol(argv[++i]);
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc && (steps = atol(argv[++i])) < 1)
            steps = 1;
        if (strcmp(argv[i], "--step-pause-us") == 0 && i + 1 < argc)
            step_pause_us = atol(argv[++i]);
        if (strcmp(argv[i], "--last-dso") == 0 && i + 1 < argc)
            last_dso = argv[++i];
    }
    kern = (cl_kernel)(uintptr_t)0x1000;
    if (!fake) {
        cl_platform_id p;
        cl_device_id d;
        cl_int err;
        const char *src = "__kernel void k(__global float *x, int n) { x[get_global_id(0)] += n; }";
        /* busy only: the other modes' call counts are tested (tests/run.sh) */
        const char *spin_src = "__kernel void spin(__global float *x, int n) { float a = x[get_global_id(0)];"
                               " for (int i = 0; i < n; i++) a = a * 0.999f + 1.0f; x[get_global_id(0)] = a; }";
        cl_platform_id ps[8];
        cl_uint np = 0;
        const char *want = getenv("OCL_PLATFORM");
        clGetPlatformIDs(8, ps, &np);
        p = np ? ps[0] : NULL;
        int found = !want || !*want;
        for (cl_uint i = 0; !found && i < np; i++) {
            char name[256] = "";
            clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
            if (strstr(name, want)) {
                p = ps[i];
                found = 1;
            }
        }
        if (!found) {   /* a measurement of another platform than the one asked for is worse than none */
            fprintf(stderr, "bench_calls: no OpenCL platform named like '%s'\n", want);
            return 2;
        }
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
        ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
        t_ctx = clock_ns(CLOCK_MONOTONIC);
        cl_queue_properties prof[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
        queue = clCreateCommandQueueWithProperties(ctx, d, asks_events ? prof : NULL, &err);
        t_queue = clock_ns(CLOCK_MONOTONIC);
        cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (clBuildProgram(prog, 1, &d, NULL, NULL, NULL) != CL_SUCCESS)
            return 1;
        t_build = clock_ns(CLOCK_MONOTONIC);
        kern = clCreateKernel(prog, "k", &err);
        buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
        clSetKernelArg(kern, 0, sizeof buf, &buf);
        cl_int zero = 0, loops = 200;
        clSetKernelArg(kern, 1, sizeof zero, &zero);
        if (strcmp(what, "busy") == 0) {
            cl_program sp = clCreateProgramWithSource(ctx, 1, &spin_src, NULL, &err);
            if (clBuildProgram(sp, 1, &d, NULL, NULL, NULL) != CL_SUCCESS)
                return 1;
            spin = clCreateKernel(sp, "spin", &err);
            clSetKernelArg(spin, 0, sizeof buf, &buf);
            clSetKernelArg(spin, 1, sizeof loops, &loops);
        }
    }
    int setarg = strcmp(what, "setarg") == 0;
    if (asks_events && !fake) {
        held = calloc((size_t)n * 2, sizeof *held);
        if (!held)
            return 1;
        what = what[0] == 'l' ? "launch" : what[0] == 's' ? "small" : "enqueue";
    }
    /* Steady state: the first call of a thread sets up its buffer (and the
     * first of the process the writer); keep that out of the loops. */
    clSetKernelArg(kern, 0, sizeof buf, &buf);
    if (strcmp(what, "launch") == 0 && !fake) {   /* warm: the kernel's first launch */
        size_t gws = 1024, lws = 64;
        clEnqueueNDRangeKernel(queue, kern, 1, NULL, &gws, &lws, 0, NULL, NULL);
        clFinish(queue);
    }
    double t = 0, wall = 0;
    steps = mem ? 10 : steps;
    idle_us(pause_us);
    loop0 = clock_ns(CLOCK_MONOTONIC);
    for (long s = 0; s < steps; s++) {
        double t0 = thread_ns(), w0 = clock_ns(CLOCK_MONOTONIC);
        if (setarg)
            bench_loop_setarg(n / steps);
        else if (strcmp(what, "ndrange") == 0)
            bench_loop_ndrange(n / steps);
        else if (strcmp(what, "launch") == 0)
            bench_loop_launch(n / steps);
        else if (strcmp(what, "create") == 0)
            deep(12, n / steps);
        else if (strcmp(what, "small") == 0)
            bench_loop_small(n / steps);
        else if (strcmp(what, "busy") == 0)
            bench_loop_busy(n / steps);
        else
            bench_loop_enqueue(n / steps);
        t += thread_ns() - t0;
        wall += clock_ns(CLOCK_MONOTONIC) - w0;
        if (mem)
            printf("hwm_kb_after %ld %ld\n", (s + 1) * (n / steps), hwm_kb());
        idle_us(step_pause_us);
    }
    loop1 = clock_ns(CLOCK_MONOTONIC);
    idle_us(nap_us);
    if (!setarg && !fake)
        clSetKernelArg(kern, 0, sizeof buf, &buf);
    for (long i = 0; held && i < 2 * n; i++)      /* after the timing, as cltrace's collector */
        if (held[i])
            clReleaseEvent(held[i]);
    free(held);
    double per = setarg || !strcmp(what, "launch") || !strcmp(what, "ndrange") || !strcmp(what, "small") || !strcmp(what, "busy") ? 1 : strcmp(what, "create") == 0 ? 2 : 3;
    printf("ns_per_call %.1f\n", t / (double)n / per);
    printf("wall_ns_per_call %.1f\n", wall / (double)n / per);
    printf("phases_mono_ns %.0f %.0f %.0f %.0f\n", main0, loop0, loop1, clock_ns(CLOCK_MONOTONIC));
    if (t_build > 0)
        printf("setup_mono_ns %.0f %.0f %.0f\n", t_ctx, t_queue, t_build);
    fflush(stdout);     /* before the destructor's line, which writes past stdio */
    if (last_dso && !dlopen(last_dso, RTLD_NOW)) {
        fprintf(stderr, "bench_calls: %s\n", dlerror());
        return 2;
    }
    return 0;
}
