/* cltrace's own threads (writer, collector, compressor, spill, control):
 * who they are, and the CPU they may take.
 *
 * On a virtual machine whose idle CPUs halt at once, the writer, the
 * compressor, the spill thread and the collector run at idle priority
 * (SCHED_IDLE) where the process may later lift them back (the control
 * thread, which sleeps until asked, stays at normal). A thread a driver
 * starts inside one of the collector's calls would inherit idle priority:
 * clt_own_driver_begin/end find such threads and put them at normal.
 *
 * To the scheduler a CPU running only idle threads is idle: an app thread
 * that wakes is put there at once rather than beside another app thread,
 * and it preempts them. At normal priority a wake-up of one of
 * them at the wrong moment moved PoCL's threads onto one CPU of a 2-vCPU VM
 * (the driver's worker and the app's thread then handing the CPU to each
 * other: ~13,000 context switches and ~400 wake-ups for 4,000 small
 * blocking writes instead of ~19,000 and ~8,000), and that run took ~90 ms
 * more, 0.33 s against 0.23: 6 runs in 12 traced, none untraced; at idle
 * priority 0 in 12 (docs/PERFORMANCE.md, "cltrace's threads at idle
 * priority"). Where the guest's idle CPUs poll 200 us first, the same
 * programs ran slower with them at idle priority (small writes +15.5 ->
 * +20.8 ms, a write + kernel + finish loop +18.9 -> +26.8 ms: preempted
 * where they would have run beside the app) and no run went to one CPU at
 * normal priority: there, and off virtual machines (not measured), they
 * stay at normal priority.
 *
 * An idle thread gets almost nothing while the app's threads want every
 * CPU. Where the app waits for them (a full ring, a crash or _exit
 * flushing, a snapshot waited for, the exit), that would hold the app:
 * clt_own_threads_lift puts them back at normal priority, and the writer
 * lowers them again a second after it has caught up. Going back needs CAP_SYS_NICE or RLIMIT_NICE at 20
 * (the kernel treats SCHED_IDLE as nice 20); without either they stay at
 * normal priority from the start, and the trace says why. */
#define _GNU_SOURCE
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "emit.h"

#define OWN_MAX 8
/* by kernel id, while they run: telling them from the app's by their names
 * read two files a thread, ~0.1 ms of a 2-core exit of 1.3 ms. Eight at
 * most (it has five); one past them counts as the app's. */
static _Atomic int own_tid[OWN_MAX];
static _Atomic int own_idle[OWN_MAX];   /* the slot's thread runs at idle priority when lowered */
static __thread int own_idle_self;      /* this thread is one of cltrace's, started idle */

enum { POLICY_UNKNOWN, POLICY_IDLE, POLICY_NORMAL };
static _Atomic int policy;           /* what new own threads get */
static const char *normal_why;       /* POLICY_NORMAL from the start: why */
/* With POLICY_IDLE: 1 while its threads are at idle priority. A lift
 * clears it and puts them at normal priority; the writer, caught up a
 * second after the last lift, sets it and puts them back (settle). */
static _Atomic int lowered = 1;
static _Atomic int final_lift;       /* a crash, _exit or the exit: not put back */
static _Atomic unsigned lifts;       /* lifts before the exit */
static _Atomic int first_why;        /* enum clt_lift of the first */
static _Atomic uint64_t first_ns, last_ns;   /* boottime of the first and the latest */
#define SETTLE_NS 1000000000ull
static const char *const lift_name[] = {
    [CLT_LIFT_RING] = "an app thread waited for room in its ring",
    [CLT_LIFT_FLUSH] = "a crash or _exit flushed the trace",
    [CLT_LIFT_SNAPSHOT] = "the app waited for a snapshot",
    [CLT_LIFT_CLOCK] = "an app thread waited for the collector's clock markers",
    [CLT_LIFT_RELEASE] = "an app thread waited for its released queue's commands to be collected",
    [CLT_LIFT_EXIT] = "the exit",
};

