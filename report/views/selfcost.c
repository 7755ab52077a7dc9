/* What cltrace itself added to the run, and what sampling left untimed, as
 * the trace states them (TRACE_FORMAT.md, "cltrace's own cost"), in words
 * every format shows. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "views.h"

/* What it added to the whole run: on the app's threads, at exit (up to the
 * trace's end) and its constructor; a trace before 2026-11-25 states the
 * app's threads only. */
uint64_t selfcost_total_ns(const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    return c->exit_known ? c->self_ns + c->exit_ns + c->load_ns + selfcost_competing_ns(m) : c->self_ns;
}

/* How many CPUs the app's threads wanted while the app ran, on average
 * (on a CPU or waiting for one); -1: not stated. */
double selfcost_app_cpus_wanted(const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    if (!c->sched_known || !c->cpus || !c->sched_span_ns)
        return -1;
    return (double)(c->sched_app_cpu_ns + c->sched_app_wait_ns) / (double)c->sched_span_ns;
}

/* How long the app's threads waited for a CPU for each ns of CPU run in
 * the process (theirs and cltrace's threads'); -1: not stated. */
double selfcost_app_wait_per_cpu(const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    uint64_t ran = c->sched_app_cpu_ns + c->sched_own_cpu_ns;
    if (!c->sched_known || !ran)
        return -1;
    return (double)c->sched_app_wait_ns / (double)ran;
}

/* What cltrace's own threads took from the app while it ran, an estimate,
 * in two parts. Where the app's threads wanted every CPU (the share of the
 * time they wanted more than cpus - 1), each ns a thread of cltrace held a
 * CPU was a ns one of theirs did not run: PoCL's workers running kernels
 * on both of 2 CPUs. The rest of the time a CPU was free on average, but
 * not at every moment: a thread of cltrace on the CPU where an app thread
 * wakes delays it, and an app whose threads hand work to each other wakes
 * them all the time (4,000 small blocking writes on PoCL, 2 cores: the app
 * wants 1.1 CPUs on average and waits ~60 ms for one in ~16,000 hand-offs).
 * There each ns of cltrace's CPU counts as much waiting as any ns of CPU
 * run in the process caused: the app's wait per CPU-ns run. Counted on CPU
 * time alone, those delays were missed (the small writes' loop +1.9 ms
 * against ~0.4 stated). 1 M light calls (one app thread): ~0; 16 cores:
 * ~0. Never more than their CPU time. */
uint64_t selfcost_competing_ns(const struct rm_model *m)
{
    double want = selfcost_app_cpus_wanted(m), wait = selfcost_app_wait_per_cpu(m);
    if (want < 0 || wait < 0)
        return 0;
    double share = want - (double)(m->self.cpus - 1);
    share = share < 0 ? 0 : share > 1 ? 1 : share;
    double f = share + (1 - share) * wait;
    return (uint64_t)((double)m->self.sched_own_cpu_ns * (f > 1 ? 1 : f));
}

double selfcost_percent(const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    return c->run_ns ? 100.0 * (double)selfcost_total_ns(m) / (double)c->run_ns : 0;
}

/* How busy the process kept the CPUs it could use, in %; -1: not stated. */
double selfcost_cpus_busy_percent(const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    if (!c->cpus || !c->run_ns || !c->process_cpu_ns)
        return -1;
    double p = 100.0 * (double)c->process_cpu_ns / ((double)c->run_ns * (double)c->cpus);
    return p > 100 ? 100 : p;
}

/* After the trace's last packet no code of the process runs: what follows
 * cannot be timed from inside. Most of it is the kernel's end of the
 * process. On NVIDIA, where the process is the GPU's last user, that is the
 * GPU's de-initialization (~100 ms: UVM's teardown, an RCU barrier, the
 * adapter's shutdown), and the 0.05 s program's end ran 6-12 ms longer
 * under cltrace in paired runs, against ~1.5 ms of cltrace's exit (no
 * stage of it found to hold the excess, no cause found); where another
 * process holds the GPU, the end is ~60 ms and cltrace's exit adds only
 * itself (docs/PERFORMANCE.md, "The GPU's only user, measured again").
 * On PoCL over 16 cores, 6-8 of 20-25 untraced ends took 0.3 ms instead of
 * ~2.8: a kernel path held the memory as the last thread left and a
 * kernel worker gave it back later (mmput_async_fn); traced, 1 in 20-25
 * (docs/PERFORMANCE.md, "The 16-core host's two kernel ends"). */
