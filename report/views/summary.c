/* The first screen: what a person reads before anything else. The program
 * and its wall time, where the device's time went, the findings ranked by
 * what their fix would save (errors first: a wrong program before a slow
 * one), and cltrace's own cost as a figure with its bound. Every format
 * puts it first; the details follow. */
#include <stdio.h>
#include <string.h>
#include "views.h"

static int ahead(const struct finding *a, const struct finding *b)
{
    if ((a->sev == SEV_ERROR) != (b->sev == SEV_ERROR))
        return a->sev == SEV_ERROR;
    if ((a->gain_ns >= 0) != (b->gain_ns >= 0))
        return a->gain_ns >= 0;
    if (a->gain_ns != b->gain_ns)
        return a->gain_ns > b->gain_ns;
    return a->sev > b->sev;
}

static void device_figures(const struct rm_model *m, struct summary_view *v)
{
    const struct rm_timeline *tl = &m->tl;
    for (unsigned i = 0; i < m->n_kernels; i++)
        v->launches += m->kernels[i].launches;
    for (int d = 0; d < RM_DIRS; d++)
        for (int b = 0; b < RM_BUCKETS; b++)
            v->transfers += m->xfer.count[d][b];
    v->device_unusable = m->dt.unusable ? m->dt.why : NULL;
    uint64_t span = rm_timeline_span(tl);
    v->device_known = !m->dt.unusable && tl->commands && span;
    if (!v->device_known)
        return;
    v->span_ns = span;
    v->idle_ns = tl->idle_ns;
    v->kernel_ns = tl->kernel_ns;
    v->transfer_ns = tl->transfer_ns;
    v->busy_pct = 100.0 * (double)(span - (tl->idle_ns < span ? tl->idle_ns : span)) / (double)span;
}

void summary_view(const struct rm_model *m, const struct findings *fs, struct summary_view *v)
{
    memset(v, 0, sizeof *v);
    v->program = m->program[0] ? m->program : "(unnamed)";
    v->wall_ns = m->self.run_ns;
    device_figures(m, v);
    memory_view(m, &v->memory);
    for (unsigned i = 0; i < fs->n; i++) {
        v->by_sev[fs->v[i].sev]++;
        if (fs->v[i].library)
            continue;           /* a library's own call is never a top finding */
        /* the best SUMMARY_TOP, kept in order as they come (insertion) */
        unsigned j = v->n_top < SUMMARY_TOP ? v->n_top++ : SUMMARY_TOP;
        while (j > 0 && ahead(&fs->v[i], &fs->v[v->top[j - 1]])) {
            if (j < SUMMARY_TOP)
                v->top[j] = v->top[j - 1];
            j--;
        }
        if (j < SUMMARY_TOP)
            v->top[j] = i;
    }
    selfcost_account(m, &v->cost);
    v->sampling = m->self.sampling[0] ? m->self.sampling : "off";
    v->m = m;
    for (unsigned i = 0; i < m->n_kernels; i++) {
        v->timed_launches += m->kernels[i].timed;
        v->sampled_configs += m->kernels[i].untimed > 0;
        if (m->kernels[i].untimed) {
            v->sampled_launches += m->kernels[i].launches;
            v->sampled_timed += m->kernels[i].timed;
        }
    }
    if (v->device_known && !m->dt.unusable && (m->n_devs > 1 || (m->n_devs == 1 && m->devs[0].n_traces > 1)))
        v->n_devices = m->n_devs;
}

