/* The writer's model of devices, queues, kernels, buffers and contexts, and
 * the device timeline it draws from them (device.c). */
#ifndef CLT_DEVICE_MODEL_H
#define CLT_DEVICE_MODEL_H
#include <stdint.h>
#include <string.h>
#include "trace/record.h"
#include "objects.h"

#define CLT_CLOCK_BOUNDS 32            /* lower and upper bounds kept, each */
#define CLT_RESIDUAL_BUCKETS 256       /* of 100 ns: residuals up to 25.6 us told apart */
#define CLT_START_BUCKETS 128          /* of 500 ns: idle starts up to 64 us told apart */
#define CLT_CLOCK_DRIFT_PPM 25         /* device clocks drift up to this against the host's (NVIDIA: 17-22) */
#define CLT_MAX_LANES 8
#define CLT_MAX_KARGS 32
#define CLT_LANE_HISTORY 32
#define CLT_FLOW_ARGS 16       /* kernel argument values kept per launch */

#define CLT_CLOCK_BIN_NS 4000000ull    /* the evidence history: the tightest of each 4 ms */
#define CLT_CLOCK_BINS 512             /* ~2 s of it */
#define CLT_CLOCK_REACH 128            /* bins each side a chord may span (512 ms) */

struct clt_clock_bounds { int64_t v[CLT_CLOCK_BOUNDS]; uint64_t t[CLT_CLOCK_BOUNDS]; unsigned n; };
struct clt_clock_point { uint64_t t; int64_t v; };          /* t 0: none */
struct clt_clock_hist {
    uint64_t bin[CLT_CLOCK_BINS];                           /* bin number + 1 held in the slot */
    struct clt_clock_point p[CLT_CLOCK_BINS][2];            /* its tightest lower, upper bound */
    uint64_t lowest, highest;                               /* the bins put so far, + 1 (0: none) */
    struct {                                                /* the last hull made, lower and upper */
        uint64_t bin;                                       /* the bin it was made for + 1 */
        unsigned n, valid;                                  /* valid: no evidence since changed it */
        struct clt_clock_point p[2 * CLT_CLOCK_REACH + 1];
    } hull[2];
};
struct clt_dev {
    uint64_t handle, id;
    unsigned index;
    uint64_t info[DEV_N];
    char name[CLT_MAX_STR + 1], vendor[CLT_MAX_STR + 1];
    int described, declared;
    uint64_t uuid;
    unsigned queues_made;         /* the app's queues on it so far: each queue's number is its order */
    int64_t mem_bytes;            /* live buffers of every context on it (memory.c) */
    uint64_t mem_uuid;            /* its memory counter, once declared */
    /* device ns -> host ns (device.c, "the clock"): the tightest bounds of
     * the offset host - device, each with the host time it held at */
    struct clt_clock_bounds lower, upper;
    struct clt_clock_hist *hist;  /* the evidence by time, for chords (device.c) */
    uint64_t samples, uppers, contradictions, chorded;
    int has_offset;
    int timer_ok;                 /* clGetDeviceAndHostTimer worked */
    unsigned markers;             /* clock samples from markers (calibration, then every 10 ms) */
    unsigned host_reads;          /* from reads of the host clock that is the device's (CLT_CLK_HOST_RAW) */
    int64_t offset, residual, max_residual;
    int64_t floor;                /* the narrowest interval the evidence left at any moment (0: none yet) */
    uint64_t max_residual_at;     /* the start (host ns) of the command placed least surely */
    uint32_t residual_hist[CLT_RESIDUAL_BUCKETS];   /* commands per 100 ns of residual (the last: more) */
    uint64_t commands, clamped;
    /* cltrace's own cost: what an event costs the enqueuing thread (markers
     * with and without one, capture/hooks.c), the events cltrace added */
    uint64_t marker_ns, marker_event_ns, event_cost_ns, own_events, sampled_out;
    uint64_t write_penalty_ns, writes; /* a host-to-device write on a profiling queue, over a plain one's; writes */
    /* what a profiling queue adds to any command (`cltrace probe`; 0: not
     * probed), the commands that paid it because cltrace turned profiling on */
    uint64_t profiling_price_ns, profiled;
    uint64_t write_event_ns;           /* what an event adds to a host-to-device write (event_cost_ns: to a fill) */
    int write_event_known;
    /* Commands that found their queue idle (the one before it was over
     * when it was submitted): how long the device took to start each,
     * START - SUBMIT. On a CPU device that is its thread waking up:
     * device_commands.c, idle_starts. Per 500 ns (the last: more), their
     * count and their sum. */
    uint64_t idle_starts, idle_start_ns;
    uint32_t idle_start_n[CLT_START_BUCKETS];
    uint64_t idle_start_sum[CLT_START_BUCKETS];
};

