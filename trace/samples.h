/* CPU samples as both sides see them. The capture side's signal handler
 * (capture/cpusample.c) writes each sample of a thread into that thread's
 * sample buffer; the writer (writer/samples.c) drains the buffers into
 * Perfetto's PerfSample packets. A buffer is single producer (its thread's
 * handler) and single consumer (the writer); the buffers sit in a table of
 * fixed size, reused once a thread has ended and its samples are drained. */
#ifndef CLT_SAMPLES_H
#define CLT_SAMPLES_H
#include <stdint.h>
#include <time.h>
#include "trace/record.h"

#define CLT_SBUF_MAX 4096           /* threads sampled at one time */
#define CLT_SBUF_BYTES (64u << 10)  /* a thread's buffer: ~100 samples of 64 frames */
#define CLT_SAMPLE_C_DEPTH 64       /* C frames a sample keeps */
/* A sample's stack block at most: C frames, Python frames with their names */
#define CLT_SAMPLE_WORDS (CLT_SAMPLE_C_DEPTH + 2 * CLT_PY_DEPTH + CLT_PY_STRINGS / 8 + 1)

/* One sample, then its stack block (trace/record.h: return addresses and
 * Python frames, innermost first; the interrupted instruction is the first,
 * given + 1 so that it reads as a return address). size 0: the rest of the
 * buffer up to its end is padding. */
struct clt_cpu_sample {
    uint32_t size;          /* bytes, this header included, a multiple of 8 */
    uint32_t words;         /* of the stack block */
    uint64_t t;             /* clt_now() ticks */
    uint32_t weight;        /* timer periods it stands for: 1 + the timer's overruns */
    uint32_t flags;         /* CLT_SAMPLE_* */
    uint64_t stack[];
};
#define CLT_SAMPLE_UNWOUND 1u      /* C frames past the interrupted one were read */
#define CLT_SAMPLE_PYTHON 2u       /* Python frames were read */

/* Where a place's caller's frame lies (capture/unwind.c), kept by place in
 * a thread's buffer: the CFA (its stack pointer before the call) from the
 * stack or frame pointer, the return address and saved frame pointer by
 * words from it (bp_at 0: the frame pointer as it was). */
struct clt_unw_rule {
    uint64_t pc;
    int32_t cfa_off;
    int8_t ra_at, bp_at;
    uint8_t cfa_bp : 1, bp_lost : 1;
    uint8_t kind;           /* CLT_UNW_* */
};
enum { CLT_UNW_EMPTY, CLT_UNW_FRAME, CLT_UNW_END };
#define CLT_UNW_RULES 512

enum clt_sbuf_state { CLT_SBUF_FREE, CLT_SBUF_CLAIMED, CLT_SBUF_LIVE, CLT_SBUF_DEAD };

struct clt_sbuf {
    uint8_t *buf;               /* CLT_SBUF_BYTES */
    int tid;
    _Atomic uint32_t gen;       /* bumped on each reuse: a late signal for the last thread is not this one's */
    timer_t timer;
    _Atomic uint32_t state;     /* enum clt_sbuf_state */
    _Alignas(64) _Atomic uint64_t head;   /* the handler's */
    _Atomic uint64_t lost;      /* samples the buffer had no room for */
    _Atomic uint64_t taken;
    _Atomic uint64_t handler_ticks;   /* clt_now() ticks its handler took, sample by sample */
    /* of them on the CPU (the thread's CPU clock): a handler that lost the CPU
     * for 5 ms inside made 12 samples read 2.8 ms on 2 busy cores */
    _Atomic uint64_t handler_cpu_ns;
    _Alignas(64) _Atomic uint64_t tail;   /* the writer's */
    uint64_t periods_written;   /* the writer's: timer periods its samples stood for, summed */
    /* the handler's own: the Python code objects this buffer has named */
    struct clt_py_seen py_seen[CLT_PY_SEEN];
    struct clt_unw_rule unw_rules[CLT_UNW_RULES];
};

extern struct clt_sbuf *_Atomic clt_sbufs[CLT_SBUF_MAX];
extern _Atomic unsigned clt_sbufs_used;     /* slots ever used: the writer looks at these */
extern _Atomic uint64_t clt_sample_period_ns;   /* 0: not sampling */

#endif
