/* The shim's life cycle: load, the process's first recorded call, fork,
 * exit, fatal signals and _exit. The top of capture/: it composes the parts
 * (windows, the collector, fingerprints, captures, sampling, call stacks)
 * and starts and stops the writer; nothing calls it but the C library.
 *
 * Lazy everywhere: the real library is looked up on the first call, a
 * thread's ring is made on its first call, the writer thread and the trace
 * file on the first recorded call. A process that never calls OpenCL pays
 * nothing and leaves no file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim.h"
#include "callstack.h"
#include "cpusample.h"
#include "python.h"
#include "trace/tables.h"
#include "hooks.h"
#include "override/override.h"
#include "replay/take/take.h"
#include "window.h"

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

/* What stands in front of each real entry point (real.c asks): fingerprints
 * outermost, then a launch capture, then overrides, then the driver; each
 * returns `real` itself where it is off. */
static void *interpose(unsigned fn, void *real)
{
    return clt_fp_interpose(fn, rt_take_interpose(clt_fns[fn].name, ov_interpose(clt_fns[fn].name, real)));
}

static int adds_arg_info(void)
{
    return clt_fp_on || rt_take_on;
}

/* override/'s notes: a record on the calling thread's ring. */
static void override_note(void *program, uint64_t hash, enum ov_what what, const char *file, const char *text)
{
    struct clt_thread *th = clt_enter();
    if (!th)
        return;
    struct clt_rec *rec = clt_rec_begin(th, sizeof(struct clt_rec) + 8 * OVR_N + 2 * CLT_MAX_STR);
    if (!rec)
        return;
    struct clt_extra x = clt_extra_init(rec, OVR_N);
    rec->arg[OVR_PROGRAM] = (uint64_t)(uintptr_t)program;
    rec->arg[OVR_HASH] = hash;
    rec->arg[OVR_WHAT] = (uint64_t)what;
    rec->arg[OVR_FILE] = clt_put_str(&x, OVR_FILE, 1, file ? file : "");
    rec->arg[OVR_TEXT] = clt_put_str(&x, OVR_TEXT, 1, text ? text : "");
    uint64_t now = clt_now();
    clt_rec_commit(th, rec, &x, CLT_REC_OVERRIDE, now, now, 0);
}

static void override_load(void)
{
    static const struct ov_host host = { real_named, fn_named, apps_call, adds_arg_info, clt_msg, override_note };
    const struct ov_options o = { clt_cfg.PROGRAMS, clt_cfg.OVERRIDE, clt_cfg.OVERRIDE_OPTIONS, clt_cfg.OVERRIDE_LOCAL };
    /* pyopencl would build a program it has built before from its cached
     * binary, past the source a --programs or --override looks at */
    if ((o.programs[0] || o.override[0] || o.options[0]) && !getenv("PYOPENCL_NO_CACHE"))
        setenv("PYOPENCL_NO_CACHE", "1", 1);
    ov_load(&o, &host);
}

static void take_load(void)
{
    static const struct rt_host host = { real_named, fn_named, apps_call, clt_msg };
    rt_take_load(clt_cfg.CAPTURE, clt_cfg.CAPTURE_DIR, &host);
}

/* ---- the first recorded call ---------------------------------------------- */

static void install_fatal_handlers(void);
static uint64_t load_ns;        /* cltrace's own start-up: its constructor, its first call's start */

/* On the app's thread, inside its first call but before that call's own
 * measure: counted with the constructor (0.4-0.6 ms on PoCL, 0.5-0.7 on an
 * H200, 2026-11-30: the CPU samples' timers, the trace file opened; the
 * writer makes its tables on its own thread, the collector loads libunwind) */
static int start(void)
{
    uint64_t t0 = clt_clock_ns(CLOCK_MONOTONIC);
    clt_callstack_load();
    clt_py_load();
    clt_cpusample_start();      /* before the writer: the threads there are now are the program's */
    int rc = clt_writer_start() != 0 ? -1 : 0;
    if (rc == 0)
        install_fatal_handlers();   /* only a process that records gets our fatal-signal handlers */
    load_ns += clt_clock_ns(CLOCK_MONOTONIC) - t0;
    return rc;
}

