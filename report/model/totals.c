/* The totals a slice adds to when it ends: API calls by function, errors
 * by kind, kernels by name and configuration, transfers by direction and
 * size, the device timeline; a device command's timing evidence, phase and
 * MPI overlap (model.c reads the packets; reader.h shares the state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "phases.h"
#include "reader.h"

struct rm_api *rm_api_get(struct rm_model *m, const char *name)
{
    for (unsigned i = 0; i < m->n_api; i++)
        if (strcmp(m->api[i].name, name) == 0)
            return &m->api[i];
    if (clt_grow(&m->api, m->n_api, &m->cap_api, sizeof *m->api, 64) != 0)
        return NULL;
    struct rm_api *a = &m->api[m->n_api++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->min_ns = UINT64_MAX;
    return a;
}

static struct rm_error *error_get(struct rm_model *m, const char *fn, const char *err, const char *by)
{
    for (unsigned i = 0; i < m->n_errors; i++)
        if (!strcmp(m->errors[i].fn, fn) && !strcmp(m->errors[i].error, err) && !strcmp(m->errors[i].by, by))
            return &m->errors[i];
    if (m->n_errors >= 4096 || clt_grow(&m->errors, m->n_errors, &m->cap_errors, sizeof *m->errors, 16) != 0)
        return NULL;
    struct rm_error *e = &m->errors[m->n_errors++];
    memset(e, 0, sizeof *e);
    e->phase = -1;
    snprintf(e->fn, sizeof e->fn, "%s", fn);
    snprintf(e->error, sizeof e->error, "%s", err);
    snprintf(e->by, sizeof e->by, "%s", by);
    return e;
}

static void error_add(struct rm_model *m, const char *fn, const char *err, const char *by, uint64_t ts)
{
    struct rm_error *e = error_get(m, fn, err, by);
    if (e && !e->count++)
        e->first_ts = ts;
}

/* The first failing call of a kind gives the stack shown for all of them. */
void rm_error_site(struct rm_model *m, const char *fn, const char *err, const char *by, const char *site,
                   int phase)
{
    struct rm_error *e = error_get(m, fn, err, by);
    if (e && !e->site[0]) {
        snprintf(e->site, sizeof e->site, "%s", site);
        e->phase = phase;
    }
}

static void kernel_add(struct rm_model *m, const struct open_slice *o, uint64_t dur)
{
    struct rm_kernel *x = rm_kernel_find(m, o->name, &o->k);
    if (!x)
        return;
    if (!x->launches) {
        x->site = o->site;
        x->first_ns = dur;
        x->nth = 1;
        for (unsigned i = 0; i < m->n_kernels; i++)
            if (!strcmp(m->kernels[i].name, x->name))
                x->nth += m->kernels[i].timed;
    }
    x->launches++;
    x->timed++;
    x->device_ns += dur;
    rm_span_add(x->span, o->ts, o->ts + dur);
    if (o->phase >= 0)
        rm_kernel_phase(x, o->phase, dur);
}

static int bucket(uint64_t bytes)
{
    static const uint64_t lim[RM_BUCKETS - 1] = { 4096, 32768, 262144, 2097152, 16777216 };
    int b = 0;
    while (b < RM_BUCKETS - 1 && bytes >= lim[b])
        b++;
    return b;
}

/* Device commands arrive about in completion order: gaps between them are
 * idle time; a transfer overlapping the last kernel (or the reverse) counts. */
static void timeline_add(struct rm_timeline *tl, uint64_t start, uint64_t end, int kernel, int transfer)
{
    if (!tl->commands++)
        tl->first_start = tl->busy_until = start;
    if (start > tl->busy_until) {
        uint64_t gap = start - tl->busy_until;
        tl->idle_ns += gap;
        if (gap > tl->max_gap_ns) {
            tl->max_gap_ns = gap;
            tl->max_gap_at = tl->busy_until;
        }
    }
    if (end > tl->busy_until)
        tl->busy_until = end;
    uint64_t os = 0, oe = 0;
    if (kernel) {
        tl->kernel_ns += end - start;
        tl->last_k_start = start;
        tl->last_k_end = end;
        os = start > tl->last_t_start ? start : tl->last_t_start;
        oe = end < tl->last_t_end ? end : tl->last_t_end;
    } else if (transfer) {
        tl->transfer_ns += end - start;
        tl->last_t_start = start;
        tl->last_t_end = end;
        os = start > tl->last_k_start ? start : tl->last_k_start;
        oe = end < tl->last_k_end ? end : tl->last_k_end;
    }
    if (oe > os)
        tl->overlap_ns += oe - os;
}

