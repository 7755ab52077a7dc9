/* Work-group size and device fill, per kernel configuration (seed 001):
 * work-group-multiple (local size NULL, or not a multiple of the preferred
 * multiple or the warp), work-group-small (fewer than --min-wg work-items),
 * under-filled-device (fewer work-groups than compute units, or than twice
 * as many). */
#include <stdio.h>
#include <string.h>
#include "report/model/describe.h"
#include "report/model/occupancy.h"
#include "report/model/phases.h"
#include "rules.h"

/* A group that is not a whole number of warps runs its last warp part
 * empty: the lanes issued but idle, as a share of the kernel's time (time
 * taken as proportional to warps issued: exact when the kernel is bound by
 * issue, an over-estimate when it waits on memory). */
static void lane_gain(struct finding *f, const struct rm_kernel *k, uint64_t unit)
{
    uint64_t issued = (k->wg_size + unit - 1) / unit * unit;
    if (!k->device_ns || !issued)
        return;
    f->gain_ns = (double)k->device_ns * (1.0 - (double)k->wg_size / (double)issued);
    finding_set(&f->gain_method, "its device time (%.3f ms) times the idle lanes of each group (%llu of %llu issued)",
                k->device_ns / 1e6, (unsigned long long)(issued - k->wg_size), (unsigned long long)issued);
}

static void say_local(char *buf, size_t cap, unsigned dim, const uint64_t *l, int null)
{
    if (null)
        snprintf(buf, cap, "the driver's");
    else if (dim <= 1)
        snprintf(buf, cap, "%llu", (unsigned long long)l[0]);
    else if (dim == 2)
        snprintf(buf, cap, "%llux%llu", (unsigned long long)l[0], (unsigned long long)l[1]);
    else
        snprintf(buf, cap, "%llux%llux%llu", (unsigned long long)l[0], (unsigned long long)l[1],
                 (unsigned long long)l[2]);
}

/* The next step: what `cltrace tune` measured for this kernel and local
 * size (--tuned), beside the estimate; else how to measure it (the launch
 * to capture: its first timed one, unknown when sampled). */
static void measured_or_how(const struct rm_model *m, const struct rm_kernel *k, struct finding *f)
{
    unsigned dim = k->work_dim ? k->work_dim : 1;
    for (unsigned i = 0; i < m->n_tuned; i++) {
        const struct rm_tuned *t = &m->tuned[i];
        int same = !strcmp(t->kernel, k->name) && t->captured.null == k->local_null;
        for (unsigned d = 0; same && !k->local_null && d < dim; d++)
            same = t->captured.local[d] == k->lws[d];
        if (!same || t->best.median_ns <= 0)
            continue;
        char best[64], cap[64];
        say_local(best, sizeof best, dim, t->best.local, t->best.null);
        say_local(cap, sizeof cap, dim, t->captured.local, t->captured.null);
        if (!strcmp(best, cap)) {       /* tune keeps the captured size: the others tie within noise */
            finding_set(&f->numbers, "%s; measured by cltrace tune on %s: no local size measurably faster than "
                        "local %s (%.3f ms)", f->numbers, t->device, cap, t->captured.median_ns / 1e6);
            return;
        }
        finding_set(&f->numbers, "%s; measured by cltrace tune on %s: local %s %.3f ms against %.3f ms (local %s), "
                    "%.2fx", f->numbers, t->device, best, t->best.median_ns / 1e6, t->captured.median_ns / 1e6, cap,
                    t->captured.median_ns / t->best.median_ns);
        return;
    }
    if (k->nth && !k->untimed)
        finding_set(&f->fix, "%s; measure it: `cltrace --capture '%s@%llu' -- ./app`, then `cltrace tune "
                    "cltrace-capture/%s@%llu`", f->fix, k->name, (unsigned long long)k->nth, k->name,
                    (unsigned long long)k->nth);
}

/* A local size to try for this launch configuration: the smallest multiple
 * of unit, at least 64 (unless at_least_groups asks for smaller groups) and
 * at most the kernel's maximum, that divides the first dimension's global
 * size (others 1) and leaves at least at_least_groups work-groups; 0 none. */
static uint64_t local_to_try(const struct rm_kernel *k, uint64_t unit, uint64_t at_least_groups)
{
    uint64_t max = k->kernel_wg_size ? k->kernel_wg_size : 1024, g = k->gws[0];
    unit = unit ? unit : 32;
    for (uint64_t l = unit; l <= max && g; l += unit) {
        if (l < 64 && !at_least_groups)
            continue;
        uint64_t groups = g / l;
        for (unsigned d = 1; d < k->work_dim && d < 3; d++)
            groups *= k->gws[d];
        if (g % l == 0 && (!at_least_groups || groups >= at_least_groups))
            return l;
    }
    return 0;
}

/* The fix tried in the program: the exact `cltrace try --local` line. */
static void try_line(const struct rm_model *m, const struct rm_kernel *k, uint64_t local, struct finding *f)
{
    if (!local)
        return;
    char size[48] = "";
    snprintf(size, sizeof size, "%llu", (unsigned long long)local);
    for (unsigned d = 1; d < k->work_dim && d < 3; d++)
        strcat(size, ",1");
    finding_set(&f->fix, "%s; try it in the program: `cltrace try --local '%s=%s' -- %s`", f->fix, k->name, size,
                m->cmdline[0] ? m->cmdline : "./app");
}

