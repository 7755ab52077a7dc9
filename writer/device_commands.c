/* Device records on the writer thread: completions drawn as slices on
 * their queue's track (placed on the host clock, tied by a flow to the
 * enqueue call), device facts, clock samples; commands still pending at
 * the end. The model they update is device.c's; kernels' facts, kernels.c's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/config.h"
#include "common/bytes.h"
#include "device_model.h"
#include "emit.h"
#include "fingerprints.h"
#include "trace/cltrace.pb-c.h"
#include "trace/ring.h"
#include "trace/tables.h"

typedef Perfetto__Protos__DebugAnnotation Ann;

/* ---- device records ------------------------------------------------------ */

/* The first bucket of a histogram of n counts at or below which a
 * fraction (in %) of them lie; buckets when n is 0. */
static unsigned hist_bucket_at(const uint32_t *hist, unsigned buckets, uint64_t n, unsigned percent)
{
    uint64_t seen = 0;
    for (unsigned i = 0; i < buckets && n; i++) {
        seen += hist[i];
        if (seen * 100 >= n * percent)
            return i;
    }
    return buckets;
}

/* The median command's residual, to the 100 ns above it (0: none drawn). */
static int64_t residual_median(const struct clt_dev *d)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < CLT_RESIDUAL_BUCKETS; i++)
        n += d->residual_hist[i];
    unsigned i = hist_bucket_at(d->residual_hist, CLT_RESIDUAL_BUCKETS, n, 50);
    if (i == CLT_RESIDUAL_BUCKETS)
        return 0;
    return i + 1 < CLT_RESIDUAL_BUCKETS ? (int64_t)(i + 1) * 100 : d->max_residual;
}

/* A command that found its queue idle: the time the device took to start
 * it. Behind blocking calls on a CPU device most of it is the driver's
 * thread waking up, and the time a tracer takes on the calling thread
 * decides how many hand-offs find it asleep: on a 2-vCPU VM whose idle CPUs
 * halt at once, a bare busy-wait before each of 4,000 small blocking writes
 * on PoCL cost +1.8 us a write for 250 ns, +9.7 us for 1 us
 * (docs/PERFORMANCE.md, "A hand-off's price"). */
static void idle_start(struct clt_dev *d, const uint64_t *v, uint64_t prev_end)
{
    if (!v[CMD_SUBMIT] || v[CMD_START] < v[CMD_SUBMIT] || (prev_end && prev_end > v[CMD_SUBMIT]))
        return;
    uint64_t wait = v[CMD_START] - v[CMD_SUBMIT], b = wait / 500;
    b = b < CLT_START_BUCKETS ? b : CLT_START_BUCKETS - 1;
    d->idle_starts++;
    d->idle_start_ns += wait;
    d->idle_start_n[b]++;
    d->idle_start_sum[b] += wait;
}

/* The start a fraction (in %) of the idle starts took at most: the upper
 * edge of its bucket. */
static uint64_t idle_start_quantile(const struct clt_dev *d, unsigned percent)
{
    unsigned i = hist_bucket_at(d->idle_start_n, CLT_START_BUCKETS, d->idle_starts, percent);
    return i < CLT_START_BUCKETS ? (uint64_t)(i + 1) * 500 : 0;
}

/* What the idle starts took beyond the quickest tenth's: the part a driver's
 * thread asleep may have added, summed. */
static uint64_t idle_start_excess(const struct clt_dev *d)
{
    uint64_t quick = idle_start_quantile(d, 10), excess = 0;
    for (unsigned i = 0; i < CLT_START_BUCKETS; i++)
        if (d->idle_start_sum[i] > d->idle_start_n[i] * quick)
            excess += d->idle_start_sum[i] - d->idle_start_n[i] * quick;
    return excess;
}

