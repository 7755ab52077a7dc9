/* Launches CLTRACE_SAMPLE left untimed, drawn on their queue's track as
 * estimated slices, so that the timeline stays true where the device was
 * busy (device.c keeps each on its queue in enqueue order).
 *
 * Before a timed command is drawn, the untimed launches enqueued before it
 * go in the gap between the queue's last slice and its start: each at its
 * enqueue or after the one before it, as long as its kernel and launch
 * configuration's recent timed launches took (a moving average, 1/8 each:
 * the timed ones around it; a loop's first launches, timed while the budget
 * allowed, are often slower, a build or a cold start); where they would not fit,
 * every one is shortened alike (the timed commands around them are the
 * evidence). Those after the last timed command follow it. A launch whose
 * configuration was never timed is not drawn (counted). Each slice: the
 * kernel's name and " (estimated)", category cltrace.estimated, argument
 * estimated=true, no command_type (a query of commands leaves it out; the
 * report counts it in the device's busy time, not in its kernels' time,
 * which it extrapolates from the sample). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device_model.h"
#include "emit.h"

typedef Perfetto__Protos__DebugAnnotation Ann;

struct mean { double avg; uint64_t n, first; };   /* the first launch (its setup: a build on PoCL) left out once there are more */
static struct clt_map means;           /* launch key -> struct mean */
static uint64_t drawn, not_drawn, draw_ns;

void clt_est_timed(const struct clt_flow *f, uint64_t dur)
{
    if (!f || f->fn != CLT_FN_clEnqueueNDRangeKernel || !f->kernel_id)
        return;
    uint64_t key = clt_dm_launch_key(f->kernel_id, f->work_dim, f->gws, f->lws, (int)f->lws_null);
    struct mean *x = clt_map_get(&means, key);
    if (!x && (x = calloc(1, sizeof *x)) && clt_map_put(&means, key, x) != 0) {
        free(x);
        x = NULL;
    }
    if (x && !x->n++)
        x->first = dur;
    else if (x)
        x->avg = x->n == 2 ? (double)dur : x->avg + ((double)dur - x->avg) / 8;
}

static uint64_t mean_of(uint64_t key, uint64_t *n)
{
    const struct mean *x = clt_map_get(&means, key);
    *n = x ? x->n : 0;
    return !x || !x->n ? 0 : x->n == 1 ? x->first : (uint64_t)x->avg;
}

static void slice(struct clt_writer *w, struct clt_queue *q, const struct clt_est *e, struct clt_kern *k,
                  uint64_t start, uint64_t end, uint64_t timed)
{
    char name[CLT_MAX_STR + 16];
    snprintf(name, sizeof name, "%s (estimated)", k && k->name[0] ? k->name : "kernel");
    Ann a[12], *ap[12];
    unsigned na = 0;
    A_BOOL("estimated", 1);
    A_STR("estimated_command_type", "CL_COMMAND_NDRANGE_KERNEL");
    A_UINT("kernel", e->kernel_id);
    A_UINT("queue", q->id);
    A_UINT("device", q->dev ? q->dev->id : 0);
    A_UINT("estimated_duration_ns", end - start);
    A_UINT("work_dim", e->work_dim);      /* its launch configuration, as the timed ones say theirs */
    Ann elems[6], *ep[6];
    unsigned ne = 0, dims = e->work_dim < 3 ? e->work_dim : 3;
    clt_ann_uints(a, ap, &na, "global_work_size", elems, ep, &ne, e->gws, dims);
    if (e->lws_null)
        A_STR("local_work_size", "NULL");
    else
        clt_ann_uints(a, ap, &na, "local_work_size", elems, ep, &ne, e->lws, dims);
    A_UINT("timed_launches_averaged", timed);
    clt_put_own_slice(w, clt_dm_queue_lane(w, q, start, end), start, end, name, "cltrace.estimated", ap, na, NULL);
}

void clt_est_draw(struct clt_writer *w, struct clt_queue *q, uint64_t before, uint64_t until)
{
    unsigned n = 0;
    while (n < q->n_est && q->est[n].h0 < before)
        n++;
    if (!n)
        return;
    uint64_t t0 = clt_boottime_ns();
    /* a nanosecond apart from the slices around: touching ones would take two lanes */
    uint64_t t = q->est_end + 1, timed, hi = until == UINT64_MAX ? UINT64_MAX : until - 1;
    double total = 0;
    for (unsigned i = 0; i < n; i++)
        total += (double)mean_of(q->est[i].key, &timed) + 1;
    uint64_t lo = t > q->est[0].h0 ? t : q->est[0].h0;
    double scale = hi != UINT64_MAX && total > 0 && hi > lo && total > (double)(hi - lo) ? (double)(hi - lo) / total : 1;
    for (unsigned i = 0; i < n; i++) {
        uint64_t d = (uint64_t)((double)mean_of(q->est[i].key, &timed) * scale);
        uint64_t s = t > q->est[i].h0 ? t : q->est[i].h0;
        if (hi != UINT64_MAX && s + d > hi)      /* never over the timed command after it */
            s = hi > d && hi - d > t ? hi - d : t;
        if (hi != UINT64_MAX && s + d > hi)
            d = hi > s ? hi - s : 0;
        struct clt_kern *k = clt_dm_kern_get(w, q->est[i].kernel_id, 0);
        if (timed && d) {
            slice(w, q, &q->est[i], k, s, s + d, timed);
            t = s + d + 1;
            drawn++;
        } else {
            not_drawn++;        /* nothing to size it by, or no room left before the timed one */
        }
        clt_dm_kern_drawn(w->dev, k);   /* device.c counted it in flight */
    }
    memmove(q->est, q->est + n, (q->n_est - n) * sizeof *q->est);
    q->n_est -= n;
    q->est_end = t - 1;
    draw_ns += clt_boottime_ns() - t0;
}

uint64_t clt_est_draw_ns(void)
{
    return draw_ns;
}

void clt_est_final(struct clt_writer *w)
{
    struct clt_devmodel *m = w->dev;
    for (unsigned i = 0; i < m->n_queues; i++)
        if (m->queues[i].n_est)
            clt_est_draw(w, &m->queues[i], UINT64_MAX, UINT64_MAX);
}

void clt_est_attrs(struct clt_attrs *a)
{
    clt_attr_int(a, "cltrace.commands_estimated", (int64_t)drawn);
    if (not_drawn)
        clt_attr_int(a, "cltrace.commands_not_estimated", (int64_t)not_drawn);
}

void clt_est_forget(void)
{
    drawn = not_drawn = 0;
}