struct clt_queue {
    uint64_t handle, id;
    unsigned index;
    unsigned order, props;        /* its number on its device (1: the first the app made), CL_QUEUE_* asked */
    struct clt_dev *dev;
    uint64_t lane_uuid[CLT_MAX_LANES];
    uint64_t lane_iv[CLT_MAX_LANES][CLT_LANE_HISTORY][2];   /* recent [start, end] per lane */
    unsigned lane_next[CLT_MAX_LANES], n_lanes;
    uint64_t lane_end[CLT_MAX_LANES];     /* the latest end ever drawn on each: past it, free */
    int64_t in_flight;
    unsigned held;                /* its commands the writer holds (device_commands.c): later ones wait */
    int64_t refs;                 /* the app's references; 0: slot free once idle */
    uint64_t last_flow;           /* the latest enqueue on it */
    uint64_t sync_flow, sync_t;   /* a sync saw this flow's command over by sync_t (host ns) */
    uint64_t drawn_flow, drawn_end;   /* the latest command drawn, its END (device ns) */
    uint64_t counter_uuid;
    /* launches CLTRACE_SAMPLE left untimed, in enqueue order, until the
     * next timed command on the queue is drawn (estimated.c draws them
     * before it); the end (host ns) of the last slice drawn on the queue.
     * est[est_first..n_est) wait: those drawn leave from the front without
     * moving the rest (a move of the rest at each timed command was
     * quadratic: 1 launch in 14 timed of 20,000, 1.5e9 instructions) */
    struct clt_est *est;
    unsigned est_first, n_est, cap_est;
    uint64_t est_end;
    /* a clFinish began then (host ns; 0 none): the untimed commands
     * enqueued before it are over, drawn once no timed one is in flight */
    uint64_t est_over_before;
    uint64_t last_timed_ns;       /* the latest timed command's duration: sizes a launch nothing else can */
};
/* An untimed command: its enqueue (host ns), its shape's key (a launch's
 * clt_dm_launch_key, a transfer's clt_dm_transfer_key), its enqueue's arrow
 * (the writer's own id; 0 none). 24 bytes: a launch loop holds ~19,500. */
struct clt_est {
    uint64_t h0, key, flow;
};
/* What the untimed commands of one key share, kept once by key
 * (clt_est_shape): a launch's kernel and configuration as given, a
 * transfer's command, direction and bytes (kernel_id 0) */
struct clt_est_shape {
    uint64_t kernel_id;
    uint32_t work_dim, lws_null;
    uint64_t gws[3], lws[3];
    unsigned fn;
    const char *dir;
    uint64_t bytes;
};

struct clt_kernel_wg { uint64_t dev; uint64_t wg_size, pref_multiple, local_mem, private_mem; };
struct clt_kern {
    uint64_t id, program;
    char name[CLT_MAX_STR + 1];
    int regs;                     /* -1: unknown; CLT_KERN_REGS_COMING: being compiled */
    int64_t refs;                 /* the app's references */
    int64_t inflight;             /* launches not yet drawn; facts freed when both are 0 */
    struct clt_kernel_wg wg[4];
    unsigned n_wg;
    uint64_t arg_local[CLT_MAX_KARGS];   /* __local argument sizes (value NULL) */
    uint64_t arg_value[CLT_MAX_KARGS];
    uint64_t arg_object[CLT_MAX_KARGS];
    uint64_t arg_set;                    /* bit i: argument i was set */
};

struct clt_mem { uint64_t id, size, flags, ctx; int64_t refs, inflight; };
#define CLT_CTX_DEVS 8
#define CLT_DM_CONTEXTS 64
struct clt_ctx {
    uint64_t id;
    unsigned index;
    int64_t bytes;                /* of its live buffers */
    uint64_t uuid;
    int declared;
    struct clt_dev *devs[CLT_CTX_DEVS];   /* its devices, as made (memory.c) */
    unsigned n_devs;
};

/* What the writer learnt of an enqueue call, waiting for its command. */
struct clt_flow {
    uint64_t flow, h0, h1;
    uint16_t fn;
    uint64_t queue_handle, queue_id, kernel_id, mem_id, bytes;
    const char *direction;
    uint32_t work_dim, lws_null;
    uint64_t gws[3], lws[3], gwo[3];
    uint64_t local_arg_bytes;
    uint64_t args[CLT_FLOW_ARGS];
    uint64_t arg_bytes[CLT_FLOW_ARGS]; /* args[i] a buffer's id: its size at the launch (0: not a buffer) */
    uint32_t n_args;
};