static const struct clt_rings_life rings_life = { start, clt_window_begin, clt_window_refresh };

/* ---- load, fork, exit ------------------------------------------------- */

/* Commands still in flight at exit are waited for (bounded) while recording
 * is still on, so their completions are recorded; and before the libraries'
 * destructors, as is the rest of what cltrace asks of the driver. at_exit,
 * registered in the constructor, before the C library registers its own
 * ending (_dl_fini), runs after them: a driver's threads still running the
 * commands then met torn-down state (PoCL exiting with 4 long kernels in
 * flight, compiled as they start: SIGABRT or SIGSEGV, LLVM's passes gone, 4
 * runs of 4; untraced 1 in 20, PoCL's own race). So this part is registered
 * again at the first command: after the driver's own exit handlers, it runs
 * before them. Calls the destructors make are still recorded; their
 * commands are not timed.
 * _exit and its kin skip both handlers: at_exit does it all there. */
static _Atomic uint64_t early_wait_ns;    /* 0: the early part did not run */

/* The exit's calls into the driver are made on a thread of cltrace's own,
 * never on the thread that called exit(): glibc has destroyed that thread's
 * thread-locals (C++ thread_local objects) before any atexit handler or
 * destructor runs, and a driver that keeps state there breaks when called
 * on it. Oclgrind keeps the API call it is in on a thread_local vector:
 * cltrace's exit releasing a command's event wrote into freed memory
 * ("corrupted double-linked list", SIGABRT, 1 run in ~120 beside 2 busy
 * threads). Where no thread can start, the calls are left undone: the
 * commands then count as unfinished. _exit, _Exit and quick_exit run no
 * thread-local destructor: there the calling thread makes them (an _exit in
 * a signal handler then starts no thread). */
struct exit_calls {
    unsigned stall_ms, max_ms;
    int drain, done;         /* the commands in flight collected; the driver let go of */
    uint64_t unfinished;
};

static void driver_done(void)
{
    clt_collect_finish();                    /* the driver's own teardown follows: leave it alone */
    clt_clock_keep_release();
}

static _Atomic int locals_whole;          /* set by _exit and its kin: no thread-local destroyed */

static void exit_calls_make(struct exit_calls *c)
{
    if (c->drain)
        c->unfinished = clt_commands_drain(c->stall_ms, c->max_ms, 1);
    if (c->done)
        driver_done();
}

static void *exit_calls_run(void *arg)
{
    clt_own_thread_begin("cltrace-exit", 0);
    exit_calls_make(arg);
    clt_own_thread_end();
    return NULL;
}

/* A thread only where the driver has work (commands in flight, a queue of cltrace's to release):
 * one costs 0.05-0.3 ms on a 2-core VM, and on PoCL cltrace holds no queue (its clock is read). */
static uint64_t exit_calls(int drain, unsigned stall_ms, unsigned max_ms, int done)
{
    uint64_t pending = drain ? clt_commands_drain(0, 0, 0) : 0;     /* counted, not asked for */
    struct exit_calls c = { stall_ms, max_ms, pending != 0, done, pending };
    if (pending || (done && clt_clock_keeps())) {
        if (__atomic_load_n(&locals_whole, __ATOMIC_ACQUIRE)) {
            exit_calls_make(&c);
            return c.unfinished;
        }
        if (clt_run_own(exit_calls_run, &c) == 0)
            return c.unfinished;
    }
    if (done)
        clt_collect_finish();
    return pending;
}

static void exit_early(void)
{
    if (getpid() != clt_pid || clt_rings_state() != 1 || !clt_is_active())
        return;
    uint64_t t0 = clt_clock_ns(CLOCK_MONOTONIC);
    clt_own_threads_lift(CLT_LIFT_EXIT);     /* the exit waits for them */
    exit_calls(1, 2000, 20000, 1);
    __atomic_store_n(&early_wait_ns, clt_clock_ns(CLOCK_MONOTONIC) - t0 + 1, __ATOMIC_RELEASE);
}

