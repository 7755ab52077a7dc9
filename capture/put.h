/* The hot path: what a generated wrapper does on the calling thread.
 *
 * One relaxed load decides whether to record at all. A record is written in
 * place into the calling thread's ring (trace/record.h): no lock, no
 * allocation, no formatting; decoding happens on the writer thread.
 *
 * errno: the fast path makes no libc call, so the app sees the errno the
 * real call left. The slow paths (first call of a thread, a full ring) save
 * and restore it themselves. */
#ifndef CLT_PUT_H
#define CLT_PUT_H
#include "trace/record.h"
#include "trace/ring.h"

#define CLT_EXPORT __attribute__((visibility("default")))
#define CLT_CALL            /* CL_API_CALL is empty on Linux */
#define CLT_NOINLINE __attribute__((noinline))
typedef int32_t cl_int_;
#define CL_INVALID_OPERATION_ (-59)

extern __thread struct clt_thread *clt_tls __attribute__((tls_model("initial-exec")));


extern void *clt_real_tab[];                       /* resolved entry points */
void *clt_real_slow(unsigned fn);                  /* resolve: real entry point or NULL */
/* A real entry point about to be set for fn: the one to set (capture or
 * fingerprints may stand in front of it). Every place that sets one calls it. */
void *clt_interpose(unsigned fn, void *real);
void *clt_ext_wrap(const char *name, void *real);  /* extension lookup hook */
struct clt_thread *clt_thread_attach(void);
struct clt_rec *clt_ring_reserve_slow(struct clt_thread *th, size_t max);
void clt_loop_detected(unsigned fn);               /* the real library called us back */

#define CLT_REAL_ABSENT ((void *)1)

static inline __attribute__((always_inline)) void *clt_real(unsigned fn)
{
    void *p = __atomic_load_n(&clt_real_tab[fn], __ATOMIC_ACQUIRE);
    if (CLT_LIKELY((uintptr_t)p > (uintptr_t)CLT_REAL_ABSENT))
        return p;
    return clt_real_slow(fn);
}

static inline __attribute__((always_inline)) int clt_is_active(void)
{
    return __atomic_load_n(&clt_active, __ATOMIC_RELAXED);
}

/* The calling thread's ring, made on its first call; NULL: do not record.
 * _active: the caller has just seen recording on. */
static inline __attribute__((always_inline)) struct clt_thread *clt_enter_active(void)
{
    struct clt_thread *th = clt_tls;
    if (CLT_UNLIKELY(!th))
        th = clt_thread_attach();
    return th;
}

static inline __attribute__((always_inline)) struct clt_thread *clt_enter(void)
{
    if (CLT_UNLIKELY(!clt_is_active()))
        return NULL;
    return clt_enter_active();
}

/* Windows (CLTRACE_WINDOW, cltrace_start/stop, cltrace ctl: window.c). A
 * command that makes or lets go of an object (gen/gen.py KEPT) is recorded
 * whenever cltrace is active, marked when outside a window; every other one
 * only inside a window: clt_recording 0 (outside, or off: the wrapper's one
 * branch, as with CLTRACE_DISABLE=1), 1 (inside), 2 (a trigger counts calls
 * or waits for a kernel: each call asks clt_window_tick). */
extern int clt_recording;
int clt_window_tick(unsigned fn, const void *kernel);   /* 1: this call is inside a window */

