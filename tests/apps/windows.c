/* A program in phases, for the window tests (tests/windows.sh):
 *   windows MODE
 * Setup: platform, device, context, queue, a program with kernels `tick`
 * and `hot`, buffer `a` (before any window). Then 4 phases; phase P makes a
 * buffer b_P, runs 20 iterations of clSetKernelArg x2, a launch (of `hot` in
 * phase 2, else `tick`) and clFinish, and releases nothing: b_0..b_3 leak.
 * Every OpenCL call is printed, "call N NAME phase P" (N from 1; setup is
 * phase -1), and each phase's start "phase P at MS" (ms since main began).
 * MODE:
 *   timed   phase P starts 2 + P seconds after main began (a timed window)
 *   plain   one phase after the other
 *   api     cltrace_stop() after setup, cltrace_start() before phase 2,
 *           cltrace_stop() after it (a window by the program's own hand)
 *   wait    as plain, and before each phase prints "waiting P" and reads a
 *           line from stdin (the test runs `cltrace ctl` meanwhile)
 *   long N [error K | segv | wait]   for the flight recorder: after setup, N
 *           calls clSetKernelArg(tick, 1, 4, &i) with the int i = 0..N-1 (mod 2^30)
 *           (not logged), then exits; error K: call K also sets a missing
 *           argument (it fails); segv: a NULL dereference after the loop;
 *           wait: "waiting" and a line from stdin after the loop */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "include/cltrace.h"

static int n_calls, phase = -1;
#define CALL(name, expr) (printf("call %d %s phase %d\n", ++n_calls, name, phase), (expr))
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static const char *src =
    "kernel void tick(global float *a, float s) { int i = get_global_id(0); a[i] = a[i] * s + 1.0f; }\n"
    "kernel void hot(global float *a, float s) { int i = get_global_id(0); a[i] = a[i] * s - 1.0f; }\n";

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *mode = argc > 1 ? argv[1] : "plain";
    setvbuf(stdout, NULL, _IOLBF, 0);
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    CHECK(CALL("clGetPlatformIDs", clGetPlatformIDs(1, &platform, NULL)));
    CHECK(CALL("clGetDeviceIDs", clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)));
    cl_context ctx = CALL("clCreateContext", clCreateContext(NULL, 1, &dev, NULL, NULL, &err));
    CHECK(err);
    cl_command_queue q = CALL("clCreateCommandQueue", clCreateCommandQueue(ctx, dev, 0, &err));
    CHECK(err);
    cl_program prog = CALL("clCreateProgramWithSource", clCreateProgramWithSource(ctx, 1, &src, NULL, &err));
    CHECK(err);
    CHECK(CALL("clBuildProgram", clBuildProgram(prog, 1, &dev, "", NULL, NULL)));
    cl_kernel step = CALL("clCreateKernel", clCreateKernel(prog, "tick", &err));
    CHECK(err);
    cl_kernel hot = CALL("clCreateKernel", clCreateKernel(prog, "hot", &err));
    CHECK(err);
    size_t n = 1024;
    cl_mem a = CALL("clCreateBuffer", clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err));
    CHECK(err);
    if (!strcmp(mode, "api"))
        cltrace_stop();
    if (!strcmp(mode, "long")) {
        long n = argc > 2 ? atol(argv[2]) : 1000000, bad = argc > 4 && !strcmp(argv[3], "error") ? atol(argv[4]) : -1;
        if (getenv("LOOP_MARK"))        /* a test that must act inside the loop waits for this */
            fprintf(stderr, "looping\n");
        for (long j = 0; j < n; j++) {
            int i = (int)(j & 0x3FFFFFFF);      /* the value wraps at 2^30 (a 10-minute run) */
            clSetKernelArg(step, 1, sizeof i, &i);
            if (i == bad)
                clSetKernelArg(step, 7, sizeof i, &i);      /* no argument 7: fails */
        }
        printf("loop done %ld\n", n);
        if (argc > 3 && !strcmp(argv[3], "segv"))
            *(volatile int *)(uintptr_t)argc = 0;         /* a crash the program would have without cltrace */
        if (argc > 3 && !strcmp(argv[3], "wait")) {
            char line[64];
            printf("waiting\n");
            if (!fgets(line, sizeof line, stdin))
                return 4;
        }
        return 0;
    }
    for (phase = 0; phase < 4; phase++) {
        if (!strcmp(mode, "timed")) {
            double due = 2000.0 + 1000.0 * phase, now = ms_since(&t0);
            if (now > due - 200) {
                fprintf(stderr, "phase %d late: %.0f ms, due at %.0f\n", phase, now, due);
                return 3;
            }
            usleep((useconds_t)((due - now) * 1000));
        } else if (!strcmp(mode, "wait")) {
            char line[64];
            printf("waiting %d\n", phase);
            if (!fgets(line, sizeof line, stdin))
                return 4;
        }
        if (!strcmp(mode, "api") && phase == 2)
            cltrace_start();
        printf("phase %d at %.0f\n", phase, ms_since(&t0));
        cl_mem b = CALL("clCreateBuffer", clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err));
        CHECK(err);
        cl_kernel k = phase == 2 ? hot : step;
        for (int it = 0; it < 20; it++) {
            float s = 0.5f;
            CHECK(CALL("clSetKernelArg", clSetKernelArg(k, 0, sizeof b, it % 2 ? &a : &b)));
            CHECK(CALL("clSetKernelArg", clSetKernelArg(k, 1, sizeof s, &s)));
            CHECK(CALL("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL)));
            CHECK(CALL("clFinish", clFinish(q)));
        }
        if (!strcmp(mode, "api") && phase == 2)
            cltrace_stop();
    }
    phase = 4;
    CHECK(CALL("clReleaseMemObject", clReleaseMemObject(a)));
    CHECK(CALL("clReleaseKernel", clReleaseKernel(step)));
    CHECK(CALL("clReleaseKernel", clReleaseKernel(hot)));
    CHECK(CALL("clReleaseProgram", clReleaseProgram(prog)));
    CHECK(CALL("clReleaseCommandQueue", clReleaseCommandQueue(q)));
    printf("done\n");
    return 0;
}
