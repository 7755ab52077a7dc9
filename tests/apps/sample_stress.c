/* What CPU sampling must leave as it was (tests/cpusamples.sh). Each mode
 * first makes an OpenCL call (recording, and so sampling, starts there),
 * then works on the CPU while:
 *   sigprof    it profiles itself with ITIMER_PROF: prints its own ticks and
 *              that its handler is still its own
 *   pipe       a thread that has just used the CPU blocks in read() on a
 *              pipe; another writes 300 ms later: read returns the data
 *   poll       poll() and nanosleep() with timeouts, between bursts of CPU:
 *              never EINTR
 *   threads    1,000 short-lived threads, each on the CPU a little
 *   dlopen     a dlopen/dlclose loop beside a busy thread
 *   recursion  work at the bottom of a 3,000-frame recursion
 *   fork       a child that calls OpenCL and works, then runs /bin/true
 *   work       a fixed amount of work at the bottom of a 64-frame recursion
 *              (make bench: its wall time sampled and not)
 * Prints "ok MODE" (and figures); exits 1 with the reason otherwise. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static _Thread_local volatile double sink;   /* each thread its own: no race of the test's making */
static volatile int prof_ticks;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(double seconds)
{
    double end = now_s() + seconds, acc = 0;
    while (now_s() < end)
        for (int i = 0; i < 10000; i++)
            acc += i * 1e-9;
    sink = acc;
}

static void opencl_call(void)
{
    cl_uint n = 0;
    if (clGetPlatformIDs(0, NULL, &n) != CL_SUCCESS || !n) {
        fprintf(stderr, "no OpenCL platform\n");
        exit(1);
    }
}

static void fail(const char *why)
{
    printf("FAIL: %s\n", why);
    exit(1);
}

static void on_prof(int sig)
{
    (void)sig;
    prof_ticks++;
}

/* 1 s of this thread's CPU time, however loaded the machine */
static void burn_cpu_second(void)
{
    struct timespec t;
    double acc = 0;
    do {
        for (int i = 0; i < 10000; i++)
            acc += i * 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while (t.tv_sec < 1);
    sink = acc;
}

static int mode_sigprof(void)
{
    signal(SIGPROF, on_prof);
    struct itimerval it = { { 0, 20000 }, { 0, 20000 } };     /* 50 a second of CPU time */
    setitimer(ITIMER_PROF, &it, NULL);
    struct timespec t0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    if (t0.tv_sec)
        fail("a second of CPU time before the test");
    burn_cpu_second();
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_PROF, &off, NULL);
    struct sigaction cur;
    sigaction(SIGPROF, NULL, &cur);
    if (cur.sa_handler != on_prof)
        fail("its SIGPROF handler is not its own");
    printf("ticks %d\n", prof_ticks);
    return prof_ticks > 0;
}

static int pipe_fd[2];

static void *reader(void *arg)
{
    (void)arg;
    burn(0.05);                 /* on the CPU just before it blocks */
    char buf[8];
    ssize_t n = read(pipe_fd[0], buf, sizeof buf);
    if (n < 0)
        printf("read: %s\n", strerror(errno));
    return (void *)(intptr_t)(n == 5);
}

static int mode_pipe(void)
{
    if (pipe(pipe_fd) != 0)
        fail("pipe");
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    burn(0.3);
    if (write(pipe_fd[1], "hello", 5) != 5)
        fail("write");
    void *ok;
    pthread_join(t, &ok);
    return ok != NULL;
}

static int mode_poll(void)
{
    int eintr = 0;
    for (int i = 0; i < 200; i++) {
        burn(0.004);
        if (poll(NULL, 0, 1) < 0 && errno == EINTR)
            eintr++;
        burn(0.004);
        struct timespec ts = { 0, 500000 };
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
            eintr++;
    }
    printf("eintr %d\n", eintr);
    return eintr == 0;
}

static void *short_life(void *arg)
{
    (void)arg;
    burn(0.0005);
    return NULL;
}

static int mode_threads(void)
{
    for (int i = 0; i < 1000; i += 10) {
        pthread_t t[10];
        for (int k = 0; k < 10; k++)
            if (pthread_create(&t[k], NULL, short_life, NULL) != 0)
                fail("pthread_create");
        for (int k = 0; k < 10; k++)
            pthread_join(t[k], NULL);
    }
    return 1;
}

static int stop;

static void *busy(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        burn(0.01);
    return NULL;
}

static int mode_dlopen(void)
{
    pthread_t t;
    pthread_create(&t, NULL, busy, NULL);
    for (int i = 0; i < 300; i++) {
        void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
        void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h || !z)
            fail("dlopen");
        burn(0.001);
        dlclose(z);
        dlclose(h);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    return 1;
}

__attribute__((noinline)) static double deep(int n)
{
    if (n == 0) {
        burn(0.5);
        return sink;
    }
    return deep(n - 1) + n * 1e-12;
}

__attribute__((noinline)) static double fixed_work(int n)
{
    if (n > 0)
        return fixed_work(n - 1) + n * 1e-12;
    double t0 = now_s(), acc = 0;
    for (long i = 0; i < 200000000L; i++)
        acc += (double)(i & 1023) * 1e-9;
    sink = acc;
    printf("wall_s %.4f\n", now_s() - t0);
    return acc;
}

static int mode_fork(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        opencl_call();
        burn(0.2);
        execl("/bin/true", "true", (char *)NULL);
        _exit(3);
    }
    burn(0.2);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    opencl_call();
    int ok = !strcmp(mode, "sigprof") ? mode_sigprof() : !strcmp(mode, "pipe") ? mode_pipe()
           : !strcmp(mode, "poll") ? mode_poll() : !strcmp(mode, "threads") ? mode_threads()
           : !strcmp(mode, "dlopen") ? mode_dlopen() : !strcmp(mode, "recursion") ? (deep(3000), 1)
           : !strcmp(mode, "fork") ? mode_fork() : !strcmp(mode, "work") ? (fixed_work(60), 1) : -1;
    if (ok < 0)
        fail("no such mode");
    if (!ok)
        fail(mode);
    printf("ok %s\n", mode);
    return 0;
}
