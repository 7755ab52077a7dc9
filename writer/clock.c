/* The clock: where each device's clock stands against the host's, from
 * the evidence capture/clock.c and the commands give (device_model.h,
 * struct clt_dev). Only the writer thread calls it. */
#include <stdint.h>
#include <stdlib.h>
#include "device_model.h"

/* Two kinds of evidence tie a device's clock to the host's:
 *  - a bracket: the device time dev was taken while the host clock was in
 *    [h_lo, h_hi] (an enqueue and its QUEUED time; a marker; the
 *    clGetDeviceAndHostTimer pair), so offset = host - device lies in
 *    [h_lo - dev, h_hi - dev];
 *  - an upper bound: the device time dev was over by host time h (a command's
 *    END and the sync that saw it complete: clFinish, a blocking call, a
 *    marker polled), so offset <= h - dev.
 * The clocks drift (NVIDIA's 17-22 us/s against the host's, measured), so a
 * bound taken at time t_i says less about time t: it is widened by
 * CLT_CLOCK_DRIFT_PPM * |t - t_i|. The writer keeps the CLT_CLOCK_BOUNDS
 * tightest lower bounds and the tightest upper bounds, so aged (a loose
 * bound, such as a slow sync's, never pushes out a tight one, such as a
 * polled marker's, until drift has made that one looser). The offset at a
 * command's time is the middle of the interval they leave there, and its
 * width that command's residual (device_commands.c counts the largest).
 * Evidence does not arrive in time order (a command's bracket comes with
 * its completion, after later markers): nothing here assumes it. */
static int64_t drift_over(uint64_t a, uint64_t b)
{
    uint64_t d = a > b ? a - b : b - a;
    return (int64_t)(d / 1000 * CLT_CLOCK_DRIFT_PPM / 1000);
}

/* Keep v (a lower bound when sign is 1, an upper one when -1) taken at t:
 * in a free slot, else in place of the loosest kept one, aged to t, if v is
 * tighter. */
static void keep_bound(struct clt_clock_bounds *b, int sign, int64_t v, uint64_t t)
{
    unsigned slot = b->n;
    if (b->n < CLT_CLOCK_BOUNDS) {
        b->n++;
    } else {
        int64_t loosest = INT64_MAX;
        for (unsigned i = 0; i < CLT_CLOCK_BOUNDS; i++) {
            int64_t aged = sign * b->v[i] - drift_over(t, b->t[i]);   /* larger: tighter */
            if (aged < loosest) {
                loosest = aged;
                slot = i;
            }
        }
        if (sign * v <= loosest)
            return;
    }
    b->v[slot] = v;
    b->t[slot] = t;
}

/* ---- chords: the drift taken as straight between evidence on both sides --
 * Over a stretch of a second the two clocks' offset moves in a straight
 * line (scripts/clockprobe.c, "linearity", measures it on a GPU). Then a
 * lower bound taken before t and one taken after it bound the offset at t
 * from below by the chord between them, however far apart they are, where
 * aging each by the worst drift widens it by 25 ppm of the distance: in a
 * 20,000-launch loop, markers taken where the app paused before and after
 * it (~5 us wide on NVIDIA) then hold in its middle, where the markers
 * taken amid the launches are 6-12 us wide. Evidence that contradicts a
 * chord is counted as a contradiction (clt_dm_clock_at), as any other. */
static void hist_put(struct clt_dev *d, int sign, int64_t v, uint64_t t)
{
    if (!d->hist && !(d->hist = calloc(1, sizeof *d->hist)))
        return;                       /* no memory: the aged bounds alone */
    struct clt_clock_hist *h = d->hist;
    uint64_t b = t / CLT_CLOCK_BIN_NS;
    unsigned s = (unsigned)(b % CLT_CLOCK_BINS);
    if (h->bin[s] != b + 1) {
        h->bin[s] = b + 1;
        h->p[s][0].t = h->p[s][1].t = 0;
    }
    struct clt_clock_point *p = &h->p[s][sign < 0];
    if (!p->t || sign * v > sign * p->v) {
        p->t = t;
        p->v = v;
        h->version++;
    }
}

static int64_t chord(const struct clt_clock_point *a, const struct clt_clock_point *b, uint64_t t)
{
    if (b->t == a->t)
        return a->v;
    return a->v + (int64_t)((double)(b->v - a->v) * (double)(t - a->t) / (double)(b->t - a->t));
}

/* Is b above (sign 1) or below (-1) the line from o to a? */
static int beyond(int sign, const struct clt_clock_point *o, const struct clt_clock_point *a,
                  const struct clt_clock_point *b)
{
    double cross = (double)(a->t - o->t) * (double)(b->v - o->v) - (double)(a->v - o->v) * (double)(b->t - o->t);
    return sign * cross >= 0;
}

/* The tightest chord at t of the lower (sign 1) or upper (-1) bounds kept
 * within CLT_CLOCK_REACH bins each side: the upper hull of the lower bounds
 * (the lower hull of the upper ones) where it passes over t, which is the
 * best of all the chords between a bound before t and one after it.
 * INT64_MIN / INT64_MAX: none straddles t. The segment found is kept for
 * the next command of the same bin while no evidence changed. */