/* A launch's buffer arguments as a reader wants them: "arg 0: buffer 7, 256 KiB; arg 2: ...". */
static int buffer_args(const struct clt_flow *f, char *out, size_t cap)
{
    /* a loop launches with the same buffers: the last launch's words kept
     * (formatting them was 4,400 instructions of a timed launch's ~20,000) */
    static struct { uint32_t n; uint64_t args[CLT_FLOW_ARGS], bytes[CLT_FLOW_ARGS]; size_t cap; char s[512]; } last;
    size_t words = f->n_args * sizeof *f->args;
    if (last.n == f->n_args && last.cap == cap && cap <= sizeof last.s && !memcmp(last.args, f->args, words) &&
        !memcmp(last.bytes, f->arg_bytes, words)) {
        memcpy(out, last.s, cap);
        return out[0] != 0;
    }
    size_t n = 0;
    out[0] = 0;
    for (unsigned i = 0; i < f->n_args && n + 1 < cap; i++) {
        char size[48];
        if (!f->arg_bytes[i])
            continue;
        clt_dm_transfer_name(size, sizeof size, ",", f->arg_bytes[i]);
        n += (size_t)snprintf(out + n, cap - n, "%sarg %u: buffer %llu%s", n ? "; " : "", i,
                              (unsigned long long)f->args[i], size);
    }
    if (cap <= sizeof last.s) {
        last.n = f->n_args;
        last.cap = cap;
        memcpy(last.args, f->args, words);
        memcpy(last.bytes, f->arg_bytes, words);
        memcpy(last.s, out, cap);
    }
    return n > 0;
}

/* Did a command wait in its queue behind others? It started later after its
 * enqueue than a launch takes to reach an idle device (100 us covers NVIDIA's
 * and PoCL's) and than twice a command of the queue runs. */
static int waited_in_queue(uint64_t enqueued, uint64_t started, uint64_t typical_ns)
{
    uint64_t reach = 100000 > 2 * typical_ns ? 100000 : 2 * typical_ns;
    return started > enqueued + reach;
}

/* Where a timed command ran on the host's clock: the clock sampled and
 * placed, its quality counted; [*start, *end] no earlier than its enqueue. */
static void place_command(struct clt_writer *w, struct clt_queue *q, const struct clt_rec *rec,
                          const struct clt_flow *f, uint64_t *start, uint64_t *end)
{
    struct clt_dev *d = q->dev;
    const uint64_t *v = rec->arg;
    if (f && v[CMD_QUEUED])
        clt_dm_clock_sample(d, f->h0, f->h1, v[CMD_QUEUED]);
    idle_start(d, v, q->drawn_end);
    q->drawn_flow = rec->arg[CMD_FLOW];
    q->drawn_end = v[CMD_END];
    if (q->sync_flow && q->sync_flow == q->drawn_flow) {   /* a sync already saw it over (device.c) */
        clt_dm_clock_upper(d, q->sync_t, v[CMD_END]);
        q->sync_flow = 0;
    }
    /* the offset where the command ran: its START on the clock as it stood;
     * before there was any, its enqueue, or (no enqueue matched) the moment
     * the collector saw it complete */
    clt_dm_clock_at(d, d->has_offset ? (uint64_t)((int64_t)v[CMD_START] + d->offset)
                       : f ? f->h0 : clt_clock_to_ns(&w->clock, rec->t0));
    if (d->residual > d->max_residual) {    /* how uncertain this command's place is */
        d->max_residual = d->residual;
        d->max_residual_at = (uint64_t)((int64_t)v[CMD_START] + d->offset);
    }
    uint64_t bucket = (uint64_t)(d->residual > 0 ? d->residual : 0) / 100;
    d->residual_hist[bucket < CLT_RESIDUAL_BUCKETS ? bucket : CLT_RESIDUAL_BUCKETS - 1]++;
    w->dev->commands++;
    d->commands++;
    *start = (uint64_t)((int64_t)v[CMD_START] + d->offset);
    *end = (uint64_t)((int64_t)v[CMD_END] + d->offset);
    if (f && *start < f->h0) {              /* cannot happen with a consistent window */
        *end += f->h0 - *start;
        *start = f->h0;
        d->clamped++;
    }
    if (*end < *start)
        *end = *start;
}

/* A command slice's arguments, built on the writer's thread and pointed at
 * until the slice is written. */
struct cmd_anns {
    Ann a[48], *ap[48], elems[8 + CLT_FLOW_ARGS], *ep[8 + CLT_FLOW_ARGS];
    unsigned na, ne;
    char bufs[256];
};

