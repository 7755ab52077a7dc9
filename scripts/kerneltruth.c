/* A kernel's true time, read by the kernel itself: every work-group of every
 * launch stamps NVIDIA's %globaltimer (ns) at its start and after its work,
 * so each launch's span on the device (first group's start to last group's
 * end) is known for all launches, timed or not. Against it: what events say
 * (CL_PROFILING_COMMAND_START..END) when the program times 1 launch in
 * 1,000 (sparse), every launch (all) or none (none: run it under cltrace to
 * see what its default says), flush (sparse, each timed launch flushed at
 * once), alone (sparse, each timed launch alone on the device: clFinish
 * before and after it). bench_calls' launch loop: N launches of gws
 * 1024, lws 64, back to back on a profiling queue, one clFinish.
 *   kerneltruth MODE [N [NAP_MS]]   MODE: none, sparse, all, flush, alone; N 20000;
 *                                   NAP_MS: idle that long before releasing (a program that goes on)
 * Prints one line of key=value: timed, event_ns (mean of the timed
 * launches), span_ns (mean of all launches by the stamps), span_timed_ns
 * and span_untimed_ns (the stamps of those the program timed and did not),
 * period_ns (one launch's start to the next's), wall_ns (per launch),
 * tick_ns (the timer's smallest step seen). Needs NVIDIA's OpenCL (inline
 * PTX); elsewhere the stamps read 0 and only the events count. KT_DUMP=path:
 * each launch's stamps and its event's START and END (0 where untimed), as
 * four native uint64 per launch, in launch order: a trace of the same run
 * says which launches cltrace timed, and how its timing read each. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clbench_platform.h"

#define GROUPS 16 /* gws 1024 / lws 64 */

static const char *src =
    "#ifdef NV\n"
    "#define STAMP(t) asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t))\n"
    "#else\n"
    "#define STAMP(t) (t = 0)\n"
    "#endif\n"
    "__kernel void k(__global float *x, int n, __global ulong *ts, volatile __global uint *tickets) {\n"
    "    ulong t0, t1; STAMP(t0);\n"
    "    x[get_global_id(0)] += n;\n"
    "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    "    if (get_local_id(0) == 0) {\n"
    "        STAMP(t1);\n"
    "        uint slot = atomic_inc(tickets);\n"
    "        ts[2 * slot] = t0; ts[2 * slot + 1] = t1;\n"
    "    }\n"
    "}\n";

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void die(const char *what, cl_int e)
{
    fprintf(stderr, "kerneltruth: %s failed (%d)\n", what, e);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sparse";
    long n = argc > 2 ? atol(argv[2]) : 20000;
    int every = !strcmp(mode, "all") ? 1 : !strcmp(mode, "none") ? 0 : 1000;
    int flush = !strcmp(mode, "flush"), alone = !strcmp(mode, "alone");
    cl_platform_id p = clbench_platform();
    char pname[128] = "";
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    cl_device_id d;
    cl_int e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    if (e)
        die("clGetDeviceIDs", e);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, qp, &e);
    if (e)
        die("clCreateCommandQueueWithProperties", e);
    cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    const char *opts = strstr(pname, "NVIDIA") ? "-DNV" : "";
    if ((e = clBuildProgram(pr, 1, &d, opts, NULL, NULL))) {
        char log[4096] = "";
        clGetProgramBuildInfo(pr, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "%s\n", log);
        die("clBuildProgram", e);
    }
    cl_kernel k = clCreateKernel(pr, "k", &e);
    size_t stamps = (size_t)(n + 1) * GROUPS * 2 * sizeof(cl_ulong);
    cl_mem x = clCreateBuffer(c, CL_MEM_READ_WRITE, 1024 * sizeof(float), NULL, &e);
    cl_mem ts = clCreateBuffer(c, CL_MEM_READ_WRITE, stamps, NULL, &e);
    if (e)
        die("clCreateBuffer", e);
    cl_mem tk = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &e);
    cl_uint zero = 0;
    int v = 1;
    clSetKernelArg(k, 0, sizeof x, &x);
    clSetKernelArg(k, 1, sizeof v, &v);
    clSetKernelArg(k, 2, sizeof ts, &ts);
    clSetKernelArg(k, 3, sizeof tk, &tk);
    size_t g = 1024, l = 64;
    clEnqueueWriteBuffer(q, tk, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL); /* warm; its stamps overwritten */
    clEnqueueWriteBuffer(q, tk, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL);
    cl_event *ev = calloc((size_t)n, sizeof *ev);
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        int timed = every && i % every == every / 2;
        if (timed && alone)
            clFinish(q);
        clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, timed ? &ev[i] : NULL);
        if (timed && (flush || alone))
            alone ? clFinish(q) : clFlush(q);
    }
    clFinish(q);
    double wall = (now_ns() - t0) / (double)n;
    cl_ulong *t = malloc(stamps);
    clEnqueueReadBuffer(q, ts, CL_TRUE, 0, (size_t)n * GROUPS * 2 * sizeof *t, t, 0, NULL, NULL);
    double ev_sum = 0, span_all = 0, span_timed = 0, period = 0;
    long timed = 0;
    cl_ulong tick = UINT64_MAX, prev_start = 0;
    FILE *dump = getenv("KT_DUMP") ? fopen(getenv("KT_DUMP"), "wb") : NULL;
    for (long i = 0; i < n; i++) {
        cl_ulong s = UINT64_MAX, f = 0;
        for (int j = 0; j < GROUPS; j++) {
            cl_ulong a = t[2 * (i * GROUPS + j)], b = t[2 * (i * GROUPS + j) + 1];
            s = a < s ? a : s, f = b > f ? b : f;
            if (b > a && b - a < tick)
                tick = b - a;
        }
        span_all += (double)(f - s);
        if (i)
            period += (double)(s - prev_start);
        prev_start = s;
        cl_ulong es = 0, ef = 0;
        if (ev[i]) {
            clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_START, 8, &es, NULL);
            clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_END, 8, &ef, NULL);
            ev_sum += (double)(ef - es), span_timed += (double)(f - s), timed++;
            clReleaseEvent(ev[i]);
        }
        if (dump) {
            cl_ulong rec[4] = {s, f, es, ef};
            fwrite(rec, sizeof rec, 1, dump);
        }
    }
    printf("mode=%s n=%ld timed=%ld event_ns=%.0f span_ns=%.0f span_timed_ns=%.0f span_untimed_ns=%.0f "
           "period_ns=%.0f wall_ns=%.0f tick_ns=%llu\n",
           mode, n, timed, timed ? ev_sum / timed : 0, span_all / n, timed ? span_timed / timed : 0,
           n > timed ? (span_all - span_timed) / (n - timed) : 0, n > 1 ? period / (n - 1) : 0, wall,
           (unsigned long long)(tick == UINT64_MAX ? 0 : tick));
    if (dump)
        fclose(dump);
    if (argc > 3)
        usleep((useconds_t)atol(argv[3]) * 1000);
    clReleaseMemObject(x), clReleaseMemObject(ts), clReleaseMemObject(tk);
    clReleaseKernel(k), clReleaseProgram(pr), clReleaseCommandQueue(q), clReleaseContext(c);
    free(t), free(ev);
    return 0;
}