/* Launches CLTRACE_SAMPLE left untimed, by kernel and launch configuration. */
#define CLT_MAX_UNTIMED 256
struct clt_untimed {
    uint32_t work_dim, lws_null;
    uint64_t gws[3], lws[3], count;
    uint64_t kern;              /* the kernel object of its latest launch: the name need not be compared */
    char name[CLT_MAX_STR + 1];
};

/* Transfers CLTRACE_SAMPLE left untimed, by direction and size. */
struct clt_untimed_xfer { const char *dir; uint64_t bytes, count; };

struct clt_mapping { uint64_t bytes, flags; };   /* a clEnqueueMap* result, until its unmap */

struct clt_regs { uint64_t program; unsigned regs; char name[CLT_MAX_STR + 1]; };

struct clt_devmodel {
    struct clt_dev devs[16];
    unsigned n_devs;
#define CLT_DM_QUEUES 1024
    /* live queues, and released ones until their commands are drawn (the
     * collector may hold completions back while the app enqueues: a
     * program that makes and releases a queue per frame can leave
     * hundreds); slots reused; calloc'd: a slot costs memory once used */
    struct clt_queue queues[CLT_DM_QUEUES];
    unsigned n_queues, queue_serial;
    struct clt_ctx ctxs[CLT_DM_CONTEXTS];
    unsigned n_ctxs;
    struct clt_map kernels, mems, queue_dev;    /* by object id */
    struct clt_map queue_info;                  /* queue id -> its order << 8 | properties | 0x80 */
    struct clt_kern *last_kern;                 /* the kernel of the latest lookup: a loop sets its args */
    struct clt_map mappings;                    /* by mapped pointer */
    struct clt_map queue_modes;                 /* queue handle -> CLT_QUEUE_* (trace/record.h), but profiled */
    uint64_t queues_switched, queues_by_callbacks;
    int priced;                                 /* some device has a profiling price (probe) */
    struct clt_map flow_map;                    /* flow id -> struct clt_flow, until drawn */
    struct clt_map fps;                         /* flow id -> its fingerprints, until drawn (fingerprints.c) */
    uint64_t fingerprinted;                     /* commands drawn with fingerprints */
    struct clt_rec **pending;                   /* commands whose enqueue is not seen yet */
    unsigned n_pending;
    struct clt_regs *regs;
    unsigned n_regs, cap_regs;
    uint64_t commands, unmatched, untimed;
    struct clt_untimed untimed_launches[CLT_MAX_UNTIMED];
    unsigned n_untimed, untimed_last;   /* untimed_last: the entry the latest launch counted in */
    uint64_t untimed_other;
    struct clt_untimed_xfer untimed_xfers[CLT_MAX_UNTIMED];
    unsigned n_untimed_xfers;
    uint64_t untimed_xfers_other;
};