/* 20001 -> "20,001" */
static const char *grouped(uint64_t n, char *buf, size_t cap)
{
    char raw[24];
    int len = snprintf(raw, sizeof raw, "%llu", (unsigned long long)n), k = 0;
    for (int i = 0; i < len && (size_t)k + 2 < cap; i++) {
        if (i && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = 0;
    return buf;
}

/* "; the 19,197 others drawn where they ran, …" where the trace draws the untimed launches; "" where not */
static void estimated_words(const struct summary_view *v, char *buf, size_t cap)
{
    char e[32];
    buf[0] = 0;
    if (!v->m || !v->m->estimated_commands)
        return;
    int n = snprintf(buf, cap, "; the %s others drawn where they ran, estimated from their configuration's recent "
                     "timed launches, and counted in busy", grouped(v->m->estimated_commands, e, sizeof e));
    /* where events overlap (NVIDIA's, ~6.7 us for launches 6.5 us apart) the drawing squeezes
     * them: the kernels' table counts them as estimated, the busy time as drawn */
    if (v->m->shortened_commands && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "; %s of them drawn shorter, to fit between timed ones: the kernels' "
                 "times count %.3f ms more than the device line", grouped(v->m->shortened_commands, e, sizeof e),
                 v->m->shortened_ns / 1e6);
}

/* The default (CLTRACE_BUDGET): what was timed, and whether the budget held. */
static void budget_words(const struct summary_view *v, char *buf, size_t cap)
{
    const struct rm_selfcost *c = &v->m->self;
    uint64_t first = c->budget_first ? c->budget_first : 16, always = first * v->sampled_configs;
    double every = v->sampled_timed > always ? (double)(v->sampled_launches - always) / (double)(v->sampled_timed - always)
                                             : 0;
    /* judged by what timing was measured to cost at the end, where the trace says */
    uint64_t cost = c->timing_measured_ns ? c->timing_measured_ns : c->budget_spent_ns;
    double pct = c->run_ns ? 100.0 * (double)cost / (double)c->run_ns : 0;
    char a[32], b[32], held[240], est[320];
    if (pct <= c->budget_percent * 1.05)
        snprintf(held, sizeof held, "within the %g %% budget (timing cost %.1f ms, %.1f %% of the run)",
                 c->budget_percent, cost / 1e6, pct);
    else
        snprintf(held, sizeof held, "over the %g %% budget: timing cost %.1f ms (%.1f %% of the run; the budget "
                 "counted %.1f us a command, %.1f ms): the first %llu of each configuration are always timed",
                 c->budget_percent, cost / 1e6, pct, c->budget_price_ns / 1e3, c->budget_spent_ns / 1e6,
                 (unsigned long long)first);
    estimated_words(v, est, sizeof est);
    snprintf(buf, cap, "timed %llu of each of %u launch configuration%s, then 1 in %.0f (%s of %s launches): %s%s; "
             "each kernel's device time extrapolated from its sample", (unsigned long long)first, v->sampled_configs,
             v->sampled_configs == 1 ? "" : "s", every, grouped(v->timed_launches, a, sizeof a),
             grouped(v->launches, b, sizeof b), held, est);
}

/* Timed by their events' callbacks (a CPU device that cannot switch its
 * profiling: capture/cbtime.c), a timed launch is held until they are set
 * and runs apart from the untimed ones around it: a PoCL loop of a tiny
 * kernel read 1.2x its own timing by default, 6-10x timed 1 in 256
 * (docs/TRACING.md). Said after the sample's words. */
static void callbacks_words(const struct summary_view *v, char *buf, size_t cap)
{
    size_t n = strlen(buf);
    if (v->m && v->m->self.queues_by_callbacks && n < cap)
        snprintf(buf + n, cap - n, "; timed by their events' callbacks on a CPU device, a short kernel's timed "
                 "launches run longer than its others: its time is an upper bound");
}

void summary_sampling_words(const struct summary_view *v, char *buf, size_t cap)
{
    buf[0] = 0;
    if (v->timed_launches >= v->launches || !v->sampled_configs)
        return;
    if (v->m && !strcmp(v->m->self.sampling_mode, "budget")) {
        budget_words(v, buf, cap);
    } else {
        char est[320];
        estimated_words(v, est, sizeof est);
        snprintf(buf, cap, "%llu of %llu launches timed on the device (%u kernel launch configuration%s sampled: "
                 "%s)%s; each kernel's device time extrapolated from its sample", (unsigned long long)v->timed_launches,
                 (unsigned long long)v->launches, v->sampled_configs, v->sampled_configs == 1 ? "" : "s", v->sampling,
                 est);
    }
    callbacks_words(v, buf, cap);
}

void summary_device_words(const struct rm_model *m, unsigned i, char *buf, size_t cap)
{
    const struct rm_devbusy *d = &m->devs[i];
    uint64_t span = d->last - d->first;
    char who[320];
    if (d->n_traces > 1)
        snprintf(who, sizeof who, "%s%s, ranks %s (the union of their commands; kernels and transfers summed)",
                 d->host[0] ? "on " : "", d->host, d->ranks);
    else
        snprintf(who, sizeof who, "%s%s, rank %s", d->host[0] ? "on " : "", d->host, d->ranks);
    snprintf(buf, cap, "%s %s%s%s: %.3f ms from the first command's start to the last's end, busy %.1f %%, "
             "idle %.3f ms: kernels %.3f ms (%llu launch%s), transfers %.3f ms (%llu)", d->name, who,
             d->uuid[0] ? ", " : "", d->uuid, span / 1e6, span ? 100.0 * (double)d->busy_ns / (double)span : 0.0,
             (span - d->busy_ns) / 1e6, d->kernel_ns / 1e6, (unsigned long long)d->launches,
             d->launches == 1 ? "" : "es", d->transfer_ns / 1e6, (unsigned long long)d->transfers);
}