/* Loading the library is timed from outside only (+0.2 ms from fork to
 * main on 2 cores). Preloaded, it is first in the symbol scope: every
 * symbol a library loaded later looks up passes its hash table first, ~10
 * instructions each (+0.94 M for PoCL's libraries under callgrind, ~0.3
 * ms), inside the driver's own loading. */
#define LOADING "loading its library and its place first in the symbol scope (about 0.2 ms, and ~10 instructions " \
                "for each symbol a library loaded later looks up)"
#define PROCESS_END "the process's end after the trace closed, mostly the kernel's (the driver's teardown: on NVIDIA, " \
                    "where the process is the GPU's last user, the GPU's de-initialization, which ran several ms " \
                    "longer under cltrace; cltrace's threads and memory let go; on a 16-core host a third of " \
                    "untraced PoCL runs left their memory to a kernel worker after the process was gone, ~2.5 ms " \
                    "sooner, and nearly none under cltrace, whose exit is longer)"

/* Its threads' turns on a CPU while the app ran, said where the trace has
 * them (not counted). A wake-up is nearly free in CPU time, yet on a
 * virtual machine an idle CPU it wakes, or whose halt-polling it upsets,
 * may cost the app's next hand-off a trip through the hypervisor. Placebo
 * runs on a 2-vCPU KVM guest (one extra thread waking every 1 ms, nothing
 * else; 31 interleaved, 2026-11-26): 4,000 small blocking writes on PoCL
 * +16 ms (~120 us a wake-up) with the guest's halt-polling off, +3.2 ms
 * (~35 us) with the kernel's default 200 us; a write + kernel + finish
 * loop -29 ms (faster) and +2.2 ms (~30 us). A price that changes sign
 * with the program is not one to add: the price measured is given, times
 * the count, where the trace says it ran on such a machine with 4 CPUs or
 * fewer; on 16 the placebo cost nothing measurable (docs/PERFORMANCE.md,
 * "Wake-ups on a 2-vCPU VM"). "" for older traces. */
#define WAKE_PRICE_HALT_NS 120000    /* guest halt-polling 0: idle CPUs halt at once */
#define WAKE_PRICE_POLL_NS 30000     /* halt-polling at the kernel's 200 us */
static void wakeups_clause(const struct rm_selfcost *c, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!c->runs_known)
        return;
    /* the wake-ups alone where the trace has them: at idle priority most
     * turns follow a preemption, on a CPU the app's thread just left */
    uint64_t wakes = c->wakeups_known ? c->sched_own_wakeups : c->sched_own_runs;
    int n = c->wakeups_known
            ? snprintf(buf, cap, "its threads' %llu wake-ups while the app ran (of %llu turns on a CPU; the app's "
                       "threads' turns: %llu), each of which may delay an app thread waking on that CPU",
                       (unsigned long long)wakes, (unsigned long long)c->sched_own_runs,
                       (unsigned long long)c->sched_app_runs)
            : snprintf(buf, cap, "its threads' %llu turns on a CPU while the app ran (the app's threads': %llu), "
                       "each a wake-up that may delay an app thread waking on that CPU",
                       (unsigned long long)c->sched_own_runs, (unsigned long long)c->sched_app_runs);
    if (n < 0 || (size_t)n >= cap || !c->hypervisor)
        return;
    const char *driver = c->cpuidle_driver[0] ? c->cpuidle_driver : "unknown";
    int halts = rm_idle_halts(c);
    if (c->cpus > 4 || halts < 0)  /* measured on 2 vCPUs; with many, an idle one is rarely the one wanted */
        snprintf(buf + n, cap - (size_t)n, ", more on a virtual machine like this one (cpuidle %s), where waking an "
                 "idle CPU may leave the hypervisor", driver);
    else if (halts)
        snprintf(buf + n, cap - (size_t)n, ", most on a small virtual machine like this one, whose idle CPUs halt at "
                 "once (cpuidle %s%s): on a 2-vCPU one a thread's empty wake-ups delayed small blocking transfers on "
                 "PoCL ~%.0f us each (up to %.3f s here at that price) and made a write + kernel + finish loop faster",
                 driver, !strcmp(driver, "haltpoll") ? ", guest halt-polling 0 ns" : "", WAKE_PRICE_HALT_NS / 1e3,
                 wakes * (WAKE_PRICE_HALT_NS / 1e9));
    else
        snprintf(buf + n, cap - (size_t)n, ", more on a small virtual machine like this one (cpuidle haltpoll, guest "
                 "halt-polling %llu us): on a 2-vCPU one polling 200 us a thread's empty wake-ups delayed small "
                 "blocking transfers on PoCL ~%.0f us each (up to %.3f s here at that price)",
                 (unsigned long long)(c->guest_halt_poll_ns / 1000), WAKE_PRICE_POLL_NS / 1e3,
                 wakes * (WAKE_PRICE_POLL_NS / 1e9));
}

