/* What cltrace itself added to the run, as the trace states it.
 *
 * On each calling thread: the time spent in cltrace's code (the capture side
 * measures it, capture/put.h: calls that do more than record are measured
 * whole, one in CLT_COST_EVERY light calls stands for the others), the
 * waits for ring room, and the device-timing machinery it added inside the
 * driver's calls: each event cltrace asked for costs what the markers on
 * that device measured (capture/hooks.c). Shown per thread as a counter
 * track ("cltrace self time"), in total as trace attributes; cltrace's own
 * threads (writer, collector) are stated apart, as CPU time. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include "emit.h"
#include "device_model.h"
#include "trace/ring.h"
#include "trace/tables.h"

#define SEQS 1024               /* flow ids carry the thread's sequence in 10 bits */
#define COST_EVERY 64           /* capture/put.h CLT_COST_EVERY */

/* The light calls measured on a thread (capture/rings.c clt_cost_add): how
 * many, their time as counted, those cut short and the time cut */
struct light_sums { uint64_t n, ns, cuts, cut_ns; };

static struct {
    uint64_t event_ns[SEQS];    /* device-timing cost of each ring's thread, ns */
    uint32_t declared[SEQS];    /* generation + 1 whose counter track is declared */
    uint64_t last[SEQS];        /* the value last emitted */
    /* of threads that ended (their rings may serve new threads) */
    uint64_t ended_hot_ns, ended_wait_ns, ended_waits;
    struct light_sums ended_light;
    uint64_t event_ns_total;    /* of every thread: commands complete after their thread ended */
    uint64_t threads;
} S;

static uint64_t ticks_ns(const struct clt_writer *w, uint64_t ticks)
{
    return clt_use_tsc ? (uint64_t)((double)ticks * w->clock.ns_per_tick) : ticks;
}

static void light_add(struct light_sums *t, const struct clt_writer *w, const struct clt_thread *th)
{
    t->n += __atomic_load_n(&th->cost_samples, __ATOMIC_RELAXED);
    t->ns += ticks_ns(w, __atomic_load_n(&th->cost_sampled, __ATOMIC_RELAXED));
    t->cuts += __atomic_load_n(&th->cost_cuts, __ATOMIC_RELAXED);
    t->cut_ns += ticks_ns(w, __atomic_load_n(&th->cost_cut, __ATOMIC_RELAXED));
}

static uint64_t hot_ns(const struct clt_writer *w, const struct clt_thread *th)
{
    uint64_t exact = __atomic_load_n(&th->cost_exact, __ATOMIC_RELAXED);
    uint64_t sampled = __atomic_load_n(&th->cost_sampled, __ATOMIC_RELAXED);
    return ticks_ns(w, exact + sampled * COST_EVERY);
}

static uint64_t wait_ns(const struct clt_writer *w, const struct clt_thread *th)
{
    return ticks_ns(w, __atomic_load_n(&th->cost_waited, __ATOMIC_RELAXED));
}

/* An event cltrace asked for: what the device's calibration measured, on a
 * write (host to device) for writes, on a fill for every other command. */
void clt_cost_on_command(struct clt_writer *w, const struct clt_dev *d, uint64_t flow, unsigned fn)
{
    (void)w;
    if (flow & (1u << 31)) {
        uint64_t ns = d->write_event_known && clt_fn_is_host_write(fn) ? d->write_event_ns : d->event_cost_ns;
        S.event_ns[(flow >> 32) & (SEQS - 1)] += ns;
        S.event_ns_total += ns;
    }
}

/* The thread's running total on its counter track, where it changed, from
 * its hot-path and waiting time as read by the caller. */
