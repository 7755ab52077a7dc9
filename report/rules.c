/* The rules: what is wrong in a trace, with the numbers that show it and
 * a fix. Thresholds come from the seeds (see README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "occupancy.h"
#include "phases.h"
#include "report.h"

/* Messages are cut to their fields' size on purpose (a deep stack, a long
 * kernel name): not an error. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

const char *const sev_name[] = { "info", "warning", "error" };
const char *const all_rules[] = { "api-errors", "leaks", "use-after-release", "small-transfers", "low-bandwidth",
                                  "work-group-multiple", "work-group-small", "under-filled-device", "occupancy",
                                  "serialization", "device-idle", "strided-access", "redundant-global-reads",
                                  "double-literals", "build-options", "dropped-calls", NULL };
struct finding *findings;
unsigned n_findings;
static unsigned cap_findings;

static int next_phase = -1;     /* the phase the next finding belongs to (phases.c) */

static struct finding *add(const char *rule, enum sev sev)
{
    if (clt_grow(&findings, n_findings, &cap_findings, sizeof *findings, 32) != 0) {
        fprintf(stderr, "cltrace-report: out of memory\n");
        exit(2);
    }
    struct finding *f = &findings[n_findings++];
    memset(f, 0, sizeof *f);
    f->rule = rule;
    f->sev = sev;
    f->phase = next_phase;
    f->gain_ns = -1;
    /* why there is no number, unless the rule estimates one below */
    static const struct { const char *rule, *why; } none[] = {
        { "dropped-calls", "not a time cost: every count is short by the calls not recorded" },
        { "api-errors", "not estimated: a correctness finding, not a time cost" },
        { "leaks", "not estimated: a memory finding, not a time cost" },
        { "use-after-release", "not estimated: a correctness finding, not a time cost" },
        { "work-group-small", "not estimated: how much latency larger groups hide depends on the kernel" },
        { "under-filled-device", "not estimated: every compute unit has work; what a second group per unit "
                                 "hides depends on the kernel" },
        { "device-idle", "not estimated: the waits behind the gaps are in the serialization finding, if any" },
        { "strided-access", "not estimated: a source heuristic; the trace times the kernel, not its accesses" },
        { "redundant-global-reads", "not estimated: a source heuristic; the trace times the kernel, not its "
                                    "accesses" },
        { "double-literals", "not estimated: a source heuristic" },
        { "build-options", "not estimated: fast math changes results; measure it" },
    };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (!strcmp(rule, none[i].rule))
            snprintf(f->gain_method, sizeof f->gain_method, "%s", none[i].why);
    return f;
}

static int sampled_timeline(const struct rm_model *m)
{
    return m->self.sampling[0] && strcmp(m->self.sampling, "off") != 0;
}

/* The occupancy model of the device a kernel ran on (the trace's first
 * device), or NULL: no model for it. */
const struct occ_model *kernel_occ(const struct rm_model *m, const struct rm_kernel *k, struct occ_model *buf)
{
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    return d ? occ_for_device(d->vendor, d->name, (unsigned)d->cc, d->warp > 0 ? (unsigned)d->warp : 0,
                              k ? (unsigned)k->pref_multiple : 0, buf) : NULL;
}

void occ_model_note(const struct rm_model *m, char *buf, size_t cap)
{
    struct occ_model b;
    const struct occ_model *om = kernel_occ(m, NULL, &b);
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    if (om)
        snprintf(buf, cap, "occupancy model: %s%s", om->name,
                 om->max_warps ? "" : " (no documented resident maximum: wavefronts counted, no percentage)");
    else
        snprintf(buf, cap, "occupancy: no model for %s%s%s (models: NVIDIA by compute capability, AMD TeraScale, "
                 "GCN, CDNA, RDNA, Intel Gen9 to Xe); the work-group and fill findings still apply",
                 d && d->name[0] ? d->name : "this device", d && d->vendor[0] ? ", " : "", d ? d->vendor : "");
}

