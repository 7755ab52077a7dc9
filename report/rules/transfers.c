/* small-transfers (many host-device transfers below a threshold: seeds
 * 001, 003) and low-bandwidth (large transfers on pageable memory under half
 * the best bandwidth: seed 001, pinned memory). */
#include <string.h>
#include "report/model/describe.h"
#include "report/model/phases.h"
#include "rules.h"

/* "host<->device transfers: 512 from site; 3 from site2": the call sites with the most */
static void top_sites(const struct rm_model *m, struct finding *f)
{
    finding_set(&f->where, "host<->device transfers");
    unsigned done[3] = { ~0u, ~0u, ~0u };
    for (unsigned r = 0; r < 3; r++) {
        unsigned best = ~0u;
        for (unsigned i = 0; i < m->n_sites; i++)
            if (i != done[0] && i != done[1] && m->sites[i].count &&
                (best == ~0u || m->sites[i].count > m->sites[best].count))
                best = i;
        if (best == ~0u)
            break;
        done[r] = best;
        finding_set(&f->where, "%s%s %llu from %s", f->where, r ? ";" : ":", (unsigned long long)m->sites[best].count,
                    m->sites[best].site);
    }
}

/* Their time, less the same bytes at the bandwidth this program's large
 * transfers reached (what batched ones will meet: its memory, first touches
 * included), else the device's probe, else the best single transfer. */
static void small_gain(const struct rm_model *m, struct finding *f)
{
    const struct rm_transfers *x = &m->xfer;
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
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
    if (bw <= 0)
        return;
    double at_bw = (double)x->small_bytes / bw;   /* GB/s = bytes/ns */
    f->gain_ns = (double)x->small_ns > at_bw ? (double)x->small_ns - at_bw : 0;
    finding_set(&f->gain_method, "their %.3f ms, less the same bytes at %.2f GB/s (%s)", x->small_ns / 1e6, bw, from);
}

void rules_small_transfers(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    const struct rm_transfers *x = &m->xfer;
    if (x->small_count < th->small_count)
        return;
    uint64_t total_ns = 0;
    for (int dd = 0; dd < RM_DIRS; dd++)
        for (int b = 0; b < RM_BUCKETS; b++)
            total_ns += dd == RM_FILL ? 0 : x->ns[dd][b];
    struct finding *f = finding_add(out, "small-transfers", SEV_WARNING, rm_phase_most(m, RM_TALLY_SMALL));
    finding_span(f, x->small_span);
    top_sites(m, f);
    finding_set(&f->numbers, "%llu transfers below %llu bytes (%s), %llu bytes in all",
                (unsigned long long)x->small_count, (unsigned long long)m->small_threshold, small_source(m),
                (unsigned long long)x->small_bytes);
    if (!m->dt.unusable)      /* a share of device time only where the device's clock measures */
        finding_set(&f->numbers, "%s, %.0f%% of transfer time", f->numbers,
                    total_ns ? 100.0 * (double)x->small_ns / (double)total_ns : 0);
    if (x->untimed_count)     /* sampling left some untimed: counted all the same */
        finding_set(&f->numbers, "%s (%llu transfers untimed, at the mean time of the timed ones of their size)",
                    f->numbers, (unsigned long long)x->untimed_count);
    finding_set(&f->fix, "batch small transfers into fewer large ones, or map the buffer (clEnqueueMapBuffer) and "
                "write in place");
    small_gain(m, f);
}

/* One direction: transfers >= 64 KiB on pageable memory under half the best
 * bandwidth seen, or than pinned memory reaches on this device (cltrace probe). */
static void low_bandwidth(const struct rm_model *m, int dd, struct findings *out)
{
    static const char *const dir_name[RM_DIRS] = { "host-to-device", "device-to-host", "device-to-device", "fill" };
    const struct rm_transfers *x = &m->xfer;
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    int best = -1;
    double ref = x->best_gbps[dd];
    const char *ref_what = "the best seen";
    for (int p = 0; p < 2; p++)
        for (int b = 0; b < 24; b++)
            if (x->bw_count[dd][p][b] && b > best)
                best = b;
    double pinned = d && dd < 2 ? d->probe_pinned[dd] : 0;
    if (best >= 0 && pinned > x->best_gbps[dd] && rm_bw_bin(pinned) > best) {   /* the probe's pinned bin */
        best = rm_bw_bin(pinned);
        ref = pinned;
        ref_what = "pinned memory on this device (cltrace probe)";
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
    if (c < 8 || c * 2 < all)
        return;
    struct finding *f = finding_add(out, "low-bandwidth", SEV_WARNING, -1);
    uint64_t span[2] = { m->tl.first_start, m->tl.busy_until };      /* the device's timeline */
    finding_span(f, span);
    finding_set(&f->where, "%s transfers of 64 KiB or more", dir_name[dd]);
    finding_set(&f->numbers, "%llu of %llu transfers on pageable memory ran at %.2f GB/s, under half %s (%.2f GB/s)",
                (unsigned long long)c, (unsigned long long)all, ns ? (double)bytes / (double)ns : 0, ref_what, ref);
    finding_set(&f->fix, "use pinned memory: a buffer made with CL_MEM_ALLOC_HOST_PTR, mapped (clEnqueueMapBuffer), as "
                "the staging area for these transfers");
    double at_best = ref > 0 ? (double)bytes / ref : (double)ns;
    f->gain_ns = (double)ns > at_best ? (double)ns - at_best : 0;
    finding_set(&f->gain_method, "their %.3f ms, less the same bytes at %s (%.2f GB/s)", ns / 1e6, ref_what, ref);
}

void rules_low_bandwidth(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    for (int dd = 0; dd < RM_FILL; dd++)
        low_bandwidth(m, dd, out);
}
