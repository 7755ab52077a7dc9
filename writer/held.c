/* Completions the writer holds before drawing them: a command whose
 * enqueue's record is not drained yet, or whose kernel's register counts
 * are still compiling (capture/nvbuild.c), and every later one of its
 * queue, so that a queue's commands are drawn in their order. Drawn when
 * what they wait for comes, after PENDING_NS, at the end, or (the oldest
 * half) when CLT_DM_MAX_PENDING are held. dispatch.c hands it the
 * device's records and calls; it draws through device_commands.c. */
#include <stdlib.h>
#include <string.h>
#include "device_model.h"
#include "emit.h"
#include "trace/tables.h"

/* How long a command over before its (blocking) enqueue's record waits for it (host ns). */
#define PENDING_NS 5000000000ull

/* A launch whose kernel's register count is still being compiled */
static int counts_coming(struct clt_writer *w, const struct clt_flow *f)
{
    const struct clt_kern *k = f->kernel_id ? clt_map_get(&w->dev->kernels, f->kernel_id) : NULL;
    return k && k->regs == CLT_KERN_REGS_COMING;
}

/* A command held (its enqueue not drained yet, its kernel's counts coming)
 * holds those after it on its queue (held > 0): a queue's commands are drawn
 * in their order. Drawn ahead, a transfer after a loop of held launches drew
 * the loop's untimed ones before it, sized by no timed launch of theirs (the
 * queue's latest timed command, a 4-byte write): an H200's first run of a
 * program, its counts compiling, said its kernel took 0.93 us, not 6.3, and
 * that the device idled 86 % of the loop. */
static struct clt_queue *held_queue(struct clt_writer *w, const struct clt_flow *f)
{
    return f ? clt_dm_queue_find(w, f->queue_id) : NULL;
}

static int to_hold(struct clt_writer *w, const struct clt_flow *f, const struct clt_queue *q)
{
    return !f || counts_coming(w, f) || (q && q->held);
}

/* A completion drawn, its enqueue's flow done (one with no enqueue seen counted unmatched) */
static void draw(struct clt_writer *w, const struct clt_rec *rec, struct clt_flow *f)
{
    if (!f)
        w->dev->unmatched++;
    clt_dev_emit_timed(w, rec, f);
    if (f)
        clt_dm_flow_done(w->dev, f);
}

/* The held commands drawn that may be (and the first `force` whatever they wait for) */
static void flush_held(struct clt_writer *w, int final, unsigned force)
{
    struct clt_devmodel *m = w->dev;
    unsigned keep = 0;
    uint64_t now = clt_boottime_ns();
    for (unsigned i = 0; i < m->n_queues; i++)
        m->queues[i].held = 0;          /* counted again below, in order */
    for (unsigned i = 0; i < m->n_pending; i++) {
        struct clt_rec *r = m->pending[i];
        struct clt_flow *f = clt_dm_flow_slot(m, r->arg[CMD_FLOW], 0);
        struct clt_queue *q = held_queue(w, f);
        if (!to_hold(w, f, q) || final || i < force || now > clt_clock_to_ns(&w->clock, r->t0) + PENDING_NS) {
            draw(w, r, f);
            free(r);
        } else {
            m->pending[keep++] = r;
            if (q)
                q->held++;
        }
    }
    m->n_pending = keep;
    if (final)
        clt_est_final(w);
}

void clt_dev_flush_pending(struct clt_writer *w, int final)
{
    flush_held(w, final, 0);
}

static void command_record(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_devmodel *m = w->dev;
    struct clt_flow *f = clt_dm_flow_slot(m, rec->arg[CMD_FLOW], 0);
    struct clt_queue *q = held_queue(w, f);
    /* The held commands' buffer full: its oldest half drawn now, in order,
     * without counts. Drawn at once instead, the newest went ahead of them
     * (PoCL, every launch timed, the counts 1 s late: 3,906 of 8,000 launches
     * ahead of the 4,095 held), and by default the untimed launches before
     * the first of those were sized by no timed launch of theirs. */
    if (to_hold(w, f, q) && m->n_pending == CLT_DM_MAX_PENDING)
        flush_held(w, 0, CLT_DM_MAX_PENDING / 2);
    if (to_hold(w, f, q) && m->n_pending < CLT_DM_MAX_PENDING) {
        struct clt_rec *copy = malloc(rec->size);
        if (copy) {
            memcpy(copy, rec, rec->size);
            m->pending[m->n_pending++] = copy;
            if (q)
                q->held++;
            return;
        }
    }
    draw(w, rec, f);
}

void clt_dev_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1, uint32_t seq)
{
    struct clt_queue *q = clt_dm_on_call(w, rec, t0, t1, seq);
    if (q && q->refs <= 0) {    /* released, idle: drawn before a later queue takes its slot */
        clt_est_draw(w, q, UINT64_MAX, UINT64_MAX, 0);
        q->id = 0;
    } else if (q) {             /* CLT_EST_HOLD untimed commands and no timed one: drawn now, not at the exit */
        clt_est_draw_held(w, q);
    }
    /* A completion can come before its enqueue's record (a callback that ran
     * inside the call): match it now, not after the whole backlog. */
    if ((clt_fns[rec->fn].flags & CLT_F_ENQUEUE) && w->dev->n_pending)
        clt_dev_flush_pending(w, 0);
}

/* A record of the device's (device_commands.c), those that draw or hold a completion here */
void clt_dev_on_record(struct clt_writer *w, const struct clt_rec *rec)
{
    switch (rec->fn) {
    case CLT_REC_COMMAND:
        command_record(w, rec);
        break;
    case CLT_REC_KREGS:
        if (clt_dm_kregs_record(w, rec) && w->dev->n_pending)
            clt_dev_flush_pending(w, 0);     /* all in: what was held is drawn */
        break;
    default:
        clt_dev_on_special(w, rec);
    }
}
