/* The writer's dispatcher: each record of a thread's ring, in order, to
 * the module that owns its kind -- API calls (calls.c, with the object model
 * of lifetime.c and the device model of device.c seeing each call),
 * device facts and completions (device.c), the program's marks
 * (marks.c). Modules use the encoding primitives (encode.c) and
 * never call back here. Also the trace's header and footer. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "device_model.h"
#include "emit.h"
#include "lifetime.h"
#include "grow.h"
#include "spill.h"
#include "common/config.h"
#include "trace/ring.h"
#include "trace/tables.h"

#define CLT_VERSION "0.1.0"
typedef Perfetto__Protos__TrackDescriptor Track;

/* Between two records, for the flight recorder: what is pending goes to the
 * epoch it belongs to; the next packets start a new one, every sequence
 * declared again (calls.c compares epochs), the writer's own at once. */
static void start_epoch(struct clt_writer *w)
{
    w->epoch_due = 0;
    clt_rec_take(w->out + w->kept, w->len - w->kept);
    w->len = w->kept;
    clt_rec_epoch_next();
    w->epoch++;
    clt_sym_sent_reset(&w->own_sym);
    clt_sequence_start(w, CLT_OWN_SEQ, 0, w->dropped_uuid);
}

/* A call's stack: the last one's id where its words are the same (a loop
 * calls from one place: hashing its frames again was ~550 instructions a
 * call, a tenth of the writer's work behind a launch loop). C frames only:
 * a Python frame's word names a code object that may be another by now. */
static uint32_t call_stack(struct clt_symbols *s, const uint64_t *pcs, unsigned n)
{
    if (n && n == s->last_n && !memcmp(pcs, s->last_pcs, n * sizeof *pcs))
        return s->last_stack;
    uint32_t st = clt_sym_stack(s, pcs, n);
    int plain = n && n <= sizeof s->last_pcs / sizeof s->last_pcs[0];
    for (unsigned i = 0; plain && i < n; i++)
        plain = !(pcs[i] & CLT_PY_TAG);
    s->last_n = plain && st ? n : 0;
    if (s->last_n) {
        memcpy(s->last_pcs, pcs, n * sizeof *pcs);
        s->last_stack = st;
    }
    return st;
}

/* An API call: its times and stack, then calls, objects, device in turn. */
static void dispatch_call(struct clt_writer *w, struct clt_thread *th, struct clt_seq *ss, const struct clt_rec *rec)
{
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    struct clt_call c = { 0 };
    c.t0 = clt_clock_to_ns(&w->clock, rec->t0);
    c.t1 = clt_clock_to_ns(&w->clock, rec->t1);
    if (c.t1 < c.t0)
        c.t1 = c.t0;
    unsigned n_pcs;
    const uint64_t *pcs = clt_rec_stack(rec, &n_pcs);
    c.stack = pcs ? call_stack(&w->syms, pcs, n_pcs) : 0;
    c.inside = clt_rec_inside(rec);
    if (!c.stack && (fd->flags & CLT_F_ENQUEUE) && rec->arg[fd->n_params + 1])   /* the call site alone */
        c.stack = call_stack(&w->syms, &rec->arg[fd->n_params + 1], 1);
    if (rec->fn == CLT_FN_clEnqueueNDRangeKernel) {    /* the call says which kernel it launched */
        const struct clt_kern *k = clt_dm_kern_get(w, clt_dm_id_of(w, rec->arg[1]), 0);
        c.kernel_name = k && k->name[0] ? k->name : NULL;
    }
    clt_call_decode(w, ss, rec, &c);
    int64_t refs = clt_life_on_call(w, rec, c.t0, c.t1, th->tid, c.stack);
    clt_call_write(w, th, ss, rec, &c, refs);
    clt_dev_on_call(w, rec, c.t0, c.t1, th->seq);
}

int clt_emit_init(struct clt_writer *w)
{
    if (clt_calls_init(w) != 0)
        return -1;
    w->pid = (int)getpid();
    w->process_uuid = (uint64_t)w->pid << 32;
    w->dropped_uuid = w->process_uuid | 0x80000001u;
    w->own_group_uuid = w->process_uuid | 0x80000000u;
    clt_sym_init(&w->syms);
    return clt_dev_init(w);
}

static void emit_header(struct clt_writer *w);