static inline __attribute__((always_inline)) int clt_is_recording(void)
{
    return __atomic_load_n(&clt_recording, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) struct clt_thread *clt_enter_rec(unsigned fn, const void *kernel)
{
    int r = clt_is_recording();
    if (CLT_LIKELY(r == 1))
        return clt_enter_active();
    if (r == 0 || !clt_window_tick(fn, kernel))
        return NULL;
    return clt_enter_active();
}

static inline __attribute__((always_inline)) int clt_outside_window(unsigned fn, const void *kernel)
{
    int r = clt_is_recording();
    if (CLT_LIKELY(r == 1))
        return 0;
    return r == 0 || !clt_window_tick(fn, kernel);
}

static inline __attribute__((always_inline)) struct clt_rec *clt_rec_begin(struct clt_thread *th, size_t max)
{
    uint64_t head = th->head_local;
    uint64_t off = head & th->mask;
    if (CLT_LIKELY(off + max <= th->mask + 1 && head + max - th->tail_cached <= th->mask + 1))
        return (struct clt_rec *)(th->buf + off);
    return clt_ring_reserve_slow(th, max);
}

/* cltrace's own time on the calling thread. A call that does more than
 * record (hooks, an event, a stack) is measured whole: two more clock reads
 * on a call that costs microseconds. Of the light calls (clSetKernelArg...)
 * one in CLT_COST_EVERY on average (rings.c next_gap) is measured and stands
 * for CLT_COST_EVERY: the rest pay a decrement and a branch. Waits for ring
 * room are counted apart. */
#define CLT_COST_EVERY 64
extern uint64_t clt_clock_read_ticks;   /* what one clock read costs (one of a run of reads) */
void clt_cost_add(struct clt_thread *th, uint64_t te, uint64_t inner, int exact);
void clt_count_wait(struct clt_thread *th, uint64_t since, uint64_t paced);   /* a wait since that tick, less paced ticks */

static inline __attribute__((always_inline)) uint64_t clt_cost_begin(struct clt_thread *th, int exact)
{
    if (exact || CLT_UNLIKELY(--th->cost_countdown == 0)) {
        th->wait_pending = 0;
        return clt_now();
    }
    return 0;
}

static inline __attribute__((always_inline)) void clt_cost_end(struct clt_thread *th, uint64_t te, uint64_t inner,
                                                               int exact)
{
    if (CLT_UNLIKELY(te != 0))
        clt_cost_add(th, te, inner, exact);
}

/* CLTRACE_SAMPLE (sample.c): whether this command, for which the app asked
 * no event, is timed on the device. */
extern int clt_sampling;
int clt_sample_take(unsigned fn, uint64_t key, uint64_t bytes);
int clt_sample_launch(struct clt_thread *th, const void *kernel, uint32_t work_dim, const void *gws,
                      const void *lws);
/* clt_now() before which no more timed command fits the budget (0: ask) */
extern uint64_t clt_sample_fits_from_ticks;

/* A launch like this thread's last, past its first timed ones, while the
 * budget holds no room: untimed, decided here without hashing its key,
 * counting it or reading a second clock (that took ~100 instructions of
 * each launch: a fifth of what recording one costs). 0: ask sample.c. */
static inline __attribute__((always_inline)) int clt_launch_untimed_fast(struct clt_thread *th, const void *kernel,
                                                                        uint32_t dim, const size_t *gws,
                                                                        const size_t *lws)
{
    const struct clt_launch_memo *m = &th->launch_memo;
    if (!m->past_first || m->kernel != kernel || m->dim != dim || !gws)
        return 0;
    for (uint32_t i = 0; i < dim; i++)
        if (m->gws[i] != gws[i] || m->lws[i] != (lws ? lws[i] : 0))
            return 0;
    return clt_now() < __atomic_load_n(&clt_sample_fits_from_ticks, __ATOMIC_RELAXED);
}

extern int (*clt_backtrace)(void **, int);
/* libunwind's frame-by-frame walk, for a CPU sample: from the signal's
 * context (unw_init_local2, UNW_INIT_SIGNAL_FRAME), no thread-local cache
 * (unw_backtrace's, whose first use on a thread allocates) */
struct clt_unwinder {
    int (*init)(void *cursor, void *uc, int flags);
    int (*step)(void *cursor);
    int (*get_reg)(void *cursor, int reg, uint64_t *value);
};
extern struct clt_unwinder clt_unwinder;
/* set while this thread's own call stack is being read: a CPU sample then
 * keeps the interrupted instruction only, libunwind not entered twice */
extern __thread int clt_unwinding __attribute__((tls_model("initial-exec")));
/* unw_backtrace has run on this thread outside a handler: its thread-local
 * cache is made (its first use allocates), so a CPU sample's handler may
 * take its fast path where unwind.c cannot read a stack */
extern __thread int clt_unw_cache_made __attribute__((tls_model("initial-exec")));
/* this thread's stack, for unwind.c's reader (a call stack's and a CPU
 * sample's): lo..hi once clt_thread_stack found it, hi 0 until then or
 * where it is not known (libunwind's then) */
extern __thread uint64_t clt_stack_lo __attribute__((tls_model("initial-exec")));
extern __thread uint64_t clt_stack_hi __attribute__((tls_model("initial-exec")));
int clt_thread_stack(void);     /* 1: known (asked once a thread; not in a handler) */
extern int clt_py_on;
/* enum clt_inside: this thread is inside a wrapped library call (mpi.c) */
extern __thread uint8_t clt_inside __attribute__((tls_model("initial-exec")));               /* capture/python.c: a supported CPython runs here */
extern int clt_break_on;           /* CLTRACE_BREAK: bit 0 errors, bit 1 leaks; CLT_SNAP_ON_ERROR */
#define CLT_SNAP_ON_ERROR 8        /* CLTRACE_SNAPSHOT_ON=error (with the flight recorder) */
void clt_break_if_debugged(void);  /* SIGTRAP, only under a debugger */
int clt_debugger_attached(void);   /* TracerPid != 0 */
void clt_call_failed(void);        /* a failing call, with clt_break_on bit 0 or CLT_SNAP_ON_ERROR */

/* capture/python.c: a Python program's stack block, its frames merged in */
unsigned clt_py_restack(struct clt_thread *th, uint64_t *d, unsigned n, size_t room);

/* The call stack at p, in the CLT_STACK_RESERVE bytes the wrapper reserved
 * for it: unwound, or `site` alone (an enqueue that wants a stack only for
 * its Python frames); returns where the record goes on. Out of line
 * (callstack.c): only calls that create or fail come here, and the
 * record's cursor stays in registers on the light calls' path. */
uint8_t *clt_put_stack(struct clt_thread *th, uint8_t *p, int failed, const void *site);

#endif
