/* What cltrace itself added to the run, and what sampling left untimed, as
 * the trace states them (TRACE_FORMAT.md, "cltrace's own cost"), in words
 * every format shows. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "views.h"

/* What it added to the whole run: on the app's threads, at exit (up to the
 * trace's end) and its start (the constructor, the first call's); a trace
 * before 2026-11-25 states the app's threads only. */
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
 * ~0. Never more than their CPU time. Threads at idle priority take no
 * CPU an app thread wants (the scheduler runs them only on one it left
 * free): only the delays count (PoCL's launch loop, 2 cores: the first part
 * made the figure 1.48x the slowdown measured in pairs; without it
 * 1.00-1.08x, and the six programs of selfcost-check within target). */
uint64_t selfcost_competing_ns(const struct rm_model *m)
{
    double want = selfcost_app_cpus_wanted(m), wait = selfcost_app_wait_per_cpu(m);
    if (want < 0 || wait < 0)
        return 0;
    double share = strcmp(m->self.own_priority, "idle") ? want - (double)(m->self.cpus - 1) : 0;
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

/* What the figure leaves out, and what bounds it. The figure counts what
 * cltrace did on the app's threads, at exit, at its start, and an estimate
 * of the CPU its own threads took from the app's. Two things the trace
 * measures may have cost the app more, and make the bound:
 *   - its threads' CPU while the app ran beyond that estimate, as if each
 *     ns of it had been an app thread's where the app kept the other CPUs
 *     busy (an assumption: in proportion to how many it kept busy);
 *   - on a CPU device, the waits of the commands that found their queue
 *     idle for the driver's thread to start them (writer/device_commands.c):
 *     where cltrace's time on the calling thread, or its threads' wake-ups,
 *     made a hand-off find the driver's thread asleep, that wait is
 *     cltrace's; an untraced run has some of them too, so they bound, not
 *     count. Each command at the median's wait beyond the quickest tenth's
 *     (at most what they all waited beyond it): a kernel built at its
 *     first launch waits long once, and that is the driver's. On a small VM whose idle CPUs
 *     halt at once a hand-off is priced by its threads' timing rather than
 *     its work (docs/PERFORMANCE.md): there the measured slowdown can lie
 *     anywhere between the figure and this bound.
 * Prices measured once on some machine (a wake-up's on a 2-vCPU VM, a
 * 16-core host's end of process) are in docs/PERFORMANCE.md, not here: the
 * report says what this trace shows. */
#define CL_DEVICE_TYPE_CPU_ 2

static void row(struct cost_row *r, unsigned *n, unsigned cap, uint64_t ns, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void row(struct cost_row *r, unsigned *n, unsigned cap, uint64_t ns, const char *fmt, ...)
{
    if (*n >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r[*n].what, sizeof r[*n].what, fmt, ap);
    va_end(ap);
    r[*n].ns = ns;
    (*n)++;
}

uint64_t selfcost_profiling(const struct rm_model *m, uint64_t *ns)
{
    uint64_t commands = 0;
    *ns = 0;
    for (unsigned i = 0; i < m->n_dev; i++)
        if (m->dev[i].profiling_price_ns > 0 && m->dev[i].profiled > 0) {
            commands += (uint64_t)m->dev[i].profiled;
            *ns += (uint64_t)(m->dev[i].profiling_price_ns * m->dev[i].profiled);
        }
    return commands;
}

static void counted_rows(const struct rm_model *m, struct cost_account *a)
{
    const struct rm_selfcost *c = &m->self;
    row(a->counted, &a->n_counted, COST_ROWS, c->hot_ns, "recording calls, on the app's threads");
    if (c->cpu_samples_ns)
        row(a->counted, &a->n_counted, COST_ROWS, c->cpu_samples_ns, "CPU samples, on the app's threads");
    uint64_t price_ns, profiled = selfcost_profiling(m, &price_ns);
    if (profiled)
        row(a->counted, &a->n_counted, COST_ROWS, c->device_timing_ns, "device timing (events; profiling it "
            "turned on: %llu x %.2f us, probed)", (unsigned long long)profiled, price_ns / 1e3 / (double)profiled);
    else
        row(a->counted, &a->n_counted, COST_ROWS, c->device_timing_ns, "device timing (the events it asked for)");
    row(a->counted, &a->n_counted, COST_ROWS, c->waited_ns, "waiting for its threads (%llu calls waited)",
        (unsigned long long)c->calls_waited);
    /* the exit's wait for a program's register counts (its first run on NVIDIA: compiling since
     * its build with every command timed, else from 2 s after it) said apart: not the device's times */
    uint64_t regs = c->exit_regs_wait_ns < c->exit_wait_ns ? c->exit_regs_wait_ns : c->exit_wait_ns;
    if (regs)
        row(a->counted, &a->n_counted, COST_ROWS, regs, "at exit, waiting for register counts (a program's "
            "first run: cltrace-nvregs)");
    row(a->counted, &a->n_counted, COST_ROWS, c->exit_wait_ns - regs, "at exit, collecting device times");
    if (!c->exit_known)
        return;
    uint64_t finishing = c->exit_ns > c->exit_wait_ns ? c->exit_ns - c->exit_wait_ns : 0;
    row(a->counted, &a->n_counted, COST_ROWS, finishing, "at exit, finishing the trace");
    row(a->counted, &a->n_counted, COST_ROWS, c->load_ns, "starting (its constructor, its first call)");
    if (selfcost_app_cpus_wanted(m) >= 0)
        row(a->counted, &a->n_counted, COST_ROWS, selfcost_competing_ns(m),
            "its threads' CPU taken from the app's (estimate: the app wanted %.2f of %llu CPUs)",
            selfcost_app_cpus_wanted(m), (unsigned long long)c->cpus);
}

static void bound_rows(const struct rm_model *m, struct cost_account *a)
{
    const struct rm_selfcost *c = &m->self;
    if (c->exit_known && c->sched_known) {
        /* a ns of its threads' CPU delays an app thread at most where the
         * app kept the other CPUs busy: in proportion to the CPUs it
         * wanted of cpus - 1 (2 CPUs: all of it; 16, the app on one: a
         * fifteenth) */
        uint64_t comp = selfcost_competing_ns(m);
        double share = selfcost_app_cpus_wanted(m) / (double)(c->cpus > 1 ? c->cpus - 1 : 1);
        share = share > 1 ? 1 : share < 0 ? 0 : share;
        uint64_t most = (uint64_t)((double)c->sched_own_cpu_ns * share);
        row(a->bound, &a->n_bound, COST_ROWS, most > comp ? most - comp : 0,
            "its threads' CPU while the app ran, beyond the estimate (%.1f ms in all; the app kept %.2f of the "
            "other %llu CPUs busy)", c->sched_own_cpu_ns / 1e6, share * (double)(c->cpus > 1 ? c->cpus - 1 : 1),
            (unsigned long long)(c->cpus > 1 ? c->cpus - 1 : 1));
    } else {
        row(a->bound, &a->n_bound, COST_ROWS, c->writer_cpu_ns + c->collector_cpu_ns,
            "its threads' CPU (writer %.1f ms, collector %.1f ms)", c->writer_cpu_ns / 1e6,
            c->collector_cpu_ns / 1e6);
    }
    /* the typical hand-off's wait beyond the quickest tenth, times the
     * hand-offs: a one-off long start (a kernel built at its first
     * launch) is the driver's, not a hand-off's */
    for (unsigned i = 0; i < m->n_dev; i++) {
        const struct rm_device *d = &m->dev[i];
        int64_t typical = d->idle_start_median_ns - d->idle_start_quick_ns;
        int64_t ns = typical > 0 ? typical * d->idle_starts : 0;
        if (ns > d->idle_start_excess_ns)
            ns = d->idle_start_excess_ns;
        if ((d->type & CL_DEVICE_TYPE_CPU_) && d->idle_starts > 0 && ns > 0)
            row(a->bound, &a->n_bound, COST_ROWS, (uint64_t)ns, "device %u: %lld commands' waits for the driver's "
                "thread, the median's beyond the quickest tenth's (%.1f us) each", i, (long long)d->idle_starts,
                typical / 1e3);
    }
}

static void said_rows(const struct rm_model *m, struct cost_account *a)
{
    const struct rm_selfcost *c = &m->self;
    if (c->paced_wait_ns)
        row(a->said, &a->n_said, COST_ROWS, c->paced_wait_ns,
            "held at cltrace's limit of commands in flight while the device ran its backlog");
    if (c->light_measured)
        row(a->said, &a->n_said, COST_ROWS, c->light_cut_ns, "light calls: %llu measured (each stands for 64), "
            "%.0f ns each; %llu cut short (the thread lost the CPU inside: the rest not counted)", (unsigned long long)c->light_measured,
            (double)c->light_measured_ns / (double)c->light_measured, (unsigned long long)c->light_cut);
    /* a handler's time on the thread's CPU clock: a preemption inside one is not cltrace's */
    if (m->hostcpu.samples && c->samples_cpu_known)   /* before 2026-12-02: wall time, preemptions in it */
        row(a->said, &a->n_said, COST_ROWS, c->cpu_samples_off_ns, "CPU samples: %llu, their handlers %.1f us "
            "a sample on the CPU%s", (unsigned long long)m->hostcpu.samples,
            (double)c->cpu_samples_ns / 1e3 / (double)m->hostcpu.samples,
            c->cpu_samples_off_ns ? "; the thread off the CPU inside them, not counted" : ", none off it");
    if (c->runs_known)
        row(a->said, &a->n_said, COST_ROWS, 0, "its threads woke %llu times while the app ran (%llu turns; the "
            "app's threads' turns: %llu)", (unsigned long long)(c->wakeups_known ? c->sched_own_wakeups
                                                                                   : c->sched_own_runs),
            (unsigned long long)c->sched_own_runs, (unsigned long long)c->sched_app_runs);
    if (!strcmp(c->own_priority, "normal"))
        row(a->said, &a->n_said, COST_ROWS, 0, "its threads ran at normal priority (%s)",
            c->own_normal_why[0] ? c->own_normal_why : "not said why");
    else if (c->own_lifted[0])
        row(a->said, &a->n_said, COST_ROWS, 0, "its threads ran at idle priority, put back at normal %llu times "
            "while the app waited for them", (unsigned long long)c->own_lifts);
    else if (c->own_priority[0])
        row(a->said, &a->n_said, COST_ROWS, 0, "its threads ran at idle priority");
    if (c->hypervisor && rm_idle_halts(c) > 0)
        row(a->said, &a->n_said, COST_ROWS, 0, "a VM whose idle CPUs halt at once (cpuidle %s): hand-offs between "
            "threads cost more, up to the bound", c->cpuidle_driver[0] ? c->cpuidle_driver : "unknown");
    if (c->exit_regs_not_in)
        row(a->said, &a->n_said, COST_ROWS, 0, "register counts of %llu program%s not in when the exit went on "
            "(it waited %.1f ms): they compile after it, and the next run reads them from the cache; occupancy "
            "here leaves registers out", (unsigned long long)c->exit_regs_not_in,
            c->exit_regs_not_in == 1 ? "" : "s", c->exit_regs_wait_ns / 1e6);
    int priced = 0;
    for (unsigned i = 0; i < m->n_dev; i++)
        priced |= m->dev[i].profiling_price_ns > 0;
    row(a->said, &a->n_said, COST_ROWS, 0, "not counted: loading its library, the process's end after the trace "
        "closed, what its events cost the driver's threads%s", priced ? "" : ", what profiling adds to each "
        "command on the queues it turned it on for (`cltrace probe` measures it)");
    row(a->said, &a->n_said, COST_ROWS, 0, "device timing: %s",
        !c->sampling[0] || !strcmp(c->sampling, "off") ? "every command timed" : c->sampling);
}

void selfcost_account(const struct rm_model *m, struct cost_account *a)
{
    memset(a, 0, sizeof *a);
    a->known = m->self.known;
    if (!a->known)
        return;
    counted_rows(m, a);
    bound_rows(m, a);
    said_rows(m, a);
    a->figure_ns = selfcost_total_ns(m);
    a->upper_ns = a->figure_ns;
    for (unsigned i = 0; i < a->n_bound; i++)
        a->upper_ns += a->bound[i].ns;
    a->percent = selfcost_percent(m);
    a->upper_percent = m->self.run_ns ? 100.0 * (double)a->upper_ns / (double)m->self.run_ns : 0;
}

/* "5.2 ms", "1.84 s": a duration for a person */
void duration_words(uint64_t ns, char *buf, size_t cap)
{
    if (ns >= 10000000000ull)
        snprintf(buf, cap, "%.1f s", ns / 1e9);
    else if (ns >= 1000000000ull)
        snprintf(buf, cap, "%.2f s", ns / 1e9);
    else if (ns >= 10000000ull)
        snprintf(buf, cap, "%.0f ms", ns / 1e6);
    else
        snprintf(buf, cap, "%.1f ms", ns / 1e6);
}

/* "cltrace added 5.2 ms (5.7 %), at most 16 ms on this machine" */
void selfcost_line(const struct rm_model *m, const struct cost_account *a, char *buf, size_t cap)
{
    if (!a->known) {
        snprintf(buf, cap, "cltrace's own cost: not stated in this trace (cut short, or an older cltrace)");
        return;
    }
    char fig[32], up[32];
    duration_words(a->figure_ns, fig, sizeof fig);
    duration_words(a->upper_ns, up, sizeof up);
    snprintf(buf, cap, "cltrace added %s (%.1f %%)%s, at most %s (%.1f %%) on this machine", fig, a->percent,
             m->self.exit_known ? "" : " on the app's threads", up, a->upper_percent);
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
