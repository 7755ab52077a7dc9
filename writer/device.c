/* The device timeline, on the writer thread: a group track per device, a
 * track per queue (more lanes when commands overlap), a slice per command
 * placed on the host clock and tied by a flow to its enqueue call, counters
 * of commands in flight and of device memory. Contract: TRACE_FORMAT.md. */
#define _GNU_SOURCE
#include <stddef.h>
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


int clt_dev_init(struct clt_writer *w)
{
    struct clt_devmodel *m = calloc(1, sizeof *m);
    if (!m)
        return -1;
    m->pending = calloc(CLT_DM_MAX_PENDING, sizeof *m->pending);
    if (!m->pending)
        return -1;
    w->dev = m;
    return 0;
}

/* ---- small helpers ---------------------------------------------------- */

static int pidx_find(const struct clt_fn_desc *fd, const char *name)
{
    for (unsigned i = 0; i < fd->n_params; i++)
        if (strcmp(fd->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* A parameter's index by name (-1: none), found once per function where
 * asked (the name a constant there; found each time, a timed launch
 * compared 27 names, ~700 instructions). at_: index + 2, 0 not yet. */
#define pidx(fd, name) __extension__({                                                     \
        static int8_t at_[CLT_FN_COUNT];                                                   \
        size_t fn_ = (size_t)((fd) - clt_fns);                                             \
        at_[fn_] = at_[fn_] ? at_[fn_] : (int8_t)(pidx_find(&clt_fns[fn_], name) + 2);     \
        at_[fn_] - 2; })

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

/* A read's, write's, copy's or fill's bytes: its region's, else its size. */
static uint64_t transfer_bytes(const struct clt_rec *rec)
{
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    int si = pidx(fd, "size"), ri = pidx(fd, "region");
    unsigned n;
    const uint64_t *region = ri >= 0 ? arr(rec, ri, &n) : NULL;
    return region && n == 3 ? region[0] * region[1] * region[2] : si >= 0 ? rec->arg[si] : 0;
}

void clt_dm_copy_str(char *dst, const struct clt_rec *rec, int i)
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

uint64_t clt_dm_id_of(struct clt_writer *w, uint64_t handle) { return clt_objects_find(&w->objs, handle); }

static uint64_t uuid(struct clt_writer *w, uint32_t kind, uint32_t index)
{
    return w->process_uuid | kind | index;
}

/* ---- devices, queues, contexts ------------------------------------------ */

struct clt_dev *clt_dm_dev_get(struct clt_writer *w, uint64_t handle)
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

void clt_dm_dev_declare(struct clt_writer *w, struct clt_dev *d)
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

struct clt_queue *clt_dm_queue_find(struct clt_writer *w, uint64_t id)
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
    uint64_t id = clt_dm_id_of(w, handle);
    struct clt_queue *q = clt_dm_queue_find(w, id);
    if (q || !id)
        return q;
    for (unsigned i = 0; i < m->n_queues && !q; i++)
        if (!m->queues[i].id)
            q = &m->queues[i];
    if (!q && m->n_queues < CLT_DM_QUEUES)
        q = &m->queues[m->n_queues++];
    if (!q)
        return NULL;
    clt_est_free(q);           /* a slot used before: its untimed launches were drawn when it went idle */
    memset(q, 0, sizeof *q);
    q->handle = handle;
    q->id = id;
    q->refs = 1;
    q->index = m->queue_serial++;
    uint64_t info = (uint64_t)(uintptr_t)clt_map_get(&m->queue_info, id);
    q->order = (unsigned)(info >> 8);
    q->props = (unsigned)(info & 0x7);
    q->dev = clt_dm_dev_get(w, (uint64_t)(uintptr_t)clt_map_get(&m->queue_dev, id));
    if (!q->dev)
        q->dev = clt_dm_dev_get(w, 0xFFFFFFFFFFFFull);   /* a queue we did not see created */
    return q;
}

