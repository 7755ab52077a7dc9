/* Shim life cycle: load, the real library, thread rings, fork and exit.
 *
 * Lazy everywhere: the real library is looked up on the first call, a
 * thread's ring is made on its first call, the writer thread and the trace
 * file on the first recorded call. A process that never calls OpenCL pays
 * nothing and leaves no file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim.h"
#include "callstack.h"
#include "trace/tables.h"
#include "hooks.h"
#include "replay/take/take.h"
#include "window.h"

__thread struct clt_thread *clt_tls __attribute__((tls_model("initial-exec")));


/* ---- the real library ------------------------------------------------- */

static void *real_lib;
void *clt_real_tab[CLT_FN_COUNT];
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static Dl_info self_info;

int clt_is_self(const void *p)
{
    Dl_info di;
    return p && dladdr(p, &di) && di.dli_fbase == self_info.dli_fbase;
}
#define is_self clt_is_self

/* The OpenCL library the app loaded at run time (dlsym.c): also where
 * cltrace's own calls go, even in a dlmopen namespace or under a full path. */
static void *app_lib;
void clt_app_library(void *handle)
{
    void *none = NULL;
    __atomic_compare_exchange_n(&app_lib, &none, handle, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void real_open(void)
{
    if (clt_cfg.LIBRARY[0]) {
        real_lib = dlopen(clt_cfg.LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!real_lib)
            clt_msg("cannot load CLTRACE_LIBRARY=%s: %s", clt_cfg.LIBRARY, dlerror());
        return;
    }
    /* The loader the app already has, even if it dlopen'ed it privately
     * (pyopencl, plugin hosts: RTLD_NEXT finds nothing there); else load it. */
    real_lib = __atomic_load_n(&app_lib, __ATOMIC_ACQUIRE);
    static const char *const names[] = { "libOpenCL.so.1", "libOpenCL.so" };
    for (unsigned i = 0; i < 2 && !real_lib; i++)
        real_lib = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!real_lib)
        real_lib = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!real_lib)
        clt_msg("no OpenCL library found (set CLTRACE_LIBRARY)");
}

/* ---- features that stand between the wrappers and the driver ---------- */

/* For replay/take, which knows entry points by name only. */
static void *real_named(const char *name)
{
    const struct clt_ext_entry *e = clt_ext_find(name);
    return e ? clt_real((unsigned)(e - clt_ext_table)) : NULL;
}

static int fn_named(const char *name)
{
    const struct clt_ext_entry *e = clt_ext_find(name);
    return e ? (int)(e - clt_ext_table) : -1;
}

static int apps_call(int fn)
{
    const struct clt_thread *th = clt_tls;
    return fn >= 0 && th && th->in_fn == (unsigned)fn + 1u && clt_is_active();
}

/* Every place that sets a real entry point passes it through here: with
 * fingerprints or captures on, theirs stand in front of the driver's
 * (fingerprints outermost); off, real itself. */
void *clt_interpose(unsigned fn, void *real)
{
    if (!real || real == CLT_REAL_ABSENT)
        return real;
    return clt_fp_interpose(fn, rt_take_interpose(clt_fns[fn].name, real));
}

static void take_load(void)
{
    static const struct rt_host host = { real_named, fn_named, apps_call, clt_msg };
    rt_take_load(clt_cfg.CAPTURE, clt_cfg.CAPTURE_DIR, &host);
}

