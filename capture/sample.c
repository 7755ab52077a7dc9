/* Which device commands are timed (CLTRACE_SAMPLE, CLTRACE_BUDGET).
 *
 * Timing a command costs what the driver charges for its event (NVIDIA: ~8
 * us a launch against ~4 us untimed; README) and collecting its completion.
 * On a program that launches small kernels by the thousand that price
 * becomes the program's time, so by default it is held to a budget:
 *   - every command is timed while the timing cost so far stays within
 *     CLTRACE_BUDGET (5 %) of the run since its first command (not the
 *     driver's start), or within 3 ms where that is more: a short program
 *     is timed whole;
 *   - past it, the first 16 of each key (a kernel with its launch
 *     configuration; a transfer command with its size) are still timed, and
 *     of the rest as many as the budget allows: a command is timed when the
 *     cost so far plus its price fits, which samples the hottest keys at
 *     the rate that keeps within the budget;
 *   - transfers of 1 MiB and more are always timed.
 * The price: the event's, measured by the calibration on each device's first
 * queue (the most of any device), plus the collector's CPU time and the
 * writer's drawing time per completion so far. A program that is not launch-bound never reaches its
 * budget: every command is timed, as with `all`.
 * `all` times every command; `1` or FIRST,EVERY[,BYTES] a fixed sample
 * (first N of each key, then 1 in M). Both ways queues the app made plain
 * stay plain where the driver can switch profiling for the commands timed
 * (queues.c). Commands whose event the app asked
 * for are always timed (the app paid for the event already). The host side
 * of every call is recorded; an untimed enqueue says so in the trace
 * ("sampled out"), and the report extrapolates each kernel's device time. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "shim.h"
#include "hooks.h"
#include "trace/tables.h"

/* A short program is timed whole: its commands may cost this much before
 * the budget's share of its work counts (on an H200, 3 ms is ~310 commands
 * at 9.6 us each: the sync example's 64; a 20,000-launch loop ran 1.10x
 * untraced with it, as without it: pairs, 2026-11-29). */
#define BUDGET_FLOOR_NS 3000000ull

/* The budget's clock. CLOCK_MONOTONIC_COARSE (4 ms steps) timed a launch
 * loop's sample in runs of 36-39 launches at each step (PoCL); read only
 * where a launch is not left untimed by put.h's fast path, the exact clock
 * spreads them one by one (a few in a row after a pause). */
#define BUDGET_CLOCK CLOCK_MONOTONIC

int clt_sampling;
static uint64_t start_mono, start_ticks;    /* load: CLOCK_MONOTONIC, clt_now() (the ticks' rate) */
/* What an untimed launch's decision reads, on one cache line: on a GPU host
 * the driver's call leaves cold every line the next launch reads, and the
 * budget's price alone read four (the collector's and the writer's counts). */
static struct {
    _Alignas(64) struct clt_sample params;
    /* The first command's BUDGET_CLOCK: the budget is of the
     * program's work from there, not of the driver's start (NVIDIA's ~210 ms
     * before the first command made 10 ms of budget: a launch loop's first
     * ~1,800 launches timed, 1.23-1.34x untraced on an H200). */
    _Atomic uint64_t work_mono;
    /* BUDGET_CLOCK from which one more timed command fits the
     * budget at the price last worked out (0: now); before it a launch past
     * its first 16 is left untimed without working the price out again. */
    _Atomic uint64_t fits_from;
} hot;
static _Atomic uint64_t event_price_ns = 2000;   /* until a calibration measured one */
/* What a profiling queue adds to a host write (the calibration; NVIDIA ~7
 * us): where profiling is switched, timing a write costs that too. */
static _Atomic uint64_t write_penalty_ns;

void clt_sample_load(void)
{
    if (clt_sample_parse(clt_cfg.SAMPLE, clt_cfg.BUDGET, &hot.params) != 0)
        clt_msg("CLTRACE_SAMPLE=%s CLTRACE_BUDGET=%s: expected all, 1 or FIRST,EVERY[,BYTES], and a percentage "
                "above 0; every command is timed", clt_cfg.SAMPLE, clt_cfg.BUDGET);
    if (hot.params.on && clt_fp_on) {   /* the first NaN needs every command */
        if (hot.params.mode == CLT_SAMPLE_FIXED)
            clt_msg("CLTRACE_SAMPLE is off while fingerprinting: every command is timed and fingerprinted");
        hot.params.on = 0;
    }
    clt_sampling = hot.params.on;
    start_mono = clt_clock_ns(CLOCK_MONOTONIC);
    start_ticks = clt_now();
}

/* ns a clt_now() tick, at the clocks' rate since load (some milliseconds
 * at least by the calibration; 1 before either moved); *now: the ticks read */
static double ns_per_tick(uint64_t *now)
{
    uint64_t t = *now = clt_now(), mono = clt_clock_ns(CLOCK_MONOTONIC);
    return t > start_ticks && mono > start_mono ? (double)(mono - start_mono) / (double)(t - start_ticks) : 1;
}