/* A command that ran with profiling on (a switched queue: timed; never one
 * timed by callbacks). */
static void on_profiled(struct clt_writer *w, const struct clt_rec *rec, unsigned fn, uint64_t flow, uint32_t seq)
{
    struct clt_queue *wq = queue_get(w, rec->arg[0]);
    uintptr_t mode = (uintptr_t)clt_map_get(&w->dev->queue_modes, rec->arg[0]);
    if (!wq || !wq->dev || (flow == CLT_FLOW_SAMPLED_OUT && mode == CLT_QUEUE_SWITCHED) || mode == CLT_QUEUE_BY_CALLBACKS)
        return;
    clt_cost_on_profiled(w, wq->dev, seq, clt_fn_is_host_write(fn), (wq->props & 2) != 0 /* the app's */);
}

/* A queue the app made: its device, its number there and the properties it
 * asked for (the bits of CL_QUEUE_PROPERTIES), for its track's name. */
static void queue_made(struct clt_writer *w, const struct clt_rec *rec, unsigned fn, uint64_t t1)
{
    struct clt_devmodel *m = w->dev;
    uint64_t id = clt_dm_id_of(w, rec->ret), props = 0;
    clt_map_put(&m->queue_dev, id, (void *)(uintptr_t)rec->arg[1]);
    if (fn == CLT_FN_clCreateCommandQueue) {
        props = rec->arg[2];          /* a bitfield: the value itself */
    } else {
        unsigned n;
        const uint64_t *kv = arr(rec, 2, &n);
        for (unsigned i = 0; kv && i + 1 < n; i += 2)
            if (kv[i] == 0x1093)      /* CL_QUEUE_PROPERTIES */
                props = kv[i + 1];
    }
    struct clt_dev *d = clt_dm_dev_get(w, rec->arg[1]);
    uint64_t order = d ? ++d->queues_made : 0;
    clt_mem_queue(w, clt_dm_id_of(w, rec->arg[0]), d, t1);
    clt_map_put(&m->queue_info, id, (void *)(uintptr_t)(order << 8 | (props & 0x7) | 0x80));
}

/* The groups of a context's devices the driver has named: its memory
 * counters' parents (a group declared before its device is named keeps the
 * placeholder in the UI; memory.c counts such a device's bytes, and draws
 * them once its group is there). */
static void mem_groups(struct clt_writer *w, uint64_t ctx_id)
{
    struct clt_dev *devs[CLT_CTX_DEVS];
    unsigned n = clt_mem_devices(w, ctx_id, devs, CLT_CTX_DEVS);
    for (unsigned i = 0; i < n; i++)
        if (devs[i]->described)
            clt_dm_dev_declare(w, devs[i]);
}

/* The queue's name as the program knows it: its device, its number there
 * (in the order the app made them), whether it runs in order. */
static void queue_name(const struct clt_queue *q, char *out, size_t cap, const char *what)
{
    int ooo = q->props & 1, prof = (q->props & 2) != 0;   /* OUT_OF_ORDER_EXEC_MODE_ENABLE, PROFILING_ENABLE */
    if (!q->order) {          /* made before cltrace saw it (a window, a library's) */
        snprintf(out, cap, "Device %u queue (object %llu)%s", q->dev->index, (unsigned long long)q->id, what);
        return;
    }
    snprintf(out, cap, "Device %u queue %u (%s%s)%s", q->dev->index, q->order, ooo ? "out of order" : "in order",
             prof ? ", profiling" : "", what);
}

/* Does [start, end] touch a command already drawn on this lane? Commands
 * can arrive out of order (callbacks run on several threads), so recent
 * intervals are checked, not just the last end. Touching counts: an END and
 * a BEGIN at the same time would nest in arrival order. */
