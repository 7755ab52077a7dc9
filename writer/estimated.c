/* Launches and transfers CLTRACE_SAMPLE left untimed, drawn on their
 * queue's track as estimated slices, so that the timeline stays true where
 * the device was busy (device.c keeps each on its queue in enqueue order):
 * the rules that read the device's timeline (its idle time, serialization)
 * judge a sampled run as a timed one.
 *
 * Before a timed command is drawn, the untimed commands enqueued before it
 * go in the gap between the queue's last slice and its start, in order:
 * each no earlier than its enqueue nor than the one before it ended, as
 * long as its key's recent timed commands took (the key: a kernel with its
 * launch configuration, a transfer command with its size; a moving average,
 * 1/8 each: the timed ones around it; a loop's first launches, timed while
 * the budget allowed, are often slower, a build or a cold start). Where the timed command waited in the queue (it started well
 * after its enqueue: the device was busy with those before it), they ran
 * until it started: the same pause is put between each two (the device's
 * own time between commands), the largest that still ends them before it,
 * so a full queue never shows an empty device. Where they would not fit
 * even back to back, every one is shortened alike (the timed commands
 * around them are the evidence). Those after the last timed command follow
 * it; so do those of a queue where CLT_EST_HOLD wait and no timed command
 * is in flight (device_model.h). A command whose key was never timed is
 * sized as the queue's latest timed command (timed_launches_averaged 0). Each slice: the kernel's name
 * (a transfer's command and size) and " (estimated)", category
 * cltrace.estimated, argument estimated=true, no command_type (a query of commands leaves it out; the
 * report counts it in the device's busy time, not in its kernels' time,
 * which it extrapolates from the sample, nor in the transfers, which it
 * counts from the trace's attributes), and the end of its enqueue's
 * arrow (a flow of the writer's own, calls.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device_model.h"
#include "emit.h"
#include "ownpack.h"
#include "trace/fastpack.h"
#include "trace/tables.h"

typedef Perfetto__Protos__DebugAnnotation Ann;

struct mean { double avg; uint64_t n, first; };   /* the first launch (its setup: a build on PoCL) left out once there are more */
static struct clt_map means;           /* launch key -> struct mean */
static uint64_t drawn, not_drawn, draw_ns, drawn_at_exit;

