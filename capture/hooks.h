/* Hand-written semantics for a few commands, and device-side recording.
 *
 * Generated wrappers of the commands listed in gen.py's HOOKED call
 * clt_pre_<cmd> (may change what is passed to the driver, never what is
 * recorded) and clt_post_<cmd> (sees the result, may fix what the app gets
 * back). Every clEnqueue* that can return an event is timed on the device
 * (or, with CLTRACE_SAMPLE, a sample of them: sample.c): the wrapper gives
 * the driver cltrace's own event when the app passes none, and
 * clt_track_command hands the event to the collector thread (collect.c),
 * which records the command's profiling timestamps once it completed. */
#ifndef CLT_HOOKS_H
#define CLT_HOOKS_H
#include "cbtime.h"
#include "put.h"
#include "queues.h"
#include "shim.h"

struct clt_hook {
    struct clt_thread *th;  /* NULL when not recording */
    void *real;             /* the driver's entry point, for retries */
    int changed;            /* the pre hook changed an argument */
    uint64_t scratch[64];   /* rewritten property lists, redirected outputs */
};



/* The driver's entry point of a command, for cltrace's own calls (never
 * recorded; NULL where the library lacks it). */
#define REAL(fn) clt_real(CLT_FN_##fn)

/* A flow id links an enqueue call to its command: unique in the trace
 * (pid, the thread's sequence, a per-thread counter); bit 31 says the event
 * is cltrace's own. Computed on the calling thread, no atomics. */
static inline uint64_t clt_flow_next(struct clt_thread *th, int own)
{
    uint32_t n = ++th->flow_counter & 0x7FFFFFFFu;
    return (uint64_t)(clt_pid & 0x3FFFFF) << 42 | (uint64_t)(th->seq & 0x3FF) << 32 |
           (uint64_t)(own ? 1u : 0u) << 31 | n;
}

/* A kernel launched on this queue by this thread before, its facts asked
 * for then: the launch's hook has nothing to do (~45 instructions a launch). */
static inline int clt_launch_seen(const struct clt_thread *th, const void *kernel, const void *queue)
{
    return th->launch_memo.seen_kernel == kernel && th->launch_memo.seen_queue == queue;
}

/* Clock evidence (clock.c): a record of it; a polled marker with an event
 * (0: none enqueued; call_ticks: what its enqueue took); a queue of
 * cltrace's own per device that the collector takes a marker on every 10 ms
 * while commands run (made with the app's queues, released with its
 * context). */
void clt_put_clock(struct clt_thread *th, void *dev, uint64_t before, uint64_t device_ts, uint64_t after,
                   int32_t status, unsigned kind);
int clt_clock_marker(struct clt_thread *th, void *queue, void *dev, int cpu_device, uint64_t *call_ticks);
int clt_clock_cpu_device(void *dev);   /* CL_DEVICE_TYPE_CPU: markers polled politely */
/* its own queue in the app's context, once the context holds no more than
 * refs_before (the app's count before cltrace's calibration: 100 ms at most) */
void clt_clock_keep(struct clt_thread *th, void *context, void *dev, int cpu_device, uint32_t refs_before);
uint32_t clt_context_refs(void *context);                 /* the driver's count (0: unknown) */
void clt_clock_keep_tick(struct clt_thread *th);     /* collector thread */
void clt_clock_keep_quiet(struct clt_thread *th);    /* collector thread, the app paused */
void clt_clock_keep_raw_tick(struct clt_thread *th); /* collector thread, nothing pending */
void clt_clock_keep_forget(void);                     /* fork child */
void clt_clock_keep_exit(struct clt_thread *th);    /* at exit, the commands drained: the raw clocks read */
void clt_clock_keep_release(void);                    /* at exit, the collector returned */
unsigned clt_clock_keeps(void);                       /* cltrace's queues held: keep_release has work */

void clt_track_command(uint64_t flow, void *event, void *queue);
void clt_collect_now(void);                               /* collect what completed, now (fingerprints) */
/* fingerprint.c: what goes before each completion (0: not ready yet) */
void clt_collect_busy(uint64_t t1);                       /* an untimed enqueue ended (clt_now ticks) */
int clt_queue_in_order(void *queue);                /* a queue the app made in order (queues.c) */
int clt_queue_in_order_on_cpu(void *queue);         /* ... and of a CPU device */
void clt_collect_forget(void);                      /* fork child */
/* At exit: wait (bounded) for commands still in flight; returns how many
 * never completed. */
uint64_t clt_commands_drain(unsigned stall_ms, unsigned max_ms, int here);   /* here: not in a signal handler */
void clt_collect_finish(void);     /* at the exit's end: no more calls into the driver */
void clt_collect_set_on_start(void (*fn)(void));   /* called once the collector runs (life.c: the exit) */
/* nvbuild.c: NVIDIA register counts, compiled by cltrace-nvregs (a process) started from a thread of cltrace's */
uint64_t clt_nvbuild_finish(void); /* at exit, while recording: the builds still running, waited for; those left */
void clt_nvbuild_forget(void);     /* fork child */

#endif