static void emit_value(struct clt_writer *w, struct clt_thread *th, uint64_t ts, uint64_t hot, uint64_t wait)
{
    unsigned s = th->seq & (SEQS - 1);
    uint64_t parent = clt_thread_track(th);
    if (!parent)
        return;                 /* no API call recorded: no thread track to hang it on */
    if (S.declared[s] != th->generation + 1 && S.declared[s])   /* a new thread on this ring */
        S.event_ns[s] = S.last[s] = 0;
    uint64_t v = hot + wait + S.event_ns[s];
    if (v == S.last[s])
        return;
    uint64_t uuid = parent | 0x40000000u;
    if (S.declared[s] != th->generation + 1) {
        S.declared[s] = th->generation + 1;
        S.threads++;
        char name[64];          /* in cltrace's group, not above the thread's own rows */
        snprintf(name, sizeof name, "cltrace self time (ns), thread %u", (unsigned)(parent & 0xFFFFFFFFu));
        clt_counter_track(w, uuid, w->own_group_uuid, name, 0);
    }
    clt_counter(w, uuid, ts, (int64_t)v);
    S.last[s] = v;
}

static void emit_thread(struct clt_writer *w, struct clt_thread *th, uint64_t ts)
{
    emit_value(w, th, ts, hot_ns(w, th), wait_ns(w, th));
}

/* A command that ran with profiling on: what that cost where cltrace turned
 * it on. A host write on some drivers takes longer than on a plain queue
 * (NVIDIA: ~7 us, the calibration's, per device); any command, where the
 * app did not ask for profiling, what the probe measured a profiling queue
 * to add (PoCL, which reads the clock four times a command: ~0.2 us). */
void clt_cost_on_profiled(struct clt_writer *w, struct clt_dev *d, uint32_t seq, int write, int apps)
{
    (void)w;
    uint64_t ns = 0;
    if (write) {
        d->writes++;
        ns = d->write_penalty_ns;
    }
    if (!ns && !apps && d->profiling_price_ns) {
        d->profiled++;
        ns = d->profiling_price_ns;
    }
    S.event_ns[seq & (SEQS - 1)] += ns;
    S.event_ns_total += ns;
}

/* A thread ended and its ring is about to serve another: keep its figures. */
void clt_cost_thread_ended(struct clt_writer *w, struct clt_thread *th)
{
    if (!th->wstate)
        return;                 /* cltrace's own (the collector, returned at exit): no API calls */
    emit_thread(w, th, clt_boottime_ns());
    S.ended_hot_ns += hot_ns(w, th);
    S.ended_wait_ns += wait_ns(w, th);
    S.ended_waits += __atomic_load_n(&th->waits, __ATOMIC_RELAXED);
    light_add(&S.ended_light, w, th);
}

/* Each recording thread's running total, where it changed. */
void clt_cost_emit(struct clt_writer *w)
{
    uint64_t ts = clt_boottime_ns();
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next) {
        /* a ring freed by its ended thread keeps its figures until reused:
         * commands that complete after the thread ended still count */
        int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
        if (st == CLT_TH_LIVE || st == CLT_TH_DEAD || st == CLT_TH_FREE)
            emit_thread(w, th, ts);
    }
}

/* Read as the trace starts (clt_cost_start), not inside the exit's wait. */
static uint64_t process_start;

/* When the process started, CLOCK_BOOTTIME ns (/proc/self/stat's 22nd
 * field, in clock ticks); 0: unknown. */
static uint64_t process_start_ns(void)
{
    long long ticks;
    long hz = sysconf(_SC_CLK_TCK);
    if (!clt_stat_field("/proc/self/stat", 22, &ticks) || hz <= 0 || ticks < 0)
        return 0;
    return (uint64_t)ticks * (1000000000ull / (uint64_t)hz);
}

void clt_cost_start(void)
{
    struct clt_idle idle;
    process_start = process_start_ns();
    clt_idle_sample(&idle);
}

/* A thread's sleeps, each ended by a wake-up: its turns on a CPU less
 * those that followed a preemption (at idle priority most of them). */
