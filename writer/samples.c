/* CPU samples (capture/cpusample.c) as Perfetto's PerfSample packets: each
 * thread's buffer drained in order, the stack symbolized and interned on
 * the writer's own sequence (symbols.c, as the leaks' creation stacks are),
 * so that trace_processor's perf_sample table holds them and the UI draws
 * each thread's samples and a flame graph of any area. */
#include <string.h>
#include "emit.h"
#include "symtab.h"
#include "trace/samples.h"

static uint64_t samples_written, samples_lost_seen;

static void put_sample(struct clt_writer *w, struct clt_sbuf *b, const struct clt_cpu_sample *s)
{
    static struct clt_sym_scratch x;
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    uint32_t stack = clt_sym_stack_sampled(&w->syms, s->stack, s->words);
    clt_sym_add_interned(&w->syms, &w->own_sym, stack, &x, &in);
    Perfetto__Protos__PerfSample ps = PERFETTO__PROTOS__PERF_SAMPLE__INIT;
    ps.has_pid = ps.has_tid = ps.has_cpu_mode = 1;
    ps.pid = (uint32_t)w->pid;
    ps.tid = (uint32_t)b->tid;
    /* the thread's CPU time so far: above the kernel's HZ a signal stands
     * for several periods (its overruns), which the report must weigh */
    b->periods_written += s->weight;
    ps.has_timebase_count = 1;
    ps.timebase_count = b->periods_written * __atomic_load_n(&clt_sample_period_ns, __ATOMIC_RELAXED);
    ps.cpu_mode = PERFETTO__PROTOS__PERF_SAMPLE__CPU_MODE__MODE_USER;
    if (stack) {
        ps.has_callstack_iid = 1;
        ps.callstack_iid = stack;
    }
    Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_timestamp = p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
    p.timestamp = clt_clock_to_ns(&w->clock, s->t);
    p.trusted_packet_sequence_id = CLT_OWN_SEQ;
    p.sequence_flags = 2;       /* SEQ_NEEDS_INCREMENTAL_STATE */
    if (in.n_callstacks)
        p.interned_data = &in;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE;
    p.perf_sample = &ps;
    clt_put_packet(w, &p);
    samples_written++;
}

/* One buffer up to its head; a thread that has ended, once drained, lets
 * its buffer go to the next thread. */
static void drain_one(struct clt_writer *w, struct clt_sbuf *b)
{
    uint32_t state = __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
    if (state != CLT_SBUF_LIVE && state != CLT_SBUF_DEAD)
        return;
    uint64_t head = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE), tail = __atomic_load_n(&b->tail, __ATOMIC_RELAXED);
    while (tail < head) {
        uint64_t off = tail & (CLT_SBUF_BYTES - 1);
        const struct clt_cpu_sample *s = (const struct clt_cpu_sample *)(b->buf + off);
        if (!s->size) {         /* padding to the end */
            tail += CLT_SBUF_BYTES - off;
            continue;
        }
        if (s->size < sizeof *s || s->size > CLT_SBUF_BYTES - off || s->words > (s->size - sizeof *s) / 8)
            break;              /* not a sample: leave the rest (never seen; a guard) */
        put_sample(w, b, s);
        tail += s->size;
    }
    __atomic_store_n(&b->tail, head, __ATOMIC_RELEASE);
    if (state == CLT_SBUF_DEAD)
        __atomic_compare_exchange_n(&b->state, &state, CLT_SBUF_FREE, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

void clt_samples_drain(struct clt_writer *w)
{
    unsigned used = __atomic_load_n(&clt_sbufs_used, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < used; i++) {
        struct clt_sbuf *b = __atomic_load_n(&clt_sbufs[i], __ATOMIC_ACQUIRE);
        if (b)
            drain_one(w, b);
    }
}

/* What the handlers took on the app's threads, sample by sample (ns): on
 * the CPU, and the rest of their wall time (the thread off the CPU inside
 * a handler: preempted, not cltrace's work). */
void clt_samples_handler_ns(const struct clt_writer *w, uint64_t *on_cpu, uint64_t *off_cpu)
{
    uint64_t ticks = 0, cpu = 0;
    unsigned used = __atomic_load_n(&clt_sbufs_used, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < used; i++)
        if (clt_sbufs[i]) {
            ticks += __atomic_load_n(&clt_sbufs[i]->handler_ticks, __ATOMIC_RELAXED);
            cpu += __atomic_load_n(&clt_sbufs[i]->handler_cpu_ns, __ATOMIC_RELAXED);
        }
    uint64_t wall = clt_use_tsc ? (uint64_t)((double)ticks * w->clock.ns_per_tick) : ticks;
    *on_cpu = cpu < wall ? cpu : wall;
    *off_cpu = wall - *on_cpu;
}

/* The trace says how it was sampled and what was lost. */
void clt_samples_attrs(struct clt_attrs *a)
{
    uint64_t period = __atomic_load_n(&clt_sample_period_ns, __ATOMIC_ACQUIRE);
    if (!period)
        return;
    uint64_t lost = 0;
    unsigned used = __atomic_load_n(&clt_sbufs_used, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < used; i++)
        if (clt_sbufs[i])
            lost += __atomic_load_n(&clt_sbufs[i]->lost, __ATOMIC_RELAXED);
    samples_lost_seen = lost;
    clt_attr_int(a, "cltrace.cpu_sample_period_ns", (int64_t)period);
    clt_attr_int(a, "cltrace.cpu_samples", (int64_t)samples_written);
    clt_attr_int(a, "cltrace.cpu_samples_lost", (int64_t)samples_lost_seen);
    unsigned made, read;
    clt_symtab_counts(&made, &read);          /* large modules' symbol tables: made, or read from the cache */
    clt_attr_int(a, "cltrace.symbol_tables_made", made);
    clt_attr_int(a, "cltrace.symbol_tables_cached", read);
}