void clt_est_timed(const struct clt_flow *f, uint64_t dur)
{
    const char *dir;
    uint64_t key;
    if (f && f->fn == CLT_FN_clEnqueueNDRangeKernel && f->kernel_id)
        key = clt_dm_launch_key(f->kernel_id, f->work_dim, f->gws, f->lws, (int)f->lws_null);
    else if (f && clt_dm_transfer_dir(f->fn, &dir))
        key = clt_dm_transfer_key(f->fn, f->bytes);
    else
        return;
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

/* The arguments every estimated slice of a queue and launch configuration
 * shares, its name and category: ap/a filled, their count. */
static unsigned shared_anns(Ann *a, Ann **ap, Ann *elems, Ann **ep, const struct clt_queue *q,
                            const struct clt_est_shape *e)
{
    unsigned na = 0, ne = 0, dims = e->work_dim < 3 ? e->work_dim : 3;
    A_BOOL("estimated", 1);
    A_STR("estimated_command_type", clt_dm_command_type(e->fn));
    A_UINT("queue", q->id);
    A_UINT("device", q->dev ? q->dev->id : 0);
    if (!e->kernel_id) {                  /* a transfer, as the timed ones say theirs */
        A_UINT("bytes", e->bytes);
        A_STR("direction", e->dir);
        return na;
    }
    A_UINT("kernel", e->kernel_id);
    A_UINT("work_dim", e->work_dim);      /* its launch configuration, as the timed ones say theirs */
    clt_ann_uints(a, ap, &na, "global_work_size", elems, ep, &ne, e->gws, dims);
    if (e->lws_null)
        A_STR("local_work_size", "NULL");
    else
        clt_ann_uints(a, ap, &na, "local_work_size", elems, ep, &ne, e->lws, dims);
    return na;
}

/* Those shared fields packed once per queue and launch configuration, their
 * names interned on the writer's sequence (encode.c): a launch loop's 19,000
 * untimed launches were drawn at its exit (their timed neighbours'
 * completions come then), each packed whole: 1.1 us apiece on PoCL's 2
 * cores. NULL: pack this one whole. Packed again after the sequence starts
 * again (the flight recorder's epoch), which sends the names again. */
struct shared { uint64_t queue, key, dur_iid, timed_iid, sized_iid; uint32_t gen; size_t n; uint8_t b[]; };
static struct clt_map shared_fields;

/* "vector_add (estimated)", "WriteBuffer 4 KiB (estimated)" */
static void est_name(char *name, size_t cap, const struct clt_est_shape *e, const struct clt_kern *k)
{
    char what[CLT_MAX_STR + 1];
    if (!e->kernel_id)
        clt_dm_transfer_name(what, sizeof what, clt_fns[e->fn].name + 9, e->bytes);
    snprintf(name, cap, "%s (estimated)", !e->kernel_id ? what : k && k->name[0] ? k->name : "kernel");
}

static struct shared *shared_pack(struct clt_writer *w, const struct clt_queue *q, const struct clt_est *e,
                                  const struct clt_est_shape *sh, const struct clt_kern *k)
{
    char name[CLT_MAX_STR + 16], *cat = "cltrace.estimated";
    est_name(name, sizeof name, sh, k);
    Ann a[10], *ap[10], elems[6], *ep[6];
    Perfetto__Protos__TrackEvent ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    ev.n_debug_annotations = shared_anns(a, ap, elems, ep, q, sh);
    ev.debug_annotations = ap;
    clt_own_intern_args(w, ap, (unsigned)ev.n_debug_annotations);
    uint64_t cat_iid = clt_own_iid(w, CLT_OWN_CATEGORY, cat);
    if (cat_iid) {
        ev.n_category_iids = 1;
        ev.category_iids = &cat_iid;
    } else {
        ev.n_categories = 1;
        ev.categories = &cat;
    }
    uint64_t name_iid = clt_own_iid(w, CLT_OWN_EVENT, name);
    ev.name_field_case = name_iid ? PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID
                                  : PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    if (name_iid)             /* one of the two (a union) */
        ev.name_iid = name_iid;
    else
        ev.name = name;
    uint8_t b[2048];
    size_t n = clt_ownpack_fields(b, sizeof b, &ev);
    struct shared *x = n ? malloc(sizeof *x + n) : NULL;
    if (!x)
        return NULL;
    *x = (struct shared){ q->id, e->key, clt_own_iid(w, CLT_OWN_ARG, "estimated_duration_ns"),
                          clt_own_iid(w, CLT_OWN_ARG, "timed_launches_averaged"),
                          clt_own_iid(w, CLT_OWN_ARG, "shortened_from_ns"), clt_own_gen(), n };
    memcpy(x->b, b, n);
    return x;
}

static const struct shared *shared_of(struct clt_writer *w, const struct clt_queue *q, const struct clt_est *e,
                                      const struct clt_est_shape *sh, const struct clt_kern *k)
{
    uint64_t h = (q->id * 0x9E3779B97F4A7C15ull ^ e->key) | 1;
    struct shared *x = clt_map_get(&shared_fields, h);
    if (x && (x->queue != q->id || x->key != e->key))
        return NULL;
    if (x && x->gen == clt_own_gen())
        return x;
    struct shared *y = shared_pack(w, q, e, sh, k);
    if (x) {                    /* the sequence started again: packed again */
        free(x);
        clt_map_del(&shared_fields, h);
    }
    if (y && clt_map_put(&shared_fields, h, y) != 0) {
        free(y);
        return NULL;
    }
    return y;
}

/* Each slice: the kernel's name and " (estimated)", category
 * cltrace.estimated, its launch configuration, how long it is drawn and on
 * how many timed launches that rests, and where it was shortened to fit
 * between timed commands, the length it was sized at (TRACE_FORMAT.md). */
static void slice(struct clt_writer *w, struct clt_queue *q, const struct clt_est *e, const struct clt_est_shape *sh,
                  struct clt_kern *k, uint64_t start, uint64_t end, uint64_t timed, uint64_t sized)
{
    uint64_t lane = clt_dm_queue_lane(w, q, start, end);
    const struct shared *x = shared_of(w, q, e, sh, k);
    unsigned shortened = sized > end - start;
    if (x && x->dur_iid && x->timed_iid && x->sized_iid) {
        const struct fp_ann own[3] = { { .name_iid = (uint32_t)x->dur_iid, .type = FP_V_UINT, .v = end - start },
                                       { .name_iid = (uint32_t)x->timed_iid, .type = FP_V_UINT, .v = timed },
                                       { .name_iid = (uint32_t)x->sized_iid, .type = FP_V_UINT, .v = sized } };
        if (clt_put_own_slice_with(w, lane, start, end, x->b, x->n, own, 2 + shortened, e->flow ? &e->flow : NULL) == 0)
            return;
    }
    Ann a[13], *ap[13], elems[6], *ep[6];
    unsigned na = 0;
    A_UINT("estimated_duration_ns", end - start);
    A_UINT("timed_launches_averaged", timed);
    if (shortened)
        A_UINT("shortened_from_ns", sized);
    na += shared_anns(a + na, ap + na, elems, ep, q, sh);
    char name[CLT_MAX_STR + 16];
    est_name(name, sizeof name, sh, k);
    clt_put_own_slice(w, lane, start, end, name, "cltrace.estimated", ap, na, e->flow ? &e->flow : NULL);
}

/* Where the chain of n launches from t ends when each starts no earlier than
 * its enqueue and `gap` after the one before it ended: their starts in s[]. */
static uint64_t chain(const struct clt_est *e, const uint64_t *d, unsigned n, uint64_t t, uint64_t gap, uint64_t *s)
{
    for (unsigned i = 0; i < n; i++) {
        s[i] = t > e[i].h0 ? t : e[i].h0;
        t = s[i] + d[i] + 1 + gap;      /* a nanosecond apart: touching slices would take two lanes */
    }
    return n ? s[n - 1] + d[n - 1] : t;
}

/* The pause between commands that ends the chain closest before hi. Where
 * no launch after the first waits for its enqueue (a queue's backlog), the
 * chain ends at its start + their lengths + (n - 1) (1 + gap): that gap,
 * checked by one chain (the search took ~17, at each of a launch loop's
 * timed commands, a fifth of its exit on PoCL); else searched. */
static uint64_t gap_to_fill(const struct clt_est *e, const uint64_t *d, unsigned n, uint64_t t, uint64_t hi,
                            uint64_t *s)
{
    uint64_t lo = 0, top = (hi - t) / n + 1, s0 = t > e[0].h0 ? t : e[0].h0, sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += d[i];
    if (n > 1 && hi >= s0 + sum + (n - 1)) {
        uint64_t g = (hi - s0 - sum - (n - 1)) / (n - 1);
        g = g < top ? g : top;
        uint64_t end = chain(e, d, n, t, g, s);
        if (end <= hi && (g == top || end == s0 + sum + (n - 1) * (1 + g)))
            return g;                   /* the next gap ends it past hi: the search's answer */
    }
    while (lo < top) {                  /* the largest gap whose chain still ends by hi */
        uint64_t mid = lo + (top - lo + 1) / 2;
        if (chain(e, d, n, t, mid, s) <= hi)
            lo = mid;
        else
            top = mid - 1;
    }
    return lo;
}

/* The untimed launches enqueued before `before`, drawn before `until` (the
 * next timed command's start; UINT64_MAX: none); `waited`: that command
 * waited in the queue, so the device ran these until it started. */
void clt_est_draw(struct clt_writer *w, struct clt_queue *q, uint64_t before, uint64_t until, int waited)
{
    const struct clt_est *e = q->est + q->est_first;
    unsigned n = 0, waiting = q->n_est - q->est_first;
    while (n < waiting && e[n].h0 < before)
        n++;
    if (!n)
        return;
    uint64_t t0 = clt_boottime_ns();
    /* each one's length, start, timed launches averaged and length as sized, in one block */
    uint64_t *d = malloc(4 * (size_t)n * sizeof *d), *s = d ? d + n : NULL, *timed = d ? d + 2 * n : NULL;
    uint64_t *sized = d ? d + 3 * n : NULL;
    uint64_t t = q->est_end + 1, hi = until == UINT64_MAX ? UINT64_MAX : until - 1;
    if (d) {
        for (unsigned i = 0; i < n; i++) {
            d[i] = mean_of(e[i].key, &timed[i]);
            if (!d[i])                  /* never timed: the queue's latest timed command's length */
                d[i] = q->last_timed_ns ? q->last_timed_ns : 1;
            sized[i] = d[i];
        }
        uint64_t end = chain(e, d, n, t, 0, s);
        if (hi != UINT64_MAX && end > hi) {         /* no room even back to back: every one shortened alike */
            uint64_t lo = t > e[0].h0 ? t : e[0].h0;
            double room = hi > lo + n ? (double)(hi - lo - n) : 0, total = 0;
            for (unsigned i = 0; i < n; i++)
                total += (double)d[i];
            for (unsigned i = 0; i < n; i++)
                d[i] = total > room && room > 0 ? (uint64_t)((double)d[i] * room / total) : d[i];
            chain(e, d, n, t, 0, s);
        } else if (hi != UINT64_MAX && waited && end < hi) {   /* a full queue: they ran until it started */
            chain(e, d, n, t, gap_to_fill(e, d, n, t, hi, s), s);
        }
    } else {
        not_drawn += n;
    }
    for (unsigned i = 0; i < n; i++) {
        const struct clt_est_shape *sh = clt_est_shape(e[i].key);
        struct clt_kern *k = sh && sh->kernel_id ? clt_dm_kern_get(w, sh->kernel_id, 0) : NULL;
        if (d && sh) {          /* every one drawn, its arrow ended: where the evidence leaves no room, 1 ns */
            uint64_t len = d[i] ? d[i] : 1;
            slice(w, q, &e[i], sh, k, s[i], s[i] + len, timed[i], sized[i]);
            t = s[i] + len + 1;
            drawn++;
        } else if (d) {
            not_drawn++;        /* its shape had no memory */
        }
        clt_dm_kern_drawn(w->dev, k);   /* device.c counted it in flight */
    }
    free(d);
    q->est_first += n;
    if (q->est_first == q->n_est)
        q->est_first = q->n_est = 0;
    q->est_end = t - 1;
    draw_ns += clt_boottime_ns() - t0;
}

/* No timed command of q in flight, and CLT_EST_HOLD of its untimed ones
 * waiting, or a clFinish over those enqueued before it (est_over_before):
 * drawn now, after the last, as at the end (device_commands.c). A loop
 * ending in clFinish had its last batch drawn at the exit: 19,500 of a
 * 20,000-launch loop's on PoCL, 1.3-1.6 ms of cltrace's exit. */
void clt_est_draw_held(struct clt_writer *w, struct clt_queue *q)
{
    uint64_t before = q->est_over_before && q->n_est - q->est_first < CLT_EST_HOLD ? q->est_over_before
                                                                                  : UINT64_MAX;
    clt_est_draw(w, q, before, UINT64_MAX, 0);
    q->est_over_before = 0;     /* those it saw over are drawn; later ones wait as before */
}

uint64_t clt_est_draw_ns(void)
{
    return draw_ns;
}

void clt_est_final(struct clt_writer *w)
{
    struct clt_devmodel *m = w->dev;
    for (unsigned i = 0; i < m->n_queues; i++)
        if (m->queues[i].n_est > m->queues[i].est_first) {
            drawn_at_exit += m->queues[i].n_est - m->queues[i].est_first;
            clt_est_draw(w, &m->queues[i], UINT64_MAX, UINT64_MAX, 0);
        }
}

void clt_est_attrs(struct clt_attrs *a)
{
    clt_attr_int(a, "cltrace.commands_estimated", (int64_t)drawn);
    clt_attr_int(a, "cltrace.commands_estimated_at_exit", (int64_t)drawn_at_exit);
    if (not_drawn)
        clt_attr_int(a, "cltrace.commands_not_estimated", (int64_t)not_drawn);
}

/* A forked child starts afresh: its object ids restart, so its parent's
 * means would size its launches by other kernels (writer.c). */
void clt_est_forget(void)
{
    clt_map_free_vals(&means);
    clt_map_free_vals(&shared_fields);
    clt_est_shapes_forget();
    drawn = not_drawn = draw_ns = drawn_at_exit = 0;
}