/* The slice's name: the kernel's, a transfer's command and size, or the command's. */
static void command_name(char *name, size_t cap, const struct clt_flow *f, const struct clt_kern *k)
{
    if (k && k->name[0])
        snprintf(name, cap, "%s", k->name);
    else if (f && f->bytes && f->direction && strcmp(f->direction, "none") != 0)
        clt_dm_transfer_name(name, cap, clt_fns[f->fn].name + 9, f->bytes);    /* "WriteBuffer 256 KiB" */
    else if (f)
        snprintf(name, cap, "%s", clt_fns[f->fn].name + 9);   /* "clEnqueue" dropped */
    else
        snprintf(name, cap, "command");
}

/* What every command has: its type, queue, device and the driver's four times. */
static void common_anns(struct cmd_anns *s, const struct clt_queue *q, const struct clt_flow *f, const uint64_t *v)
{
    Ann *a = s->a, **ap = s->ap;
    unsigned na = s->na;
    const char *type = f ? clt_dm_command_type(f->fn) : NULL;
    A_STR("command_type", type ? type : "unknown");
    A_UINT("queue", q->id);
    A_UINT("device", q->dev->id);
    A_UINT("queued_ns", v[CMD_QUEUED]);
    A_UINT("submit_ns", v[CMD_SUBMIT]);
    A_UINT("start_ns", v[CMD_START]);
    A_UINT("end_ns", v[CMD_END]);
    A_UINT("duration_ns", v[CMD_END] - v[CMD_START]);
    if (v[CMD_QUEUED] && v[CMD_SUBMIT] >= v[CMD_QUEUED] && v[CMD_START] >= v[CMD_SUBMIT]) {
        A_UINT("queued_to_submit_ns", v[CMD_SUBMIT] - v[CMD_QUEUED]);
        A_UINT("submit_to_start_ns", v[CMD_START] - v[CMD_SUBMIT]);
    }
    if ((int64_t)v[CMD_STATUS] < 0)
        A_INT("status", (int64_t)v[CMD_STATUS]);
    s->na = na;
}

/* A launch's configuration, arguments and its kernel's facts on this device. */
static void launch_anns(struct cmd_anns *s, const struct clt_flow *f, const struct clt_kern *k, const struct clt_dev *d)
{
    Ann *a = s->a, **ap = s->ap;
    unsigned na = s->na;
    A_UINT("kernel", f->kernel_id);
    A_UINT("work_dim", f->work_dim);
    clt_ann_uints(a, ap, &na, "global_work_size", s->elems, s->ep, &s->ne, f->gws, f->work_dim);
    if (f->lws_null) {
        A_STR("local_work_size", "NULL");
    } else {
        clt_ann_uints(a, ap, &na, "local_work_size", s->elems, s->ep, &s->ne, f->lws, f->work_dim);
        uint64_t wg = 1, groups = 1;
        for (unsigned i = 0; i < f->work_dim; i++) {
            wg *= f->lws[i] ? f->lws[i] : 1;
            groups *= f->lws[i] ? (f->gws[i] + f->lws[i] - 1) / f->lws[i] : 1;
        }
        A_UINT("work_group_size", wg);
        A_UINT("work_groups", groups);
    }
    A_UINT("local_arg_bytes", f->local_arg_bytes);
    if (f->n_args)        /* values as set; buffers and other objects as their ids */
        clt_ann_uints(a, ap, &na, "kernel_args", s->elems, s->ep, &s->ne, f->args, f->n_args);
    if (buffer_args(f, s->bufs, sizeof s->bufs))
        A_STR("kernel_buffers", s->bufs);
    for (unsigned i = 0; k && i < k->n_wg; i++)
        if (k->wg[i].dev == d->handle) {
            A_UINT("kernel_work_group_size", k->wg[i].wg_size);
            A_UINT("preferred_work_group_size_multiple", k->wg[i].pref_multiple);
            A_UINT("kernel_local_mem_bytes", k->wg[i].local_mem);
            A_UINT("kernel_private_mem_bytes", k->wg[i].private_mem);
        }
    if (k && k->regs >= 0)
        A_UINT("registers_per_work_item", (uint64_t)k->regs);
    s->na = na;
}