static void exit_early_register(void)       /* the collector's start: the first command */
{
    static _Atomic int registered;          /* once a process: a fork child inherits the handler */
    if (!__atomic_exchange_n(&registered, 1, __ATOMIC_ACQ_REL))
        atexit(exit_early);
}

static void at_exit(void)
{
    uint64_t t0 = clt_clock_ns(CLOCK_MONOTONIC);
    uint64_t early = __atomic_load_n(&early_wait_ns, __ATOMIC_ACQUIRE);
    int recording = clt_rings_state() == 1 && clt_is_active();
    struct clt_exit_facts facts = { 0 };
    if (recording) {
        ov_exit();                               /* overrides that matched nothing, in the trace */
        clt_own_threads_lift(CLT_LIFT_EXIT);     /* the exit waits for them */
        clt_writer_exit_begins();
        uint64_t r0 = clt_clock_ns(CLOCK_MONOTONIC);
        facts.regs_not_in = clt_nvbuild_finish();    /* register counts still being compiled */
        facts.regs_wait_ns = clt_clock_ns(CLOCK_MONOTONIC) - r0;
    }
    uint64_t unfinished = recording ? exit_calls(1, early ? 0 : 2000, early ? 0 : 20000, 0) : 0;
    if (recording)      /* after the last command's completion; on a thread that records (none made here) */
        clt_clock_keep_exit(clt_tls);
    uint64_t exit_wait_ns = clt_clock_ns(CLOCK_MONOTONIC) - t0 + (early ? early - 1 : 0);
    t0 -= early ? early - 1 : 0;                 /* the exit's figure holds the early part */
    clt_cpusample_stop();
    if (!__atomic_exchange_n(&clt_active, 0, __ATOMIC_ACQ_REL) && clt_rings_state() != 1)
        return;
    clt_window_refresh();
    clt_window_end();
    if (clt_rings_finish()) {   /* finished: later calls only forward */
        if (!early)
            exit_calls(0, 0, 0, 1);
        facts.unfinished = unfinished, facts.wait_ns = exit_wait_ns, facts.began_ns = t0, facts.load_ns = load_ns;
        clt_writer_stop(&facts);
        if ((clt_break_on & 2) && clt_writer_leaks())
            clt_break_if_debugged();    /* CLTRACE_BREAK=leak: definitely lost or growing */
    }
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
    return clt_rings_state() == 1 && getpid() == clt_pid;
}

/* A crash or _exit: the completions the collector held back (250 ms at
 * most), then what was recorded, to the file (500 ms, and on while the
 * writer moves: 30 s at most). */