/* A small file's first line, without its newline; "" where unreadable. */
static void read_line(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
}

/* How the machine's idle CPUs wait for work. On a virtual machine an idle
 * CPU that halts at once leaves the hypervisor, and waking it costs a trip
 * back: a program whose threads hand work to each other (PoCL's blocking
 * transfers) pays that on most hand-offs, and every wake-up of cltrace's
 * threads adds more. On a 2-vCPU KVM guest an empty wake-up of one extra
 * thread delayed 4,000 small blocking writes ~25 us with the guest's
 * halt-polling at the kernel's default (200 us), ~100 us with it off
 * (docs/PERFORMANCE.md): not counted, and said, with the wake-ups. */
static struct clt_idle machine_idle;
static pthread_once_t machine_idle_once = PTHREAD_ONCE_INIT;

static void idle_read(void)
{
    struct clt_idle *idle = &machine_idle;
    idle->hypervisor = -1;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d))
        idle->hypervisor = (int)(c >> 31 & 1);
#endif
    char line[64];
    read_line("/sys/devices/system/cpu/cpuidle/current_driver", idle->driver, sizeof idle->driver);
    read_line("/sys/module/haltpoll/parameters/guest_halt_poll_ns", line, sizeof line);
    char *end;
    long long v = strtoll(line, &end, 10);
    idle->halt_poll_ns = end != line && v >= 0 ? v : -1;
}

/* The machine's: read once (a cpuid that traps to the hypervisor and two
 * files), at the writer's start; the exit's account takes the same. */
void clt_idle_sample(struct clt_idle *idle)
{
    pthread_once(&machine_idle_once, idle_read);
    *idle = machine_idle;
}

/* 1: a virtual machine whose idle CPUs halt at once (haltpoll's window 0,
 * or another driver, which does not poll), as report/model/model.h's
 * rm_idle_halts judges it from the trace; haltpoll with its window
 * unreadable counts as polling here (normal priority, as before) */
int clt_idle_halts(const struct clt_idle *idle)
{
    return idle->hypervisor == 1 && (strcmp(idle->driver, "haltpoll") || idle->halt_poll_ns == 0);
}

/* Capabilities count for the kernel's check only in the first user
 * namespace: there uid_map maps every id to itself. */
static int first_user_namespace(void)
{
    char map[64];
    read_line("/proc/self/uid_map", map, sizeof map);
    unsigned long long inside, outside, count;
    return sscanf(map, "%llu %llu %llu", &inside, &outside, &count) == 3 && inside == 0 && outside == 0 &&
           count == 4294967295ull;
}

/* May a thread at SCHED_IDLE go back to SCHED_OTHER at its nice value?
 * The kernel's can_nice(): RLIMIT_NICE >= 20 - nice, or CAP_SYS_NICE. */
static const char *why_not_lowered(void)
{
    struct clt_idle idle;
    clt_idle_sample(&idle);
    if (!clt_idle_halts(&idle))
        return "not a virtual machine whose idle CPUs halt at once, where alone idle priority helped";
    struct rlimit rl;
    int nice = getpriority(PRIO_PROCESS, 0);
    if (getrlimit(RLIMIT_NICE, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)(20 - nice)))
        return NULL;
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) == 0 && (d[CAP_SYS_NICE / 32].effective >> (CAP_SYS_NICE % 32) & 1) &&
        first_user_namespace())
        return NULL;
    return "no CAP_SYS_NICE and RLIMIT_NICE below 20: they could not be put back at normal priority";
}

/* every own thread that may idle at policy (SCHED_IDLE or SCHED_OTHER) */
static void set_all(int sched_policy)
{
    struct sched_param sp = { 0 };
    for (int i = 0; i < OWN_MAX; i++) {
        int tid = __atomic_load_n(&own_tid[i], __ATOMIC_ACQUIRE);
        if (tid && __atomic_load_n(&own_idle[i], __ATOMIC_ACQUIRE))
            sched_setscheduler(tid, sched_policy, &sp);
    }
}

