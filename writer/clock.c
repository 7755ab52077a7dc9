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
 * tighter. The tightest kept, aged to t, comes back (the interval there for
 * note_floor: looked for in a walk of its own, it was an eighth of a timed
 * command's drawing). */
static int64_t keep_bound(struct clt_clock_bounds *b, int sign, int64_t v, uint64_t t)
{
    int64_t loosest = INT64_MAX, tightest = sign * v;       /* larger: tighter */
    unsigned slot = b->n;
    for (unsigned i = 0; i < b->n; i++) {
        int64_t aged = sign * b->v[i] - drift_over(t, b->t[i]);
        if (aged < loosest) {
            loosest = aged;
            slot = i;
        }
        tightest = aged > tightest ? aged : tightest;
    }
    if (b->n < CLT_CLOCK_BOUNDS)
        slot = b->n++;
    else if (sign * v <= loosest)
        return sign * tightest;
    b->v[slot] = v;                   /* the loosest gone: the tightest is another, or v */
    b->t[slot] = t;
    return sign * tightest;
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
typedef __typeof__(((struct clt_clock_hist *)0)->hull[0]) hull_t;

/* Is b above (sign 1) or below (-1) the line from o to a? */
static int beyond(int sign, const struct clt_clock_point *o, const struct clt_clock_point *a,
                  const struct clt_clock_point *b)
{
    double cross = (double)(a->t - o->t) * (double)(b->v - o->v) - (double)(a->v - o->v) * (double)(b->t - o->t);
    return sign * cross >= 0;
}

/* The first of the hull's points after t (n: none). */
static unsigned after(const hull_t *hull, uint64_t t)
{
    unsigned lo = 0, hi = hull->n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (hull->p[mid].t <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Would p, in bin pb, in place of old (t 0: none), change the hull of its
 * sign as kept? Only where the hull spans pb, and only where old is one of
 * its corners or p lies above it (below, for the upper bounds): every
 * other point lies under the hull, and stays under it. */
static int changes_hull(const hull_t *hull, int sign, uint64_t pb, const struct clt_clock_point *old,
                        const struct clt_clock_point *p)
{
    uint64_t hb = hull->bin - 1;
    if (!hull->valid || pb + CLT_CLOCK_REACH < hb || pb > hb + CLT_CLOCK_REACH)
        return 0;
    unsigned j = old->t ? after(hull, old->t) : 0;
    if (j > 0 && hull->p[j - 1].t == old->t && hull->p[j - 1].v == old->v)
        return 1;
    unsigned i = after(hull, p->t);
    return i == 0 || i == hull->n || beyond(sign, &hull->p[i - 1], &hull->p[i], p);
}

static void hist_put(struct clt_dev *d, int sign, int64_t v, uint64_t t)
{
    if (!d->hist && !(d->hist = calloc(1, sizeof *d->hist)))
        return;                       /* no memory: the aged bounds alone */
    struct clt_clock_hist *h = d->hist;
    uint64_t b = t / CLT_CLOCK_BIN_NS;
    unsigned s = (unsigned)(b % CLT_CLOCK_BINS);
    if (!h->lowest || b + 1 < h->lowest)
        h->lowest = b + 1;
    if (b + 1 > h->highest)
        h->highest = b + 1;
    if (h->bin[s] != b + 1) {         /* a bin 2 s older gives its slot: its points go */
        h->bin[s] = b + 1;
        h->p[s][0].t = h->p[s][1].t = 0;
        h->hull[0].valid = h->hull[1].valid = 0;
    }
    struct clt_clock_point *p = &h->p[s][sign < 0], np = { t, v };
    if (!p->t || sign * v > sign * p->v) {
        if (changes_hull(&h->hull[sign < 0], sign, b, p, &np))
            h->hull[sign < 0].valid = 0;
        *p = np;
    }
}

static int64_t chord(const struct clt_clock_point *a, const struct clt_clock_point *b, uint64_t t)
{
    if (b->t == a->t)
        return a->v;
    return a->v + (int64_t)((double)(b->v - a->v) * (double)(t - a->t) / (double)(b->t - a->t));
}

/* The tightest chord at t of the lower (sign 1) or upper (-1) bounds kept
 * within CLT_CLOCK_REACH bins each side: the upper hull of the lower bounds
 * (the lower hull of the upper ones) where it passes over t, which is the
 * best of all the chords between a bound before t and one after it.
 * INT64_MIN / INT64_MAX: none straddles t. The hull is kept for the next
 * commands of the same bin while no evidence changed it (changes_hull):
 * made at each command it was a quarter of a timed command's drawing
 * (~5,000 instructions; in a launch loop a bin's commands come by the
 * hundred, and few of their bounds rise above the hull). */
static int64_t chord_at(struct clt_clock_hist *h, int sign, uint64_t t)
{
    unsigned k = sign < 0;
    uint64_t b = t / CLT_CLOCK_BIN_NS;
    hull_t *hull = &h->hull[k];
    if (!hull->valid || hull->bin != b + 1) {
        hull->valid = 1;
        hull->bin = b + 1;
        hull->n = 0;
        uint64_t first = b > CLT_CLOCK_REACH ? b - CLT_CLOCK_REACH : 0, last = b + CLT_CLOCK_REACH;
        first = h->lowest && h->lowest - 1 > first ? h->lowest - 1 : first;   /* only bins put (a run's first ms) */
        last = h->highest && h->highest - 1 < last ? h->highest - 1 : last;
        for (uint64_t bin = first; h->highest && bin <= last; bin++) {
            unsigned s = (unsigned)(bin % CLT_CLOCK_BINS);
            const struct clt_clock_point *p = &h->p[s][k];
            if (h->bin[s] != bin + 1 || !p->t)
                continue;
            while (hull->n >= 2 && beyond(sign, &hull->p[hull->n - 2], &hull->p[hull->n - 1], p))
                hull->n--;                /* p[n - 1] lies under the chord past it */
            hull->p[hull->n++] = *p;
        }
    }
    unsigned lo = after(hull, t);
    if (lo > 0 && lo < hull->n)
        return chord(&hull->p[lo - 1], &hull->p[lo], t);
    if (lo > 1 && lo == hull->n && hull->p[lo - 1].t == t)   /* at the last point */
        return hull->p[lo - 1].v;
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

/* The interval the evidence leaves, [lo, hi] where a bound was just taken,
 * when it is the narrowest yet: the floor a command's residual cannot go
 * under (on NVIDIA ~5 us, the time the driver takes to show a command's END
 * to the host; scripts/clockprobe.c), stated beside the residual so that a
 * reader can tell a residual at the driver's limit from one cltrace could
 * have narrowed. */
static void note_floor(struct clt_dev *d, int64_t lo, int64_t hi)
{
    if (lo != INT64_MIN && hi != INT64_MAX && hi >= lo && (!d->floor || hi - lo < d->floor))
        d->floor = hi - lo > 0 ? hi - lo : 1;
}

/* One bound of the offset, host time h against device time dev: a lower
 * one (sign 1) or an upper one (-1), kept both ways (aged and by time). The
 * tightest of its kind at h. */
static int64_t add_bound(struct clt_dev *d, int sign, uint64_t h, uint64_t dev_ns)
{
    hist_put(d, sign, (int64_t)(h - dev_ns), h);
    return keep_bound(sign > 0 ? &d->lower : &d->upper, sign, (int64_t)(h - dev_ns), h);
}

/* Each side's tightest is taken at its own end of the bracket (the drift
 * between them: 25 ns a millisecond of its width at most). */
void clt_dm_clock_sample(struct clt_dev *d, uint64_t h_lo, uint64_t h_hi, uint64_t dev_ns)
{
    int64_t lo = add_bound(d, 1, h_lo, dev_ns), hi = add_bound(d, -1, h_hi, dev_ns);
    d->samples++;
    note_floor(d, lo, hi);
}

void clt_dm_clock_upper(struct clt_dev *d, uint64_t h, uint64_t dev_ns)
{
    int64_t hi = add_bound(d, -1, h, dev_ns);
    d->uppers++;
    note_floor(d, bound_at(&d->lower, 1, h), hi);
}