static void write_out_before_dying(void)
{
    if (writer_running()) {
        clt_own_threads_lift(CLT_LIFT_FLUSH);
        clt_commands_drain(100, 250, 0);
        clt_writer_flush_now(500, 30);
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

/* _exit, _Exit (Python's os._exit, forked workers) and quick_exit skip the
 * atexit handlers, ours among them: the exit is done here as at exit(), so
 * the trace is whole (the run's time, cltrace's cost, the objects still
 * held, the status), and says how the process ended. A vfork child shares
 * the parent's memory and is not the process that recorded (its pid is
 * not clt_pid): it goes untouched. */
static void exit_by(const char *how, int status)
{
    if (!writer_running() || __atomic_load_n(&in_fatal, __ATOMIC_ACQUIRE))
        return;
    clt_writer_exit_how(how, status);
    __atomic_store_n(&locals_whole, 1, __ATOMIC_RELEASE);
    at_exit();
}

CLT_EXPORT void _exit(int status)
{
    exit_by("_exit", status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

CLT_EXPORT void _Exit(int status)
{
    exit_by("_Exit", status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

/* exec*: the image is replaced, no exit handler runs, and what the writer
 * had not written yet went with it (a fork child that called OpenCL, then
 * ran /bin/true: an empty trace file). The exit is done here as at _exit;
 * the trace says "exec". An exec that fails returns to a process that runs
 * on untraced: its later calls are forwarded only. A vfork child is not the
 * process that recorded: untouched (exit_by); nothing here looks a symbol
 * up there (the loader's lock may be another thread's): execve and fexecve
 * are the system calls the C library makes, execvpe's PATH search the C
 * library's own, looked up at load. The list-taking forms go through
 * __execve inside the C library, not through these: each is wrapped. */
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
static execvpe_fn real_execvpe;

CLT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    exit_by("exec", -1);
    return (int)syscall(SYS_execve, path, argv, envp);
}

CLT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    exit_by("exec", -1);
    if (!real_execvpe) {
        errno = ENOSYS;
        return -1;
    }
    return real_execvpe(file, argv, envp);
}

CLT_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

CLT_EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

CLT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    exit_by("exec", -1);
    return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

/* execl, execlp, execle: their arguments as a list, as the C library does
 * (ap is left after the list's NULL: execle's envp comes next) */
#define EXEC_LIST(first)                                                \
    va_list ap;                                                         \
    size_t n = 1;                                                       \
    va_start(ap, first);                                                \
    while (va_arg(ap, const char *))                                    \
        n++;                                                            \
    va_end(ap);                                                         \
    char *argv[n + 1];                                                  \
    argv[0] = (char *)(first);                                          \
    va_start(ap, first);                                                \
    for (size_t i = 1; i <= n; i++)                                     \
        argv[i] = va_arg(ap, char *)

CLT_EXPORT int execl(const char *path, const char *arg, ...)
{
    EXEC_LIST(arg);
    va_end(ap);
    return execve(path, argv, environ);
}

CLT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXEC_LIST(arg);
    va_end(ap);
    return execvpe(file, argv, environ);
}

CLT_EXPORT int execle(const char *path, const char *arg, ...)
{
    EXEC_LIST(arg);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

/* quick_exit runs the at_quick_exit handlers, then the C library's own _exit
 * (not ours): registered first, this one runs last. */
static void at_quick_exit_last(void)
{
    exit_by("quick_exit", -1);
}

/* The child of fork() has no writer thread: it starts afresh, with its own
 * file (its pid), on its next call. The parent's rings stay the parent's. */
static void after_fork_child(void)
{
    clt_pid = (int)getpid();
    load_ns = 0;                /* its start is its first call's: the parent's was the parent's */
    clt_cpusample_forget();
    clt_writer_forget();
    clt_collect_forget();
    clt_nvbuild_forget();
    clt_fp_forget();
    rt_take_forget();
    ov_forget();
    clt_clock_keep_forget();
    clt_window_forget();
    clt_rings_forget();
    clt_window_refresh();
}

static void unpreload_self(void)
{
    const char *pre = getenv("LD_PRELOAD");
    const char *self = clt_real_self_name();
    if (!pre || !self)
        return;
    char out[4096];
    size_t n = 0;
    const char *me = strrchr(self, '/');
    me = me ? me + 1 : self;
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
    clt_real_self((void *)&clt_load);
    clt_clock_select();
    clt_rings_measure_clock();
    clt_rings_set_life(&rings_life);
    clt_fp_load();
    take_load();
    override_load();
    clt_real_set_interposer(interpose);
    clt_interposer_waits = adds_arg_info();
    clt_sample_load();
    clt_cpusample_load();
    pthread_atfork(NULL, NULL, after_fork_child);
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    atexit(at_exit);
    clt_collect_set_on_start(exit_early_register);
    at_quick_exit(at_quick_exit_last);
    /* CLTRACE_CHILDREN=0: trace this process only, not what it executes. */
    if (!clt_cfg.CHILDREN)
        unpreload_self();
    __atomic_store_n(&clt_active, !clt_cfg.DISABLE, __ATOMIC_RELEASE);
    clt_window_load();
    load_ns += clt_clock_ns(CLOCK_MONOTONIC) - t0;
    errno = saved;
}
