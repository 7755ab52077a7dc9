/* CPU samples of the program's threads (CLTRACE_CPU_SAMPLES, 100 Hz by
 * default): what the host ran while the device waited.
 *
 * Each thread has a POSIX timer on its own CPU clock, signalled to that
 * thread (SIGEV_THREAD_ID): it fires only while the thread runs, so a thread
 * that waits costs nothing, and a busy one is sampled 100 times per second
 * of its CPU time. The signal is a real-time one the program leaves at its
 * default (the highest such); an app's own SIGPROF or SIGALRM profiling stays
 * its own. SA_RESTART, and a CPU timer's signal is sent as the thread goes
 * back to user space (the kernel's task work), never into a wait it is in:
 * no system call of the app sees EINTR it would not have seen.
 *
 * Sampling starts with recording (the process's first recorded call): the
 * threads that exist then are found in /proc/self/task, every later one is
 * armed as it starts (the exported pthread_create runs it through
 * sampled_start), except cltrace's own. A thread's timer is deleted as it
 * ends (a thread-specific key's destructor), all of them at exit; a fork
 * child starts afresh (timers are not inherited).
 *
 * The handler (cpusample_handler.c) writes into the thread's buffer
 * (trace/samples.h), which the writer drains. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "cpusample.h"
#include "unwind.h"
#include "shim.h"

int clt_cpusample_signal;                /* 0: none chosen (sampling off) */
static unsigned hz;                      /* 0: off */
static int started;                      /* timers being armed */
static pthread_key_t thread_key;
static int key_made;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

void clt_cpusample_load(void)
{
    const char *v = clt_cfg.CPU_SAMPLES;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (!strcmp(v, "off") || (end != v && !*end && n == 0)) {
        hz = 0;
    } else if (end == v || *end || n < 1 || n > 1000) {
        clt_msg("CLTRACE_CPU_SAMPLES=%s: not a rate (1 to 1000 per second) or off: 100 per second", v);
        hz = 100;
    } else {
        hz = (unsigned)n;
    }
}

/* A thread's CPU clock by its id: what pthread_getcpuclockid gives for a
 * pthread_t, made from the kernel's encoding (CPUCLOCK_PERTHREAD, SCHED). */
static clockid_t thread_clock(int tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
}

/* A free slot of the table, or a new one; its buffer made once. */
CLT_ANY_THREAD static int claim_slot(void)
{
    unsigned used = __atomic_load_n(&clt_sbufs_used, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < used; i++) {
        struct clt_sbuf *b = clt_sbufs[i];
        uint32_t free_state = CLT_SBUF_FREE;
        if (b && __atomic_compare_exchange_n(&b->state, &free_state, CLT_SBUF_CLAIMED, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_RELAXED))
            return (int)i;
    }
    if (used >= CLT_SBUF_MAX)
        return -1;
    struct clt_sbuf *b = mmap(NULL, sizeof *b + CLT_SBUF_BYTES, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return -1;
    b->buf = (uint8_t *)(b + 1);
    b->state = CLT_SBUF_CLAIMED;
    __atomic_store_n(&clt_sbufs[used], b, __ATOMIC_RELEASE);
    __atomic_store_n(&clt_sbufs_used, used + 1, __ATOMIC_RELEASE);
    return (int)used;
}

/* Whether the signal is still ours: an app that set its own handler on it
 * later gets it back, sampling stops (once, said). */
CLT_ANY_THREAD static int signal_still_ours(void)
{
    struct sigaction cur;
    if (sigaction(clt_cpusample_signal, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == clt_cpusample_on_signal)
        return 1;
    if (__atomic_exchange_n(&started, 0, __ATOMIC_ACQ_REL))
        clt_msg("the program took signal %d for itself: no more CPU samples", clt_cpusample_signal);
    return 0;
}

/* A timer on thread tid's CPU clock, signalling that thread with its slot
 * and generation; 0: armed. */
CLT_ANY_THREAD static int arm(int tid)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) || !signal_still_ours())
        return -1;
    pthread_mutex_lock(&slots_lock);
    int slot = claim_slot();
    pthread_mutex_unlock(&slots_lock);
    if (slot < 0)
        return -1;
    struct clt_sbuf *b = clt_sbufs[slot];
    b->tid = tid;
    uint32_t gen = __atomic_add_fetch(&b->gen, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&b->head, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->tail, 0, __ATOMIC_RELAXED);
    b->periods_written = 0;
    memset(b->py_seen, 0, sizeof b->py_seen);
    memset(b->unw_rules, 0, sizeof b->unw_rules);
    struct sigevent sev;
    for (volatile char *z = (volatile char *)&sev; z < (volatile char *)(&sev + 1); z++)
        *z = 0;                 /* not memset: a sanitizer's would check this thread's stack (CLT_ANY_THREAD) */
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = clt_cpusample_signal;
    sev.sigev_value.sival_ptr = (void *)(uintptr_t)((uint64_t)gen << 32 | (uint32_t)slot);
    sev._sigev_un._tid = tid;
    if (timer_create(thread_clock(tid), &sev, &b->timer) != 0) {
        __atomic_store_n(&b->state, CLT_SBUF_FREE, __ATOMIC_RELEASE);
        return -1;
    }
    __atomic_store_n(&b->state, CLT_SBUF_LIVE, __ATOMIC_RELEASE);
    long ns = 1000000000L / hz;
    struct itimerspec its = { { ns / 1000000000L, ns % 1000000000L }, { ns / 1000000000L, ns % 1000000000L } };
    timer_settime(b->timer, 0, &its, NULL);
    return slot;
}