static int lane_busy(const struct clt_queue *q, unsigned lane, uint64_t start, uint64_t end)
{
    if (start > q->lane_end[lane])
        return 0;               /* drawn in time order, as most are: no look at the history */
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
    clt_dm_dev_declare(w, q->dev);
    /* Lanes of one queue share its name: the UI shows them as one row. */
    char name[96];
    queue_name(q, name, sizeof name, "");
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
        queue_name(q, name, sizeof name, ": commands in flight");
        q->counter_uuid = uuid(w, 0xB0000000u, q->index & 0x0FFFFFFFu);
        clt_counter_track(w, q->counter_uuid, q->dev->uuid, name, 0);
    }
}

uint64_t clt_dm_queue_lane(struct clt_writer *w, struct clt_queue *q, uint64_t start, uint64_t end)
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
    if (end > q->lane_end[lane])
        q->lane_end[lane] = end;
    return q->lane_uuid[lane];
}

/* ---- the clock ---------------------------------------------------------- */

/* A sync on q at host time h: the command of `flow` (and all before it) was
 * over by then: its END an upper bound, now if drawn, else when it is
 * (device_commands.c). Not where callbacks timed it: its END is when its
 * callback ran (cbtime.c), which may follow the sync's return. */
void clt_dm_sync(struct clt_writer *w, struct clt_queue *q, uint64_t flow, uint64_t h)
{
    if ((uintptr_t)clt_map_get(&w->dev->queue_modes, q->handle) == CLT_QUEUE_BY_CALLBACKS)
        return;
    if (q->drawn_flow == flow && q->dev) {
        clt_dm_clock_upper(q->dev, h, q->drawn_end);
        return;
    }
    q->sync_flow = flow;
    q->sync_t = h;
}

/* ---- API calls: the model ----------------------------------------------- */

/* The kernel of the latest lookup first: a loop sets one kernel's args. */
static inline struct clt_kern *kern_get(struct clt_writer *w, uint64_t id, int create)
{
    struct clt_kern *k = w->dev->last_kern;
    return k && k->id == id ? k : clt_dm_kern_get(w, id, create);
}

struct clt_kern *clt_dm_kern_get(struct clt_writer *w, uint64_t id, int create)
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
    if (k)
        w->dev->last_kern = k;
    return k;
}

/* A kernel's register count: known, coming (its program's private build
 * runs), or not known */
int clt_dm_kern_regs(const struct clt_devmodel *m, const struct clt_kern *k)
{
    int regs = -1;
    for (unsigned i = 0; i < m->n_regs; i++)
        if (m->regs[i].program == k->program) {
            if (m->regs[i].regs == CLT_KREGS_COMING && regs == -1)
                regs = CLT_KERN_REGS_COMING;
            else if (m->regs[i].regs < CLT_KREGS_DONE && !strcmp(m->regs[i].name, k->name))
                return (int)m->regs[i].regs;
        }
    return regs;
}

void clt_dm_kern_del(struct clt_devmodel *m, uint64_t id)
{
    if (m->last_kern && m->last_kern->id == id)
        m->last_kern = NULL;
    free(clt_map_del(&m->kernels, id));
}

void clt_dm_kern_drawn(struct clt_devmodel *m, struct clt_kern *k)
{
    if (k && --k->inflight <= 0 && k->refs <= 0)
        clt_dm_kern_del(m, k->id);
}


/* A command on this buffer is in flight: its facts outlive the app's release
 * until the command is drawn. */
static void mem_in_flight(struct clt_devmodel *m, const struct clt_flow *f)
{
    struct clt_mem *mo = f->mem_id ? clt_map_get(&m->mems, f->mem_id) : NULL;
    if (mo)
        mo->inflight++;
}

/* An enqueue CLTRACE_SAMPLE left untimed: counted on its device, a transfer by direction and size,
 * a launch on its kernel and launch configuration (the report extrapolates their device time from
 * the timed ones); either kept on its queue to be drawn as an estimated slice (estimated.c).
 * Returns its queue. */