int rm_bw_bin(double gbps)
{
    int bin = 0;
    for (double mbps = gbps * 1000; mbps >= 2 && bin < 23; mbps /= 2)
        bin++;
    return bin;
}

static int dir_index(const char *direction)
{
    static const char *const dirs[RM_DIRS] = { "host_to_device", "device_to_host", "device_to_device", "device" };
    int d = 0;
    while (d < RM_DIRS && strcmp(dirs[d], direction))
        d++;
    return d;
}

/* "direction|bytes|count": transfers sampling left untimed, kept until the
 * timed ones are all read (rm_untimed_transfers_fold) */
void rm_untimed_transfer(struct rm_model *m, const char *s)
{
    struct rm_transfers *x = &m->xfer;
    char dir[32];
    unsigned long long bytes, count;
    if (x->n_untimed >= sizeof x->untimed / sizeof x->untimed[0] ||
        sscanf(s, "%31[^|]|%llu|%llu", dir, &bytes, &count) != 3 || dir_index(dir) == RM_DIRS)
        return;
    x->untimed[x->n_untimed].dir = dir_index(dir);
    x->untimed[x->n_untimed].bytes = bytes;
    x->untimed[x->n_untimed++].count = count;
}

/* The untimed transfers counted as the timed ones of their direction and
 * size class are: their bytes, their count, and the class's mean time (0
 * where none of it was timed), in the small-transfer tallies too. */
void rm_untimed_transfers_fold(struct rm_model *m)
{
    struct rm_transfers *x = &m->xfer;
    for (unsigned i = 0; i < x->n_untimed; i++) {
        int d = x->untimed[i].dir, b = bucket(x->untimed[i].bytes);
        uint64_t n = x->untimed[i].count, bytes = n * x->untimed[i].bytes;
        uint64_t ns = x->count[d][b] ? (uint64_t)((double)x->ns[d][b] / (double)x->count[d][b] * (double)n) : 0;
        x->count[d][b] += n;
        x->bytes[d][b] += bytes;
        x->ns[d][b] += ns;
        x->untimed_count += n;
        if (x->untimed[i].bytes < m->small_threshold && d != RM_FILL) {
            x->small_count += n;
            x->small_bytes += bytes;
            x->small_ns += ns;
        } else if (d == RM_H2D || d == RM_D2H) {
            x->large_bytes += bytes;
            x->large_ns += ns;
        }
    }
    x->n_untimed = 0;
}

static void transfer_add(struct rm_model *m, const struct open_slice *o, uint64_t dur)
{
    int d = dir_index(o->direction);
    if (d == RM_DIRS)
        return;
    struct rm_transfers *x = &m->xfer;
    int b = bucket(o->bytes);
    x->count[d][b]++;
    x->bytes[d][b] += o->bytes;
    x->ns[d][b] += dur;
    if (o->bytes < m->small_threshold && d != RM_FILL) {
        x->small_count++;
        x->small_bytes += o->bytes;
        x->small_ns += dur;
        rm_span_add(x->small_span, o->ts, o->ts + dur);
    } else if (d == RM_H2D || d == RM_D2H) {
        x->large_bytes += o->bytes;
        x->large_ns += dur;
    }
    if (!o->pinned && (d == RM_H2D || d == RM_D2H))
        x->pageable_count++;
    double gbps = dur ? (double)o->bytes / (double)dur : 0;
    if (gbps > x->best_gbps[d])
        x->best_gbps[d] = gbps;
    if (o->bytes >= 65536 && dur && d != RM_FILL) {
        int bin = rm_bw_bin(gbps);
        int pinned = o->pinned != 0;
        x->bw_count[d][pinned][bin]++;
        x->bw_bytes[d][pinned][bin] += o->bytes;
        x->bw_ns[d][pinned][bin] += dur;
    }
}

