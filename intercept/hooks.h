/* Hand-written semantics for a few commands, and device-side recording.
 *
 * Generated wrappers of the commands listed in gen.py's HOOKED call
 * clt_pre_<cmd> (may change what is passed to the driver, never what is
 * recorded) and clt_post_<cmd> (sees the result, may fix what the app gets
 * back). Every clEnqueue* that can return an event is timed on the device:
 * the wrapper gives the driver cltrace's own event when the app passes none,
 * and clt_track_command registers a completion callback that records the
 * command's profiling timestamps from whatever thread the driver runs it on. */
#ifndef CLT_HOOKS_H
#define CLT_HOOKS_H
#include "record.h"

struct clt_hook {
    struct clt_thread *th;  /* NULL when not recording */
    void *real;             /* the driver's entry point, for retries */
    int changed;            /* the pre hook changed an argument */
    uint64_t scratch[64];   /* rewritten property lists, redirected outputs */
};

/* Records that are not API calls (fn field; CLT_FN_PAD is 0xFFFF). */
enum clt_rec_kind {
    CLT_REC_COMMAND = 0xFF01,  /* a command completed: flow, event, status, 4 times */
    CLT_REC_DEVICE = 0xFF02,   /* a device's limits, once per device */
    CLT_REC_CLOCK = 0xFF03,    /* clGetDeviceAndHostTimer sample */
    CLT_REC_KERNEL = 0xFF04,   /* a kernel's work-group info on a device */
    CLT_REC_KREGS = 0xFF05,    /* registers per work-item of a kernel (NVIDIA build log) */
    CLT_REC_RANGE_PUSH = 0xFF06,  /* cltrace.h annotations (annotate.c): name */
    CLT_REC_RANGE_POP = 0xFF07,
    CLT_REC_MARK = 0xFF08,        /* name */
    CLT_REC_COUNTER = 0xFF09,     /* name, value (double bits) */
};

/* Slots of the records above (rec->arg[i]). */
enum { CMD_FLOW, CMD_EVENT, CMD_STATUS, CMD_QUEUED, CMD_SUBMIT, CMD_START, CMD_END, CMD_N };
enum { DEV_ID, DEV_TYPE, DEV_CU, DEV_MAX_WG, DEV_LOCAL_MEM, DEV_GLOBAL_MEM, DEV_CLOCK_MHZ, DEV_WARP,
       DEV_REGS, DEV_CC_MAJOR, DEV_CC_MINOR, DEV_SIMD_PER_CU, DEV_NAME, DEV_VENDOR, DEV_VERSION, DEV_N };
enum { CLK_DEVICE, CLK_HOST_BEFORE, CLK_DEVICE_TS, CLK_HOST_AFTER, CLK_STATUS, CLK_N };
enum { KI_KERNEL, KI_DEVICE, KI_WG_SIZE, KI_PREF_MULTIPLE, KI_LOCAL_MEM, KI_PRIVATE_MEM, KI_N };
enum { KR_PROGRAM, KR_REGS, KR_NAME, KR_N };

extern int clt_pid;

/* A flow id links an enqueue call to its command: unique in the trace
 * (pid, the thread's sequence, a per-thread counter); bit 31 says the event
 * is cltrace's own. Computed on the calling thread, no atomics. */
static inline uint64_t clt_flow_next(struct clt_thread *th, int own)
{
    uint32_t n = ++th->flow_counter & 0x7FFFFFFFu;
    return (uint64_t)(clt_pid & 0x3FFFFF) << 42 | (uint64_t)(th->seq & 0x3FF) << 32 |
           (uint64_t)(own ? 1u : 0u) << 31 | n;
}

void clt_track_command(uint64_t flow, void *event);
int clt_cl_version(const char *device_version);   /* "OpenCL 2.1 …" -> 201; 0: unknown */
/* At exit: wait (bounded) for commands still in flight; returns how many
 * never completed. */
uint64_t clt_commands_drain(unsigned timeout_ms);

#endif
