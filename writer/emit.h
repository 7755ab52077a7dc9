/* Records -> Perfetto TracePackets (protobuf-c), on the writer thread.
 * The layout is the trace contract in TRACE_FORMAT.md. */
#ifndef CLT_EMIT_H
#define CLT_EMIT_H
#include <pthread.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/clock.h"
#include "common/job.h"
#include "writer.h"
#include "objects.h"
#include "trace/record.h"
#include "symbols.h"
#include "gzstream.h"

/* The packets waiting for the file: 256 KiB, touched once. A first touch of
 * a page costs ~12 us on a 2-core VM here (2026-11-30); at 1 MiB the buffer and
 * gzip's beside it were ~400 of the writer's page faults in a launch loop. */
#define CLT_OUT_CAP (256u << 10)
#define CLT_OWN_SEQ 1u           /* the writer's own sequence: counters, device commands */
#define CLT_OUT_FLUSH (CLT_OUT_CAP - (64u << 10))
/* The largest packet, a stack's interned frames, fits past the window that
 * a flush keeps for gzip (put_packet: "cannot happen") */
_Static_assert(3 * CLT_SYM_MAX_DEPTH * (CLT_SYM_STR_MAX + 16) + CLT_SYM_MAX_DEPTH * 96 + 16 <
                   CLT_OUT_CAP - CLT_GZ_WINDOW, "a stack's interned packet fits CLT_OUT_CAP");

struct clt_writer {
    int fd, io_failed;
    char path[PATH_MAX];
    uint8_t *out;             /* whole packets (CLT_OUT_CAP, + 64 readable): */
    size_t kept, len;         /* [0, kept) written, kept for gzip to match against; [kept, len) not yet */
    uint64_t bytes_written;   /* with gzip: the whole bytes, not the tail after them */
    struct clt_gz *gz;        /* CLTRACE_COMPRESS: the file is gzip as it goes (gzstream.h) */
    uint8_t gz_tail[CLT_GZ_TAIL_MAX];   /* what ends the file now */
    size_t gz_tail_len;
    struct clt_clock clock;
    struct clt_objects objs;
    int pid;
    uint64_t process_uuid, dropped_uuid;
    uint64_t own_group_uuid;  /* "cltrace: own time, drops, leaks": cltrace's rows, together and last */
    uint64_t calls, dropped_emitted, ranges;
    /* MPI (mpi.c): calls recorded; this rank's clock against rank 0's at
     * MPI_Init (0) and MPI_Finalize (1) */
    uint64_t mpi_calls;
    struct { int have; uint64_t at, rtt; int64_t offset; } mpi_clock[2];
    int mpi_rank, mpi_size;
    /* interning tables, global; each sequence keeps which it has sent */
    unsigned *pname;          /* name index of each (fn, param), at pname_off[fn] */
    unsigned pname_off[CLT_FN_COUNT + 1];
    const char **names;
    unsigned n_names, name_result, name_arg_object, name_refcount, name_released, name_device_timed, name_outside,
        name_inside, name_kernel_name, name_called_from;
    unsigned str_off[CLT_DEC_COUNT + 1];   /* string iid space: enum values, then errors */
    unsigned n_strs;
    int16_t err_idx[2048];    /* -code -> index in clt_errors, or -1 */
    struct clt_devmodel *dev; /* devices, queues, kernels, buffers (device.c) */
    struct clt_exit_facts exit;   /* what the exit saw before it stopped the writer (writer.h) */
    struct clt_sched {        /* the scheduler's account when the exit began (selfcost.c) */
        int known;
        uint64_t span_ns, own_cpu_ns, app_cpu_ns, app_wait_ns;
        uint64_t own_runs, app_runs;    /* times on a CPU: each a wake-up, or a turn after a preemption */
        uint64_t own_wakeups;           /* of own_runs, wake-ups (voluntary switches) */
    } sched;
    struct clt_idle {         /* how the machine's idle CPUs wait (ownthreads.c) */
        int hypervisor;       /* 1: a virtual machine (CPUID), 0: not, -1: unknown */
        char driver[32];      /* cpuidle driver ("haltpoll", "intel_idle"...); "" unknown */
        long long halt_poll_ns;   /* the guest's halt-polling window; -1 unknown */
    } idle;
    struct clt_symbols syms;  /* call stacks (symbols.c) */
    struct clt_sym_sent own_sym;   /* stacks interned on the writer's own sequence */
    unsigned leaks;           /* objects the app still held at exit (leaks.c) */
    unsigned leaks_serious;   /* of them definitely lost or growing with the run */
    int leak_track_declared;
    struct clt_job job;       /* rank, size, host of this process (common/job.h) */
    uint64_t start_ns;        /* boottime the writer started: the run's span begins */
    size_t out_cap;           /* flush once out holds this much (smaller with the flight recorder) */
    uint32_t epoch;           /* flight recorder: bumped where its memory may start (sequences restart) */
    int epoch_due;            /* flight recorder: start one at the next record (recorder.c) */
    int rec_dumping;          /* flight recorder: its memory is being written to the file */
    uint64_t raw_bytes;       /* records' bytes drained so far (rings and spill), for the writer's pace */
    uint64_t est_flow;        /* the flow of the untimed launch being drawn now: its enqueue's arrow (estimated.c) */
    uint32_t est_flows;       /* flows the writer made for untimed launches */
};