static struct clt_queue *sampled_out(struct clt_writer *w, const struct clt_rec *rec, unsigned fn, uint64_t t0)
{
    struct clt_devmodel *m = w->dev;
    struct clt_queue *q = queue_get(w, rec->arg[0]);
    const char *dir;
    if (q && q->dev)
        q->dev->sampled_out++;
    if (fn != CLT_FN_clEnqueueNDRangeKernel) {
        if (clt_dm_transfer_dir(fn, &dir)) {
            uint64_t bytes = transfer_bytes(rec);
            clt_dm_untimed_transfer(m, dir, bytes);
            if (q)
                clt_est_push_transfer(q, t0, fn, dir, bytes, w->est_flow);
        }
        return q;
    }
    struct clt_untimed u;       /* its name copied only for a new entry: 256 bytes */
    memset(&u, 0, offsetof(struct clt_untimed, name));
    struct clt_kern *k = kern_get(w, clt_dm_id_of(w, rec->arg[1]), 0);
    unsigned n;
    const uint64_t *a;
    const char *name = k && k->name[0] ? k->name : "NDRangeKernel";
    u.kern = k ? k->id : 0;
    u.work_dim = (uint32_t)rec->arg[2] <= 3 ? (uint32_t)rec->arg[2] : 3;
    if ((a = arr(rec, 4, &n)) != NULL)
        memcpy(u.gws, a, (n < 3 ? n : 3) * 8);
    if ((a = arr(rec, 5, &n)) != NULL)
        memcpy(u.lws, a, (n < 3 ? n : 3) * 8);
    else
        u.lws_null = 1;
    if (q && k) {
        clt_est_push_launch(q, t0, k->id, u.work_dim, u.gws, u.lws, u.lws_null, w->est_flow);   /* calls.c's arrow */
        k->inflight++;        /* its facts kept until estimated.c draws it */
    }
    clt_dm_untimed_launch(m, &u, name);
    return q;
}

/* What the writer learnt of an enqueue, by flow id, until its command is
 * drawn: a map, so that a completion collector far behind the app (NVIDIA:
 * thousands of commands) loses nothing. */
struct clt_flow *clt_dm_flow_slot(struct clt_devmodel *m, uint64_t flow, int create)
{
    struct clt_flow *f = clt_map_get(&m->flow_map, flow);
    if (!f && create && (f = calloc(1, sizeof *f)) != NULL && clt_map_put(&m->flow_map, flow, f) != 0) {
        free(f);
        f = NULL;
    }
    return f;
}

void clt_dm_flow_done(struct clt_devmodel *m, struct clt_flow *f)
{
    free(clt_map_del(&m->flow_map, f->flow));
}

/* A queue's life and clFinish; a context's devices. 1 if the call was one;
 * *idle: a queue the app let go with none of its timed commands in flight
 * and untimed ones waiting. */