const char *small_source(const struct rm_model *m)
{
    return m->small_given ? "--small-bytes"
         : m->small_source[0] ? m->small_source
         : "the default: no cltrace probe of this device in the trace; run `cltrace probe` once, then trace again";
}

double finding_gain_percent(const struct rm_model *m, const struct finding *f)
{
    uint64_t span = rm_timeline_span(&m->tl);
    return f->gain_ns >= 0 && span ? 100.0 * f->gain_ns / (double)span : -1;
}

void kernel_config(const struct rm_kernel *k, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s global=", k->name);
    for (unsigned i = 0; i < k->work_dim && n < (int)cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, "%s%llu", i ? "x" : "", (unsigned long long)k->gws[i]);
    if (n < (int)cap && k->local_null)
        snprintf(buf + n, cap - (size_t)n, " local=NULL");
    else
        for (unsigned i = 0; i < k->work_dim && n < (int)cap; i++)
            n += snprintf(buf + n, cap - (size_t)n, "%s%llu", i ? "x" : " local=", (unsigned long long)k->lws[i]);
}

/* Within a severity, findings with an estimated gain come first, largest
 * first, the others after in the order the rules run (insertion sort:
 * stable, and the list is short). A warning whose fix is estimated to save
 * under 1 % of the device timeline is shown as info. The dropped-calls
 * warning stays first: every count below is short by it. */
static int before(const struct finding *a, const struct finding *b)
{
    if (a->sev != b->sev)
        return a->sev > b->sev;
    return a->gain_ns >= 0 && (b->gain_ns < 0 || a->gain_ns > b->gain_ns);
}

static void rank(const struct rm_model *m, unsigned start)
{
    unsigned first = start + (n_findings > start && !strcmp(findings[start].rule, "dropped-calls"));
    for (unsigned i = first; i < n_findings; i++)
        if (findings[i].sev == SEV_WARNING && findings[i].gain_ns >= 0 && finding_gain_percent(m, &findings[i]) >= 0 &&
            finding_gain_percent(m, &findings[i]) < 1.0)
            findings[i].sev = SEV_INFO;
    for (unsigned i = first + 1; i < n_findings; i++) {
        struct finding f = findings[i];
        unsigned j = i;
        for (; j > first && before(&f, &findings[j - 1]); j--)
            findings[j] = findings[j - 1];
        findings[j] = f;
    }
}

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
    snprintf(f->gain_method, sizeof f->gain_method, "its device time (%.3f ms) times the idle lanes of each "
             "group (%llu of %llu issued)", k->device_ns / 1e6, (unsigned long long)(issued - k->wg_size),
             (unsigned long long)issued);
}