static void cmd_sample(struct rm_model *m, uint64_t track, uint64_t start, uint64_t dur, int kind)
{
    if (m->n_cmds >= RM_MAX_CMDS)
        return;
    if (!m->cmds && !(m->cmds = malloc(RM_MAX_CMDS * sizeof *m->cmds)))
        return;
    unsigned lane = 0;
    while (lane < m->n_lanes && m->lanes[lane].uuid != track)
        lane++;
    if (lane == m->n_lanes) {
        if (lane == RM_MAX_LANES)
            return;
        m->lanes[lane].uuid = track;
        snprintf(m->lanes[lane].name, sizeof m->lanes[lane].name, "queue track %u", lane);
        for (unsigned i = 0; i < m->n_names; i++)
            if (m->names[i].uuid == track)
                memcpy(m->lanes[lane].name, m->names[i].name, sizeof m->lanes[lane].name);   /* same size */
        m->n_lanes++;
    }
    m->cmds[m->n_cmds].start = start;
    m->cmds[m->n_cmds].dur = dur;
    m->cmds[m->n_cmds].lane = (uint8_t)lane;
    m->cmds[m->n_cmds].kind = (uint8_t)kind;
    m->n_cmds++;
}

/* A slice ends (its END; an API call's instant at once): the summaries.
 * untimed: an API call whose duration was not measured (CLT_RAW_UNTIMED,
 * a one-clock call between its measured ones): counted, no time. */
/* A device command ends: the device's timing evidence, its phase, the
 * timelines (the report's, its device's), MPI, its kernel or transfer. */
static void device_command(struct rm_model *m, struct open_slice *o, uint64_t tuuid, uint64_t dur)
{
    int kernel = o->k.work_dim != 0, transfer = o->direction[0] && strcmp(o->direction, "device");
    if ((o->has_raw & 3) == 3)
        rm_devtiming_command(&m->dt, o->has_raw & 4 ? o->raw_queued : o->raw_start, o->raw_start, o->raw_end);
    rm_phase_command(m, o->phase, o->dur_ns ? o->dur_ns : dur, kernel);
    m->device_commands++;
    cmd_sample(m, tuuid, o->ts, dur, kernel ? 1 : o->direction[0] ? 2 : 0);
    timeline_add(&m->tl, o->ts, o->ts + dur, kernel, transfer);
    rm_device_command(m, o->dev_obj, o->ts, o->ts + dur, kernel, transfer);
    rm_mpi_device(m, o->ts, o->ts + dur);
    rm_host_device(m, o->ts, o->ts + dur);
    if (kernel)
        kernel_add(m, o, o->dur_ns ? o->dur_ns : dur);
    else if (o->direction[0])
        transfer_add(m, o, o->dur_ns ? o->dur_ns : dur);
}

/* A launch or a transfer sampling left untimed, drawn where it ran
 * (writer/estimated.c): the device's busy time and the timelines, not its
 * kernel's (extrapolated from the launches timed, sampling.c), nor the
 * transfer tallies (its count folded in from the trace's attributes:
 * rm_untimed_transfers_fold), nor the timing evidence. */
static void estimated_command(struct rm_model *m, struct open_slice *o, uint64_t tuuid, uint64_t dur)
{
    int kernel = o->k.work_dim != 0, transfer = o->direction[0] && strcmp(o->direction, "device");
    m->estimated_commands++;
    m->estimated_ns += dur;
    char name[RM_MAX_NAME];
    snprintf(name, sizeof name, "%s", o->name);
    char *cut = strstr(name, " (estimated)");
    if (cut)
        *cut = 0;
    struct rm_kernel *k = kernel ? rm_kernel_find(m, name, &o->k) : NULL;
    /* its kernel's time: the timed ones and these (sampling.c), each as it was sized: a drawing
     * squeezed between timed commands is the timeline's, not the kernel's (on an H200, events
     * of launches 6.5 us apart read 6.7 us: drawn, the kernel's mean read 0.95 of the program's
     * own sparse timing, per round 0.83-1.14; sized, 0.98, 12 rounds, 2026-12-02) */
    if (k)
        k->est_n++, k->est_ns += o->sized_ns > dur ? o->sized_ns : dur;
    if (k && o->sized_ns > dur)      /* what the kernels' table counts beyond the device line */
        m->shortened_commands++, m->shortened_ns += o->sized_ns - dur;
    cmd_sample(m, tuuid, o->ts, dur, kernel ? 1 : o->direction[0] ? 2 : 0);
    timeline_add(&m->tl, o->ts, o->ts + dur, kernel, transfer);
    rm_device_command(m, o->dev_obj, o->ts, o->ts + dur, kernel, transfer);
    rm_mpi_device(m, o->ts, o->ts + dur);
    rm_host_device(m, o->ts, o->ts + dur);
}