/* dispatch.c: the writer's entry points */
int clt_emit_init(struct clt_writer *w);      /* the app's first call: memory (-1: none) */
void clt_emit_begin(struct clt_writer *w);    /* the writer's start: its tables, the trace's first packets */
/* Emits a thread's records up to the first one that starts after `until`
 * (at least one); 1 if it emitted any. */
int clt_emit_thread(struct clt_writer *w, struct clt_thread *th, uint64_t until);
uint64_t clt_thread_next_t0(const struct clt_thread *th);   /* UINT64_MAX: none */
void clt_emit_dropped(struct clt_writer *w);
void clt_emit_footer(struct clt_writer *w);
void clt_writer_flush(struct clt_writer *w);   /* writer.c: the buffer to the file */

/* selfcost.c: what cltrace added to the run (TRACE_FORMAT.md) */
struct clt_dev;
struct clt_attrs;
void clt_cost_on_command(struct clt_writer *w, const struct clt_dev *d, uint64_t flow, unsigned fn);
/* a command that ran with profiling on: a write's penalty, or the probe's price where cltrace turned it on */
void clt_cost_on_profiled(struct clt_writer *w, struct clt_dev *d, uint32_t seq, int write, int apps);
void clt_cost_thread_ended(struct clt_writer *w, struct clt_thread *th);
void clt_cost_emit(struct clt_writer *w);
void clt_cost_footer(struct clt_writer *w, struct clt_attrs *a, uint64_t run_ns, uint64_t writer_cpu_ns);
void clt_cost_exit(struct clt_writer *w, struct clt_attrs *a);   /* last: the exit up to now */
void clt_cost_start(void);                         /* what stays: read as the trace starts */
void clt_cost_sched_sample(struct clt_writer *w);   /* into w->sched, as the exit begins */
void clt_run_attrs(struct clt_attrs *a, int gzip);   /* the run's last attributes (runattrs.c) */
/* ownthreads.c: cltrace's own threads, their priority */
void clt_own_threads_forget(void);                    /* a fork child's: none yet */
void clt_own_threads_attrs(struct clt_attrs *a, uint64_t start_ns);
void clt_own_threads_settle(void);                    /* the writer, caught up */
void clt_idle_sample(struct clt_idle *idle);          /* how idle CPUs wait, now */
int clt_idle_halts(const struct clt_idle *idle);      /* a VM whose idle CPUs halt at once */
int clt_stat_field(const char *path, int n, long long *v);   /* field n of a /proc stat line */
int clt_own_thread_join(pthread_t t, const uint64_t *progress, unsigned stall_s, unsigned max_s);  /* -1: stuck */