void *clt_real_slow(unsigned fn)
{
    void *p = __atomic_load_n(&clt_real_tab[fn], __ATOMIC_ACQUIRE);
    if (p == CLT_REAL_ABSENT)
        return NULL;
    int saved = errno;
    pthread_once(&real_once, real_open);
    p = real_lib ? dlsym(real_lib, clt_fns[fn].name) : NULL;
    if (!p)
        p = dlsym(RTLD_NEXT, clt_fns[fn].name);
    if (is_self(p))          /* never forward to ourselves */
        p = NULL;
    p = clt_interpose(fn, p);
    void *expected = NULL;   /* an extension lookup may have set it meanwhile */
    __atomic_compare_exchange_n(&clt_real_tab[fn], &expected, p ? p : CLT_REAL_ABSENT, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    errno = saved;
    p = __atomic_load_n(&clt_real_tab[fn], __ATOMIC_ACQUIRE);
    return p == CLT_REAL_ABSENT ? NULL : p;
}

/* A wrapper found its real function calling straight back into it: the
 * library has no implementation of its own and routes the command by name
 * (ocl-icd does so for a 2.x command a 1.2 vendor lacks). The command fails
 * with CL_INVALID_OPERATION instead of spinning forever; said once each. */
void clt_loop_detected(unsigned fn)
{
    static _Atomic uint8_t said[CLT_FN_COUNT];
    int saved = errno;
    if (!__atomic_exchange_n(&said[fn], 1, __ATOMIC_RELAXED))
        clt_msg("%s: the OpenCL library calls it back into cltrace (the platform lacks it); "
                "it fails with CL_INVALID_OPERATION instead of looping", clt_fns[fn].name);
    errno = saved;
}

static int ext_cmp(const void *key, const void *ent)
{
    return strcmp(key, ((const struct clt_ext_entry *)ent)->name);
}

const struct clt_ext_entry *clt_ext_find(const char *name)
{
    return bsearch(name, clt_ext_table, clt_ext_table_len, sizeof *clt_ext_table, ext_cmp);
}

/* clGetExtensionFunctionAddress*: hand out our wrapper for every command
 * cl.xml knows, remembering the real one; pass anything else through. With
 * several platforms, the last real pointer handed out wins. */
void *clt_ext_wrap(const char *name, void *real)
{
    if (!name || !real || is_self(real))
        return real;
    const struct clt_ext_entry *e = clt_ext_find(name);
    if (!e)
        return real;
    __atomic_store_n(&clt_real_tab[e - clt_ext_table], clt_interpose((unsigned)(e - clt_ext_table), real),
                     __ATOMIC_RELEASE);
    return e->wrapper;
}

/* ---- per-thread rings ------------------------------------------------- */

static void install_fatal_handlers(void);

/* A thread's end marks its ring for the writer. Through the C library's
 * thread_local destructor list rather than a pthread key: a second C library
 * in a dlmopen namespace (an ICD loader and driver loaded there) hands out
 * the same key numbers over the same per-thread slots, so the driver would
 * read our ring as its own object and write into it. */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int writer_state;          /* 0 not started, 1 running, -1 failed */

static void thread_gone(void *arg)
{
    struct clt_thread *th = arg;
    /* The main thread's list runs inside exit(), before the exit handlers
     * (ours among them), and the thread goes on calling: its ring stays its
     * own. Freed here, the writer would hand the ring to the next call and
     * state its cost twice, or take it as a new thread's. */
    if (th->tid == clt_pid)
        return;
    if (clt_tls == th)
        clt_tls = NULL;
    __atomic_store_n(&th->state, CLT_TH_DEAD, __ATOMIC_RELEASE);
}

static struct clt_thread *thread_new(void)
{
    /* Reuse the ring of a thread that ended and was drained. */
    for (struct clt_thread *t = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
        int expect = CLT_TH_FREE;
        if (__atomic_compare_exchange_n(&t->state, &expect, CLT_TH_CLAIMED, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return t;
    }
    size_t size = 64 * 1024;
    while (size < (size_t)clt_cfg.BUFFER_KB * 1024 && size < ((size_t)1 << 30))
        size <<= 1;
    /* Rings and their headers are never freed (reused by later threads);
     * they live in mappings of their own, away from the heap, which other
     * code in the process can get wrong (a second C library in a dlmopen
     * namespace has been seen writing into heap blocks it did not own). */
    size_t hdr = (sizeof(struct clt_thread) + 4095) & ~(size_t)4095;
    uint8_t *map = mmap(NULL, hdr + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    struct clt_thread *t = (struct clt_thread *)map;
    uint8_t *buf = map + hdr;
    t->buf = buf;
    t->mask = size - 1;
    t->state = CLT_TH_CLAIMED;
    static _Atomic uint32_t next_seq = 2;   /* 1 is the writer's own sequence */
    t->seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
    t->next = __atomic_load_n(&clt_threads, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&clt_threads, &t->next, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return t;
}

struct clt_thread *clt_thread_attach(void)
{
    int saved = errno;
    uint64_t t_attach = clt_now();
    struct clt_thread *th = NULL;
    int began = 0;
    if (__atomic_load_n(&writer_state, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&start_lock);
        if (writer_state == 0) {
            clt_callstack_load();
            __atomic_store_n(&writer_state, clt_writer_start() == 0 ? 1 : -1, __ATOMIC_RELEASE);
            /* only a process that records gets our fatal-signal handlers */
            if (writer_state == 1) {
                install_fatal_handlers();
                began = 1;
            }
        }
        pthread_mutex_unlock(&start_lock);
    }
    if (writer_state != 1) {
        __atomic_store_n(&clt_active, 0, __ATOMIC_RELAXED);
        clt_window_refresh();
        goto out;
    }
    th = thread_new();
    if (!th)
        goto out;
    th->tid = (int)syscall(SYS_gettid);
    th->dropped = 0;
    th->cost_countdown = CLT_COST_EVERY;   /* each measured light call stands for 64 */
    th->cost_rng = (uint32_t)th->tid * 2654435761u | 1u;
    __atomic_store_n(&th->cost_exact, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_sampled, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_samples, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_waited, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->waits, 0, __ATOMIC_RELAXED);
    th->generation++;
    th->head_local = th->tail_cached = __atomic_load_n(&th->tail, __ATOMIC_ACQUIRE);
    __atomic_store_n(&th->head, th->head_local, __ATOMIC_RELAXED);
    __atomic_store_n(&th->state, CLT_TH_LIVE, __ATOMIC_RELEASE);
    clt_tls = th;
    __cxa_thread_atexit_impl(thread_gone, th, &__dso_handle);
    if (began)
        clt_window_begin();     /* its first window and control thread, with a ring to say so */
    /* a thread's first call: its ring (and the first thread's writer) */
    __atomic_store_n(&th->cost_exact, clt_now() - t_attach, __ATOMIC_RELAXED);
out:
    errno = saved;
    return th;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}


static int ring_fits(struct clt_thread *th, size_t max, uint64_t *pad)
{
    uint64_t size = th->mask + 1, head = th->head_local, off = head & th->mask;
    *pad = off + max > size ? size - off : 0;
    th->tail_cached = __atomic_load_n(&th->tail, __ATOMIC_SEQ_CST);
    return head + *pad + max - th->tail_cached <= size;
}

/* The ring is full (or wraps): wait for the writer on a futex -- by default
 * until there is room (back-pressure: nothing is lost), at most 10 s so that
 * a writer that cannot run (a deadlock on a lock the app holds) never hangs
 * the app; with CLTRACE_DROP=1 up to CLTRACE_WAIT_US. Then the call is
 * dropped and counted. A thread that is already dropping does not wait again
 * until there is room: one slow call when the writer falls behind, not one
 * per call. */
#define BACKPRESSURE_NS 10000000000L
/* A wait of the calling thread (ring room, the collector), kept out of the
 * call being measured and counted in cltrace's own cost, less the paced
 * ticks of it where the device, not cltrace, set the pace. */
void clt_count_wait(struct clt_thread *th, uint64_t since, uint64_t paced)
{
    uint64_t ticks = clt_now() - since;
    th->wait_pending += ticks;
    paced = paced < ticks ? paced : ticks;
    __atomic_store_n(&th->cost_waited, __atomic_load_n(&th->cost_waited, __ATOMIC_RELAXED) + ticks - paced,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&th->waits, __atomic_load_n(&th->waits, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* What one clock read costs the calling thread: the best of a few runs of
 * 32 reads in a row, divided by 32. Not the gap of a back-to-back pair: on
 * AMD Zen two rdtsc overlap and their gap is ~1 tick where a read in a run
 * costs ~23, so subtracting the pair's gap left two reads in every measured
 * light call (2.5 times their cost); on Intel both are ~25 cycles. */
uint64_t clt_clock_read_ticks;
static void clock_read_measure(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = clt_now(), b = a;
        for (int j = 0; j < 32; j++)
            b = clt_now();
        if (b - a < best)
            best = b - a;
    }
    clt_clock_read_ticks = (best + 16) / 32;
}

/* The next measured light call: 1 to 127 calls on, 64 on average. A fixed
 * gap of 64 met records of one size at one place in the ring every time (64
 * records of 64 bytes: the same offset in a cache line, the same distance
 * from the line the last prefetch asked for), and a run measured either its
 * cheap or its dear calls. */
static uint32_t next_gap(struct clt_thread *th)
{
    uint32_t x = th->cost_rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    th->cost_rng = x;
    return 1 + x % (2 * CLT_COST_EVERY - 1);
}

/* From te to now lie three clock reads: t0's, t1's and now's (te's lies
 * before it). inner takes away the app's call and t1's read (t1 - t0 holds
 * it) and, for a one-clock call (one whose unmeasured calls read t0 only),
 * one read more (gen/gen.py). What is left holds as many reads as an
 * unmeasured call makes. An exact call also made te's and now's: two more. */
void clt_cost_add(struct clt_thread *th, uint64_t te, uint64_t inner, int exact)
{
    int64_t spent = (int64_t)(clt_now() - te - inner) - (int64_t)th->wait_pending;
    th->wait_pending = 0;
    if (!exact) {
        __atomic_store_n(&th->cost_samples, __atomic_load_n(&th->cost_samples, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        th->cost_countdown = next_gap(th);
    } else {
        spent += 2 * (int64_t)clt_clock_read_ticks;
    }
    _Atomic uint64_t *sum = exact ? &th->cost_exact : &th->cost_sampled;
    __atomic_store_n(sum, __atomic_load_n(sum, __ATOMIC_RELAXED) + (uint64_t)(spent > 0 ? spent : 0),
                     __ATOMIC_RELAXED);
}
struct clt_rec *clt_ring_reserve_slow(struct clt_thread *th, size_t max)
{
    uint64_t pad, w0 = clt_now();
    int saved = errno, waited = 0;
    if (max > (th->mask + 1) / 4)
        goto drop;
    /* Called about once per trip around the ring: a good moment to make sure
     * the writer is awake when the ring is more than half full. */
    if (th->head_local - __atomic_load_n(&th->tail, __ATOMIC_RELAXED) > (th->mask + 1) / 2)
        clt_writer_kick();
    long budget_ns = th->dropping && !__atomic_load_n(&clt_symbolizer_busy, __ATOMIC_RELAXED) ? 0
                     : clt_cfg.DROP ? clt_cfg.WAIT_US * 1000 : BACKPRESSURE_NS;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!ring_fits(th, max, &pad)) {
        waited = 1;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        /* The writer reading a binary's symbols for the first time (tens of
         * ms, once per binary): wait for it rather than lose calls. */
        long limit = __atomic_load_n(&clt_symbolizer_busy, __ATOMIC_RELAXED) && budget_ns < 1000000000L
                     ? 1000000000L : budget_ns;
        long left = limit - ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec));
        if (left <= 0 || !__atomic_load_n(&clt_active, __ATOMIC_RELAXED))
            goto drop;
        /* the app waits for the writer: at idle priority it would get
         * no CPU while the app's other threads want them all */
        clt_own_threads_lift(CLT_LIFT_RING);
        uint32_t seq = __atomic_load_n(&th->wake_seq, __ATOMIC_SEQ_CST);
        __atomic_store_n(&th->waiting, 1, __ATOMIC_SEQ_CST);
        clt_writer_kick();
        if (!ring_fits(th, max, &pad)) {
            struct timespec ts = { left / 1000000000L, left % 1000000000L };
            futex(&th->wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
        }
        __atomic_store_n(&th->waiting, 0, __ATOMIC_RELAXED);
    }
    if (pad) {
        struct clt_rec *p = (struct clt_rec *)(th->buf + (th->head_local & th->mask));
        p->fn = CLT_FN_PAD;
        p->size = 0;
        th->head_local += pad;
        __atomic_store_n(&th->head, th->head_local, __ATOMIC_RELEASE);
    }
    th->dropping = 0;
    if (waited)
        clt_count_wait(th, w0, 0);
    errno = saved;
    return (struct clt_rec *)(th->buf + (th->head_local & th->mask));
drop:
    if (waited)
        clt_count_wait(th, w0, 0);
    th->dropping = 1;
    th->dropped++;
    __atomic_store_n(&th->dropped_pub, th->dropped, __ATOMIC_RELEASE);
    errno = saved;
    return NULL;
}

/* ---- load, fork, exit ------------------------------------------------- */

static uint64_t load_ns;        /* the constructor's time: cltrace's own start-up */

static void at_exit(void)
{
    /* Commands still in flight are waited for (bounded) while recording is
     * still on, so their completions are recorded. */
    uint64_t t0 = clt_clock_ns(CLOCK_MONOTONIC);
    int recording = writer_state == 1 && clt_is_active();
    if (recording) {
        clt_own_threads_lift(CLT_LIFT_EXIT);     /* the exit waits for them */
        clt_writer_exit_begins();
    }
    uint64_t unfinished = recording ? clt_commands_drain(2000, 20000) : 0;
    uint64_t exit_wait_ns = clt_clock_ns(CLOCK_MONOTONIC) - t0;
    if (!__atomic_exchange_n(&clt_active, 0, __ATOMIC_ACQ_REL) && writer_state != 1)
        return;
    clt_window_refresh();
    clt_window_end();
    pthread_mutex_lock(&start_lock);
    if (writer_state == 1) {
        writer_state = 2;     /* finished: later calls only forward */
        pthread_mutex_unlock(&start_lock);
        clt_collect_finish();   /* the driver's own teardown follows: leave it alone */
        clt_clock_keep_release();
        clt_writer_stop(unfinished, exit_wait_ns, t0, load_ns);
        if ((clt_break_on & 2) && clt_writer_leaks())
            clt_break_if_debugged();    /* CLTRACE_BREAK=leak: definitely lost or growing */
        return;
    }
    pthread_mutex_unlock(&start_lock);
}

/* Fatal signals and _exit: the trace keeps every call made before them. The
 * handler asks the writer to drain and write (bounded), puts back whatever
 * handler was there before, and lets the signal take its course. An app that
 * installs its own handler later replaces ours: its handler runs, as without
 * cltrace (the writer still writes what it drained every few ms). */
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGQUIT };
static struct sigaction old_actions[sizeof fatal_signals / sizeof fatal_signals[0]];
static _Atomic int in_fatal;

static int writer_running(void)
{
    return __atomic_load_n(&writer_state, __ATOMIC_ACQUIRE) == 1 && getpid() == clt_pid;
}

/* A crash or _exit: the completions the collector held back (250 ms at
 * most), then what was recorded, to the file (500 ms at most). */
static void write_out_before_dying(void)
{
    if (writer_running()) {
        clt_own_threads_lift(CLT_LIFT_FLUSH);
        clt_commands_drain(100, 250);
        clt_writer_flush_now(500);
    }
}

static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    (void)info;
    (void)uc;
    int saved = errno;
    unsigned i = 0;
    while (fatal_signals[i] != sig)
        i++;
    if (!__atomic_exchange_n(&in_fatal, 1, __ATOMIC_ACQ_REL))
        write_out_before_dying();
    sigaction(sig, &old_actions[i], NULL);
    errno = saved;
    /* A fault returns to the faulting instruction and fires again under the
     * old handler; a sent signal is sent again. */
    if (info->si_code <= 0 || sig == SIGABRT || sig == SIGTERM || sig == SIGINT || sig == SIGQUIT)
        raise(sig);
}

static void install_fatal_handlers(void)
{
    for (unsigned i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction sa, cur;
        if (sigaction(fatal_signals[i], NULL, &cur) != 0 || cur.sa_handler != SIG_DFL)
            continue;       /* ignored, or the app's (inherited) handler: leave it */
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        old_actions[i] = cur;
        sigaction(fatal_signals[i], &sa, NULL);
    }
}

/* _exit and _Exit skip atexit: write out what was recorded first. */
CLT_EXPORT void _exit(int status)
{
    write_out_before_dying();
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

CLT_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* The child of fork() has no writer thread: it starts afresh, with its own
 * file (its pid), on its next call. The parent's rings stay the parent's. */
static void after_fork_child(void)
{
    clt_pid = (int)getpid();
    pthread_mutex_init(&start_lock, NULL);
    clt_writer_forget();
    __atomic_store_n(&clt_threads, NULL, __ATOMIC_RELAXED);
    clt_tls = NULL;
    clt_collect_forget();
    clt_fp_forget();
    rt_take_forget();
    clt_clock_keep_forget();
    clt_window_forget();
    if (writer_state != 0 && writer_state != 2) {
        writer_state = 0;
        __atomic_store_n(&clt_active, !clt_cfg.DISABLE, __ATOMIC_RELAXED);
    }
    clt_window_refresh();
}

static void unpreload_self(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !self_info.dli_fname)
        return;
    char out[4096];
    size_t n = 0;
    const char *me = strrchr(self_info.dli_fname, '/');
    me = me ? me + 1 : self_info.dli_fname;
    for (const char *p = pre; *p;) {
        size_t len = strcspn(p, ": ");
        const char *base = p;
        for (size_t k = 0; k < len; k++)
            if (p[k] == '/')
                base = p + k + 1;
        size_t blen = len - (size_t)(base - p);
        if (len && !(blen == strlen(me) && strncmp(base, me, blen) == 0) && n + len + 2 < sizeof out) {
            if (n)
                out[n++] = ':';
            memcpy(out + n, p, len);
            n += len;
        }
        p += len;
        while (*p == ':' || *p == ' ')
            p++;
    }
    out[n] = 0;
    if (n)
        setenv("LD_PRELOAD", out, 1);
    else
        unsetenv("LD_PRELOAD");
}

__attribute__((constructor)) static void clt_load(void)
{
    int saved = errno;
    uint64_t t0 = clt_clock_ns(CLOCK_MONOTONIC);
    clt_config_load(&clt_cfg);
    clt_pid = (int)getpid();
    dladdr((void *)&clt_load, &self_info);
    clt_clock_select();
    clock_read_measure();
    clt_fp_load();
    take_load();
    clt_sample_load();
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(at_exit);
    /* CLTRACE_CHILDREN=0: trace this process only, not what it executes. */
    if (!clt_cfg.CHILDREN)
        unpreload_self();
    __atomic_store_n(&clt_active, !clt_cfg.DISABLE, __ATOMIC_RELEASE);
    clt_window_load();
    load_ns = clt_clock_ns(CLOCK_MONOTONIC) - t0;
    errno = saved;
}