/* What needs no memory of its own is made on the writer's thread, before
 * its first record: on the app's first call it was ~0.1 ms of tables
 * (PoCL, 2 cores) */
void clt_emit_begin(struct clt_writer *w)
{
    clt_calls_name(w);
    clt_life_init(clt_leaks_context_released);
    emit_header(w);
}

static void emit_header(struct clt_writer *w)
{
    char name[64];
    clt_read_comm("/proc/self/comm", name, sizeof name, "app");
    Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    pd.has_pid = 1;
    pd.pid = w->pid;
    pd.process_name = name;
    Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = 1;
    t.uuid = w->process_uuid;
    t.process = &pd;
    clt_put_track(w, &t);
    /* cltrace's own rows in one group: the UI orders a process's tracks by
     * name and shows a group folded, so the program's rows come first */
    Track g = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    g.has_uuid = g.has_parent_uuid = 1;
    g.uuid = w->own_group_uuid;
    g.parent_uuid = w->process_uuid;
    g.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    g.name = "cltrace: own time, drops, leaks";
    clt_put_track(w, &g);
    clt_counter_track(w, w->dropped_uuid, w->own_group_uuid, "cltrace dropped calls", 0);
    clt_sequence_start(w, CLT_OWN_SEQ, 1, w->dropped_uuid);
    clt_counter(w, w->dropped_uuid, clt_boottime_ns(), 0);     /* dropped calls start at 0 */
}

void clt_emit_dropped(struct clt_writer *w)
{
    uint64_t total = 0;
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next)
        total += __atomic_load_n(&th->dropped_pub, __ATOMIC_ACQUIRE);
    if (total == w->dropped_emitted)
        return;
    w->dropped_emitted = total;
    clt_counter(w, w->dropped_uuid, clt_boottime_ns(), (int64_t)total);
}

void clt_emit_footer(struct clt_writer *w)
{
    static struct clt_attrs a;
    a.n = 0;
    uint64_t end = clt_clock_to_ns(&w->clock, clt_now());
    clt_annot_close(w, end);
    clt_windows_close(w, end, &a);
    clt_attr_str(&a, "cltrace.version", CLT_VERSION);
    clt_attr_int(&a, "cltrace.calls", (int64_t)w->calls);
    clt_attr_int(&a, "cltrace.dropped_calls", (int64_t)w->dropped_emitted);
    clt_attr_str(&a, "cltrace.clock", clt_use_tsc ? CLT_COUNTER_NAME : "boottime");
    clt_attr_int(&a, "cltrace.objects", (int64_t)w->objs.next_id);
    clt_attr_int(&a, "cltrace.leaks", (int64_t)w->leaks);
    clt_attr_int(&a, "cltrace.ranges", (int64_t)w->ranges);
    clt_attr_str(&a, "cltrace.host", w->job.host);
    if (w->job.rank >= 0) {             /* a rank of a job (MPI, Slurm) */
        clt_attr_int(&a, "cltrace.rank", w->job.rank);
        clt_attr_int(&a, "cltrace.job_size", w->job.size);
        clt_attr_str(&a, "cltrace.job_id", w->job.id);
    }
    clt_attr_str(&a, "cltrace.stacks", clt_stacks_recorded ? clt_sym_source(&w->syms) : "none");
    clt_attr_int(&a, "cltrace.symbol_map_reads", w->syms.dwfl_reports);
    clt_samples_attrs(&a);
    clt_mpi_attrs(w, &a);
    clt_attrs_put(w, &a);
}


uint64_t clt_thread_next_t0(const struct clt_thread *th)
{
    uint64_t t0;
    if (clt_spill_next_t0(th, &t0))     /* its spilled records come first */
        return t0;
    uint64_t head = __atomic_load_n(&th->head, __ATOMIC_ACQUIRE);
    return clt_span_first_t0(th->rbuf, th->rmask, __atomic_load_n(&th->tail, __ATOMIC_RELAXED), head);
}

/* One record: a call, a mark, an MPI call, an override or a device fact.
 * *ss: the thread's track, made with the first record that needs it. */