static uint64_t ticks_ns(uint64_t ticks)
{
    uint64_t t;
    return (uint64_t)((double)ticks * ns_per_tick(&t));
}

/* The calibration measured what an event adds on a device, and what a
 * profiling queue adds to a write there (ticks): the dearest device's. */
void clt_sample_event_price(uint64_t event_ticks, uint64_t write_penalty_ticks)
{
    uint64_t ns = ticks_ns(event_ticks), cur = __atomic_load_n(&event_price_ns, __ATOMIC_RELAXED);
    static int measured;
    if (!measured || ns > cur)
        __atomic_store_n(&event_price_ns, ns, __ATOMIC_RELAXED);
    measured = 1;
    ns = ticks_ns(write_penalty_ticks);
    if (ns > __atomic_load_n(&write_penalty_ns, __ATOMIC_RELAXED))
        __atomic_store_n(&write_penalty_ns, ns, __ATOMIC_RELAXED);
}

/* A kernel and its launch configuration, as one key. */
static uint64_t clt_launch_key(const void *kernel, uint32_t work_dim, const void *gws, const void *lws)
{
    uint64_t h = (uint64_t)(uintptr_t)kernel * 0x9E3779B97F4A7C15ull ^ work_dim;
    const size_t *g = gws, *l = lws;
    for (uint32_t i = 0; i < work_dim && i < 3; i++) {
        h = (h ^ (g ? g[i] : 0)) * 0x100000001B3ull;
        h = (h ^ (l ? l[i] : 0)) * 0x100000001B3ull;
    }
    return h;
}

/* What timing one more command costs now (ns): the event's price, and what
 * the collector and the writer spent on each completion so far; until they
 * have handled one, what they spent on PoCL's 2 cores (2026-11-29: 1.35 and
 * 5.0 us a command). A launch loop's completions are held until it pauses
 * (collect.c), on a CPU device until its queue runs dry, often the exit:
 * priced at 1 us each there, the budget's 5 % of the loop was 12 % by the
 * trace's own measure (cltrace.timing_measured_ns 11.0 ms, spent 4.6). */
static uint64_t price(void)
{
    /* worked out again only when a completion was collected or drawn since:
     * its two divisions were a launch's dearest instructions (~25 ns) */
    static _Atomic uint64_t seen = UINT64_MAX, cached;
    uint64_t done = __atomic_load_n(&clt_shared.collected_paused, __ATOMIC_RELAXED) +
                    __atomic_load_n(&clt_shared.collected_forced, __ATOMIC_RELAXED);
    uint64_t drawn = __atomic_load_n(&clt_shared.writer_commands, __ATOMIC_RELAXED);
    uint64_t event = __atomic_load_n(&event_price_ns, __ATOMIC_RELAXED), key = (done << 40 ^ drawn << 20 ^ event) + 1;
    if (__atomic_load_n(&seen, __ATOMIC_RELAXED) == key)
        return __atomic_load_n(&cached, __ATOMIC_RELAXED);
    uint64_t collect = done ? __atomic_load_n(&clt_shared.collector_cpu_ns, __ATOMIC_RELAXED) / done : 1350;
    uint64_t write = drawn ? __atomic_load_n(&clt_shared.writer_command_ns, __ATOMIC_RELAXED) / drawn : 5000;
    __atomic_store_n(&cached, event + collect + write, __ATOMIC_RELAXED);
    __atomic_store_n(&seen, key, __ATOMIC_RELAXED);
    return event + collect + write;
}

/* hot.fits_from on the calling threads' clock (put.h's fast path), set with
 * it: its distance from now in ticks at the ticks' rate since load */
uint64_t clt_sample_fits_from_ticks;

static void publish_fits_from(uint64_t from, uint64_t now)
{
    __atomic_store_n(&hot.fits_from, from, __ATOMIC_RELAXED);
    uint64_t t;
    double ns = ns_per_tick(&t);
    __atomic_store_n(&clt_sample_fits_from_ticks, from > now ? t + (uint64_t)((double)(from - now) / ns) : 0,
                     __ATOMIC_RELAXED);
}

/* When one more timed command costing `cost` in all fits: the budget's
 * share of the work since its first command reaches it (0: it fits now). */
static uint64_t fits_from(uint64_t cost)
{
    if (cost <= BUDGET_FLOOR_NS)
        return 0;
    return __atomic_load_n(&hot.work_mono, __ATOMIC_RELAXED) + (uint64_t)((double)cost * 100 / hot.params.budget);
}

/* The budget: 1 when one more timed command fits (and it is charged). A
 * price that changed since fits_from was set is seen at that time. extra:
 * what this command costs beyond the price (a write's profiling). */