void rm_slice_end(struct rm_model *m, struct track *t, uint64_t tuuid, uint64_t ts, int untimed)
{
    struct open_slice *o = &t->stack[--t->depth];
    uint64_t dur = ts > o->ts ? ts - o->ts : 0;
    m->slices++;
    rm_mem_call(m, o->ts, ts);
    if (o->estimated) {
        estimated_command(m, o, tuuid, dur);
        return;
    }
    if (o->range || o->mpi) {
        if (o->range)
            rm_phase_range(m, o->phase, dur);
        else
            rm_mpi_call(m, o->name, o->ts, o->ts + dur, o->bytes);
        return;
    }
    if (o->device) {
        device_command(m, o, tuuid, dur);
        return;
    }
    /* a kernel launch followed by a wait before the next launch; the
     * host's own work from the wait's return to its next launch (its
     * uploads, builds, own computing: what stays when the waits go) */
    int synced = 0;
    /* the name's kind, compared once (9 bytes: the name array is longer,
     * and a shorter name differs at its NUL) */
    int enqueue = !memcmp(o->name, "clEnqueue", 9), launch = enqueue && !strcmp(o->name + 9, "NDRangeKernel");
    if (!t->enqueued && enqueue) {
        t->enqueued = 1;    /* the device timeline starts here: until the first launch, host work too */
        if (!launch)
            t->sync_end = o->ts;
    }
    if (t->sync_end && launch) {
        m->tl.host_after_sync_ns += o->ts > t->sync_end ? o->ts - t->sync_end : 0;
        t->sync_end = 0;
    }
    if (launch && !o->error) {
        m->tl.launches++;
        t->launch_pending = 1;
        t->launch_site = o->site;
    } else if (t->launch_pending && (o->blocking || !strcmp(o->name, "clFinish") ||
                                     !strcmp(o->name, "clWaitForEvents"))) {
        m->tl.launches_synced++;
        t->launch_pending = 0;
        t->sync_end = ts;
        synced = 1;
        if (t->launch_site > 0 && (unsigned)t->launch_site <= m->n_sites)
            m->sites[t->launch_site - 1].synced++;
    }
    if (!o->error && (o->result_id || o->refs_after == 1))    /* a buffer made or let go, maybe */
        rm_mem_buffer_call(m, o, ts);
    if (ts - o->ts >= RM_HOST_CALL_MIN_NS)     /* a thread's track: its tid in the low half */
        rm_host_call(m, o->name, (uint32_t)tuuid, o->ts, ts);
    struct rm_api *a = o->api >= 0 ? &m->api[o->api] : rm_api_get(m, o->name);
    if (untimed && a && a->count > a->untimed)
        dur = a->total_ns / (a->count - a->untimed);   /* for its phase: the function's mean so far */
    if (m->n_phases) {
        int rw = !o->error && (!strcmp(o->name, "clEnqueueWriteBuffer") || !strcmp(o->name, "clEnqueueReadBuffer"));
        rm_phase_call(m, o->phase, dur, o->error != 0, rw ? o->size : 0,
                      rw && o->size && o->size < m->small_threshold, synced);
    }
    if (!a || o->outside)
        return;
    a->count++;
    if (untimed) {
        a->untimed++;
    } else {
        a->total_ns += dur;
        if (dur < a->min_ns)
            a->min_ns = dur;
        if (dur > a->max_ns)
            a->max_ns = dur;
    }
    if (o->error) {
        a->errors++;
        error_add(m, o->name, o->error_name, o->by, o->ts);
    }
}