/* A transfer's direction, bytes, bandwidth and buffer. */
static void transfer_anns(struct cmd_anns *s, struct clt_devmodel *m, const struct clt_flow *f, const uint64_t *v)
{
    Ann *a = s->a, **ap = s->ap;
    unsigned na = s->na;
    A_STR("direction", f->direction);
    A_UINT("bytes", f->bytes);
    double ns = (double)(v[CMD_END] - v[CMD_START]);
    if (ns > 0 && f->bytes)
        A_DBL("bandwidth_gbps", (double)f->bytes / ns);   /* bytes/ns = GB/s */
    struct clt_mem *mo = f->mem_id ? clt_map_get(&m->mems, f->mem_id) : NULL;
    if (mo) {
        A_UINT("buffer", mo->id);
        /* CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR: the host side is pinned */
        A_BOOL("pinned", (mo->flags & ((1u << 3) | (1u << 4))) != 0);
    }
    s->na = na;
}

/* A command over, drawn or not (a driver gives no profiling data for some:
 * NVIDIA's write-invalidate map): the facts it used let go where the app
 * released them, the queue's count at ts, its estimates once none of it
 * is in flight. Counted only where drawn, its queue stayed in flight one
 * command more for the rest of the run: its untimed launches waited for
 * the exit, its slot was never free again. */
static void command_over(struct clt_writer *w, struct clt_queue *q, const struct clt_flow *f, struct clt_kern *k,
                         uint64_t ts)
{
    struct clt_devmodel *m = w->dev;
    clt_dm_kern_drawn(m, k);
    struct clt_mem *used = f && f->mem_id ? clt_map_get(&m->mems, f->mem_id) : NULL;
    if (used && --used->inflight <= 0 && used->refs <= 0)
        free(clt_map_del(&m->mems, used->id));
    if (q->in_flight > 0)
        q->in_flight--;
    clt_counter(w, q->counter_uuid, ts, q->in_flight);
    if (q->refs <= 0 && q->in_flight == 0) {
        clt_est_draw(w, q, UINT64_MAX, UINT64_MAX, 0);
        q->id = 0;          /* released and idle: its slot is free again */
    } else if (q->in_flight == 0 && q->est_over_before) {
        clt_est_draw_held(w, q);    /* a clFinish saw them over: the last timed one is in */
    }
}

/* After the slice: the queue's estimates know where it ended */
static void command_drawn(struct clt_writer *w, struct clt_queue *q, const struct clt_flow *f, struct clt_kern *k,
                          const uint64_t *v, uint64_t start, uint64_t end)
{
    q->est_end = end;
    q->last_timed_ns = end - start;
    clt_est_timed(f, v[CMD_END] - v[CMD_START]);
    command_over(w, q, f, k, end);
}

/* A completed command (f: its enqueue, if matched): a slice on its queue's
 * lane where it ran, or counted where it cannot be drawn. */