CLT_ANY_THREAD static void disarm(struct clt_sbuf *b)
{
    uint32_t live = CLT_SBUF_LIVE;
    if (__atomic_compare_exchange_n(&b->state, &live, CLT_SBUF_CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        timer_delete(b->timer);
        __atomic_store_n(&b->state, CLT_SBUF_DEAD, __ATOMIC_RELEASE);   /* the writer drains it, then frees it */
    }
}

/* The thread-specific key's destructor: the thread ends. */
CLT_ANY_THREAD void clt_cpusample_thread_ends(void *unused)
{
    (void)unused;
    int saved = errno;
    int slot = clt_sample_slot;
    if (slot >= 0 && slot < CLT_SBUF_MAX) {
        struct clt_sbuf *b = __atomic_load_n(&clt_sbufs[slot], __ATOMIC_ACQUIRE);
        if (b && __atomic_load_n(&b->gen, __ATOMIC_RELAXED) == clt_sample_gen && b->tid == (int)syscall(SYS_gettid))
            disarm(b);
    }
    clt_sample_slot = -1;
    errno = saved;
}

CLT_ANY_THREAD static void arm_self(void)
{
    clt_thread_stack();         /* for the handler's reader; unw_backtrace's cache is made where a
                                 * call stack first needs it (clt_unw_cache_made): until then a
                                 * handler walks frame by frame, the few places unwind.c does not read */
    int tid = (int)syscall(SYS_gettid);
    int slot = arm(tid);
    if (slot >= 0) {
        clt_sample_slot = slot;
        clt_sample_gen = __atomic_load_n(&clt_sbufs[slot]->gen, __ATOMIC_RELAXED);
    }
}

/* The highest real-time signal the program leaves at its default. */
static int free_signal(void)
{
    for (int s = SIGRTMAX - 1; s >= SIGRTMIN + 4; s--) {
        struct sigaction cur;
        if (sigaction(s, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
            return s;
    }
    return 0;
}

/* Recording starts: the handler, then a timer for every thread there is. */
void clt_cpusample_start(void)
{
    if (!hz || __atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return;
    if (clt_debugger_attached()) {   /* gdb stops at real-time signals unless told `handle SIGn nostop` */
        clt_msg("a debugger is attached: no CPU samples (it would stop at each one)");
        hz = 0;
        return;
    }
    if (!clt_cpusample_signal) {
        int s = free_signal();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = clt_cpusample_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (!s || sigaction(s, &sa, NULL) != 0) {
            clt_msg("no real-time signal free for CPU samples: none taken");
            hz = 0;
            return;
        }
        clt_cpusample_signal = s;
    }
    clt_unwind_load();
    if (!key_made && pthread_key_create(&thread_key, clt_cpusample_thread_ends) == 0)
        __atomic_store_n(&key_made, 1, __ATOMIC_RELEASE);   /* at the first recorded call: a process
                                                             * that never calls OpenCL pays nothing */
    __atomic_store_n(&clt_sample_period_ns, 1000000000ull / hz, __ATOMIC_RELEASE);
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int self = (int)syscall(SYS_gettid);
    while (d && (e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid <= 0 || clt_own_thread_is(tid))
            continue;
        if (tid == self)
            arm_self();
        else
            arm(tid);
    }
    if (d)
        closedir(d);
}

/* At exit: no more samples (the writer drains what the buffers hold). The
 * handler stays: a signal already sent finds it, not the default action. */
void clt_cpusample_stop(void)
{
    if (!__atomic_exchange_n(&started, 0, __ATOMIC_ACQ_REL))
        return;
    unsigned used = __atomic_load_n(&clt_sbufs_used, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < used; i++)
        if (clt_sbufs[i])
            disarm(clt_sbufs[i]);
}

/* A fork child: one thread, no timers, nothing of the parent's samples;
 * sampling starts again with its recording. */
void clt_cpusample_forget(void)
{
    __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
    unsigned used = __atomic_load_n(&clt_sbufs_used, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < used; i++) {
        struct clt_sbuf *b = clt_sbufs[i];
        if (b) {
            __atomic_store_n(&b->head, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&b->tail, 0, __ATOMIC_RELAXED);
            b->periods_written = 0;
            __atomic_store_n(&b->state, CLT_SBUF_FREE, __ATOMIC_RELEASE);
        }
    }
    clt_sample_slot = -1;
}

/* ---- every thread the program makes ------------------------------------ */

struct start_arg { void *(*fn)(void *); void *arg; };

CLT_ANY_THREAD static void *sampled_start(void *p)
{
    struct start_arg a = *(struct start_arg *)p;
    free(p);
    clt_sample_slot = -1;
    if (__atomic_load_n(&key_made, __ATOMIC_ACQUIRE))
        pthread_setspecific(thread_key, (void *)1);     /* its destructor disarms */
    if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        arm_self();
    return a.fn(a.arg);
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* cltrace's own threads (its calls bind here, -Bsymbolic-functions) start
 * through the pthread_create the process's first one is: a sanitizer's,
 * preloaded ahead of the shim, must know them (else ASan took their stacks
 * for another's, and TSan would not see their races) */
static create_fn process_create(create_fn next)
{
    static create_fn first;
    if (!first) {
        create_fn f = (create_fn)dlsym(RTLD_DEFAULT, "pthread_create");
        first = f && f != pthread_create ? f : next;
    }
    return first;
}

CLT_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static create_fn real;
    if (!real)
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real)
        return EAGAIN;
    if (clt_is_self((const void *)fn))      /* cltrace's own threads are not the program's */
        return process_create(real)(t, attr, fn, arg);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* A sanitizer preloaded ahead of the shim: a library whose versioned
     * pthread_create reached ours, not the sanitizer's, goes through it; it
     * calls back here with its own start routine, which must run first on
     * the new thread (the shim's instrumented code on a thread the sanitizer
     * has not set up crashed TSan): passed on as it is, that thread is not
     * sampled. (A program the sanitizer is linked into has the shim first:
     * its threads are.) */
    create_fn first = process_create(real);
    Dl_info me, caller;
    if (first != real && dladdr((void *)first, &me) && dladdr(__builtin_return_address(0), &caller))
        return caller.dli_fbase != me.dli_fbase ? first(t, attr, fn, arg) : real(t, attr, fn, arg);
#endif
    if (!hz)
        return real(t, attr, fn, arg);
    struct start_arg *a = malloc(sizeof *a);
    if (!a)
        return real(t, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    int rc = real(t, attr, sampled_start, a);
    if (rc)
        free(a);
    return rc;
}