static int on_queue_call(struct clt_writer *w, const struct clt_rec *rec, unsigned fn, int ok, uint64_t t0,
                         uint64_t t1, struct clt_queue **idle)
{
    struct clt_devmodel *m = w->dev;
    if (fn == CLT_FN_clCreateCommandQueue || fn == CLT_FN_clCreateCommandQueueWithProperties ||
        fn == CLT_FN_clCreateCommandQueueWithPropertiesKHR) {
        if (ok)
            queue_made(w, rec, fn, t1);
        return 1;
    }
    if (fn == CLT_FN_clCreateContext && ok) {     /* its devices: where its buffers count */
        unsigned n;
        const uint64_t *handles = arr(rec, 2, &n);
        struct clt_dev *devs[CLT_CTX_DEVS];
        n = n < CLT_CTX_DEVS ? n : CLT_CTX_DEVS;     /* arr() says 0 where there is no list */
        for (unsigned i = 0; i < n; i++)
            devs[i] = clt_dm_dev_get(w, handles[i]);
        clt_mem_context(w, clt_dm_id_of(w, rec->ret), devs, n);
        return 1;
    }
    if (fn == CLT_FN_clFinish && ok) {     /* every command enqueued on it so far is over by t1 */
        struct clt_queue *q = queue_get(w, rec->arg[0]);
        if (q && q->last_flow)
            clt_dm_sync(w, q, q->last_flow, t1);
        if (q && q->n_est > q->est_first) {     /* its untimed ones too: drawn once none timed is in flight */
            q->est_over_before = t0;
            if (q->in_flight <= 0)
                *idle = q;
        }
        return 1;
    }
    if ((fn == CLT_FN_clRetainCommandQueue || fn == CLT_FN_clReleaseCommandQueue) && ok) {
        uint64_t id = clt_dm_id_of(w, rec->arg[0]);
        struct clt_queue *q = clt_dm_queue_find(w, id);
        if (q && (q->refs += fn == CLT_FN_clRetainCommandQueue ? 1 : -1) <= 0) {
            clt_map_del(&m->queue_dev, id);
            if (q->in_flight <= 0 && q->n_est > q->est_first)
                *idle = q;  /* its untimed commands drawn first (device_commands.c), under its id */
            else if (q->in_flight <= 0)
                q->id = 0;  /* its slot is free again; its tracks stay in the trace */
        }
        return 1;
    }
    return 0;
}

/* A kernel's life, name and arguments. 1 if the call was one. */
static int on_kernel_call(struct clt_writer *w, const struct clt_rec *rec, unsigned fn, int ok)
{
    struct clt_devmodel *m = w->dev;
    if ((fn == CLT_FN_clRetainKernel || fn == CLT_FN_clReleaseKernel) && ok) {
        /* the writer's facts live as long as the app holds the kernel */
        uint64_t id = clt_dm_id_of(w, rec->arg[0]);
        struct clt_kern *k = kern_get(w, id, 0);
        if (k && (k->refs += fn == CLT_FN_clRetainKernel ? 1 : -1) <= 0 && k->inflight <= 0)
            clt_dm_kern_del(m, id);
        return 1;
    }
    if (fn == CLT_FN_clCreateKernel && ok) {
        struct clt_kern *k = kern_get(w, clt_dm_id_of(w, rec->ret), 1);
        if (k) {
            k->program = clt_dm_id_of(w, rec->arg[0]);
            clt_dm_copy_str(k->name, rec, 1);
            k->regs = clt_dm_kern_regs(m, k);
        }
        return 1;
    }
    if (fn == CLT_FN_clSetKernelArg && ok) {
        struct clt_kern *k = kern_get(w, clt_dm_id_of(w, rec->arg[0]), 1);
        uint64_t idx = rec->arg[1];
        if (k && idx < CLT_MAX_KARGS) {
            int null_value = raw(rec, 3) && rec->arg[3] == 0;
            k->arg_local[idx] = null_value ? rec->arg[2] : 0;     /* __local: size, no value */
            k->arg_value[idx] = raw(rec, 3) ? 0 : rec->arg[3];
            k->arg_object[idx] = raw(rec, 3) ? 0 : clt_dm_id_of(w, rec->arg[3]);
            k->arg_set |= 1ull << idx;
        }
        return 1;
    }
    return 0;
}