/* calls.c: API calls, one sequence per recording thread */
struct clt_seq;
struct clt_call {                 /* one call between decode and write */
    uint64_t t0, t1;              /* trace ns */
    uint32_t stack;               /* interned call stack (symbols.c), 0: none */
    unsigned inside;              /* enum clt_inside: made by a library inside that call */
    const uint8_t *src;           /* clCreateProgramWithSource: the program's source */
    const char *kernel_name;      /* clEnqueueNDRangeKernel: the kernel it launches (NULL: not known) */
    uint64_t src_len;
};
int clt_calls_init(struct clt_writer *w);     /* the app's first call: memory (-1: none) */
void clt_calls_name(struct clt_writer *w);    /* the writer's start: the name tables */
struct clt_seq *clt_seq_for(struct clt_writer *w, struct clt_thread *th);   /* NULL: out of memory */
uint64_t clt_seq_track(const struct clt_seq *ss);
uint64_t clt_thread_track(const struct clt_thread *th);   /* 0: its track is not declared yet */
void clt_call_decode(struct clt_writer *w, struct clt_seq *ss, const struct clt_rec *rec, struct clt_call *c);
void clt_call_write(struct clt_writer *w, struct clt_thread *th, struct clt_seq *ss, const struct clt_rec *rec,
                    const struct clt_call *c, int64_t refs);

/* encode.c: the primitives every module uses */
#include "trace/cltrace.pb-c.h"
void clt_read_comm(const char *path, char *buf, size_t cap, const char *fallback);
void clt_sequence_start(struct clt_writer *w, uint32_t seq, int first, uint64_t track);
void clt_put_interned(struct clt_writer *w, uint32_t seq, Perfetto__Protos__InternedData *in);   /* alone, before its use */
/* Names interned on the writer's own sequence: the iid (sent first where
 * this start of the sequence has not had it), 0 where it must stay inline. */
enum clt_own_kind { CLT_OWN_ARG, CLT_OWN_EVENT, CLT_OWN_CATEGORY, CLT_OWN_STRING };
uint64_t clt_own_iid(struct clt_writer *w, enum clt_own_kind kind, const char *s);
/* Which start of the writer's sequence this is: what was packed with iids
 * under another must be packed again (the names are sent again then). */
uint32_t clt_own_gen(void);
/* Arguments' inline names turned into interned ones, and their short
 * string values (a device command's: its type, direction). */
void clt_own_intern_args(struct clt_writer *w, Perfetto__Protos__DebugAnnotation **ap, unsigned na);
void clt_put_packet(struct clt_writer *w, Perfetto__Protos__TracePacket *p);
void clt_put_track(struct clt_writer *w, Perfetto__Protos__TrackDescriptor *t);
void clt_put_own_event(struct clt_writer *w, uint64_t ts, Perfetto__Protos__TrackEvent *e);
/* A slice of the writer's own, begin and end, with its arguments; a category (NULL: none), the flow
 * its begin ends (NULL: none). _with: its name, category and shared arguments packed once before
 * (writer/ownpack.h); -1: not written. */
struct fp_ann;               /* trace/fastpack.h */
int clt_put_own_slice_with(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const uint8_t *fields,
                           size_t n_fields, const struct fp_ann *ann, unsigned n_ann, const uint64_t *ends_flow);
/* The same with its name and its arguments' names interned, packed by hand
 * where they are of the kinds fastpack packs: -1 where not (nothing put). */
int clt_put_own_slice_fast(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const char *name,
                           Perfetto__Protos__DebugAnnotation **ap, unsigned na, const uint64_t *ends_flow);