/* device.c: the model, shared with device_commands.c */
struct clt_writer;
#define CLT_DM_MAX_PENDING 4096
void clt_dm_copy_str(char *dst, const struct clt_rec *rec, int i);
uint64_t clt_dm_id_of(struct clt_writer *w, uint64_t handle);
struct clt_dev *clt_dm_dev_get(struct clt_writer *w, uint64_t handle);
struct clt_queue *clt_dm_queue_find(struct clt_writer *w, uint64_t id);
void clt_dm_dev_declare(struct clt_writer *w, struct clt_dev *d);     /* its group track, once */
/* memory.c: device memory over time, per context and per device */
void clt_mem_context(struct clt_writer *w, uint64_t ctx_id, struct clt_dev *const *devs, unsigned n);
void clt_mem_queue(struct clt_writer *w, uint64_t ctx_id, struct clt_dev *d, uint64_t ts);
void clt_mem_change(struct clt_writer *w, uint64_t ctx_id, int64_t delta, uint64_t ts);
unsigned clt_mem_devices(struct clt_writer *w, uint64_t ctx_id, struct clt_dev **out, unsigned cap);
uint64_t clt_dm_queue_lane(struct clt_writer *w, struct clt_queue *q, uint64_t start, uint64_t end);
void clt_dm_clock_sample(struct clt_dev *d, uint64_t h_lo, uint64_t h_hi, uint64_t dev_ns);
void clt_dm_clock_at(struct clt_dev *d, uint64_t t);    /* offset and residual at host time t */
void clt_dm_clock_upper(struct clt_dev *d, uint64_t h, uint64_t dev_ns);   /* dev was over by host time h */
void clt_dm_sync(struct clt_writer *w, struct clt_queue *q, uint64_t flow, uint64_t h);
struct clt_kern *clt_dm_kern_get(struct clt_writer *w, uint64_t id, int create);
#define CLT_KERN_REGS_COMING (-2)
int clt_dm_kern_regs(const struct clt_devmodel *m, const struct clt_kern *k);
/* kernels.c: CLT_REC_KERNEL; CLT_REC_KREGS (1: every count of its program in) */
void clt_dm_kernel_record(struct clt_writer *w, const struct clt_rec *rec);
int clt_dm_kregs_record(struct clt_writer *w, const struct clt_rec *rec);
void clt_dm_kern_del(struct clt_devmodel *m, uint64_t id);   /* its facts go */
/* A launch of k was drawn (or given up): its facts go once the app released it and none is left in flight. */
void clt_dm_kern_drawn(struct clt_devmodel *m, struct clt_kern *k);
struct clt_flow *clt_dm_flow_slot(struct clt_devmodel *m, uint64_t flow, int create);
void clt_dm_flow_done(struct clt_devmodel *m, struct clt_flow *f);   /* its command was drawn */
/* device_commands.c: a completion drawn, the budget's price counted (held.c draws through it) */
void clt_dev_emit_timed(struct clt_writer *w, const struct clt_rec *rec, const struct clt_flow *f);
/* A kernel object with its launch configuration, as one key (enqueues.c; estimated.c). */
uint64_t clt_dm_launch_key(uint64_t kernel_id, uint32_t work_dim, const uint64_t *gws, const uint64_t *lws,
                           int lws_null);
/* enqueues.c: a transfer command and its size, as one key (estimated.c); an untimed command kept on
 * its queue until estimated.c draws it (a full list: not drawn) */
uint64_t clt_dm_transfer_key(unsigned fn, uint64_t bytes);
void clt_est_push_launch(struct clt_queue *q, uint64_t h0, uint64_t kernel_id, uint32_t work_dim, const uint64_t *gws,
                         const uint64_t *lws, uint32_t lws_null, uint64_t flow);
void clt_est_push_transfer(struct clt_queue *q, uint64_t h0, unsigned fn, const char *dir, uint64_t bytes,
                           uint64_t flow);
void clt_est_free(struct clt_queue *q);                    /* its waiting list's pages given back */
const struct clt_est_shape *clt_est_shape(uint64_t key);   /* NULL: none kept (no memory) */
void clt_est_shapes_forget(void);                          /* a fork child's: its ids restart */
int clt_dm_transfer_dir(unsigned fn, const char **dir);    /* 1: a transfer, *dir its direction */
const char *clt_dm_command_type(unsigned fn);              /* CL_COMMAND_* of an enqueue function */
void clt_dm_transfer_name(char *out, size_t cap, const char *cmd, uint64_t bytes);   /* "ReadBuffer 4 B" */
/* Untimed commands wait on their queue for the next timed one (its start
 * bounds them) at most this many; then, once no timed command is in flight
 * there (their lengths are the timed ones' means), drawn after the last, as
 * at the end (a launch loop whose budget went at its start drew ~19,500 at
 * its exit) */
#define CLT_EST_HOLD 1024
struct clt_queue *clt_dm_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1,
                                 uint32_t seq);
/* An untimed launch counted by its kernel's name and configuration (u's
 * name is written only for a new entry; enqueues.c) */
void clt_dm_untimed_launch(struct clt_devmodel *m, struct clt_untimed *u, const char *name);
/* An untimed transfer counted by its direction and bytes (device.c; the
 * attributes: device_commands.c) */
static inline void clt_dm_untimed_transfer(struct clt_devmodel *m, const char *dir, uint64_t bytes)
{
    for (unsigned i = 0; i < m->n_untimed_xfers; i++) {
        struct clt_untimed_xfer *x = &m->untimed_xfers[i];
        if (x->bytes == bytes && !strcmp(x->dir, dir)) {
            x->count++;
            return;
        }
    }
    if (m->n_untimed_xfers < CLT_MAX_UNTIMED)
        m->untimed_xfers[m->n_untimed_xfers++] = (struct clt_untimed_xfer){ dir, bytes, 1 };
    else
        m->untimed_xfers_other++;
}

#endif