/* A CPU device's hand-offs (writer/device_commands.c, idle_start): the
 * commands that found their queue idle waited for the driver's thread to
 * wake. How many of those waits cltrace caused the trace cannot tell (an
 * untraced run has them too), and on a small VM whose idle CPUs halt at
 * once they move by more than cltrace's own time. 4,000 small blocking
 * writes on PoCL, 2 vCPUs, a write 31-33 us untraced (12 rounds each,
 * 2026-11-27): a bare busy-wait before each write cost +1.8 us a write for
 * 250 ns, +5.1 for 500 ns, +9.7 for 1 us, about as much more as it lasted
 * beyond (where idle CPUs poll, 1 us cost +1.0); a thread that only wakes
 * every 16 ms, +1.7; cltrace recording nothing (a window not yet open),
 * +3.5; recording, its own time 0.16 us a write in the loop, +8. Threads
 * that never run after their start cost too: two that only sleep, made at
 * load, +8 to +12 ms a run, and +0.2 ms with the writes begun 0.4 s later
 * (bench_calls --pause-us; what their start leaves in the scheduler's
 * accounts decays), when cltrace's loop cost fell from +40 to +21 ms. So
 * the waits beyond the quickest tenth are said, as an upper bound, not
 * counted.
 * "" for GPUs and older traces. */
#define CL_DEVICE_TYPE_CPU_ 2
static void handoffs_clause(const struct rm_model *m, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < m->n_dev && n < cap; i++) {
        const struct rm_device *d = &m->dev[i];
        if (!(d->type & CL_DEVICE_TYPE_CPU_) || d->idle_starts <= 0 || d->idle_start_excess_ns <= 0)
            continue;
        int k = snprintf(buf + n, cap - n, "%sthe driver's threads waking for the app's commands on %s: the %lld that "
                         "found their queue idle waited %.3f s for it to start them (%.1f us the median, %.1f us the "
                         "quickest tenth); where cltrace's time on the calling thread, or its threads' wake-ups, made "
                         "a hand-off find the driver's thread asleep, the wait is cltrace's: up to the %.3f s they "
                         "waited beyond the quickest tenth", n ? "; " : "", d->name, (long long)d->idle_starts,
                         d->idle_start_ns / 1e9, d->idle_start_median_ns / 1e3, d->idle_start_quick_ns / 1e3,
                         d->idle_start_excess_ns / 1e9);
        if (k < 0 || (size_t)k >= cap - n)
            return;
        n += (size_t)k;
        if (m->self.hypervisor && rm_idle_halts(&m->self) > 0 && m->self.cpus <= 4) {
            k = snprintf(buf + n, cap - n, " (on a 2-vCPU VM whose idle CPUs halt at once, like this one, a bare 250 ns "
                         "before each of 4,000 small blocking writes cost +1.8 us a write, 1 us +9.7 us; two threads "
                         "that only slept, made at the program's start, +8 to +12 ms in all, and nothing when the "
                         "writes began 0.4 s later: cltrace's threads, made at its start, weigh the same)");
            if (k < 0 || (size_t)k >= cap - n)
                return;
            n += (size_t)k;
        }
    }
}

