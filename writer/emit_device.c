/* The device timeline, on the writer thread: a group track per device, a
 * track per queue (more lanes when commands overlap), a slice per command
 * placed on the host clock and tied by a flow to its enqueue call, counters
 * of commands in flight and of device memory. Contract: TRACE_FORMAT.md. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device_model.h"
#include "emit.h"
#include "trace/cltrace.pb-c.h"
#include "common/config.h"
#include "trace/ring.h"
#include "writer.h"
#include "trace/tables.h"

typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__DebugAnnotation Ann;
typedef Perfetto__Protos__TrackDescriptor Track;

#define FLOW_SEQS 1024           /* flow ids carry the thread's sequence (10 bits) */
#define FLOW_SLOTS 4096          /* enqueues per thread whose commands may be in flight */
#define MAX_PENDING 4096
/* A command that completes while its (blocking) enqueue call still runs waits
 * for that call's record at most this long (host ns). */
#define PENDING_NS 5000000000ull

int clt_dev_init(struct clt_writer *w)
{
    struct clt_devmodel *m = calloc(1, sizeof *m);
    if (!m)
        return -1;
    m->flows = calloc(FLOW_SEQS, sizeof *m->flows);
    m->pending = calloc(MAX_PENDING, sizeof *m->pending);
    if (!m->flows || !m->pending)
        return -1;
    w->dev = m;
    return 0;
}

/* ---- small helpers ---------------------------------------------------- */