/* A buffer's life: its size on its context's devices. 1 if the call was one. */
static int on_mem_call(struct clt_writer *w, const struct clt_rec *rec, unsigned fn, int ok, uint64_t t1)
{
    struct clt_devmodel *m = w->dev;
    const struct clt_fn_desc *fd = &clt_fns[fn];
    if ((fn == CLT_FN_clCreateBuffer || fn == CLT_FN_clCreateBufferWithProperties) && ok) {
        int fi = pidx(fd, "flags"), si = pidx(fd, "size"), ci = pidx(fd, "context");
        struct clt_mem *mo = calloc(1, sizeof *mo);
        if (mo && clt_map_put(&m->mems, clt_dm_id_of(w, rec->ret), mo) == 0) {
            mo->id = clt_dm_id_of(w, rec->ret);
            mo->flags = rec->arg[fi];
            mo->size = rec->arg[si];
            mo->ctx = clt_dm_id_of(w, rec->arg[ci]);
            mo->refs = 1;
            mem_groups(w, mo->ctx);
            clt_mem_change(w, mo->ctx, (int64_t)mo->size, t1);
        } else {
            free(mo);
        }
        return 1;
    }
    if (fn == CLT_FN_clRetainMemObject || fn == CLT_FN_clReleaseMemObject) {
        struct clt_mem *mo = clt_map_get(&m->mems, clt_dm_id_of(w, rec->arg[0]));
        if (mo && ok && mo->refs > 0) {
            mo->refs += fn == CLT_FN_clRetainMemObject ? 1 : -1;
            if (mo->refs == 0) {
                clt_mem_change(w, mo->ctx, -(int64_t)mo->size, t1);
                if (mo->inflight <= 0)
                    free(clt_map_del(&m->mems, mo->id));
            }
        }
        return 1;
    }
    return 0;
}

/* An enqueue's slot, with what every command has: its host times, its
 * queue (in flight counted, a blocking call's end known). NULL: none. */
static struct clt_flow *enqueue_flow(struct clt_writer *w, const struct clt_rec *rec, uint64_t flow, uint64_t t0,
                                     uint64_t t1)
{
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    struct clt_flow *f = flow ? clt_dm_flow_slot(w->dev, flow, 1) : NULL;
    if (!f)
        return NULL;
    memset(f, 0, sizeof *f);
    f->flow = flow;
    f->h0 = t0;
    f->h1 = t1;
    f->fn = (uint16_t)rec->fn;
    f->queue_handle = rec->arg[0];
    struct clt_queue *q = queue_get(w, rec->arg[0]);
    f->queue_id = q ? q->id : 0;     /* the handle may name another queue by completion */
    if (q) {
        int b = pidx(fd, "blocking_read");
        b = b >= 0 ? b : pidx(fd, "blocking_write");
        b = b >= 0 ? b : pidx(fd, "blocking_map");
        q->last_flow = flow;
        if (b >= 0 && rec->arg[b]) {         /* a blocking call: its command is over by t1 */
            clt_dm_sync(w, q, flow, t1);
        }
        q->in_flight++;
        if (!q->n_lanes)
            queue_declare_lane(w, q);   /* the queue's first lane and its counter */
        clt_counter(w, q->counter_uuid, t0, q->in_flight);
    }
    return f;
}

/* A launch: its kernel (kept until drawn), configuration and arguments. */
static void launch_facts(struct clt_writer *w, const struct clt_rec *rec, struct clt_flow *f)
{
    struct clt_devmodel *m = w->dev;
    struct clt_kern *k = kern_get(w, clt_dm_id_of(w, rec->arg[1]), 1);
    unsigned n;
    const uint64_t *a;
    f->kernel_id = clt_dm_id_of(w, rec->arg[1]);
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
        const struct clt_mem *mo = i < CLT_FLOW_ARGS && (k->arg_set >> i & 1) && k->arg_object[i]
                                   ? clt_map_get(&m->mems, k->arg_object[i]) : NULL;
        if (mo)           /* its size now: the app may release it before the launch is drawn */
            f->arg_bytes[i] = mo->size;
    }
}

/* A map (device -> host if mapped for reading; remembered for the unmap)
 * or an unmap (host -> device if it was mapped for writing). */