void clt_put_own_slice(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const char *name,
                       const char *category, Perfetto__Protos__DebugAnnotation **ap, unsigned na,
                       const uint64_t *ends_flow);

/* Trace attributes, written as one packet. */
#define CLT_MAX_ATTRS 320
struct clt_attrs {
    Perfetto__Protos__TraceAttributes__Attribute attr[CLT_MAX_ATTRS], *ptr[CLT_MAX_ATTRS];
    char key[CLT_MAX_ATTRS][64];
    unsigned n;
};
void clt_attr_int(struct clt_attrs *a, const char *key, int64_t v);
void clt_attr_str(struct clt_attrs *a, const char *key, const char *v);   /* v must outlive the put */
void clt_attrs_put(struct clt_writer *w, struct clt_attrs *a);
/* The process's command line, shell-quoted where it must be (0: not readable): cltrace.cmdline. */
int clt_command_line(char *out, size_t cap);
void clt_counter_track(struct clt_writer *w, uint64_t id, uint64_t parent, const char *name, int bytes);

/* Arguments with inline names, for the writer's own events: the next of an
 * array a[] (pointers in ap[], count in *n). The A_* macros use locals named
 * a, ap and na. */
Perfetto__Protos__DebugAnnotation *clt_ann_new(Perfetto__Protos__DebugAnnotation *a,
                                               Perfetto__Protos__DebugAnnotation **ap, unsigned *n, const char *name);
/* An array of unsigned values (its elements taken from elems/ep at *ne, which advances). */
Perfetto__Protos__DebugAnnotation *clt_ann_uints(Perfetto__Protos__DebugAnnotation *a,
                                                 Perfetto__Protos__DebugAnnotation **ap, unsigned *n, const char *name,
                                                 Perfetto__Protos__DebugAnnotation *elems,
                                                 Perfetto__Protos__DebugAnnotation **ep, unsigned *ne,
                                                 const uint64_t *v, unsigned count);
#define CLT_ANN_SET(name, field, kind, v) do { Perfetto__Protos__DebugAnnotation *x_ = clt_ann_new(a, ap, &na, name); \
    x_->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_##kind##_VALUE; x_->field = (v); } while (0)
#define A_UINT(name, v) CLT_ANN_SET(name, uint_value, UINT, v)
#define A_INT(name, v) CLT_ANN_SET(name, int_value, INT, v)
#define A_DBL(name, v) CLT_ANN_SET(name, double_value, DOUBLE, v)
#define A_STR(name, v) CLT_ANN_SET(name, string_value, STRING, (char *)(v))
#define A_BOOL(name, v) CLT_ANN_SET(name, bool_value, BOOL, v)
/* An instant on `track` (writer's sequence), with a call stack when non-zero. */
void clt_put_instant(struct clt_writer *w, uint64_t track, uint64_t ts, const char *name,
                     Perfetto__Protos__DebugAnnotation **ap, unsigned na, uint32_t callstack_iid);
/* n bytes of app text as printable ASCII (bad bytes -> `bad`; newlines and
 * tabs kept when `lines`), NUL-terminated: valid UTF-8 for the trace. */
char *clt_text(char *dst, const uint8_t *src, size_t n, int lines, char bad);
/* 1: s is UTF-8 text, no control character (a name read from memory that may be freed) */
int clt_utf8_text(const char *s);
void clt_counter(struct clt_writer *w, uint64_t track, uint64_t ts, int64_t value);

/* recorder.c: the flight recorder (CLTRACE_RING_MB) */
int clt_rec_on(void);
void clt_rec_init(double mb);
int clt_rec_take(const uint8_t *buf, size_t n);   /* 1: an epoch is due (dispatch.c starts it at a record's start) */
void clt_rec_epoch_next(void);                    /* the next blob starts an epoch */
void clt_rec_keep(const uint8_t *pkt, size_t n, uint64_t track_uuid);   /* kept apart, written first */
void clt_rec_dump(struct clt_writer *w, void (*put)(struct clt_writer *, const uint8_t *, size_t));
uint64_t clt_rec_dropped(void);
size_t clt_rec_flush_at(void);        /* flush at this many bytes (CLT_OUT_FLUSH without the recorder) */
uint64_t clt_rec_held(void);
void clt_rec_forget(void);