void rules(const struct rm_model *m, const struct thresholds *th)
{
    unsigned start = n_findings;     /* diff runs the rules on two traces, one after the other */
    /* First: every count below is short by the calls the trace lacks. */
    next_phase = -1;
    if (m->dropped_calls) {
        struct finding *f = add("dropped-calls", SEV_WARNING);
        snprintf(f->where, sizeof f->where, "trace");
        snprintf(f->numbers, sizeof f->numbers, "%llu calls not recorded (the tracer's buffer was full): every "
                 "count in this report is short by them", (unsigned long long)m->dropped_calls);
        snprintf(f->fix, sizeof f->fix, "trace again without CLTRACE_DROP=1 (the default waits for the writer), "
                                         "or with a larger CLTRACE_BUFFER_KB");
    }
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    /* API errors */
    for (unsigned i = 0; i < m->n_errors; i++) {
        next_phase = m->errors[i].phase;
        struct finding *f = add("api-errors", SEV_ERROR);
        if (m->errors[i].site[0])
            snprintf(f->where, sizeof f->where, "%s, called from %s", m->errors[i].fn, m->errors[i].site);
        else
            snprintf(f->where, sizeof f->where, "%s", m->errors[i].fn);
        snprintf(f->numbers, sizeof f->numbers, "%llu call(s) returned %s", (unsigned long long)m->errors[i].count,
                 m->errors[i].error);
        snprintf(f->fix, sizeof f->fix, "check the arguments of %s where it returns %s", m->errors[i].fn,
                 m->errors[i].error);
    }
    next_phase = -1;            /* leaks, released handles: the whole run */
    /* objects alive at exit, by type and creation site, classified as memory
     * checkers do: a site that released some of what it made (a path that
     * forgets), or whose leaks grow with the run, is an error; an object its
     * site made once and the program held to the end (a library's context,
     * queue, program cache) is info */
    for (unsigned i = 0; i < m->n_leaks; i++) {
        const struct rm_leak *l = &m->leaks[i];
        /* (objects made at stacks whose text is cut to the same site are one
         * line: each is judged at its own stack) */
        int once = l->once == l->count, some_path = l->site_released > 0;
        struct finding *f = add("leaks", once ? SEV_INFO : SEV_ERROR);
        snprintf(f->where, sizeof f->where, "%s%s%s%s, created by %s at %s", l->type, l->kernel[0] ? " \"" : "",
                 l->kernel, l->kernel[0] ? "\"" : "", l->created_by, l->site[0] ? l->site : "(no call stack)");
        char why[160] = "";
        if (some_path)
            snprintf(why, sizeof why, "; this site made %llu and released %llu: a path that does not release",
                     (unsigned long long)l->site_made, (unsigned long long)l->site_released);
        else if (once && l->count == 1)
            snprintf(why, sizeof why, "; made once and held to the end (a process-lifetime object)");
        else if (once)
            snprintf(why, sizeof why, "; each made once at its own call stack and held to the end (a cache of "
                     "process-lifetime objects)");
        else if (l->site_made)
            snprintf(why, sizeof why, "; this site made %llu and released none: grows with the run",
                     (unsigned long long)l->site_made);
        if (l->bytes)
            snprintf(f->numbers, sizeof f->numbers, "%llu object(s) still held at exit, %llu bytes%s",
                     (unsigned long long)l->count, (unsigned long long)l->bytes, why);
        else
            snprintf(f->numbers, sizeof f->numbers, "%llu object(s) still held at exit%s", (unsigned long long)l->count,
                     why);
        snprintf(f->fix, sizeof f->fix, "release it (clRelease%s) once it is no longer needed, on every path",
                 !strcmp(l->type, "cl_mem") ? "MemObject" : !strcmp(l->type, "cl_command_queue") ? "CommandQueue"
                 : !strcmp(l->type, "cl_kernel") ? "Kernel" : !strcmp(l->type, "cl_program") ? "Program"
                 : !strcmp(l->type, "cl_event") ? "Event" : !strcmp(l->type, "cl_context") ? "Context"
                 : !strcmp(l->type, "cl_sampler") ? "Sampler" : !strcmp(l->type, "svm_pointer") ? "/clSVMFree"
                 : "...");
    }
    for (unsigned i = 0; i < m->n_uars; i++) {
        const struct rm_uar *u = &m->uars[i];
        struct finding *f = add("use-after-release", SEV_ERROR);
        snprintf(f->where, sizeof f->where, "%s, called from %s", u->fn,
                 u->site[0] ? u->site : "(a call that succeeds carries no stack; the trace names the object: "
                                        "use_after_release)");
        snprintf(f->numbers, sizeof f->numbers, "%llu call(s) on a handle the app had already released",
                 (unsigned long long)u->count);
        snprintf(f->fix, sizeof f->fix, "retain the object while it is used, or stop using the handle after "
                                         "its last release (undefined behaviour: the driver may crash or reuse it)");
    }
    /* small transfers */
    const struct rm_transfers *x = &m->xfer;
    uint64_t total_ns = 0;
    for (int dd = 0; dd < RM_DIRS; dd++)
        for (int b = 0; b < RM_BUCKETS; b++)
            total_ns += dd == RM_FILL ? 0 : x->ns[dd][b];
    if (x->small_count >= th->small_count) {
        next_phase = rm_phase_most(m, RM_TALLY_SMALL);
        struct finding *f = add("small-transfers", SEV_WARNING);
        /* where: the call sites with the most of them */
        int n = snprintf(f->where, sizeof f->where, "host<->device transfers");
        unsigned done[3] = { ~0u, ~0u, ~0u };
        for (unsigned r = 0; r < 3 && n < (int)sizeof f->where; r++) {
            unsigned best = ~0u;
            for (unsigned i = 0; i < m->n_sites; i++)
                if (i != done[0] && i != done[1] && m->sites[i].count &&
                    (best == ~0u || m->sites[i].count > m->sites[best].count))
                    best = i;
            if (best == ~0u)
                break;
            done[r] = best;
            n += snprintf(f->where + n, sizeof f->where - (size_t)n, "%s %llu from %s", r ? ";" : ":",
                          (unsigned long long)m->sites[best].count, m->sites[best].site);
        }
        snprintf(f->numbers, sizeof f->numbers, "%llu transfers below %llu bytes (%s), %llu bytes in all, %.0f%% of "
                 "transfer time", (unsigned long long)x->small_count, (unsigned long long)m->small_threshold,
                 small_source(m), (unsigned long long)x->small_bytes,
                 total_ns ? 100.0 * (double)x->small_ns / (double)total_ns : 0);
        snprintf(f->fix, sizeof f->fix, "batch small transfers into fewer large ones, or map the buffer "
                                         "(clEnqueueMapBuffer) and write in place");
        /* their time, less the same bytes at the bandwidth this program's
         * large transfers reached (what batched ones will meet: its memory,
         * first touches included), else the device's probe, else the best
         * single transfer in the trace */
        double bw = 0, best = 0;
        const char *from = "this program's transfers at or above the threshold";
        for (int dd = 0; dd < RM_DIRS; dd++)
            if (dd != RM_FILL && x->best_gbps[dd] > best)
                best = x->best_gbps[dd];
        if (x->large_ns)
            bw = (double)x->large_bytes / (double)x->large_ns;
        else if (d && d->probe_gbps > 0)
            bw = d->probe_gbps, from = "the bandwidth cltrace probe measured on this device";
        else
            bw = best, from = "the best single transfer in this trace (it has no large one)";
        if (bw > 0) {
            double at_bw = (double)x->small_bytes / bw;   /* GB/s = bytes/ns */
            f->gain_ns = (double)x->small_ns > at_bw ? (double)x->small_ns - at_bw : 0;
            snprintf(f->gain_method, sizeof f->gain_method, "their %.3f ms, less the same bytes at %.2f GB/s "
                     "(%s)", x->small_ns / 1e6, bw, from);
        }
    }
    /* work-group size and device fill, per kernel configuration */
    unsigned cus = d && d->compute_units > 0 ? (unsigned)d->compute_units : 0;
    unsigned warp = d && d->warp > 0 ? (unsigned)d->warp : 0;
    struct occ_model devm;      /* Intel counts EUs; a work-group fills a subslice */
    const struct occ_model *dm = kernel_occ(m, NULL, &devm);
    if (dm && dm->cus_per_unit > 1 && cus >= dm->cus_per_unit)
        cus /= dm->cus_per_unit;
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        next_phase = rm_kernel_main_phase(k);
        char cfg[RM_MAX_SITE + 200];
        kernel_config(k, cfg, sizeof cfg);
        if (k->site && k->site <= (int)m->n_sites)     /* where it was launched from */
            snprintf(cfg + strlen(cfg), sizeof cfg - strlen(cfg), ", launched from %s", m->sites[k->site - 1].site);
        if (k->local_null) {
            struct finding *f = add("work-group-multiple", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu launch(es) with local_work_size NULL (left to the implementation)",
                     (unsigned long long)k->launches);
            snprintf(f->fix, sizeof f->fix, "pass a local size that is a multiple of %llu (the kernel's preferred multiple)%s",
                     (unsigned long long)(k->pref_multiple ? k->pref_multiple : warp ? warp : 32),
                     " and at least 64 work-items");
            snprintf(f->gain_method, sizeof f->gain_method, "not estimated: the size the implementation chose "
                     "is not in the trace");
            continue;
        }
        if (k->pref_multiple && k->wg_size % k->pref_multiple) {
            struct finding *f = add("work-group-multiple", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-items per group is not a multiple of the preferred %llu",
                     (unsigned long long)k->wg_size, (unsigned long long)k->pref_multiple);
            snprintf(f->fix, sizeof f->fix, "use a multiple of %llu work-items per group",
                     (unsigned long long)k->pref_multiple);
            lane_gain(f, k, k->pref_multiple);
        } else if (warp && k->wg_size % warp) {
            struct finding *f = add("work-group-multiple", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-items per group is not a multiple of the warp (%u)",
                     (unsigned long long)k->wg_size, warp);
            snprintf(f->fix, sizeof f->fix, "use a multiple of %u work-items per group", warp);
            lane_gain(f, k, warp);
        }
        if (k->wg_size && k->wg_size < th->min_wg) {
            struct finding *f = add("work-group-small", SEV_INFO);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-items per group (fewer than %u)",
                     (unsigned long long)k->wg_size, th->min_wg);
            snprintf(f->fix, sizeof f->fix, "use at least %u work-items per group to hide latency", th->min_wg);
        }
        if (cus && k->work_groups && k->work_groups < 2ull * cus) {
            struct finding *f = add("under-filled-device", k->work_groups < cus ? SEV_WARNING : SEV_INFO);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-groups for %u compute units (%s)",
                     (unsigned long long)k->work_groups, cus,
                     k->work_groups < cus ? "some compute units idle" : "fewer than 2 per compute unit");
            snprintf(f->fix, sizeof f->fix, "launch at least %u work-groups (2 per compute unit; more than 100 "
                                             "to scale to future devices): more work per launch or smaller groups",
                     2 * cus);
            if (k->work_groups < cus && k->device_ns) {   /* the idle compute units' share of its time */
                f->gain_ns = (double)k->device_ns * (1.0 - (double)k->work_groups / cus);
                snprintf(f->gain_method, sizeof f->gain_method, "its device time (%.3f ms) times the idle share of "
                         "compute units (%u of %u)", k->device_ns / 1e6, cus - (unsigned)k->work_groups, cus);
            }
        }
        struct occ_model omb;
        const struct occ_model *om = kernel_occ(m, k, &omb);
        if (om && om->max_warps && k->wg_size) {
            struct occ_kernel ok = { (unsigned)k->wg_size, (unsigned)k->regs, (unsigned)k->local_bytes, 0 };
            struct occ_result r;
            occ_compute(om, &ok, &r);
            if (r.occupancy < th->min_occupancy) {
                struct finding *f = add("occupancy", SEV_WARNING);
                char regs[48] = "unknown (not in the build log)";
                if (k->regs)
                    snprintf(regs, sizeof regs, "%llu", (unsigned long long)k->regs);
                snprintf(f->where, sizeof f->where, "%s", cfg);
                snprintf(f->numbers, sizeof f->numbers, "%.0f%% occupancy (%u %s of %u, %s), limited by %s: "
                         "%s registers/work-item, %llu bytes local memory/group",
                         100 * r.occupancy, r.warps, om->cus_per_unit > 1 ? "threads" : "warps", om->max_warps,
                         om->name, occ_limit_name(r.limited_by), regs, (unsigned long long)k->local_bytes);
                snprintf(f->fix, sizeof f->fix, "reduce the limiting resource (%s) or change the work-group size",
                         occ_limit_name(r.limited_by));
                snprintf(f->gain_method, sizeof f->gain_method, "not estimated: whether more resident %s make "
                         "this kernel faster depends on what it waits for, which a trace does not show",
                         om->cus_per_unit > 1 ? "threads" : "warps");
            }
        }
    }
    next_phase = -1;            /* the rest: the whole run, unless said below */
    /* low bandwidth on pageable memory: transfers >= 64 KiB under half the
     * best bandwidth seen, or than pinned memory reaches on this device
     * (cltrace probe) */
    static const char *const dir_name[RM_DIRS] = { "host-to-device", "device-to-host", "device-to-device", "fill" };
    for (int dd = 0; dd < RM_FILL; dd++) {
        int best = -1;
        double ref = x->best_gbps[dd];
        const char *ref_what = "the best seen";
        for (int p = 0; p < 2; p++)
            for (int b = 0; b < 24; b++)
                if (x->bw_count[dd][p][b] && b > best)
                    best = b;
        double pinned = d && dd < 2 ? d->probe_pinned[dd] : 0;
        if (best >= 0 && pinned > x->best_gbps[dd]) {    /* the bin of the probe's pinned bandwidth */
            int pb = rm_bw_bin(pinned);
            if (pb > best) {
                best = pb;
                ref = pinned;
                ref_what = "pinned memory on this device (cltrace probe)";
            }
        }
        uint64_t c = 0, bytes = 0, ns = 0, all = 0;
        for (int p = 0; p < 2; p++)
            for (int b = 0; b < 24; b++) {
                all += x->bw_count[dd][p][b];
                if (best >= 0 && b < best - 1 && !p) {     /* under half the best bin, pageable */
                    c += x->bw_count[dd][p][b];
                    bytes += x->bw_bytes[dd][p][b];
                    ns += x->bw_ns[dd][p][b];
                }
            }
        if (c >= 8 && c * 2 >= all) {
            struct finding *f = add("low-bandwidth", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s transfers of 64 KiB or more", dir_name[dd]);
            snprintf(f->numbers, sizeof f->numbers, "%llu of %llu transfers on pageable memory ran at %.2f GB/s, "
                     "under half %s (%.2f GB/s)", (unsigned long long)c, (unsigned long long)all,
                     ns ? (double)bytes / (double)ns : 0, ref_what, ref);
            snprintf(f->fix, sizeof f->fix, "use pinned memory: a buffer made with CL_MEM_ALLOC_HOST_PTR, mapped "
                                             "(clEnqueueMapBuffer), as the staging area for these transfers");
            double at_best = ref > 0 ? (double)bytes / ref : (double)ns;
            f->gain_ns = (double)ns > at_best ? (double)ns - at_best : 0;
            snprintf(f->gain_method, sizeof f->gain_method, "their %.3f ms, less the same bytes at %s (%.2f GB/s)",
                     ns / 1e6, ref_what, ref);
        }
    }
    /* serialization: a wait after every launch; device idle between commands */
    const struct rm_timeline *tl = &m->tl;
    if (tl->launches >= 8 && tl->launches_synced * 10 >= tl->launches * 9) {
        next_phase = rm_phase_most(m, RM_TALLY_SYNCED);
        struct finding *f = add("serialization", SEV_WARNING);
        /* the call site whose launches waited most, and how many others */
        unsigned top = 0, others = 0;
        for (unsigned i = 0; i < m->n_sites; i++)
            if (m->sites[i].synced && (!top || m->sites[i].synced > m->sites[top - 1].synced))
                top = i + 1;
        for (unsigned i = 0; i < m->n_sites; i++)
            others += m->sites[i].synced && i + 1 != top;
        if (top)
            snprintf(f->where, sizeof f->where, "kernel launches at %s (%llu followed by a wait)%s", m->sites[top - 1].site,
                     (unsigned long long)m->sites[top - 1].synced, others ? " and at other sites" : "");
        else
            snprintf(f->where, sizeof f->where, "kernel launches");
        snprintf(f->numbers, sizeof f->numbers, "%llu of %llu launches followed by clFinish, clWaitForEvents or a "
                 "blocking call before the next launch%s", (unsigned long long)tl->launches_synced,
                 (unsigned long long)tl->launches,
                 tl->transfer_ns && !tl->overlap_ns ? "; transfers never overlap kernels" : "");
        snprintf(f->fix, sizeof f->fix, "queue the work and synchronize once at the end (or on events): "
                                         "the host then prepares the next launch while the device runs");
        if (!sampled_timeline(m)) {
            /* the device's idle gaps, the waiting launches' share of them,
             * less the host's own work after each wait (it stays; queued
             * work can only overlap it, up to the kernels' time) */
            double idle = (double)tl->idle_ns * (double)tl->launches_synced / (double)tl->launches;
            double host = (double)tl->host_after_sync_ns < idle ? (double)tl->host_after_sync_ns : idle;
            double overlap = host < (double)tl->kernel_ns ? host : (double)tl->kernel_ns;
            f->gain_ns = idle - host + overlap;
            snprintf(f->gain_method, sizeof f->gain_method, "the device's idle time after the waits (%.3f ms), "
                     "less the host's own work between a wait and its next launch (%.3f ms), plus the part of "
                     "that work the kernels could overlap (%.3f ms)", idle / 1e6, host / 1e6, overlap / 1e6);
        }
    }
    uint64_t span = rm_timeline_span(tl);
    next_phase = -1;
    /* with CLTRACE_SAMPLE the untimed commands' time is unknown: no idle figure */
    if (!sampled_timeline(m) && tl->commands >= 8 && span > 1000000 && tl->idle_ns * 2 > span) {
        struct finding *f = add("device-idle", SEV_INFO);
        snprintf(f->where, sizeof f->where, "device timeline");
        snprintf(f->numbers, sizeof f->numbers, "idle %.0f%% of %.3f ms between its first and last command; "
                 "largest gap %.3f ms", 100.0 * (double)tl->idle_ns / (double)span, span / 1e6, tl->max_gap_ns / 1e6);
        snprintf(f->fix, sizeof f->fix, "keep the queue fed: enqueue ahead, avoid host work and waits between "
                                         "commands, batch small commands");
    }
    /* kernel-source hints (heuristics), for the kernels that ran (all of
     * them when the trace has no launches) */
    for (unsigned i = 0; i < m->n_hints; i++) {
        const struct rm_hint *h = &m->hints[i];
        int launched = !m->n_kernels;
        next_phase = -1;
        for (unsigned k = 0; k < m->n_kernels && !launched; k++)
            if ((launched = !strcmp(m->kernels[k].name, h->kernel)))
                next_phase = rm_kernel_main_phase(&m->kernels[k]);
        if (!launched)
            continue;
        int dbl = !strcmp(h->rule, "double-literals");
        struct finding *f = add(h->rule, dbl ? SEV_INFO : SEV_WARNING);
        snprintf(f->where, sizeof f->where, "kernel %s, line %u of program %llu: %s", h->kernel, h->line,
                 (unsigned long long)h->program, h->code);
        snprintf(f->numbers, sizeof f->numbers, "heuristic: %s (%llu place(s) in this kernel)", h->what,
                 (unsigned long long)h->count);
        if (!strcmp(h->rule, "strided-access"))
            snprintf(f->fix, sizeof f->fix, "let neighbouring work-items touch neighbouring words: swap the index "
                                             "roles, or stage the data through __local memory (seed: transpose)");
        else if (!strcmp(h->rule, "redundant-global-reads"))
            snprintf(f->fix, sizeof f->fix, "load the values a work-group shares into __local memory once "
                                             "(a tile), barrier, then read them from there");
        else
            snprintf(f->fix, sizeof f->fix, "write float literals with an f suffix (2.0f): a double literal "
                                             "makes the expression double precision");
    }
    next_phase = -1;
    for (unsigned i = 0; i < m->n_programs; i++) {
        const struct rm_program *p = &m->programs[i];
        if (!p->builds || p->fast_math || !p->uses_float)
            continue;
        struct finding *f = add("build-options", SEV_INFO);
        snprintf(f->where, sizeof f->where, "program %llu", (unsigned long long)p->id);
        snprintf(f->numbers, sizeof f->numbers, "float code built without -cl-mad-enable or -cl-fast-relaxed-math");
        snprintf(f->fix, sizeof f->fix, "if the kernel tolerates it, build with -cl-mad-enable (or "
                                         "-cl-fast-relaxed-math) for faster multiply-add and math functions");
    }
    rank(m, start);
}