static int pidx(const struct clt_fn_desc *fd, const char *name)
{
    for (unsigned i = 0; i < fd->n_params; i++)
        if (strcmp(fd->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int raw(const struct clt_rec *rec, int i) { return i < 0 || (rec->raw_mask & (1u << i)); }

static const uint64_t *arr(const struct clt_rec *rec, int i, unsigned *n)
{
    *n = 0;
    if (raw(rec, i))
        return NULL;
    uint64_t v = rec->arg[i];
    *n = (unsigned)(v & 0xFFFFFFFFu) < CLT_MAX_ARRAY ? (unsigned)(v & 0xFFFFFFFFu) : CLT_MAX_ARRAY;
    return (const uint64_t *)((const uint8_t *)rec + (v >> 32));
}

static void copy_str(char *dst, const struct clt_rec *rec, int i)
{
    dst[0] = 0;
    if (raw(rec, i))
        return;
    uint64_t v = rec->arg[i];
    size_t n = v & 0xFFFFFFFFu;
    if (n > CLT_MAX_STR)
        n = CLT_MAX_STR;
    clt_text(dst, (const uint8_t *)rec + (v >> 32), n, 0, '?');
}

static uint64_t id_of(struct clt_writer *w, uint64_t handle) { return clt_objects_find(&w->objs, handle); }

static uint64_t uuid(struct clt_writer *w, uint32_t kind, uint32_t index)
{
    return w->process_uuid | kind | index;
}

/* ---- devices, queues, contexts ------------------------------------------ */

static struct clt_dev *dev_get(struct clt_writer *w, uint64_t handle)
{
    struct clt_devmodel *m = w->dev;
    for (unsigned i = 0; i < m->n_devs; i++)
        if (m->devs[i].handle == handle)
            return &m->devs[i];
    if (m->n_devs == 16 || !handle)
        return NULL;
    struct clt_dev *d = &m->devs[m->n_devs];
    memset(d, 0, sizeof *d);
    d->handle = handle;
    d->id = clt_objects_get(&w->objs, handle);
    d->index = m->n_devs++;
    d->uuid = uuid(w, 0x90000000u, d->index << 8);
    snprintf(d->name, sizeof d->name, "device %u", d->index);
    return d;
}

static void dev_declare(struct clt_writer *w, struct clt_dev *d)
{
    if (d->declared)
        return;
    d->declared = 1;
    char name[CLT_MAX_STR + 32];
    snprintf(name, sizeof name, "Device %u: %s", d->index, d->name);
    Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = t.has_parent_uuid = t.has_child_ordering = 1;
    t.uuid = d->uuid;
    t.parent_uuid = w->process_uuid;
    t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    t.name = name;
    t.child_ordering = PERFETTO__PROTOS__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
    clt_put_track(w, &t);
}

static struct clt_queue *queue_find(struct clt_writer *w, uint64_t id)
{
    struct clt_devmodel *m = w->dev;
    for (unsigned i = 0; id && i < m->n_queues; i++)
        if (m->queues[i].id == id)
            return &m->queues[i];
    return NULL;
}

/* A queue's slot; a released queue's slot is reused, with new track uuids
 * (the index keeps growing) so the old tracks keep their commands. */
static struct clt_queue *queue_get(struct clt_writer *w, uint64_t handle)
{
    struct clt_devmodel *m = w->dev;
    uint64_t id = id_of(w, handle);
    struct clt_queue *q = queue_find(w, id);
    if (q || !id)
        return q;
    for (unsigned i = 0; i < m->n_queues && !q; i++)
        if (!m->queues[i].id)
            q = &m->queues[i];
    if (!q && m->n_queues < 256)
        q = &m->queues[m->n_queues++];
    if (!q)
        return NULL;
    memset(q, 0, sizeof *q);
    q->handle = handle;
    q->id = id;
    q->refs = 1;
    q->index = m->queue_serial++;
    q->dev = dev_get(w, (uint64_t)(uintptr_t)clt_map_get(&m->queue_dev, id));
    if (!q->dev)
        q->dev = dev_get(w, 0xFFFFFFFFFFFFull);   /* a queue we did not see created */
    return q;
}

/* Does [start, end] touch a command already drawn on this lane? Commands
 * can arrive out of order (callbacks run on several threads), so recent
 * intervals are checked, not just the last end. Touching counts: an END and
 * a BEGIN at the same time would nest in arrival order. */
static int lane_busy(const struct clt_queue *q, unsigned lane, uint64_t start, uint64_t end)
{
    for (unsigned i = 0; i < CLT_LANE_HISTORY; i++) {
        const uint64_t *iv = q->lane_iv[lane][i];
        if (iv[1] && start <= iv[1] && iv[0] <= end)
            return 1;
    }
    return 0;
}

static void queue_declare_lane(struct clt_writer *w, struct clt_queue *q)
{
    unsigned lane = q->n_lanes++;
    dev_declare(w, q->dev);
    /* Lanes of one queue share its name: the UI shows them as one row. */
    char name[64];
    snprintf(name, sizeof name, "Device %u queue %llu", q->dev->index, (unsigned long long)q->id);
    q->lane_uuid[lane] = uuid(w, 0xA0000000u, (q->index << 4 | lane) & 0x0FFFFFFFu);
    Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = t.has_parent_uuid = t.has_sibling_order_rank = 1;
    t.uuid = q->lane_uuid[lane];
    t.parent_uuid = q->dev->uuid;
    t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    t.name = name;
    t.sibling_order_rank = (int32_t)(q->index * CLT_MAX_LANES + lane);
    clt_put_track(w, &t);
    if (lane == 0) {
        snprintf(name, sizeof name, "queue %llu commands in flight", (unsigned long long)q->id);
        q->counter_uuid = uuid(w, 0xB0000000u, q->index & 0x0FFFFFFFu);
        clt_counter_track(w, q->counter_uuid, q->dev->uuid, name, 0);
    }
}

static uint64_t queue_lane(struct clt_writer *w, struct clt_queue *q, uint64_t start, uint64_t end)
{
    unsigned lane = 0;
    while (lane < q->n_lanes && lane_busy(q, lane, start, end))
        lane++;
    if (lane == CLT_MAX_LANES)
        lane = CLT_MAX_LANES - 1;       /* more overlap than lanes: nest on the last */
    while (lane >= q->n_lanes)
        queue_declare_lane(w, q);
    uint64_t *iv = q->lane_iv[lane][q->lane_next[lane]++ % CLT_LANE_HISTORY];
    iv[0] = start;
    iv[1] = end;
    return q->lane_uuid[lane];
}

static struct clt_ctx *ctx_get(struct clt_writer *w, uint64_t id)
{
    struct clt_devmodel *m = w->dev;
    for (unsigned i = 0; i < m->n_ctxs; i++)
        if (m->ctxs[i].id == id)
            return &m->ctxs[i];
    if (m->n_ctxs == 64 || !id)
        return NULL;
    struct clt_ctx *c = &m->ctxs[m->n_ctxs];
    c->id = id;
    c->index = m->n_ctxs++;
    c->bytes = 0;
    c->uuid = uuid(w, 0xC0000000u, c->index);
    char name[64];
    snprintf(name, sizeof name, "device memory, context %llu", (unsigned long long)id);
    clt_counter_track(w, c->uuid, w->process_uuid, name, 1);
    return c;
}

static void mem_change(struct clt_writer *w, struct clt_mem *mo, int64_t delta, uint64_t ts)
{
    struct clt_ctx *c = ctx_get(w, mo->ctx);
    if (!c)
        return;
    c->bytes += delta;
    clt_counter(w, c->uuid, ts, c->bytes);
}

/* ---- the clock ---------------------------------------------------------- */

/* One sample: the device time d was taken while the host clock was within
 * [h_lo, h_hi], so offset = host - device lies in [h_lo - d, h_hi - d]. The
 * offset used is the largest lower bound of the recent window: no command
 * then appears before the call that enqueued it; the residual is how wide
 * the window's bounds leave it (negative: drift inside the window). */
static void clock_sample(struct clt_dev *d, uint64_t h_lo, uint64_t h_hi, uint64_t dev_ns)
{
    unsigned s = d->next_sample;
    d->lo[s] = (int64_t)(h_lo - dev_ns);
    d->hi[s] = (int64_t)(h_hi - dev_ns);
    d->next_sample = (s + 1) % CLT_CLOCK_WINDOW;
    if (d->n_samples < CLT_CLOCK_WINDOW)
        d->n_samples++;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    for (unsigned i = 0; i < d->n_samples; i++) {
        if (d->lo[i] > lo)
            lo = d->lo[i];
        if (d->hi[i] < hi)
            hi = d->hi[i];
    }
    d->offset = lo;
    d->residual = hi - lo;
    int64_t r = d->residual < 0 ? -d->residual : d->residual;
    if (d->n_samples > 1 && r > d->max_residual)
        d->max_residual = r;
}

/* ---- API calls: the model ----------------------------------------------- */

static struct clt_kern *kern_get(struct clt_writer *w, uint64_t id, int create)
{
    struct clt_kern *k = clt_map_get(&w->dev->kernels, id);
    if (!k && create && id) {
        k = calloc(1, sizeof *k);
        if (!k || clt_map_put(&w->dev->kernels, id, k) != 0) {
            free(k);
            return NULL;
        }
        k->id = id;
        k->regs = -1;
        k->refs = 1;
    }
    return k;
}

/* A command on this buffer is in flight: its facts outlive the app's release
 * until the command is drawn. */
static void mem_in_flight(struct clt_devmodel *m, const struct clt_flow *f)
{
    struct clt_mem *mo = f->mem_id ? clt_map_get(&m->mems, f->mem_id) : NULL;
    if (mo)
        mo->inflight++;
}

/* The table slot of a flow id: per thread sequence, by its counter. */
static struct clt_flow *flow_slot(struct clt_devmodel *m, uint64_t flow, int create)
{
    unsigned seq = (unsigned)(flow >> 32) & (FLOW_SEQS - 1);
    if (!m->flows[seq] && create)
        m->flows[seq] = calloc(FLOW_SLOTS, sizeof *m->flows[seq]);
    return m->flows[seq] ? &m->flows[seq][(flow & 0x7FFFFFFFu) % FLOW_SLOTS] : NULL;
}

static int dir_of(unsigned fn, const char **dir)
{
    const char *name = clt_fns[fn].name;
    *dir = strstr(name, "Read") ? "device_to_host" : strstr(name, "Write") ? "host_to_device"
         : strstr(name, "Copy") || strstr(name, "Memcpy") ? "device_to_device"
         : strstr(name, "Fill") || strstr(name, "Memfill") || strstr(name, "MemFill") ? "device" : NULL;
    return *dir != NULL;
}

static void on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1)
{
    struct clt_devmodel *m = w->dev;
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    unsigned fn = rec->fn;
    int ok = fd->ret == CLT_R_ERR ? (int32_t)rec->ret == 0 : rec->ret != 0;
    if (fn == CLT_FN_clCreateCommandQueue || fn == CLT_FN_clCreateCommandQueueWithProperties ||
        fn == CLT_FN_clCreateCommandQueueWithPropertiesKHR) {
        if (ok)
            clt_map_put(&m->queue_dev, id_of(w, rec->ret), (void *)(uintptr_t)rec->arg[1]);
        return;
    }
    if ((fn == CLT_FN_clRetainKernel || fn == CLT_FN_clReleaseKernel) && ok) {
        /* the writer's facts live as long as the app holds the kernel */
        uint64_t id = id_of(w, rec->arg[0]);
        struct clt_kern *k = kern_get(w, id, 0);
        if (k && (k->refs += fn == CLT_FN_clRetainKernel ? 1 : -1) <= 0 && k->inflight <= 0)
            free(clt_map_del(&m->kernels, id));
        return;
    }
    if ((fn == CLT_FN_clRetainCommandQueue || fn == CLT_FN_clReleaseCommandQueue) && ok) {
        uint64_t id = id_of(w, rec->arg[0]);
        struct clt_queue *q = queue_find(w, id);
        if (q && (q->refs += fn == CLT_FN_clRetainCommandQueue ? 1 : -1) <= 0) {
            clt_map_del(&m->queue_dev, id);
            if (q->in_flight <= 0)
                q->id = 0;  /* its slot is free again; its tracks stay in the trace */
        }
        return;
    }
    if (fn == CLT_FN_clCreateKernel && ok) {
        struct clt_kern *k = kern_get(w, id_of(w, rec->ret), 1);
        if (k) {
            k->program = id_of(w, rec->arg[0]);
            copy_str(k->name, rec, 1);
            for (unsigned i = 0; i < m->n_regs; i++)
                if (m->regs[i].program == k->program && strcmp(m->regs[i].name, k->name) == 0)
                    k->regs = (int)m->regs[i].regs;
        }
        return;
    }
    if (fn == CLT_FN_clSetKernelArg && ok) {
        struct clt_kern *k = kern_get(w, id_of(w, rec->arg[0]), 1);
        uint64_t idx = rec->arg[1];
        if (k && idx < CLT_MAX_KARGS) {
            int null_value = raw(rec, 3) && rec->arg[3] == 0;
            k->arg_local[idx] = null_value ? rec->arg[2] : 0;     /* __local: size, no value */
            k->arg_value[idx] = raw(rec, 3) ? 0 : rec->arg[3];
            k->arg_object[idx] = raw(rec, 3) ? 0 : id_of(w, rec->arg[3]);
            k->arg_set |= 1ull << idx;
        }
        return;
    }
    if ((fn == CLT_FN_clCreateBuffer || fn == CLT_FN_clCreateBufferWithProperties) && ok) {
        int fi = pidx(fd, "flags"), si = pidx(fd, "size"), ci = pidx(fd, "context");
        struct clt_mem *mo = calloc(1, sizeof *mo);
        if (mo && clt_map_put(&m->mems, id_of(w, rec->ret), mo) == 0) {
            mo->id = id_of(w, rec->ret);
            mo->flags = rec->arg[fi];
            mo->size = rec->arg[si];
            mo->ctx = id_of(w, rec->arg[ci]);
            mo->refs = 1;
            mem_change(w, mo, (int64_t)mo->size, t1);
        } else {
            free(mo);
        }
        return;
    }
    if (fn == CLT_FN_clRetainMemObject || fn == CLT_FN_clReleaseMemObject) {
        struct clt_mem *mo = clt_map_get(&m->mems, id_of(w, rec->arg[0]));
        if (mo && ok && mo->refs > 0) {
            mo->refs += fn == CLT_FN_clRetainMemObject ? 1 : -1;
            if (mo->refs == 0) {
                mem_change(w, mo, -(int64_t)mo->size, t1);
                if (mo->inflight <= 0)
                    free(clt_map_del(&m->mems, mo->id));
            }
        }
        return;
    }
    if (!(fd->flags & CLT_F_ENQUEUE))
        return;
    uint64_t flow = rec->arg[fd->n_params];
    struct clt_flow *f = flow ? flow_slot(m, flow, 1) : NULL;
    if (!f)
        return;
    memset(f, 0, sizeof *f);
    f->flow = flow;
    f->h0 = t0;
    f->h1 = t1;
    f->fn = (uint16_t)fn;
    f->queue_handle = rec->arg[0];
    struct clt_queue *q = queue_get(w, rec->arg[0]);
    f->queue_id = q ? q->id : 0;     /* the handle may name another queue by completion */
    if (q) {
        q->in_flight++;
        if (!q->n_lanes)
            queue_declare_lane(w, q);   /* the queue's first lane and its counter */
        clt_counter(w, q->counter_uuid, t0, q->in_flight);
    }
    if (fn == CLT_FN_clEnqueueNDRangeKernel) {
        struct clt_kern *k = kern_get(w, id_of(w, rec->arg[1]), 1);
        unsigned n;
        const uint64_t *a;
        f->kernel_id = id_of(w, rec->arg[1]);
        if (k)
            k->inflight++;          /* its facts outlive the app's release until drawn */
        f->work_dim = (uint32_t)rec->arg[2] <= 3 ? (uint32_t)rec->arg[2] : 3;
        if ((a = arr(rec, 3, &n)) != NULL)
            memcpy(f->gwo, a, (n < 3 ? n : 3) * 8);
        if ((a = arr(rec, 4, &n)) != NULL)
            memcpy(f->gws, a, (n < 3 ? n : 3) * 8);
        if ((a = arr(rec, 5, &n)) != NULL)
            memcpy(f->lws, a, (n < 3 ? n : 3) * 8);
        else
            f->lws_null = 1;
        for (unsigned i = 0; k && i < CLT_MAX_KARGS; i++) {
            f->local_arg_bytes += k->arg_local[i];
            if (i < CLT_FLOW_ARGS && (k->arg_set >> i & 1))
                f->args[f->n_args = i + 1, i] = k->arg_object[i] ? k->arg_object[i] : k->arg_value[i];
        }
        return;
    }
    if (fn == CLT_FN_clEnqueueMapBuffer || fn == CLT_FN_clEnqueueMapImage) {
        /* device -> host if mapped for reading; remembered for the unmap */
        int fi = pidx(fd, "map_flags"), si = pidx(fd, "size"), ri = pidx(fd, "region");
        unsigned n;
        const uint64_t *region = ri >= 0 ? arr(rec, ri, &n) : NULL;
        uint64_t bytes = si >= 0 ? rec->arg[si] : region && n == 3 ? region[0] * region[1] * region[2] : 0;
        uint64_t flags = fi >= 0 ? rec->arg[fi] : 0;
        f->direction = flags & 1 ? "device_to_host" : "none";     /* CL_MAP_READ */
        f->bytes = flags & 1 ? bytes : 0;
        f->mem_id = id_of(w, rec->arg[1]);
        mem_in_flight(m, f);
        struct clt_mapping *mp = rec->ret ? clt_map_get(&m->mappings, rec->ret) : NULL;
        if (!mp && rec->ret && (mp = malloc(sizeof *mp)) != NULL && clt_map_put(&m->mappings, rec->ret, mp) != 0) {
            free(mp);
            mp = NULL;
        }
        if (mp) {          /* a pointer mapped again replaces its old mapping */
            mp->bytes = bytes;
            mp->flags = flags;
        }
        return;
    }
    if (fn == CLT_FN_clEnqueueUnmapMemObject) {
        /* host -> device if it was mapped for writing */
        struct clt_mapping *mp = clt_map_get(&m->mappings, rec->arg[2]);
        f->mem_id = id_of(w, rec->arg[1]);
        f->direction = mp && (mp->flags & 6) ? "host_to_device" : "none";   /* WRITE, WRITE_INVALIDATE */
        f->bytes = mp && (mp->flags & 6) ? mp->bytes : 0;
        mem_in_flight(m, f);
        free(clt_map_del(&m->mappings, rec->arg[2]));
        return;
    }
    const char *dir;
    if (!dir_of(fn, &dir))
        return;
    f->direction = dir;
    int bi = pidx(fd, "buffer"), si = pidx(fd, "size"), ri = pidx(fd, "region");
    if (bi < 0)
        bi = pidx(fd, "src_buffer");
    if (bi >= 0)
        f->mem_id = id_of(w, rec->arg[bi]);
    mem_in_flight(m, f);
    if (si >= 0)
        f->bytes = rec->arg[si];
    unsigned n;
    const uint64_t *region = ri >= 0 ? arr(rec, ri, &n) : NULL;
    if (region && n == 3)
        f->bytes = region[0] * region[1] * region[2];
}

/* ---- device records ------------------------------------------------------ */

/* CL_COMMAND_* of an enqueue function: clEnqueueReadBufferRect -> CL_COMMAND_READ_BUFFER_RECT. */
static const char *command_type_of(unsigned fn)
{
    static const char *cache[CLT_FN_COUNT];
    if (cache[fn])
        return cache[fn];
    const char *name = clt_fns[fn].name + 9;     /* after "clEnqueue" */
    char want[96] = "CL_COMMAND_";
    size_t n = strlen(want);
    for (size_t i = 0; name[i] && n + 2 < sizeof want; i++) {
        if (i && name[i] >= 'A' && name[i] <= 'Z' && !(name[i - 1] >= 'A' && name[i - 1] <= 'Z'))
            want[n++] = '_';
        want[n++] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    }
    want[n] = 0;
    const struct clt_decoder_desc *d = &clt_decoders[CLT_DEC_cl_command_type];
    for (unsigned i = 0; i < d->n; i++)
        if (strcmp(d->vals[i].name, want) == 0)
            return cache[fn] = d->vals[i].name;
    return cache[fn] = "CL_COMMAND_OTHER";
}

static void emit_command(struct clt_writer *w, const struct clt_rec *rec, const struct clt_flow *f)
{
    struct clt_devmodel *m = w->dev;
    const uint64_t *v = rec->arg;
    struct clt_queue *q = f ? queue_find(w, f->queue_id) : NULL;
    if (!q) {
        if (f)
            m->unmatched++;   /* more live queues than the writer keeps */
        return;               /* (without f: counted in commands_unmatched already) */
    }
    struct clt_dev *d = q->dev;
    if (!v[CMD_START] || !v[CMD_END]) {    /* no profiling data: counted, not drawn */
        m->untimed++;
        return;
    }
    if (f && v[CMD_QUEUED])
        clock_sample(d, f->h0, f->h1, v[CMD_QUEUED]);
    m->commands++;
    d->commands++;
    uint64_t start = (uint64_t)((int64_t)v[CMD_START] + d->offset);
    uint64_t end = (uint64_t)((int64_t)v[CMD_END] + d->offset);
    if (f && start < f->h0) {              /* cannot happen with a consistent window */
        end += f->h0 - start;
        start = f->h0;
        d->clamped++;
    }
    if (end < start)
        end = start;

    Ann a[40], *ap[40], elems[8 + CLT_FLOW_ARGS], *ep[8 + CLT_FLOW_ARGS];
    unsigned na = 0, ne = 0;
    char name[CLT_MAX_STR + 16];
    const char *type = f ? command_type_of(f->fn) : NULL;
    struct clt_kern *k = f && f->kernel_id ? kern_get(w, f->kernel_id, 0) : NULL;
    if (k && k->name[0])
        snprintf(name, sizeof name, "%s", k->name);
    else if (f)
        snprintf(name, sizeof name, "%s", clt_fns[f->fn].name + 9);   /* "clEnqueue" dropped */
    else
        snprintf(name, sizeof name, "command");
    A_STR("command_type", type ? type : "unknown");
    A_UINT("queue", q->id);
    A_UINT("device", d->id);
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
    if (f && f->fn == CLT_FN_clEnqueueNDRangeKernel) {
        A_UINT("kernel", f->kernel_id);
        A_UINT("work_dim", f->work_dim);
        Ann *g = clt_ann_new(a, ap, &na, "global_work_size");
        g->array_values = &ep[ne];
        for (unsigned i = 0; i < f->work_dim; i++, ne++) {
            perfetto__protos__debug_annotation__init(&elems[ne]);
            elems[ne].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
            elems[ne].uint_value = f->gws[i];
            ep[ne] = &elems[ne];
        }
        g->n_array_values = f->work_dim;
        if (f->lws_null) {
            A_STR("local_work_size", "NULL");
        } else {
            Ann *l = clt_ann_new(a, ap, &na, "local_work_size");
            l->array_values = &ep[ne];
            for (unsigned i = 0; i < f->work_dim; i++, ne++) {
                perfetto__protos__debug_annotation__init(&elems[ne]);
                elems[ne].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
                elems[ne].uint_value = f->lws[i];
                ep[ne] = &elems[ne];
            }
            l->n_array_values = f->work_dim;
            uint64_t wg = 1, groups = 1;
            for (unsigned i = 0; i < f->work_dim; i++) {
                wg *= f->lws[i] ? f->lws[i] : 1;
                groups *= f->lws[i] ? (f->gws[i] + f->lws[i] - 1) / f->lws[i] : 1;
            }
            A_UINT("work_group_size", wg);
            A_UINT("work_groups", groups);
        }
        A_UINT("local_arg_bytes", f->local_arg_bytes);
        if (f->n_args) {      /* values as set; buffers and other objects as their ids */
            Ann *ka = clt_ann_new(a, ap, &na, "kernel_args");
            ka->array_values = &ep[ne];
            for (unsigned i = 0; i < f->n_args; i++, ne++) {
                perfetto__protos__debug_annotation__init(&elems[ne]);
                elems[ne].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
                elems[ne].uint_value = f->args[i];
                ep[ne] = &elems[ne];
            }
            ka->n_array_values = f->n_args;
        }
        for (unsigned i = 0; k && i < k->n_wg; i++)
            if (k->wg[i].dev == d->handle) {
                A_UINT("kernel_work_group_size", k->wg[i].wg_size);
                A_UINT("preferred_work_group_size_multiple", k->wg[i].pref_multiple);
                A_UINT("kernel_local_mem_bytes", k->wg[i].local_mem);
                A_UINT("kernel_private_mem_bytes", k->wg[i].private_mem);
            }
        if (k && k->regs >= 0)
            A_UINT("registers_per_work_item", (uint64_t)k->regs);
    } else if (f && f->direction && strcmp(f->direction, "none") != 0) {
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
    }

    uint64_t track = queue_lane(w, q, start, end);
    uint64_t flow = rec->arg[CMD_FLOW];
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    e.track_uuid = track;
    e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    e.name = name;
    e.n_debug_annotations = na;
    e.debug_annotations = ap;
    if (f) {
        e.n_terminating_flow_ids = 1;
        e.terminating_flow_ids = &flow;
    }
    clt_put_own_event(w, start, &e);
    Event end_e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    end_e.has_type = end_e.has_track_uuid = 1;
    end_e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    end_e.track_uuid = track;
    clt_put_own_event(w, end, &end_e);
    /* the facts this command used may now go, if the app released them */
    if (k && --k->inflight <= 0 && k->refs <= 0)
        free(clt_map_del(&m->kernels, k->id));
    struct clt_mem *used = f && f->mem_id ? clt_map_get(&m->mems, f->mem_id) : NULL;
    if (used && --used->inflight <= 0 && used->refs <= 0)
        free(clt_map_del(&m->mems, used->id));
    if (q->in_flight > 0)
        q->in_flight--;
    if (q->refs <= 0 && q->in_flight == 0)
        q->id = 0;          /* released and idle: its slot is free again */
    clt_counter(w, q->counter_uuid, end, q->in_flight);
}

static struct clt_flow *flow_find(struct clt_devmodel *m, uint64_t flow)
{
    struct clt_flow *f = flow_slot(m, flow, 0);
    return f && f->flow == flow ? f : NULL;
}

static void command_record(struct clt_writer *w, const struct clt_rec *rec, int final)
{
    struct clt_devmodel *m = w->dev;
    struct clt_flow *f = flow_find(m, rec->arg[CMD_FLOW]);
    if (!f && !final && m->n_pending < MAX_PENDING) {
        struct clt_rec *copy = malloc(rec->size);     /* its enqueue has not been drained yet */
        if (copy) {
            memcpy(copy, rec, rec->size);
            m->pending[m->n_pending++] = copy;
            return;
        }
    }
    if (!f)
        m->unmatched++;
    emit_command(w, rec, f);
    if (f)
        f->flow = 0;
}

void clt_dev_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1)
{
    on_call(w, rec, t0, t1);
    /* A completion can come before its enqueue's record (a callback that ran
     * inside the call): match it now, not after the whole backlog. */
    if ((clt_fns[rec->fn].flags & CLT_F_ENQUEUE) && w->dev->n_pending)
        clt_dev_flush_pending(w, 0);
}

void clt_dev_flush_pending(struct clt_writer *w, int final)
{
    struct clt_devmodel *m = w->dev;
    unsigned keep = 0;
    uint64_t now = clt_boottime_ns();
    for (unsigned i = 0; i < m->n_pending; i++) {
        struct clt_rec *r = m->pending[i];
        struct clt_flow *f = flow_find(m, r->arg[CMD_FLOW]);
        if (f || final || now > clt_clock_to_ns(&w->clock, r->t0) + PENDING_NS) {
            if (!f)
                m->unmatched++;
            emit_command(w, r, f);
            if (f)
                f->flow = 0;
            free(r);
        } else {
            m->pending[keep++] = r;
        }
    }
    m->n_pending = keep;
}

void clt_dev_on_special(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_devmodel *m = w->dev;
    switch (rec->fn) {
    case CLT_REC_COMMAND:
        command_record(w, rec, 0);
        break;
    case CLT_REC_DEVICE: {
        struct clt_dev *d = dev_get(w, rec->arg[DEV_ID]);
        if (d && !d->described) {
            d->described = 1;
            memcpy(d->info, rec->arg, sizeof d->info);
            copy_str(d->name, rec, DEV_NAME);
            copy_str(d->vendor, rec, DEV_VENDOR);
        }
        break;
    }
    case CLT_REC_CLOCK: {
        struct clt_dev *d = dev_get(w, rec->arg[CLK_DEVICE]);
        if (d && (int64_t)rec->arg[CLK_STATUS] == 0 && rec->arg[CLK_DEVICE_TS]) {
            d->timer_ok = 1;
            clock_sample(d, clt_clock_to_ns(&w->clock, rec->arg[CLK_HOST_BEFORE]),
                         clt_clock_to_ns(&w->clock, rec->arg[CLK_HOST_AFTER]), rec->arg[CLK_DEVICE_TS]);
        }
        break;
    }
    case CLT_REC_KERNEL: {
        struct clt_kern *k = kern_get(w, id_of(w, rec->arg[KI_KERNEL]), 1);
        if (k && k->n_wg < 4) {
            struct clt_kernel_wg *g = &k->wg[k->n_wg++];
            g->dev = rec->arg[KI_DEVICE];
            g->wg_size = rec->arg[KI_WG_SIZE];
            g->pref_multiple = rec->arg[KI_PREF_MULTIPLE];
            g->local_mem = rec->arg[KI_LOCAL_MEM];
            g->private_mem = rec->arg[KI_PRIVATE_MEM];
        }
        break;
    }
    case CLT_REC_KREGS:
        if (clt_grow(&m->regs, m->n_regs, &m->cap_regs, sizeof *m->regs, 32) != 0)
            break;
        m->regs[m->n_regs].program = id_of(w, rec->arg[KR_PROGRAM]);
        m->regs[m->n_regs].regs = (unsigned)rec->arg[KR_REGS];
        copy_str(m->regs[m->n_regs].name, rec, KR_NAME);
        m->n_regs++;
        break;
    }
}

/* Device facts and clock quality, as trace attributes. */
void clt_dev_footer(struct clt_writer *w, uint64_t unfinished)
{
    struct clt_devmodel *m = w->dev;
    static struct clt_attrs a;
    char key[64];
    a.n = 0;
    clt_attr_int(&a, "cltrace.device_commands", (int64_t)m->commands);
    clt_attr_int(&a, "cltrace.commands_unmatched", (int64_t)m->unmatched);
    clt_attr_int(&a, "cltrace.commands_untimed", (int64_t)m->untimed);
    clt_attr_int(&a, "cltrace.commands_unfinished", (int64_t)unfinished);
    for (unsigned i = 0; i < m->n_devs; i++) {
        const struct clt_dev *d = &m->devs[i];
#define DEV_INT(name, v) (snprintf(key, sizeof key, "cltrace.device.%u." name, i), \
                          clt_attr_int(&a, key, (int64_t)(v)))
#define DEV_STR(name, v) (snprintf(key, sizeof key, "cltrace.device.%u." name, i), clt_attr_str(&a, key, v))
        DEV_STR("name", d->name);
        DEV_STR("vendor", d->vendor);
        DEV_INT("id", d->id);
        DEV_INT("compute_units", d->info[DEV_CU]);
        DEV_INT("max_work_group_size", d->info[DEV_MAX_WG]);
        DEV_INT("local_mem_bytes", d->info[DEV_LOCAL_MEM]);
        DEV_INT("global_mem_bytes", d->info[DEV_GLOBAL_MEM]);
        DEV_INT("warp_size", d->info[DEV_WARP]);
        DEV_INT("registers_per_block", d->info[DEV_REGS]);
        DEV_INT("compute_capability", d->info[DEV_CC_MAJOR] * 10 + d->info[DEV_CC_MINOR]);
        DEV_INT("device_type", d->info[DEV_TYPE]);
        DEV_STR("clock_method", d->timer_ok ? "device_and_host_timer+enqueue_brackets" : "enqueue_brackets");
        DEV_INT("clock_offset_ns", d->offset);
        DEV_INT("clock_residual_ns", d->max_residual);
        DEV_INT("clock_samples", d->n_samples);
        DEV_INT("commands", d->commands);
#undef DEV_INT
#undef DEV_STR
    }
    clt_attrs_put(w, &a);
}