/* samples.c: the program's threads' CPU samples (capture/cpusample.c) */
void clt_samples_drain(struct clt_writer *w);
void clt_samples_attrs(struct clt_attrs *a);
void clt_samples_handler_ns(const struct clt_writer *w, uint64_t *on_cpu, uint64_t *off_cpu);   /* on the app's threads */

/* windows.c: the windows the trace holds (capture/window.c) */
void clt_window_emit(struct clt_writer *w, const struct clt_rec *rec);
void clt_windows_close(struct clt_writer *w, uint64_t ts, struct clt_attrs *a);   /* at the end */
void clt_windows_attr(struct clt_attrs *a, uint64_t now);   /* a snapshot's: an open window ends at now */
int clt_windows_seen(void);
uint64_t clt_windows_closed_between(uint64_t after, uint64_t until);   /* a window's end in (after, until]; 0: none */
void clt_windows_forget(void);

/* estimated.c: untimed launches and transfers as estimated slices on their queue (device_model.h's types) */
struct clt_flow;
struct clt_queue;
void clt_est_timed(const struct clt_flow *f, uint64_t dur);   /* a timed command: its key's mean */
/* the queue's untimed commands enqueued before host ns `before`, in the gap up to `until` (UINT64_MAX: none) */
void clt_est_draw(struct clt_writer *w, struct clt_queue *q, uint64_t before, uint64_t until, int waited);
void clt_est_draw_held(struct clt_writer *w, struct clt_queue *q);
void clt_est_final(struct clt_writer *w);                   /* the rest, after each queue's last slice */
void clt_est_attrs(struct clt_attrs *a);
uint64_t clt_est_draw_ns(void);                              /* the time spent drawing them so far */
void clt_est_forget(void);

/* overrides.c: program hashes and what an override did (override/), as
 * instants on the calling thread's track; their attributes at the end */
void clt_override_emit(struct clt_writer *w, uint64_t thread_track, const struct clt_rec *rec);
void clt_overrides_attrs(struct clt_writer *w);
void clt_overrides_forget(void);

/* marks.c: the program's ranges, marks and counters (cltrace.h) */
void clt_annot_emit(struct clt_writer *w, uint64_t thread_track, const struct clt_rec *rec);
/* mpi.c: an MPI call as a slice on its thread's track; a clock record kept
 * for the footer; the footer's MPI attributes */
void clt_mpi_emit(struct clt_writer *w, uint64_t thread_track, const struct clt_rec *rec);
void clt_mpi_clock(struct clt_writer *w, const struct clt_rec *rec);
struct clt_attrs;
void clt_mpi_attrs(const struct clt_writer *w, struct clt_attrs *a);
void clt_annot_close(struct clt_writer *w, uint64_t ts);   /* end ranges left open */

/* device.c */
int clt_dev_init(struct clt_writer *w);
/* held.c: a call's part in the device model; the device's records (completions drawn or held) */
void clt_dev_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1, uint32_t seq);
void clt_dev_on_record(struct clt_writer *w, const struct clt_rec *rec);
void clt_dev_flush_pending(struct clt_writer *w, int final);
/* device_commands.c: the rest of the device's records */
void clt_dev_on_special(struct clt_writer *w, const struct clt_rec *rec);
/* probe.c: the device's `cltrace probe` results, if any, as trace attributes */
/* The device's probe results into the trace; what a profiling queue adds
 * to a command there (ns; 0: not probed). */
uint64_t clt_probe_put(struct clt_writer *w, unsigned index, const char *device_name);
void clt_dev_footer(struct clt_writer *w, uint64_t unfinished);

#endif
