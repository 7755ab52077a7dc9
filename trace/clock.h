/* Timestamps on the hot path: the CPU's own counter where the kernel says
 * it is usable -- the TSC where it is invariant (one rdtsc), arm64's
 * virtual counter CNTVCT_EL0 where the kernel keeps time with it -- with no
 * system call; CLOCK_BOOTTIME otherwise. The writer maps ticks to BOOTTIME
 * nanoseconds (Perfetto's default trace clock) with a rate it re-measures as
 * the run goes on (clock.c); the trace says which (cltrace.clock). */
#ifndef CLT_CLOCK_H
#define CLT_CLOCK_H
#include <stdint.h>
#include <time.h>

extern int clt_use_tsc;          /* the counter is used (x86: the TSC; arm64: CNTVCT_EL0) */
#if defined(__x86_64__)
#define CLT_COUNTER_NAME "tsc"
#elif defined(__aarch64__)
#define CLT_COUNTER_NAME "cntvct"
#else
#define CLT_COUNTER_NAME "none"
#endif

/* A clock's time in ns (a thread's CPU clock too); 0 if it cannot be read. */
static inline uint64_t clt_clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clt_boottime_ns(void)
{
    return clt_clock_ns(CLOCK_BOOTTIME);
}

/* tsc: clt_use_tsc, read once for a pair of reads around a call */
static inline __attribute__((always_inline)) uint64_t clt_now_tsc(int tsc)
{
#if defined(__x86_64__)
    if (__builtin_expect(tsc, 1)) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return (uint64_t)hi << 32 | lo;
    }
#elif defined(__aarch64__)
    if (__builtin_expect(tsc, 1)) {      /* isb: not read ahead of the code before it (as the vDSO) */
        uint64_t v;
        __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
        return v;
    }
#else
    (void)tsc;
#endif
    return clt_boottime_ns();
}

static inline __attribute__((always_inline)) uint64_t clt_now(void)
{
    return clt_now_tsc(clt_use_tsc);
}

/* The clock read after every load before it has completed (as the kernel's
 * rdtsc_ordered): a time taken after reading where the rings' records end
 * is later than every one of those records' times. rdtsc alone may run
 * ahead of the loads (measured: 25-50 ticks before records a cltrace ctl
 * flush had just seen committed). arm64's read has its isb already. */
static inline uint64_t clt_now_after_loads(void)
{
#if defined(__x86_64__)
    if (clt_use_tsc)
        __asm__ volatile("lfence" ::: "memory");
#endif
    return clt_now();
}

struct clt_clock {           /* writer-side tick -> ns mapping */
    uint64_t tick0, ns0;     /* first calibration point */
    uint64_t tick1, ns1;     /* latest calibration point */
    double ns_per_tick;
    int64_t ns_per_tick_q40; /* the same, fixed point (2^-40 ns): a multiply, no conversions */
};

void clt_clock_select(void);                  /* once, at load */
void clt_clock_init(struct clt_clock *c);
void clt_clock_update(struct clt_clock *c);   /* re-calibrate; cheap, call often */
/* (inline: the writer converts two per call) */
static inline uint64_t clt_clock_to_ns(const struct clt_clock *c, uint64_t tick)
{
    if (!clt_use_tsc)
        return tick;
    __int128 d = (__int128)(int64_t)(tick - c->tick1) * c->ns_per_tick_q40;
    return (uint64_t)((int64_t)c->ns1 + (int64_t)(d >> 40));
}

#endif