/* The priority its threads ran at (writer/ownthreads.c), where the trace
 * says: at idle priority a waking app thread takes their CPU at once; "" for
 * older traces. */
static void priority_clause(const struct rm_selfcost *c, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!strcmp(c->own_priority, "normal"))
        snprintf(buf, cap, ", at normal priority (%s)", c->own_normal_why[0] ? c->own_normal_why : "not said why");
    else if (c->own_lifted[0])
        snprintf(buf, cap, ", at idle priority but put back at normal %llu time%s while the app waited for them (the "
                 "first %.3f s into the run: %s)", (unsigned long long)c->own_lifts, c->own_lifts == 1 ? "" : "s",
                 c->own_lifted_at_ns / 1e9, c->own_lifted);
    else if (c->own_priority[0])
        snprintf(buf, cap, ", at idle priority (an app thread that wakes takes their CPU at once)");
}

/* "cltrace added 0.41 s (12 %) to this run": the whole run, what it leaves
 * out said (loading the library; its threads' CPU where the trace has no
 * scheduler's account to weigh it by). */
static void whole_run_sentence(const struct rm_model *m, char *buf, size_t cap)
{
    const struct rm_selfcost *c = &m->self;
    char paced[200] = "";     /* a wait the device, not cltrace, set the pace of (capture/collect.c) */
    if (c->paced_wait_ns)
        snprintf(paced, sizeof paced, "%.3f s the app's threads were held at cltrace's limit of commands in flight "
                 "while the device ran its backlog (the device set the pace); ", c->paced_wait_ns / 1e9);
    uint64_t finishing = c->exit_ns > c->exit_wait_ns ? c->exit_ns - c->exit_wait_ns : 0;
    const char *timing = !c->sampling[0] || !strcmp(c->sampling, "off") ? "every command timed" : c->sampling;
    int n = snprintf(buf, cap,
                     "cltrace added %.3f s (%.1f %%) to this run: on the app's threads %.3f s recording calls, "
                     "%.3f s device timing (events it asked for), %.3f s waiting for the writer (%llu calls waited); "
                     "at exit %.3f s (%.3f s collecting device times, %.3f s finishing the trace); %.4f s starting",
                     selfcost_total_ns(m) / 1e9, selfcost_percent(m), c->hot_ns / 1e9, c->device_timing_ns / 1e9,
                     c->waited_ns / 1e9, (unsigned long long)c->calls_waited, c->exit_ns / 1e9, c->exit_wait_ns / 1e9,
                     finishing / 1e9, c->load_ns / 1e9);
    if (n < 0 || (size_t)n >= cap)
        return;
    double want = selfcost_app_cpus_wanted(m);
    if (want >= 0) {
        uint64_t own = c->writer_cpu_ns + c->collector_cpu_ns;
        uint64_t own_exit = own > c->sched_own_cpu_ns ? own - c->sched_own_cpu_ns : 0;
        char wakeups[480], priority[240], handoffs[1200];
        wakeups_clause(c, wakeups, sizeof wakeups);
        priority_clause(c, priority, sizeof priority);
        handoffs_clause(m, handoffs, sizeof handoffs);
        snprintf(buf + n, cap - (size_t)n,
                 "; %.3f s its own threads took from the app's (an estimate: their %.3f s of CPU while the app ran%s, "
                 "the app's threads wanting %.2f of the %llu CPUs on average and waiting for one %.2f s per s of "
                 "CPU run). Not counted: %sits own threads' %.3f s of CPU at exit, inside the exit's figure; %s%s%s%s"
                 LOADING "; " PROCESS_END "; what its events cost the driver's own threads; device timing: %s",
                 selfcost_competing_ns(m) / 1e9, c->sched_own_cpu_ns / 1e9, priority, want, (unsigned long long)c->cpus,
                 selfcost_app_wait_per_cpu(m), paced, own_exit / 1e9, wakeups, wakeups[0] ? "; " : "", handoffs,
                 handoffs[0] ? "; " : "", timing);
        return;
    }
    char busy[64] = "";
    double b = selfcost_cpus_busy_percent(m);
    if (b >= 0)
        snprintf(busy, sizeof busy, "; the process kept its %llu CPUs %.0f %% busy", (unsigned long long)c->cpus, b);
    snprintf(buf + n, cap - (size_t)n,
             ". Not counted: %sits own threads' %.3f s of CPU (writer %.3f, collector %.3f), which slow the app only "
             "where every core is busy%s; " LOADING "; " PROCESS_END "; what its events cost "
             "the driver's own threads; device timing: %s",
             paced, (c->writer_cpu_ns + c->collector_cpu_ns) / 1e9, c->writer_cpu_ns / 1e9,
             c->collector_cpu_ns / 1e9, busy, timing);
}