static void emit_command(struct clt_writer *w, const struct clt_rec *rec, const struct clt_flow *f)
{
    struct clt_devmodel *m = w->dev;
    const uint64_t *v = rec->arg;
    struct clt_queue *q = f ? clt_dm_queue_find(w, f->queue_id) : NULL;
    if (!q) {
        if (f)
            m->unmatched++;   /* more live queues than the writer keeps */
        free(clt_map_del(&m->fps, rec->arg[CMD_FLOW]));
        return;               /* (without f: counted in commands_unmatched already) */
    }
    struct clt_dev *d = q->dev;
    if (rec->arg[CMD_FLOW] & (1u << 31))
        d->own_events++;
    clt_cost_on_command(w, d, rec->arg[CMD_FLOW], f ? f->fn : 0);
    if (!v[CMD_START] || !v[CMD_END]) {    /* no profiling data: counted, not drawn */
        m->untimed++;
        free(clt_map_del(&m->fps, rec->arg[CMD_FLOW]));
        command_over(w, q, f, f && f->kernel_id ? clt_dm_kern_get(w, f->kernel_id, 0) : NULL,
                     f && f->h0 + 1 > q->est_end ? f->h0 + 1 : q->est_end);
        return;
    }
    uint64_t start, end;
    place_command(w, q, rec, f, &start, &end);
    uint64_t closed = q->n_est > q->est_first && f ? clt_windows_closed_between(q->est[q->est_first].h0, f->h0) : 0;
    if (closed)               /* enqueued in a window that closed before it: after that window's last timed one */
        clt_est_draw(w, q, closed, UINT64_MAX, 0);
    if (q->n_est > q->est_first)   /* untimed launches enqueued before it: in the gap before it (estimated.c) */
        clt_est_draw(w, q, f ? f->h0 : start, start, f && waited_in_queue(f->h0, start, q->last_timed_ns));

    struct cmd_anns s;
    s.na = s.ne = 0;
    char name[CLT_MAX_STR + 16];
    struct clt_kern *k = f && f->kernel_id ? clt_dm_kern_get(w, f->kernel_id, 0) : NULL;
    command_name(name, sizeof name, f, k);
    common_anns(&s, q, f, v);
    if (f && f->fn == CLT_FN_clEnqueueNDRangeKernel)
        launch_anns(&s, f, k, d);
    else if (f && f->direction && strcmp(f->direction, "none") != 0)
        transfer_anns(&s, m, f, v);
    static struct clt_fp_anns fpa;        /* the writer thread's: used until the slice is written */
    if (m->fps.used && clt_fp_annotate(w, rec->arg[CMD_FLOW], f, s.a, s.ap, &s.na, &fpa))
        m->fingerprinted++;

    uint64_t flow = rec->arg[CMD_FLOW];
    clt_own_intern_args(w, s.ap, s.na);
    uint64_t lane = clt_dm_queue_lane(w, q, start, end);
    if (clt_put_own_slice_fast(w, lane, start, end, name, s.ap, s.na, f ? &flow : NULL) != 0)
        clt_put_own_slice(w, lane, start, end, name, NULL, s.ap, s.na, f ? &flow : NULL);
    command_drawn(w, q, f, k, v, start, end);
}

/* emit_command, timed: the budget's price of a timed command (capture/sample.c) */
void clt_dev_emit_timed(struct clt_writer *w, const struct clt_rec *rec, const struct clt_flow *f)
{
    uint64_t t0 = clt_boottime_ns(), est0 = clt_est_draw_ns();
    emit_command(w, rec, f);
    uint64_t took = clt_boottime_ns() - t0, est = clt_est_draw_ns() - est0;   /* the untimed ones' not counted */
    __atomic_fetch_add(&clt_shared.writer_command_ns, took > est ? took - est : 0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&clt_shared.writer_commands, 1, __ATOMIC_RELAXED);
}

#define HOST_RAW_ROOM_NS 100

/* A clock sample: a device timer read, a marker's bracket, or an upper bound. */
static void clock_record(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_dev *d = clt_dm_dev_get(w, rec->arg[CLK_DEVICE]);
    if (!d || (int64_t)rec->arg[CLK_STATUS] != 0 || !rec->arg[CLK_DEVICE_TS])
        return;
    unsigned kind = (unsigned)rec->arg[CLK_KIND];
    if (kind == CLT_CLK_UPPER) {       /* a calibration marker's END, seen over at host time */
        clt_dm_clock_upper(d, clt_clock_to_ns(&w->clock, rec->arg[CLK_HOST_AFTER]), rec->arg[CLK_DEVICE_TS]);
        return;
    }
    /* The host's raw clock read between two ticks: given HOST_RAW_ROOM each
     * side, for the writer's own line from ticks to the trace's clock (each
     * point of it read ~30-60 ns wide): 8 readings otherwise disagreed by
     * up to 31 ns under load, taken as contradictions. */
    uint64_t room = kind == CLT_CLK_HOST_RAW ? HOST_RAW_ROOM_NS : 0;
    if (kind == CLT_CLK_TIMER)
        d->timer_ok = 1;
    else if (kind == CLT_CLK_HOST_RAW)
        d->host_reads++;
    else
        d->markers++;
    clt_dm_clock_sample(d, clt_clock_to_ns(&w->clock, rec->arg[CLK_HOST_BEFORE]) - room,
                        clt_clock_to_ns(&w->clock, rec->arg[CLK_HOST_AFTER]) + room, rec->arg[CLK_DEVICE_TS]);
}