static int within_budget(int must, uint64_t extra)
{
    uint64_t now = clt_clock_ns(BUDGET_CLOCK);
    if (!must && now < __atomic_load_n(&hot.fits_from, __ATOMIC_RELAXED))
        return 0;
    uint64_t p = price();
    if (__atomic_load_n(&clt_shared.budget_price_ns, __ATOMIC_RELAXED) != p)   /* no shared write per launch */
        __atomic_store_n(&clt_shared.budget_price_ns, p, __ATOMIC_RELAXED);
    uint64_t from = fits_from(__atomic_load_n(&clt_shared.budget_spent_ns, __ATOMIC_RELAXED) + p + extra);
    if (!must && now < from) {
        if (!extra)
            publish_fits_from(from, now);
        return 0;
    }
    uint64_t spent = __atomic_add_fetch(&clt_shared.budget_spent_ns, p + extra, __ATOMIC_RELAXED);
    publish_fits_from(fits_from(spent + p), now);
    return 1;
}

/* The budget's share of the program's work so far (from its first command,
 * else the load): what the exit may spend waiting for register counts
 * (nvbuild.c). Every command timed (CLTRACE_SAMPLE=all): no bound. */
uint64_t clt_sample_budget_share_ns(void)
{
    if (!clt_sampling)
        return UINT64_MAX;
    uint64_t from = __atomic_load_n(&hot.work_mono, __ATOMIC_RELAXED), now = clt_clock_ns(BUDGET_CLOCK);
    from = from ? from : start_mono;
    return now > from ? (uint64_t)((double)(now - from) * hot.params.budget / 100) : 0;
}

/* Launch counts by key: open addressing, lock-free; a full table times. */
#define SLOTS 8192
static struct { _Atomic uint64_t key, count; } table[SLOTS];

/* n: how many of its key came before (UINT64_MAX: not counted) */
static int take(unsigned fn, uint64_t key, uint64_t bytes, uint64_t *n_before)
{
    *n_before = UINT64_MAX;
    int budget = hot.params.mode == CLT_SAMPLE_BUDGET;
    /* a write timed on a queue whose profiling is switched runs with it on:
     * on NVIDIA ~7 us longer, dearer than its event (~0); priced so, writes
     * are sampled, not all timed (4,000 small writes: 16.7 us each, 9.2
     * untraced, when that was left out) */
    uint64_t extra = (clt_queue_modes & CLT_MODE_SWITCHED) && clt_fn_is_host_write(fn) ? __atomic_load_n(&write_penalty_ns, __ATOMIC_RELAXED)
                                                                    : 0;
    if (CLT_UNLIKELY(!__atomic_load_n(&hot.work_mono, __ATOMIC_RELAXED))) {
        uint64_t none = 0;
        __atomic_compare_exchange_n(&hot.work_mono, &none, clt_clock_ns(BUDGET_CLOCK), 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    }
    if (bytes >= hot.params.bytes)
        return budget ? within_budget(1, extra) : 1;
    key = (key ^ (uint64_t)fn << 48 ^ bytes * 0xff51afd7ed558ccdull) | 1;
    for (unsigned i = 0, s = (unsigned)(key >> 17) % SLOTS; i < 64; i++, s = (s + 1) % SLOTS) {
        uint64_t cur = __atomic_load_n(&table[s].key, __ATOMIC_ACQUIRE);
        if (!cur) {
            uint64_t expect = 0;
            if (!__atomic_compare_exchange_n(&table[s].key, &expect, key, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                cur = expect;
            else
                cur = key;
        }
        if (cur != key)
            continue;
        uint64_t n = *n_before = __atomic_fetch_add(&table[s].count, 1, __ATOMIC_RELAXED);
        return budget ? within_budget(n < hot.params.first, extra)
                      : n < hot.params.first || (n - hot.params.first) % hot.params.every == 0;
    }
    return budget ? within_budget(1, extra) : 1;
}

int clt_sample_take(unsigned fn, uint64_t key, uint64_t bytes)
{
    uint64_t n;
    return take(fn, key, bytes, &n);
}

/* A launch: decided as any command, and kept as the thread's memo once its
 * key is past its first timed ones, where the budget decides (a fixed
 * sample counts every launch). */
int clt_sample_launch(struct clt_thread *th, const void *kernel, uint32_t work_dim, const void *gws, const void *lws)
{
    uint64_t n;
    int timed = take(CLT_FN_clEnqueueNDRangeKernel, clt_launch_key(kernel, work_dim, gws, lws), 0, &n);
    struct clt_launch_memo *m = &th->launch_memo;
    m->past_first = 0;
    if (hot.params.mode != CLT_SAMPLE_BUDGET || n == UINT64_MAX || n + 1 < hot.params.first || !gws ||
        work_dim > 3)
        return timed;
    const size_t *g = gws, *l = lws;
    m->kernel = kernel;
    m->dim = work_dim;
    for (uint32_t i = 0; i < work_dim; i++) {
        m->gws[i] = g[i];
        m->lws[i] = l ? l[i] : 0;
    }
    m->past_first = 1;
    return timed;
}