static void map_facts(struct clt_writer *w, const struct clt_rec *rec, struct clt_flow *f)
{
    struct clt_devmodel *m = w->dev;
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    if (rec->fn == CLT_FN_clEnqueueUnmapMemObject) {
        struct clt_mapping *mp = clt_map_get(&m->mappings, rec->arg[2]);
        f->mem_id = clt_dm_id_of(w, rec->arg[1]);
        f->direction = mp && (mp->flags & 6) ? "host_to_device" : "none";   /* WRITE, WRITE_INVALIDATE */
        f->bytes = mp && (mp->flags & 6) ? mp->bytes : 0;
        mem_in_flight(m, f);
        free(clt_map_del(&m->mappings, rec->arg[2]));
        return;
    }
    int fi = pidx(fd, "map_flags"), si = pidx(fd, "size"), ri = pidx(fd, "region");
    unsigned n;
    const uint64_t *region = ri >= 0 ? arr(rec, ri, &n) : NULL;
    uint64_t bytes = si >= 0 ? rec->arg[si] : region && n == 3 ? region[0] * region[1] * region[2] : 0;
    uint64_t flags = fi >= 0 ? rec->arg[fi] : 0;
    f->direction = flags & 1 ? "device_to_host" : "none";     /* CL_MAP_READ */
    f->bytes = flags & 1 ? bytes : 0;
    f->mem_id = clt_dm_id_of(w, rec->arg[1]);
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
}

/* A read, write, copy or fill: its direction, buffer and bytes. */
static void transfer_facts(struct clt_writer *w, const struct clt_rec *rec, struct clt_flow *f, const char *dir)
{
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    f->direction = dir;
    int bi = pidx(fd, "buffer");
    if (bi < 0)
        bi = pidx(fd, "src_buffer");
    if (bi >= 0)
        f->mem_id = clt_dm_id_of(w, rec->arg[bi]);
    mem_in_flight(w->dev, f);
    f->bytes = transfer_bytes(rec);
}

/* Each call as the device model sees it: objects' lives, then enqueues. The
 * queue whose untimed commands are to be drawn now, if any: the app let it go
 * with no timed command of it in flight (refs 0: its slot is freed once they
 * are drawn, or a later queue's would drop them), or CLT_EST_HOLD of them or
 * more wait for a timed one and none is in flight. */
struct clt_queue *clt_dm_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1,
                                 uint32_t seq)
{
    struct clt_devmodel *m = w->dev;
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    unsigned fn = rec->fn;
    int ok = fd->ret == CLT_R_ERR ? (int32_t)rec->ret == 0 : rec->ret != 0;
    struct clt_queue *idle = NULL;
    if (on_queue_call(w, rec, fn, ok, t0, t1, &idle) || on_kernel_call(w, rec, fn, ok) ||
        on_mem_call(w, rec, fn, ok, t1) || !(fd->flags & CLT_F_ENQUEUE))
        return idle;
    uint64_t flow = rec->arg[fd->n_params];
    const char *dir;
    if (ok && (clt_fn_is_host_write(fn) || m->priced))
        on_profiled(w, rec, fn, flow, seq);
    if (flow == CLT_FLOW_SAMPLED_OUT) {
        struct clt_queue *q = sampled_out(w, rec, fn, t0);
        w->est_flow = 0;
        /* held no longer once no timed command of the queue is in flight: those
         * enqueued before them drawn, their lengths (the timed means) known */
        return q && q->in_flight <= 0 && q->n_est - q->est_first >= CLT_EST_HOLD ? q : NULL;
    }
    struct clt_flow *f = enqueue_flow(w, rec, flow, t0, t1);
    if (!f)
        return NULL;
    if (fn == CLT_FN_clEnqueueNDRangeKernel)
        launch_facts(w, rec, f);
    else if (fn == CLT_FN_clEnqueueMapBuffer || fn == CLT_FN_clEnqueueMapImage || fn == CLT_FN_clEnqueueUnmapMemObject)
        map_facts(w, rec, f);
    else if (clt_dm_transfer_dir(fn, &dir))
        transfer_facts(w, rec, f, dir);
    return NULL;
}