/* "cltrace added 0.41 s (12 %) to this run". */
void selfcost_sentence(const struct rm_model *m, char *buf, size_t cap)
{
    const struct rm_selfcost *c = &m->self;
    if (c->exit_known) {
        whole_run_sentence(m, buf, cap);
        return;
    }
    snprintf(buf, cap,
             "cltrace added %.3f s (%.1f %%) to this run on the app's threads: %.3f s recording calls, "
             "%.3f s device timing (events it asked for), %.3f s waiting for the writer (%llu calls waited); "
             "at exit it held the app %.3f s more, collecting device times; "
             "its own threads used %.3f s CPU (writer %.3f, collector %.3f); device timing: %s",
             c->self_ns / 1e9, selfcost_percent(m), c->hot_ns / 1e9, c->device_timing_ns / 1e9, c->waited_ns / 1e9,
             (unsigned long long)c->calls_waited, c->exit_wait_ns / 1e9, (c->writer_cpu_ns + c->collector_cpu_ns) / 1e9,
             c->writer_cpu_ns / 1e9, c->collector_cpu_ns / 1e9,
             !c->sampling[0] || !strcmp(c->sampling, "off") ? "every command timed" : c->sampling);
}

/* "clock residual 5.2 us at most, 4.9 us the median command; its evidence
 * never narrower than 4.9 us (marker_brackets+enqueue_brackets)": the
 * floor tells a residual at the driver's limit from one cltrace could
 * have narrowed (an older trace has none). */
void selfcost_clock(const struct rm_device *d, char *buf, size_t cap)
{
    char at_floor[80] = "";
    if (d->clock_floor_ns > 0)
        snprintf(at_floor, sizeof at_floor, "; its evidence never narrower than %.1f us", d->clock_floor_ns / 1e3);
    snprintf(buf, cap, "clock residual %.1f us at most, %.1f us the median command%s (%s)", d->clock_residual_ns / 1e3,
             d->clock_residual_median_ns / 1e3, at_floor, d->clock_method[0] ? d->clock_method : "no clock evidence");
}

/* The kernel table's note on a sampled kernel ("" when not sampled). */
void selfcost_kernel_note(const struct rm_kernel *k, char *buf, size_t cap)
{
    if (!k->untimed)
        snprintf(buf, cap, "%s", "");
    else if (!k->timed)
        snprintf(buf, cap, " (none of %llu launches timed: not estimated)", (unsigned long long)k->launches);
    else
        snprintf(buf, cap, " (extrapolated from %llu of %llu launches)", (unsigned long long)k->timed,
                 (unsigned long long)k->launches);
}

/* The API table's note on a function whose durations were measured for a
 * sample of its calls only (one-clock calls): "" otherwise. */
void selfcost_api_note(const struct rm_api *a, char *buf, size_t cap)
{
    if (!a->untimed)
        snprintf(buf, cap, "%s", "");
    else if (a->untimed == a->count)
        snprintf(buf, cap, " (durations of none of %llu calls measured)", (unsigned long long)a->count);
    else
        snprintf(buf, cap, " (durations of %llu of %llu calls measured, total extrapolated)",
                 (unsigned long long)(a->count - a->untimed), (unsigned long long)a->count);
}