/* What an event and a write's event cost on a device, measured at its start. */
static void event_cost_record(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_dev *d = clt_dm_dev_get(w, rec->arg[EVC_DEVICE]);
    uint64_t base = clt_clock_to_ns(&w->clock, rec->t0);     /* ticks -> ns, as differences */
    if (!d)
        return;
    d->marker_ns = clt_clock_to_ns(&w->clock, rec->t0 + rec->arg[EVC_WITHOUT]) - base;
    d->marker_event_ns = clt_clock_to_ns(&w->clock, rec->t0 + rec->arg[EVC_WITH]) - base;
    d->event_cost_ns = d->marker_event_ns > d->marker_ns ? d->marker_event_ns - d->marker_ns : 0;
    d->write_penalty_ns = clt_clock_to_ns(&w->clock, rec->t0 + rec->arg[EVC_WRITE_PENALTY]) - base;
    d->write_event_ns = clt_clock_to_ns(&w->clock, rec->t0 + rec->arg[EVC_WRITE_EVENT]) - base;
    d->write_event_known = 1;
}

void clt_dev_on_special(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_devmodel *m = w->dev;
    switch (rec->fn) {
    case CLT_REC_FINGERPRINT:
        clt_fp_stash(w, rec);
        break;
    case CLT_REC_DEVICE: {
        struct clt_dev *d = clt_dm_dev_get(w, rec->arg[DEV_ID]);
        if (d && !d->described) {
            d->described = 1;
            memcpy(d->info, rec->arg, sizeof d->info);
            clt_dm_copy_str(d->name, rec, DEV_NAME);
            clt_dm_copy_str(d->vendor, rec, DEV_VENDOR);
            d->profiling_price_ns = clt_probe_put(w, d->index, d->name);
            m->priced |= d->profiling_price_ns != 0;
        }
        break;
    }
    case CLT_REC_CLOCK:
        clock_record(w, rec);
        break;
    case CLT_REC_EVCOST:
        event_cost_record(w, rec);
        break;
    case CLT_REC_QUEUE_MODE:       /* a handle reused by a new queue gets its own mode */
        clt_map_del(&m->queue_modes, rec->arg[QM_QUEUE]);
        if (rec->arg[QM_SWITCHED] != CLT_QUEUE_PROFILED)
            clt_map_put(&m->queue_modes, rec->arg[QM_QUEUE], (void *)(uintptr_t)rec->arg[QM_SWITCHED]);
        m->queues_switched += rec->arg[QM_SWITCHED] == CLT_QUEUE_SWITCHED;
        m->queues_by_callbacks += rec->arg[QM_SWITCHED] == CLT_QUEUE_BY_CALLBACKS;
        break;
    case CLT_REC_KERNEL:
        clt_dm_kernel_record(w, rec);
        break;
    }
}

/* A device's facts and clock quality: cltrace.device.N.* (strings kept in
 * static storage until the attributes are written). */
static void device_attrs(struct clt_attrs *a, unsigned i, const struct clt_dev *d)
{
    static char uuids[sizeof ((struct clt_devmodel *)0)->devs / sizeof (struct clt_dev)][40];
    char key[64];
#define DEV_INT(name, v) (snprintf(key, sizeof key, "cltrace.device.%u." name, i), \
                          clt_attr_int(a, key, (int64_t)(v)))
