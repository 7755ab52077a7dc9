/* Ways a process ends, for the robustness tests: `exits MODE N`.
 * Each mode first makes N clGetPlatformInfo calls, then:
 *   segv      dereferences NULL            abort   calls abort()
 *   _exit     _exit(3)                     handler its own SIGSEGV handler, then segv
 *   thread    exit(0) while another thread keeps calling OpenCL
 *   byThread  exit(5) called by a second thread while main waits for it
 *   quick     quick_exit(4), an at_quick_exit handler of the app first
 *   vfork     a vfork child _exit(0)s at once; the parent makes N more calls
 *   leak      a context and a buffer kept, then _exit(0)
 *   fork      a child makes N calls and exits 0; the parent then makes N more
 *   late      OpenCL calls from an atexit handler and a destructor, after
 *             main returned (the destructor also runs in every other mode)
 *   inflight  N launches of a kernel that runs a while, flushed, and main
 *             returns while they run
 *   exec      an exec that fails (a missing file), N calls more, then
 *             itself again in mode plain with 7 calls
 *   kill      waits (60 s at most) for SIGKILL from outside, sent once the
 *             trace holds the calls (the writer flushes an idle buffer, at
 *             idle priority: late on a loaded machine): no handler runs
 *   plain     returns 0 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static cl_platform_id platform;

static void calls(int n)
{
    char name[128];
    for (int i = 0; i < n; i++)
        clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL);
}

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        calls(1);
    return NULL;
}

static void app_handler(int sig)
{
    static const char msg[] = "app handler ran\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(40 + sig - SIGSEGV + 2);
}

static void *exit_here(void *arg)
{
    (void)arg;
    calls(2);
    exit(5);
}

static void quick_handler(void)
{
    static const char msg[] = "app quick handler ran\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
}

static void late(void)
{
    calls(5);
}

static void in_flight(int n)
{
    const char *src = "__kernel void k(__global float *x) { float a = x[get_global_id(0)];"
                      " for (int i = 0; i < 4000000; i++) a = a * 1.0000001f + 0.5f; x[get_global_id(0)] = a; }";
    cl_device_id d;
    cl_int e;
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    clBuildProgram(p, 1, &d, "", NULL, NULL);
    cl_kernel k = clCreateKernel(p, "k", &e);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * sizeof(float), NULL, &e);
    clSetKernelArg(k, 0, sizeof b, &b);
    size_t g = 8;
    for (int i = 0; i < n; i++)
        clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    clFlush(q);
    printf("%d launches in flight\n", n);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    int n = argc > 2 ? atoi(argv[2]) : 100;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS)
        return 1;
    calls(n);
    fflush(stdout);
    if (!strcmp(mode, "segv")) {
        volatile int *p = NULL;
        return *p;
    } else if (!strcmp(mode, "abort")) {
        abort();
    } else if (!strcmp(mode, "kill")) {
        sleep(60);
        raise(SIGKILL);
    } else if (!strcmp(mode, "_exit")) {
        _exit(3);
    } else if (!strcmp(mode, "handler")) {
        signal(SIGSEGV, app_handler);
        volatile int *p = NULL;
        return *p;
    } else if (!strcmp(mode, "thread")) {
        pthread_t t;
        pthread_create(&t, NULL, spin, NULL);
        usleep(20000);
        exit(0);
    } else if (!strcmp(mode, "byThread")) {
        pthread_t t;
        pthread_create(&t, NULL, exit_here, NULL);
        pthread_join(t, NULL);
    } else if (!strcmp(mode, "quick")) {
        at_quick_exit(quick_handler);
        quick_exit(4);
    } else if (!strcmp(mode, "vfork")) {
        pid_t pid = vfork();
        if (pid == 0)
            _exit(0);
        int st = 0;
        waitpid(pid, &st, 0);
        calls(n);
        printf("vfork child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "leak")) {
        cl_device_id d;
        cl_int e;
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
        cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
        clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, NULL, &e);
        _exit(0);
    } else if (!strcmp(mode, "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            calls(n);
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        calls(n);
        printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (!strcmp(mode, "inflight")) {
        in_flight(n);
    } else if (!strcmp(mode, "late")) {
        atexit(late);      /* runs before the tracer's exit work: recorded */
    } else if (!strcmp(mode, "exec")) {
        printf("exec of a missing file: %d\n", execl("/nonexistent/cltrace-test", "x", (char *)NULL));
        calls(n);          /* after an exec that failed */
        fflush(stdout);
        execlp(argv[0], argv[0], "plain", "7", (char *)NULL);
        return 9;
    }
    return 0;
}

__attribute__((destructor)) static void after_main(void)
{
    if (platform)
        calls(3);          /* glibc runs it before the tracer's exit work: recorded;
                              a later call would be forwarded only */
}