static int decide_policy(void)
{
    int p = __atomic_load_n(&policy, __ATOMIC_ACQUIRE);
    if (p != POLICY_UNKNOWN)
        return p;
    const char *why = why_not_lowered();
    if (why)
        normal_why = why;
    __atomic_compare_exchange_n(&policy, &p, why ? POLICY_NORMAL : POLICY_IDLE, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return __atomic_load_n(&policy, __ATOMIC_ACQUIRE);
}

void clt_own_thread_begin(const char *name, int idle)
{
    pthread_setname_np(pthread_self(), name);
    int tid = (int)syscall(SYS_gettid), free_slot = 0;
    for (int i = 0; i < OWN_MAX; i++, free_slot = 0)
        if (__atomic_compare_exchange_n(&own_tid[i], &free_slot, tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            __atomic_store_n(&own_idle[i], idle, __ATOMIC_RELEASE);
            break;
        }
    own_idle_self = idle;
    if (!idle || decide_policy() != POLICY_IDLE || !__atomic_load_n(&lowered, __ATOMIC_ACQUIRE))
        return;
    struct sched_param sp = { 0 };
    if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0) {
        if (!normal_why)
            normal_why = "the kernel refused SCHED_IDLE";
        __atomic_store_n(&policy, POLICY_NORMAL, __ATOMIC_RELEASE);
        set_all(SCHED_OTHER);     /* those started before, idle already */
    } else if (!__atomic_load_n(&lowered, __ATOMIC_ACQUIRE)) {
        sched_setscheduler(0, SCHED_OTHER, &sp);   /* lifted meanwhile: its slot may have been missed */
    }
}

void clt_own_thread_end(void)
{
    int tid = (int)syscall(SYS_gettid);
    for (int i = 0; i < OWN_MAX; i++) {
        int mine = tid;
        if (__atomic_load_n(&own_tid[i], __ATOMIC_ACQUIRE) == tid)
            __atomic_store_n(&own_idle[i], 0, __ATOMIC_RELEASE);
        __atomic_compare_exchange_n(&own_tid[i], &mine, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
}

/* In a fork child: the parent's threads are not its own; its new ones
 * start idle again. */
void clt_own_threads_forget(void)
{
    for (int i = 0; i < OWN_MAX; i++) {
        __atomic_store_n(&own_tid[i], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&own_idle[i], 0, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&lowered, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&final_lift, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&lifts, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&first_ns, 0, __ATOMIC_RELAXED);
}

int clt_own_thread_is(long tid)
{
    for (int i = 0; i < OWN_MAX; i++)
        if (__atomic_load_n(&own_tid[i], __ATOMIC_ACQUIRE) == tid)
            return 1;
    return 0;
}

/* The kernel's last process or thread id given out in this pid namespace
 * (any process's); 0 unknown. */
static long last_pid(void)
{
    char buf[32];
    read_line("/proc/sys/kernel/ns_last_pid", buf, sizeof buf);
    return strtol(buf, NULL, 10);
}

/* Field N (from 1) of a /proc stat line into *v; 0 where unreadable. The
 * command's name, field 2, may hold spaces and parentheses: fields are
 * counted from its last ')'. */
int clt_stat_field(const char *path, int n, long long *v)
{
    char line[1024];
    read_line(path, line, sizeof line);
    const char *p = strrchr(line, ')');
    for (int field = 2; p && field < n; field++)
        p = strchr(p + 1, ' ');
    return p && sscanf(p + 1, "%lld", v) == 1;
}

/* A thread's scheduling policy (/proc/self/task/T/stat, field 41); -1. */
static int task_policy(const char *tid)
{
    char path[64];
    long long policy_field;
    snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", tid);
    return clt_stat_field(path, 41, &policy_field) ? (int)policy_field : -1;
}

/* Around the collector's calls into the driver, while it runs idle: a
 * driver starts its threads on first use, so the first 256 rounds are
 * watched and every 256th after. begin returns the last id given out (0:
 * not watched); end puts at normal priority every thread of the process
 * at idle priority, not cltrace's, with a newer id. */
#define DRIVER_WATCH 256u
long clt_own_driver_begin(void)
{
    static _Atomic unsigned rounds;
    if (__atomic_load_n(&policy, __ATOMIC_RELAXED) != POLICY_IDLE || !__atomic_load_n(&lowered, __ATOMIC_RELAXED))
        return 0;
    unsigned r = __atomic_fetch_add(&rounds, 1, __ATOMIC_RELAXED);
    return r < DRIVER_WATCH || r % DRIVER_WATCH == 0 ? last_pid() : 0;
}

void clt_own_driver_end(long before)
{
    if (!before || last_pid() == before)
        return;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    struct sched_param sp = { 0 };
    while ((e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid > before && !clt_own_thread_is(tid) && task_policy(e->d_name) == SCHED_IDLE)
            sched_setscheduler((pid_t)tid, SCHED_OTHER, &sp);
    }
    closedir(d);
}

/* Where one of cltrace's idle threads takes a lock the app may want --
 * the driver's, inside the collector's calls; the dynamic linker's, in a
 * dlopen or dladdr -- it runs at normal priority until it lets go (the
 * writer's dl_iterate_phdr a new address: too short a hold for two calls).
 * At idle priority beside busy threads it got ~1/300 of a CPU, so
 * a lock held for a fraction of a millisecond held the app for 40-200 ms
 * (PoCL, 2 cores beside two CPU hogs: the app's clSetUserEventStatus
 * waited for the collector in 6 runs of 100 traced), and the writer's
 * dlopen of libdw held the app's dlsym 0.6-5.5 s beside five. Two system
 * calls, from cltrace's own idle threads only (an app thread's priority is
 * the app's). 1: the calling thread was put at normal priority. */
int clt_own_raise(void)
{
    struct sched_param sp = { 0 };
    return own_idle_self && __atomic_load_n(&policy, __ATOMIC_RELAXED) == POLICY_IDLE &&
           __atomic_load_n(&lowered, __ATOMIC_ACQUIRE) && sched_setscheduler(0, SCHED_OTHER, &sp) == 0;
}

/* Back to idle priority, unless its threads were lifted meanwhile */
void clt_own_lower(int raised)
{
    struct sched_param sp = { 0 };
    if (raised && __atomic_load_n(&lowered, __ATOMIC_ACQUIRE) && !__atomic_load_n(&final_lift, __ATOMIC_ACQUIRE))
        sched_setscheduler(0, SCHED_IDLE, &sp);
}

/* Async-signal-safe: atomics and system calls. The caller that finds
 * them idle does it; a thread starting meanwhile lifts itself
 * (clt_own_thread_begin), a settle meanwhile undoes its own work. */
void clt_own_threads_lift(enum clt_lift why)
{
    if (__atomic_load_n(&policy, __ATOMIC_ACQUIRE) != POLICY_IDLE)
        return;
    uint64_t now = clt_boottime_ns();
    if (why == CLT_LIFT_FLUSH || why == CLT_LIFT_EXIT)
        __atomic_store_n(&final_lift, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&last_ns, now, __ATOMIC_RELEASE);
    if (!__atomic_exchange_n(&lowered, 0, __ATOMIC_ACQ_REL))
        return;
    if (why != CLT_LIFT_EXIT && !__atomic_fetch_add(&lifts, 1, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&first_why, why, __ATOMIC_RELEASE);
        __atomic_store_n(&first_ns, now, __ATOMIC_RELEASE);
    }
    set_all(SCHED_OTHER);
}

/* The writer, caught up: a second after the latest lift, its threads go
 * back to idle priority. A lift while it does so finds lowered set and
 * lifts again; one that came before it checks lowered finds it clear. */
void clt_own_threads_settle(void)
{
    if (__atomic_load_n(&policy, __ATOMIC_RELAXED) != POLICY_IDLE || __atomic_load_n(&lowered, __ATOMIC_RELAXED) ||
        __atomic_load_n(&final_lift, __ATOMIC_ACQUIRE) ||
        clt_boottime_ns() - __atomic_load_n(&last_ns, __ATOMIC_ACQUIRE) < SETTLE_NS)
        return;
    int was = 0;
    if (!__atomic_compare_exchange_n(&lowered, &was, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    set_all(SCHED_IDLE);
    if (!__atomic_load_n(&lowered, __ATOMIC_ACQUIRE) || __atomic_load_n(&final_lift, __ATOMIC_ACQUIRE))
        set_all(SCHED_OTHER);
}

/* The trace's attributes (TRACE_FORMAT.md): the priority its threads ran
 * at, and a lift before the exit (start_ns: the run's start, boottime). */
void clt_own_threads_attrs(struct clt_attrs *a, uint64_t start_ns)
{
    int p = __atomic_load_n(&policy, __ATOMIC_ACQUIRE);
    if (p == POLICY_UNKNOWN)
        return;
    clt_attr_str(a, "cltrace.own_threads_priority", p == POLICY_IDLE ? "idle" : "normal");
    if (p == POLICY_NORMAL && normal_why)
        clt_attr_str(a, "cltrace.own_threads_normal_why", normal_why);
    unsigned n = __atomic_load_n(&lifts, __ATOMIC_ACQUIRE);
    uint64_t at = __atomic_load_n(&first_ns, __ATOMIC_ACQUIRE);
    if (n && at) {
        clt_attr_str(a, "cltrace.own_threads_lifted", lift_name[__atomic_load_n(&first_why, __ATOMIC_ACQUIRE)]);
        clt_attr_int(a, "cltrace.own_threads_lifted_at_ns", at > start_ns ? (int64_t)(at - start_ns) : 0);
        clt_attr_int(a, "cltrace.own_threads_lifts", n);
    }
}

/* Joins t while *progress moves: gives up after stall_s seconds without a
 * change, or max_s in all (-1). The exit's bound on the writer: stuck is
 * no progress, not slow. */
int clt_own_thread_join(pthread_t t, const uint64_t *progress, unsigned stall_s, unsigned max_s)
{
    uint64_t seen = __atomic_load_n(progress, __ATOMIC_RELAXED);
    for (unsigned s = 0, still = 0; s < max_s && still < stall_s; s++) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 1;
        if (pthread_timedjoin_np(t, NULL, &dl) == 0)
            return 0;
        uint64_t now = __atomic_load_n(progress, __ATOMIC_RELAXED);
        still = now == seen ? still + 1 : 0;
        seen = now;
    }
    return -1;
}

/* A thread of cltrace's own with every signal blocked: the app's signals are the app's
 * threads'. pthread_create's result. */
static int spawn(void *(*fn)(void *), void *arg, int detached, pthread_t *t)
{
    /* a fault of cltrace's own (a driver's, in a call it makes) stays deliverable: blocked, the
     * kernel kills the process at once, without the fatal handler that writes the trace (life.c) */
    sigset_t all, old;
    sigfillset(&all);
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
    for (unsigned i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, detached ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE);
    int rc = pthread_create(t, &at, fn, arg);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Detached: the collector, the register counts' builder. */
int clt_spawn_own(void *(*fn)(void *))
{
    pthread_t t;
    return spawn(fn, NULL, 1, &t);
}

/* fn(arg) on a new thread of cltrace's, waited for: 0, or pthread_create's error (fn not run). */
int clt_run_own(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    int rc = spawn(fn, arg, 0, &t);
    return rc ? rc : pthread_join(t, NULL);
}