static int64_t chord_at(struct clt_clock_hist *h, int sign, uint64_t t)
{
    unsigned k = sign < 0;
    uint64_t b = t / CLT_CLOCK_BIN_NS;
    if (h->pair[k].version == h->version && h->pair[k].bin == b + 1 && h->pair[k].a.t <= t && t <= h->pair[k].b.t)
        return chord(&h->pair[k].a, &h->pair[k].b, t);
    h->pair[k].version = 0;
    h->pair[k].bin = b + 1;
    struct clt_clock_point hull[2 * CLT_CLOCK_REACH + 1];
    unsigned n = 0;
    for (uint64_t bin = b > CLT_CLOCK_REACH ? b - CLT_CLOCK_REACH : 0; bin <= b + CLT_CLOCK_REACH; bin++) {
        unsigned s = (unsigned)(bin % CLT_CLOCK_BINS);
        const struct clt_clock_point *p = &h->p[s][k];
        if (h->bin[s] != bin + 1 || !p->t)
            continue;
        while (n >= 2 && beyond(sign, &hull[n - 2], &hull[n - 1], p))
            n--;                          /* hull[n - 1] lies under the chord past it */
        hull[n++] = *p;
    }
    for (unsigned i = 0; i + 1 < n; i++)
        if (hull[i].t <= t && t <= hull[i + 1].t) {
            h->pair[k].a = hull[i];
            h->pair[k].b = hull[i + 1];
            h->pair[k].version = h->version;
            return chord(&hull[i], &hull[i + 1], t);
        }
    return sign > 0 ? INT64_MIN : INT64_MAX;
}

/* The tightest of the kept bounds, aged to t. */
static int64_t bound_at(const struct clt_clock_bounds *b, int sign, uint64_t t)
{
    int64_t best = INT64_MIN;
    for (unsigned i = 0; i < b->n; i++) {
        int64_t aged = sign * b->v[i] - drift_over(t, b->t[i]);
        if (aged > best)
            best = aged;
    }
    return best == INT64_MIN ? (sign > 0 ? INT64_MIN : INT64_MAX) : sign * best;
}

void clt_dm_clock_at(struct clt_dev *d, uint64_t t)
{
    int64_t lo = bound_at(&d->lower, 1, t), hi = bound_at(&d->upper, -1, t);
    if (lo == INT64_MIN)
        return;                       /* no bracket yet: the offset stays as it was */
    if (d->hist) {                    /* chords across t, where tighter */
        int64_t clo = chord_at(d->hist, 1, t), chi = chord_at(d->hist, -1, t);
        int tighter = 0;
        if (clo != INT64_MIN && clo > lo)
            lo = clo, tighter = 1;
        if (chi != INT64_MAX && chi < hi)
            hi = chi, tighter = 1;
        d->chorded += tighter;
    }
    if (hi < lo) {                    /* evidence that contradicts itself (a drift past the bound): */
        d->offset = lo + (hi - lo) / 2;        /* the middle, and the conflict as the uncertainty */
        d->residual = lo - hi;
        d->contradictions++;
    } else {
        d->residual = hi == INT64_MAX ? 0 : hi - lo;
        d->offset = hi == INT64_MAX ? lo : lo + d->residual / 2;
    }
    d->has_offset = 1;
}

/* The interval the evidence leaves at t, when it is the narrowest yet: the
 * floor a command's residual cannot go under (on NVIDIA ~5 us, the time the
 * driver takes to show a command's END to the host; scripts/clockprobe.c),
 * stated beside the residual so that a reader can tell a residual at the
 * driver's limit from one cltrace could have narrowed. */
static void note_floor(struct clt_dev *d, uint64_t t)
{
    int64_t lo = bound_at(&d->lower, 1, t), hi = bound_at(&d->upper, -1, t);
    if (lo != INT64_MIN && hi != INT64_MAX && hi >= lo && (!d->floor || hi - lo < d->floor))
        d->floor = hi - lo > 0 ? hi - lo : 1;
}

/* One bound of the offset, host time h against device time dev: a lower
 * one (sign 1) or an upper one (-1), kept both ways (aged and by time). */
static void add_bound(struct clt_dev *d, int sign, uint64_t h, uint64_t dev_ns)
{
    keep_bound(sign > 0 ? &d->lower : &d->upper, sign, (int64_t)(h - dev_ns), h);
    hist_put(d, sign, (int64_t)(h - dev_ns), h);
}

void clt_dm_clock_sample(struct clt_dev *d, uint64_t h_lo, uint64_t h_hi, uint64_t dev_ns)
{
    add_bound(d, 1, h_lo, dev_ns);
    add_bound(d, -1, h_hi, dev_ns);
    d->samples++;
    note_floor(d, h_lo);
}

void clt_dm_clock_upper(struct clt_dev *d, uint64_t h, uint64_t dev_ns)
{
    add_bound(d, -1, h, dev_ns);
    d->uppers++;
    note_floor(d, h);
}
