/* Handles a driver hands out again, and a fork after estimated launches
 * (tests/reuse.sh), on the stand-in ICD (tests/apps/standin_icd.c) with
 * STANDIN_REUSE=1:
 *   kernels   kernel a launched, released; kernel b gets a's handle and is
 *             launched (cltrace --local a=N must leave b's launch alone)
 *   launches  a kernel launched three times on a queue; the queue
 *             released, another given its handle (STANDIN_REUSE=2), the
 *             kernel launched there alike (the writer's decoded arguments
 *             of the first launches must not stand for the last)
 *   programs  thread A builds a program (STANDIN_BUILD_MS: slow, holding
 *             it); thread B lets go of it during the build, and once the
 *             build has returned creates another program, which gets its
 *             handle, while cltrace still looks at the first
 *   fork      60 launches of slowk (2 ms each), then a fork: the child
 *             opens a context as its parent did and launches quick (2 us)
 *             60 times, 1 ms apart (room for each estimate to take what its
 *             mean says), its objects numbered as its parent's were
 * Prints "handle reused" or "handle not reused" (kernels, programs). */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(2); } } while (0)

static cl_context ctx;
static cl_device_id dev;
static const char *src = "/* kernels the stand-in runs as nothing */";

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

static void open_context(void)
{
    cl_platform_id plat;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
}

static cl_program built_program(void)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    return p;
}

static void launch(cl_command_queue q, cl_kernel k, int n, int pause_ms)
{
    size_t g = 64;
    for (int i = 0; i < n; i++) {
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        if (pause_ms)
            sleep_ms(pause_ms);
    }
    CHECK(clFinish(q));
}

static int kernels(void)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_program p = built_program();
    cl_kernel a = clCreateKernel(p, "a", &err);
    CHECK(err);
    launch(q, a, 1, 0);
    CHECK(clReleaseKernel(a));
    cl_kernel b = clCreateKernel(p, "b", &err);
    CHECK(err);
    printf("handle %sreused\n", b == a ? "" : "not ");
    launch(q, b, 1, 0);
    CHECK(clReleaseKernel(b));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseCommandQueue(q));
    return 0;
}

/* kernel k launched three times on queue q; q released, queue r (given
 * q's handle: STANDIN_REUSE=2) made and k launched on it alike: the same
 * records but for the queue behind the handle */
static int launches(void)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_program p = built_program();
    cl_kernel k = clCreateKernel(p, "k", &err);
    CHECK(err);
    launch(q, k, 3, 0);
    CHECK(clReleaseCommandQueue(q));
    cl_command_queue r = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    printf("handle %sreused\n", r == q ? "" : "not ");
    launch(r, k, 3, 0);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseCommandQueue(r));
    return 0;
}

static cl_program first;
static void *build_first(void *arg)
{
    (void)arg;
    CHECK(clBuildProgram(first, 1, &dev, "", NULL, NULL));
    return NULL;
}

static int programs(void)
{
    int ms = getenv("STANDIN_BUILD_MS") ? atoi(getenv("STANDIN_BUILD_MS")) : 0;
    if (ms < 100) {
        fprintf(stderr, "programs: set STANDIN_BUILD_MS (100 or more)\n");
        return 2;
    }
    cl_int err;
    first = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    pthread_t a;
    pthread_create(&a, NULL, build_first, NULL);
    /* once the build is inside the driver (it holds a reference of its own
     * through it), during its first half: the app's last reference. A fixed
     * sleep of ms/4 let the release come first on a loaded machine (the
     * build then failed: -44) */
    cl_uint refs = 1;
    for (int waited = 0; refs < 2 && waited < 20 * ms; waited++) {
        sleep_ms(1);
        CHECK(clGetProgramInfo(first, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    }
    CHECK(clReleaseProgram(first));
    sleep_ms(ms + ms / 2);              /* the build has returned; cltrace asks the driver about it */
    cl_program second = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    printf("handle %sreused\n", second == first ? "" : "not ");
    pthread_join(a, NULL);
    CHECK(clReleaseProgram(second));
    return 0;
}

static void session(const char *name, int n, int pause_ms)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_program p = built_program();
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK(err);
    launch(q, k, n, pause_ms);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseCommandQueue(q));
}

static int forked(void)
{
    session("slowk", 60, 0);
    sleep_ms(500);                      /* the writer has drawn them (their means) */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {                     /* as the parent began: its objects get the parent's ids */
        open_context();
        session("quick", 60, 1);
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    open_context();
    int rc = !strcmp(mode, "kernels") ? kernels() : !strcmp(mode, "launches") ? launches()
           : !strcmp(mode, "programs") ? programs() : !strcmp(mode, "fork") ? forked()
           : (fprintf(stderr, "usage: reuse_handles kernels|launches|programs|fork\n"), 2);
    clReleaseContext(ctx);
    return rc;
}