static void emit_record(struct clt_writer *w, struct clt_thread *th, struct clt_seq **ss, const struct clt_rec *rec)
{
    if (rec->fn == CLT_REC_WINDOW) {
        clt_window_emit(w, rec);
        return;
    }
    if (rec->fn == CLT_REC_MPI_CLOCK) {
        clt_mpi_clock(w, rec);
        return;
    }
    int on_thread = (rec->fn >= CLT_REC_RANGE_PUSH && rec->fn <= CLT_REC_COUNTER) || rec->fn == CLT_REC_MPI ||
                    rec->fn == CLT_REC_OVERRIDE || rec->fn < CLT_REC_COMMAND;
    if (!on_thread) {
        clt_dev_on_record(w, rec);
        return;
    }
    if (!*ss)
        *ss = clt_seq_for(w, th);
    if (!*ss)
        return;
    if (rec->fn >= CLT_REC_RANGE_PUSH && rec->fn <= CLT_REC_COUNTER)
        clt_annot_emit(w, clt_seq_track(*ss), rec);
    else if (rec->fn == CLT_REC_MPI)
        clt_mpi_emit(w, clt_seq_track(*ss), rec);
    else if (rec->fn == CLT_REC_OVERRIDE)
        clt_override_emit(w, clt_seq_track(*ss), rec);
    else
        dispatch_call(w, th, *ss, rec);
}

/* Records a call emits at most: then the writer looks at every ring again
 * (one may need spilling: spill.c) */
#define EMIT_BATCH 512

int clt_emit_thread(struct clt_writer *w, struct clt_thread *th, uint64_t until)
{
    struct clt_span s;
    int spilled = clt_spill_span(th, &s);
    if (spilled < 0)
        return 0;
    if (!spilled) {   /* the ring, as the writer reads it (its own line, apart from the calling thread's) */
        uint64_t head = __atomic_load_n(&th->head, __ATOMIC_ACQUIRE);
        s = (struct clt_span){ th->rbuf, th->rmask, __atomic_load_n(&th->tail, __ATOMIC_RELAXED), head };
    }
    if (s.tail == s.head)
        return 0;
    int first = 1;
    struct clt_seq *ss = NULL;      /* a thread's track appears with its first API call */
    const uint8_t *buf = s.buf;
    uint64_t mask = s.mask, size = mask + 1, tail = s.tail, head = s.head, freed = tail;
    for (unsigned n = 0; tail != head && n < EMIT_BATCH; n++) {
        uint64_t off = tail & mask;
        const struct clt_rec *rec = (const struct clt_rec *)(buf + off);
        /* the records ahead were written on another core: fetch them while
         * this one is encoded (a demand miss there is ~100 ns on a mesh) */
        __builtin_prefetch(buf + ((off + 1024) & mask));
        if (rec->fn == CLT_FN_PAD) {
            tail += size - off;
            continue;
        }
        if (rec->fn == CLT_FN_GROW && !spilled) {     /* the thread went on in a larger ring */
            __atomic_fetch_add(&w->raw_bytes, tail - s.tail, __ATOMIC_RELAXED);
            clt_grow_adopt(th, tail);
            return 1;
        }
        if (rec->t0 > until && !first)
            break;      /* another thread has older records: those first */
        if (CLT_UNLIKELY(w->epoch_due)) {     /* the flight recorder's memory may start here */
            start_epoch(w);
            if (ss)
                ss = clt_seq_for(w, th);
        }
        first = 0;
        if ((rec->fn >= CLT_FN_COUNT && rec->fn < CLT_REC_COMMAND) || rec->size < sizeof *rec ||
            rec->size > size - off) {
            tail = head;      /* cannot happen; never read garbage */
            break;
        }
        emit_record(w, th, &ss, rec);
        tail += rec->size;
        if (!spilled && tail - freed > size / 8) {   /* give room back early */
            __atomic_store_n(&th->tail, tail, __ATOMIC_SEQ_CST);
            /* a producer waiting for room is woken once half the ring is
             * free, not at every eighth: a wake-up is a futex call (a few
             * us on a VM), and it fills half a ring in one go */
            if (head - tail <= size / 2)
                clt_ring_wake(th);
            freed = tail;
        }
    }
    __atomic_fetch_add(&w->raw_bytes, tail - s.tail, __ATOMIC_RELAXED);   /* the writer's pace; the exit watches it (writer.c) */
    if (spilled) {
        clt_spill_consumed(th, tail);
        return 1;
    }
    __atomic_store_n(&th->tail, tail, __ATOMIC_SEQ_CST);
    if (tail == head || head - tail <= size / 2)
        clt_ring_wake(th);
    return 1;
}

