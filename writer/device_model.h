/* The writer's model of devices, queues, kernels, buffers and contexts, and
 * the device timeline it draws from them (emit_device.c). */
#ifndef CLT_DEVICE_MODEL_H
#define CLT_DEVICE_MODEL_H
#include <stdint.h>
#include "trace/record.h"
#include "objects.h"

#define CLT_CLOCK_WINDOW 64
#define CLT_MAX_LANES 8
#define CLT_MAX_KARGS 32
#define CLT_LANE_HISTORY 32
#define CLT_FLOW_ARGS 16       /* kernel argument values kept per launch */

struct clt_dev {
    uint64_t handle, id;
    unsigned index;
    uint64_t info[DEV_N];
    char name[CLT_MAX_STR + 1], vendor[CLT_MAX_STR + 1];
    int described, declared;
    uint64_t uuid;
    /* device ns -> host ns: offset within [lo, hi] for every recent sample */
    int64_t lo[CLT_CLOCK_WINDOW], hi[CLT_CLOCK_WINDOW];
    unsigned n_samples, next_sample;
    int timer_ok;                 /* clGetDeviceAndHostTimer worked */
    int64_t offset, residual, max_residual;
    uint64_t commands, clamped;
};

struct clt_queue {
    uint64_t handle, id;
    unsigned index;
    struct clt_dev *dev;
    uint64_t lane_uuid[CLT_MAX_LANES];
    uint64_t lane_iv[CLT_MAX_LANES][CLT_LANE_HISTORY][2];   /* recent [start, end] per lane */
    unsigned lane_next[CLT_MAX_LANES], n_lanes;
    int64_t in_flight;
    int64_t refs;                 /* the app's references; 0: slot free once idle */
    uint64_t counter_uuid;
};

struct clt_kernel_wg { uint64_t dev; uint64_t wg_size, pref_multiple, local_mem, private_mem; };
struct clt_kern {
    uint64_t id, program;
    char name[CLT_MAX_STR + 1];
    int regs;                     /* -1: unknown */
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
struct clt_ctx { uint64_t id; unsigned index; int64_t bytes; uint64_t uuid; };

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
    uint32_t n_args;
};

struct clt_mapping { uint64_t bytes, flags; };   /* a clEnqueueMap* result, until its unmap */

struct clt_regs { uint64_t program; unsigned regs; char name[CLT_MAX_STR + 1]; };

struct clt_devmodel {
    struct clt_dev devs[16];
    unsigned n_devs;
    struct clt_queue queues[256];  /* live queues (slots reused after release) */
    unsigned n_queues, queue_serial;
    struct clt_ctx ctxs[64];
    unsigned n_ctxs;
    struct clt_map kernels, mems, queue_dev;    /* by object id */
    struct clt_map mappings;                    /* by mapped pointer */
    struct clt_flow **flows;                    /* [thread sequence][counter % slots] */
    struct clt_rec **pending;                   /* commands whose enqueue is not seen yet */
    unsigned n_pending;
    struct clt_regs *regs;
    unsigned n_regs, cap_regs;
    uint64_t commands, unmatched, untimed;
};

#endif
