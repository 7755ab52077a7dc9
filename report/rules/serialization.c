/* serialization (a wait after nearly every launch: seed 001) and
 * device-idle (the device idle more than half of its timeline). */
#include "report/model/describe.h"
#include "report/model/phases.h"
#include "rules.h"

/* "kernel launches at SITE (31 followed by a wait) and at other sites" */
static void waiting_site(const struct rm_model *m, struct finding *f)
{
    unsigned top = 0, others = 0;
    for (unsigned i = 0; i < m->n_sites; i++)
        if (m->sites[i].synced && (!top || m->sites[i].synced > m->sites[top - 1].synced))
            top = i + 1;
    for (unsigned i = 0; i < m->n_sites; i++)
        others += m->sites[i].synced && i + 1 != top;
    if (top)
        finding_set(&f->where, "kernel launches at %s (%llu followed by a wait)%s", m->sites[top - 1].site,
                    (unsigned long long)m->sites[top - 1].synced, others ? " and at other sites" : "");
    else
        finding_set(&f->where, "kernel launches");
}

void rules_serialization(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    const struct rm_timeline *tl = &m->tl;
    if (tl->launches < 8 || tl->launches_synced * 10 < tl->launches * 9)
        return;
    struct finding *f = finding_add(out, "serialization", SEV_WARNING, rm_phase_most(m, RM_TALLY_SYNCED));
    uint64_t launches[2] = { tl->first_start, tl->busy_until };
    finding_span(f, launches);
    waiting_site(m, f);
    finding_set(&f->numbers, "%llu of %llu launches followed by clFinish, clWaitForEvents or a blocking call before "
                "the next launch%s", (unsigned long long)tl->launches_synced, (unsigned long long)tl->launches,
                tl->transfer_ns && !tl->overlap_ns && !m->dt.unusable ? "; transfers never overlap kernels" : "");
    finding_set(&f->fix, "queue the work and synchronize once at the end (or on events): the host then prepares the "
                "next launch while the device runs");
    finding_host(m, f);
    if (rm_sampled_timeline(m))
        return;
    /* the device's idle gaps, the waiting launches' share of them, less the
     * host's own work after each wait (it stays; queued work can only
     * overlap it, up to the kernels' time) */
    double idle = (double)tl->idle_ns * (double)tl->launches_synced / (double)tl->launches;
    double host = (double)tl->host_after_sync_ns < idle ? (double)tl->host_after_sync_ns : idle;
    double overlap = host < (double)tl->kernel_ns ? host : (double)tl->kernel_ns;
    f->gain_ns = idle - host + overlap;
    finding_set(&f->gain_method, "the device's idle time after the waits (%.3f ms), less the host's own work between "
                "a wait and its next launch (%.3f ms), plus the part of that work the kernels could overlap (%.3f ms)",
                idle / 1e6, host / 1e6, overlap / 1e6);
}

void rules_device_idle(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    const struct rm_timeline *tl = &m->tl;
    uint64_t span = rm_timeline_span(tl);
    /* with CLTRACE_SAMPLE the untimed commands' time is unknown: no idle figure */
    if (rm_sampled_timeline(m) || tl->commands < 8 || span <= 1000000 || tl->idle_ns * 2 <= span)
        return;
    struct finding *f = finding_add(out, "device-idle", SEV_INFO, -1);
    uint64_t gap[2] = { tl->max_gap_at, tl->max_gap_at + tl->max_gap_ns };     /* the largest gap */
    finding_span(f, gap);
    finding_set(&f->where, "device timeline");
    finding_set(&f->numbers, "idle %.0f%% of %.3f ms between its first and last command; largest gap %.3f ms",
                100.0 * (double)tl->idle_ns / (double)span, span / 1e6, tl->max_gap_ns / 1e6);
    finding_set(&f->fix, "keep the queue fed: enqueue ahead, avoid host work and waits between commands, batch small "
                "commands");
    finding_host(m, f);
    finding_set(&f->gain_method, "not estimated: the waits behind the gaps are in the serialization finding, if any");
}