static uint64_t voluntary_switches(const char *tid)
{
    char path[64], line[128];
    unsigned long long n = 0;
    snprintf(path, sizeof path, "/proc/self/task/%.20s/status", tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* Every thread's line of /proc/self/task/N/schedstat as the app's exit
 * begins: its time on a CPU and its time runnable but waiting for one.
 * cltrace's threads (clt_own_thread_begin) take CPU time that the app's threads,
 * where they wanted every CPU, would have had: the report weighs the one
 * by the other (TRACE_FORMAT.md). Threads that ended before are not in it;
 * a kernel without schedstat leaves it unknown, and the trace says so by
 * its absence. */
void clt_cost_sched_sample(struct clt_writer *w)
{
    struct clt_sched sc = { .known = 0 };
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[64], line[128];
        unsigned long long run, wait, runs = 0;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
        clt_read_comm(path, line, sizeof line, "");
        if (sscanf(line, "%llu %llu %llu", &run, &wait, &runs) < 2)
            continue;
        if (clt_own_thread_is(strtol(e->d_name, NULL, 10))) {
            sc.own_cpu_ns += run;
            sc.own_runs += runs;
            sc.own_wakeups += voluntary_switches(e->d_name);
        } else {
            sc.app_cpu_ns += run;
            sc.app_wait_ns += wait;
            sc.app_runs += runs;
        }
        sc.known = 1;
    }
    closedir(d);
    /* the threads' figures run from the process's start (before cltrace's
     * first call, where an app may compute for long): the span too */
    uint64_t start = process_start;
    uint64_t now = clt_boottime_ns();
    sc.span_ns = now - (start && start < w->start_ns ? start : w->start_ns);
    w->sched = sc;
    clt_idle_sample(&w->idle);
}

/* The totals, as trace attributes (TRACE_FORMAT.md). run_ns: the trace's
 * span; writer_cpu_ns: the writer thread's CPU time. */
void clt_cost_footer(struct clt_writer *w, struct clt_attrs *a, uint64_t run_ns, uint64_t writer_cpu_ns)
{
    uint64_t hot = S.ended_hot_ns, wait = S.ended_wait_ns, waits = S.ended_waits, ev = S.event_ns_total;
    struct light_sums light = S.ended_light;
    uint64_t ts = clt_boottime_ns();
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next) {
        int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
        if ((st != CLT_TH_LIVE && st != CLT_TH_DEAD) || !th->wstate)
            continue;           /* cltrace's own threads (the collector) make no API calls */
        /* read once: the thread's last counter value and the totals agree
         * even where a figure moved since the last clt_cost_emit */
        uint64_t h = hot_ns(w, th), wt = wait_ns(w, th);
        emit_value(w, th, ts, h, wt);
        hot += h;
        wait += wt;
        waits += __atomic_load_n(&th->waits, __ATOMIC_RELAXED);
        light_add(&light, w, th);
    }
    clt_attr_int(a, "cltrace.self_ns", (int64_t)(hot + wait + ev));
    /* the light calls measured (each stands for COST_EVERY), their time as
     * counted, and those cut short: the thread lost the CPU inside one */
    clt_attr_int(a, "cltrace.light_calls_measured", (int64_t)light.n);
    clt_attr_int(a, "cltrace.light_calls_measured_ns", (int64_t)light.ns);
    clt_attr_int(a, "cltrace.light_calls_cut", (int64_t)light.cuts);
    clt_attr_int(a, "cltrace.light_calls_cut_ns", (int64_t)light.cut_ns);
    /* the CPU samples' handlers, apart: the report adds them to the figure,
     * on the CPU; the thread off the CPU inside them is said apart */
    uint64_t sampled_on, sampled_off;
    clt_samples_handler_ns(w, &sampled_on, &sampled_off);
    clt_attr_int(a, "cltrace.self_cpu_samples_ns", (int64_t)sampled_on);
    clt_attr_int(a, "cltrace.self_cpu_samples_off_cpu_ns", (int64_t)sampled_off);
    clt_attr_int(a, "cltrace.self_hot_path_ns", (int64_t)hot);
    clt_attr_int(a, "cltrace.self_device_timing_ns", (int64_t)ev);
    clt_attr_int(a, "cltrace.self_waited_ns", (int64_t)wait);
    clt_attr_int(a, "cltrace.calls_waited", (int64_t)waits);
    /* held at the limit of commands in flight behind a device that ran
     * its backlog: not in self_waited_ns (capture/collect.c) */
    clt_attr_int(a, "cltrace.device_paced_wait_ns",
                 (int64_t)ticks_ns(w, __atomic_load_n(&clt_shared.paced_wait_ticks, __ATOMIC_RELAXED)));
    clt_attr_int(a, "cltrace.run_ns", (int64_t)run_ns);
    clt_attr_int(a, "cltrace.exit_wait_ns", (int64_t)w->exit.wait_ns);
    if (w->exit.regs_wait_ns)
        clt_attr_int(a, "cltrace.exit_regs_wait_ns", (int64_t)w->exit.regs_wait_ns);
    if (w->exit.regs_not_in)
        clt_attr_int(a, "cltrace.exit_regs_not_in", (int64_t)w->exit.regs_not_in);
    clt_attr_int(a, "cltrace.writer_cpu_ns", (int64_t)writer_cpu_ns);
    clt_attr_int(a, "cltrace.completions_at_pauses", (int64_t)__atomic_load_n(&clt_shared.collected_paused, __ATOMIC_RELAXED));
    clt_attr_int(a, "cltrace.completions_while_enqueuing",
                 (int64_t)__atomic_load_n(&clt_shared.collected_forced, __ATOMIC_RELAXED));
    clt_attr_int(a, "cltrace.completions_at_exit", (int64_t)__atomic_load_n(&clt_shared.collected_exit, __ATOMIC_RELAXED));
    clt_attr_int(a, "cltrace.collector_cpu_ns", (int64_t)__atomic_load_n(&clt_shared.collector_cpu_ns, __ATOMIC_RELAXED));
    /* start-up as the app's main thread paid it; the exit's figure comes
     * after these are written (clt_cost_exit) */
    clt_attr_int(a, "cltrace.load_ns", (int64_t)w->exit.load_ns);
    clt_own_threads_attrs(a, w->start_ns);
    if (w->sched.known) {      /* the scheduler's account as the exit began (clt_cost_sched_sample) */
        clt_attr_int(a, "cltrace.sched_span_ns", (int64_t)w->sched.span_ns);
        clt_attr_int(a, "cltrace.sched_own_cpu_ns", (int64_t)w->sched.own_cpu_ns);
        clt_attr_int(a, "cltrace.sched_app_cpu_ns", (int64_t)w->sched.app_cpu_ns);
        clt_attr_int(a, "cltrace.sched_app_wait_ns", (int64_t)w->sched.app_wait_ns);
        clt_attr_int(a, "cltrace.sched_own_runs", (int64_t)w->sched.own_runs);
        clt_attr_int(a, "cltrace.sched_own_wakeups", (int64_t)w->sched.own_wakeups);
        clt_attr_int(a, "cltrace.sched_app_runs", (int64_t)w->sched.app_runs);
        if (w->idle.hypervisor >= 0)
            clt_attr_int(a, "cltrace.hypervisor", w->idle.hypervisor);
        if (w->idle.driver[0])
            clt_attr_str(a, "cltrace.cpuidle_driver", w->idle.driver);
        if (w->idle.halt_poll_ns >= 0)
            clt_attr_int(a, "cltrace.guest_halt_poll_ns", w->idle.halt_poll_ns);
    }
    /* the CPUs it may run on, and its CPU time (every thread, cltrace's
     * too): how crowded they were, where cltrace's threads compete */
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    clt_attr_int(a, "cltrace.cpus", sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                    : online > 0 ? online : 0);
    clt_attr_int(a, "cltrace.process_cpu_ns", (int64_t)clt_clock_ns(CLOCK_PROCESS_CPUTIME_ID));
}

/* The exit as the app's main thread paid it, up to now: taken once every
 * other packet is written, alone in the trace's last packet, so that what
 * follows it (that packet, the file's close) is all it leaves out. */
void clt_cost_exit(struct clt_writer *w, struct clt_attrs *a)
{
    if (w->exit.began_ns)
        clt_attr_int(a, "cltrace.exit_ns", (int64_t)(clt_clock_ns(CLOCK_MONOTONIC) - w->exit.began_ns));
}