static void multiple(const struct rm_model *m, const struct rm_kernel *k, const char *cfg, unsigned warp, int phase,
                     struct findings *out)
{
    uint64_t unit = k->pref_multiple ? k->pref_multiple : warp;
    if (k->local_null) {
        struct finding *f = finding_add(out, "work-group-multiple", SEV_WARNING, phase);
        finding_span(f, k->span);
        finding_set(&f->where, "%s", cfg);
        finding_set(&f->numbers, "%llu launch(es) with local_work_size NULL (left to the implementation)",
                    (unsigned long long)k->launches);
        finding_set(&f->fix, "pass a local size that is a multiple of %llu (the kernel's preferred multiple) and at "
                    "least 64 work-items", (unsigned long long)(unit ? unit : 32));
        finding_set(&f->gain_method, "not estimated: the size the implementation chose is not in the trace");
        measured_or_how(m, k, f);
        try_line(m, k, local_to_try(k, unit, 0), f);
        return;
    }
    int off_pref = k->pref_multiple && k->wg_size % k->pref_multiple;
    if (!off_pref && !(warp && k->wg_size % warp))
        return;
    unit = off_pref ? k->pref_multiple : warp;
    struct finding *f = finding_add(out, "work-group-multiple", SEV_WARNING, phase);
    finding_span(f, k->span);
    finding_set(&f->where, "%s", cfg);
    if (off_pref) {
        finding_set(&f->numbers, "%llu work-items per group is not a multiple of the preferred %llu",
                    (unsigned long long)k->wg_size, (unsigned long long)unit);
        finding_set(&f->fix, "use a multiple of %llu work-items per group", (unsigned long long)unit);
    } else {
        finding_set(&f->numbers, "%llu work-items per group is not a multiple of the warp (%u)",
                    (unsigned long long)k->wg_size, warp);
        finding_set(&f->fix, "use a multiple of %u work-items per group", warp);
    }
    lane_gain(f, k, unit);
    measured_or_how(m, k, f);
    try_line(m, k, local_to_try(k, unit, 0), f);
}

static void underfilled(const struct rm_model *m, const struct rm_kernel *k, const char *cfg, unsigned cus, int phase,
                        struct findings *out)
{
    if (!cus || !k->work_groups || k->work_groups >= 2ull * cus)
        return;
    struct finding *f = finding_add(out, "under-filled-device", k->work_groups < cus ? SEV_WARNING : SEV_INFO, phase);
    finding_span(f, k->span);
    finding_set(&f->where, "%s", cfg);
    finding_set(&f->numbers, "%llu work-groups for %u compute units (%s)", (unsigned long long)k->work_groups, cus,
                k->work_groups < cus ? "some compute units idle" : "fewer than 2 per compute unit");
    finding_set(&f->fix, "launch at least %u work-groups (2 per compute unit; more than 100 to scale to future "
                "devices): more work per launch or smaller groups", 2 * cus);
    finding_set(&f->gain_method, "not estimated: every compute unit has work; what a second group per unit hides "
                "depends on the kernel");
    if (k->work_groups < cus && k->device_ns) {   /* the idle compute units' share of its time */
        f->gain_ns = (double)k->device_ns * (1.0 - (double)k->work_groups / cus);
        finding_set(&f->gain_method, "its device time (%.3f ms) times the idle share of compute units (%u of %u)",
                    k->device_ns / 1e6, cus - (unsigned)k->work_groups, cus);
    }
    measured_or_how(m, k, f);
    if (k->wg_size > 64 && !k->local_null) {   /* smaller groups, more of them: a multiple of the unit */
        uint64_t unit = k->pref_multiple ? k->pref_multiple : 32, l = 0;
        for (uint64_t c = k->wg_size / 2; c >= unit && !l; c /= 2)
            if (c % unit == 0 && k->gws[0] % c == 0 && k->work_groups * (k->wg_size / c) >= 2ull * cus)
                l = c;
        try_line(m, k, l, f);
    }
}

void rules_work_groups(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    unsigned cus = d && d->compute_units > 0 ? (unsigned)d->compute_units : 0;
    unsigned warp = d && d->warp > 0 ? (unsigned)d->warp : 0;
    struct occ_model devm;      /* Intel counts EUs; a work-group fills a subslice */
    const struct occ_model *dm = kernel_occ(m, NULL, &devm);
    if (dm && dm->cus_per_unit > 1 && cus >= dm->cus_per_unit)
        cus /= dm->cus_per_unit;
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        int phase = rm_kernel_main_phase(k);
        char cfg[KERNEL_CONFIG_SITE_MAX];
        kernel_config_site(m, k, cfg, sizeof cfg);
        multiple(m, k, cfg, warp, phase, out);
        if (k->local_null)
            continue;
        if (k->wg_size && k->wg_size < th->min_wg) {
            struct finding *f = finding_add(out, "work-group-small", SEV_INFO, phase);
            finding_span(f, k->span);
            finding_set(&f->where, "%s", cfg);
            finding_set(&f->numbers, "%llu work-items per group (fewer than %u)", (unsigned long long)k->wg_size,
                        th->min_wg);
            finding_set(&f->fix, "use at least %u work-items per group to hide latency", th->min_wg);
            finding_set(&f->gain_method, "not estimated: how much latency larger groups hide depends on the kernel");
        }
        underfilled(m, k, cfg, cus, phase, out);
    }
}