#define DEV_STR(name, v) (snprintf(key, sizeof key, "cltrace.device.%u." name, i), clt_attr_str(a, key, v))
    DEV_STR("name", d->name);
    DEV_STR("vendor", d->vendor);
    DEV_INT("id", d->id);
    if (d->info[DEV_UUID_HI] || d->info[DEV_UUID_LO]) {
        char *uuid = uuids[i];
        uint64_t hi = d->info[DEV_UUID_HI], lo = d->info[DEV_UUID_LO];
        if ((hi & 0xff00000000000000ull) == CLT_DEV_UUID_PCI)    /* domain:bus:device.function */
            snprintf(uuid, sizeof uuids[i], "pci:%04x:%02x:%02x.%x", (unsigned)(hi >> 32 & 0xffff),
                     (unsigned)(hi & 0xffffffff), (unsigned)(lo >> 32), (unsigned)(lo & 0xffffffff));
        else
            snprintf(uuid, sizeof uuids[i], "%016llx%016llx", (unsigned long long)__builtin_bswap64(hi),
                     (unsigned long long)__builtin_bswap64(lo));
        DEV_STR("uuid", uuid);
    }
    DEV_INT("compute_units", d->info[DEV_CU]);
    DEV_INT("max_work_group_size", d->info[DEV_MAX_WG]);
    DEV_INT("local_mem_bytes", d->info[DEV_LOCAL_MEM]);
    DEV_INT("global_mem_bytes", d->info[DEV_GLOBAL_MEM]);
    DEV_INT("warp_size", d->info[DEV_WARP]);
    DEV_INT("registers_per_block", d->info[DEV_REGS]);
    DEV_INT("compute_capability", d->info[DEV_CC_MAJOR] * 10 + d->info[DEV_CC_MINOR]);
    DEV_INT("device_type", d->info[DEV_TYPE]);
    DEV_STR("clock_method", d->timer_ok     ? "device_and_host_timer+enqueue_brackets"
                            : d->markers    ? "marker_brackets+enqueue_brackets"
                            : d->host_reads ? "host_raw_clock_reads+enqueue_brackets"
                                            : "enqueue_brackets");
    DEV_INT("event_cost_ns", d->event_cost_ns);
    DEV_INT("marker_ns", d->marker_ns);
    DEV_INT("own_events", d->own_events);
    DEV_INT("write_penalty_ns", d->write_penalty_ns);
    DEV_INT("write_event_cost_ns", d->write_event_ns);
    DEV_INT("writes", d->writes);
    DEV_INT("profiling_price_ns", d->profiling_price_ns);
    DEV_INT("commands_profiled_for_cltrace", d->profiled);
    DEV_INT("commands_sampled_out", d->sampled_out);
    DEV_INT("clock_offset_ns", d->offset);
    DEV_INT("clock_residual_ns", d->max_residual);
    DEV_INT("clock_residual_at_ns", d->max_residual_at);
    DEV_INT("clock_chorded", d->chorded);
    DEV_INT("clock_residual_median_ns", residual_median(d));
    DEV_INT("clock_floor_ns", d->floor);
    DEV_INT("clock_samples", d->samples);
    DEV_INT("clock_markers", d->markers);
    DEV_INT("clock_host_reads", d->host_reads);
    DEV_INT("clock_upper_bounds", d->uppers);
    DEV_INT("clock_contradictions", d->contradictions);
    DEV_INT("commands", d->commands);
    DEV_INT("idle_starts", d->idle_starts);
    DEV_INT("idle_start_ns", d->idle_start_ns);
    DEV_INT("idle_start_quick_ns", idle_start_quantile(d, 10));
    DEV_INT("idle_start_median_ns", idle_start_quantile(d, 50));
    DEV_INT("idle_start_excess_ns", idle_start_excess(d));
#undef DEV_INT
#undef DEV_STR
}

/* A list of attributes, and how many it had no room for (under other_key) */
static void put_listed(struct clt_writer *w, struct clt_attrs *a, const char *other_key, uint64_t other)
{
    if (other)
        clt_attr_int(a, other_key, (int64_t)other);
    if (a->n)
        clt_attrs_put(w, a);
}

/* CLTRACE_SAMPLE: the launches left untimed, one attribute per kernel and
 * launch configuration: "name|work_dim|g0,g1,g2|l0,l1,l2 or NULL|count" */
static void untimed_attrs(struct clt_writer *w)
{
    struct clt_devmodel *m = w->dev;
    static struct clt_attrs a;
    static char vals[CLT_MAX_UNTIMED][CLT_MAX_STR + 160];
    char key[64];
    a.n = 0;
    for (unsigned i = 0; i < m->n_untimed; i++) {
        const struct clt_untimed *u = &m->untimed_launches[i];
        char lws[80];
        if (u->lws_null)
            snprintf(lws, sizeof lws, "NULL");
        else
            snprintf(lws, sizeof lws, "%llu,%llu,%llu", (unsigned long long)u->lws[0],
                     (unsigned long long)u->lws[1], (unsigned long long)u->lws[2]);
        snprintf(vals[i], sizeof vals[i], "%s|%u|%llu,%llu,%llu|%s|%llu", u->name, u->work_dim,
                 (unsigned long long)u->gws[0], (unsigned long long)u->gws[1], (unsigned long long)u->gws[2], lws,
                 (unsigned long long)u->count);
        snprintf(key, sizeof key, "cltrace.sampled_out.%u", i);
        clt_attr_str(&a, key, vals[i]);
    }
    put_listed(w, &a, "cltrace.sampled_out_other", m->untimed_other);
}

/* Transfers CLTRACE_SAMPLE left untimed, by direction and size:
 * "direction|bytes|count" (the report counts them with the timed ones) */
static void untimed_transfer_attrs(struct clt_writer *w)
{
    struct clt_devmodel *m = w->dev;
    static struct clt_attrs a;
    static char vals[CLT_MAX_UNTIMED][64];
    char key[64];
    a.n = 0;
    for (unsigned i = 0; i < m->n_untimed_xfers; i++) {
        const struct clt_untimed_xfer *x = &m->untimed_xfers[i];
        snprintf(vals[i], sizeof vals[i], "%s|%llu|%llu", x->dir, (unsigned long long)x->bytes,
                 (unsigned long long)x->count);
        snprintf(key, sizeof key, "cltrace.sampled_out_transfer.%u", i);
        clt_attr_str(&a, key, vals[i]);
    }
    put_listed(w, &a, "cltrace.sampled_out_transfers_other", m->untimed_xfers_other);
}

/* Device facts and clock quality, as trace attributes. */
void clt_dev_footer(struct clt_writer *w, uint64_t unfinished)
{
    struct clt_devmodel *m = w->dev;
    static struct clt_attrs a;
    a.n = 0;
    clt_attr_int(&a, "cltrace.device_commands", (int64_t)m->commands);
    clt_attr_int(&a, "cltrace.commands_unmatched", (int64_t)m->unmatched);
    clt_attr_int(&a, "cltrace.commands_untimed", (int64_t)m->untimed);
    clt_est_attrs(&a);
    /* what timing the commands timed cost, measured at the end: their events
     * at the dearest device's price, the collector's CPU, the writer's time
     * drawing them (the budget, capture/sample.c, went by its estimate) */
    uint64_t price = 0;
    for (unsigned i = 0; i < m->n_devs; i++)
        price = m->devs[i].event_cost_ns > price ? m->devs[i].event_cost_ns : price;
    clt_attr_int(&a, "cltrace.timing_measured_ns", (int64_t)(price * m->commands +
                 __atomic_load_n(&clt_shared.collector_cpu_ns, __ATOMIC_RELAXED) +
                 __atomic_load_n(&clt_shared.writer_command_ns, __ATOMIC_RELAXED)));
    clt_attr_int(&a, "cltrace.commands_unfinished", (int64_t)unfinished);
    clt_attr_int(&a, "cltrace.queues_profiling_switched", (int64_t)m->queues_switched);
    clt_attr_int(&a, "cltrace.queues_timed_by_callbacks", (int64_t)m->queues_by_callbacks);
    if (clt_cfg.FINGERPRINT[0] && strcmp(clt_cfg.FINGERPRINT, "0") != 0) {
        clt_attr_str(&a, "cltrace.fingerprint", clt_cfg.FINGERPRINT);
        clt_attr_int(&a, "cltrace.fingerprinted_commands", (int64_t)m->fingerprinted);
    }
    for (unsigned i = 0; i < m->n_devs; i++)
        device_attrs(&a, i, &m->devs[i]);
    clt_attrs_put(w, &a);
    untimed_attrs(w);
    untimed_transfer_attrs(w);
}
