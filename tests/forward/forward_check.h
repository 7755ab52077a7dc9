/* Helpers for the generated forwarding checks (generated/forward_check.c). */
#ifndef FORWARD_CHECK_H
#define FORWARD_CHECK_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int32_t cl_int_;

struct fake_log { const char *fn; unsigned n; uint64_t args[16]; };
struct fwd_case { const char *name; void (*check)(void *fp, int pass); int core; };
extern const struct fwd_case fwd_cases[];
extern const unsigned fwd_n_cases;

extern struct fake_log *fake;        /* the vendor's log entry of the call being checked */
extern struct fake_log *fake_hist;   /* the fake vendor library's last 16 calls */
extern unsigned *fake_n;
extern int64_t *fake_ret_int_p;
extern uint64_t *fake_ret_ptr_p;
extern unsigned failures;
extern int32_t errslot[4];
extern uint8_t arena[16][512];

static inline int64_t fake_ret_int_now(void) { return *fake_ret_int_p; }
static inline uint64_t fake_ret_ptr_now(void) { return *fake_ret_ptr_p; }
static inline uint64_t as_u64_d(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static struct fake_log no_call;
static inline void reset_arena(void)
{
    memset(arena, 0, sizeof arena);
    memset(fake_hist, 0, 16 * sizeof *fake_hist);
    *fake_n = 0;
    fake = &no_call;
}
static inline void some_callback(void) {}
/* program source pieces (clCreateProgramWithSource copies them) */
static const char *const src_strings[128] __attribute__((unused)) = { "kernel void k(", "global int *a) {}" };

static inline void fail(const char *fn, const char *what, unsigned i, uint64_t got, uint64_t want)
{
    if (failures++ < 20)
        fprintf(stderr, "forward: %s: %s %u: got 0x%llx, want 0x%llx\n", fn, what, i,
                (unsigned long long)got, (unsigned long long)want);
}

/* The vendor's record of this call: the shim may have made its own calls
 * around it (queries after a launch), so it is looked up by name. */
static inline void expect_fn(const char *fn, unsigned n)
{
    fake = &no_call;
    memset(&no_call, 0, sizeof no_call);
    for (unsigned k = 0; k < *fake_n && k < 16; k++) {
        struct fake_log *l = &fake_hist[(*fake_n - 1 - k) % 16];
        if (l->fn && strcmp(l->fn, fn) == 0 && l->n == n) {
            fake = l;
            return;
        }
    }
    fail(fn, "not forwarded (vendor never saw it)", 0, 0, 0);
}

/* Queue properties: what the app passed, plus CL_QUEUE_PROFILING_ENABLE. When
 * the vendor refuses the queue (pass 1), the shim retries with the app's own
 * properties: the vendor's last call then has them unchanged. */
static inline void expect_profiling_added(const char *fn, unsigned i, uint64_t given, int is_list, int pass)
{
    if (fake->n <= i)
        return;
    if (pass) {
        if (fake->args[i] != given)
            fail(fn, "properties of the retry", i, fake->args[i], given);
        return;
    }
    if (!is_list) {
        if (fake->args[i] != (given | 2))
            fail(fn, "properties (want profiling added)", i, fake->args[i], given | 2);
        return;
    }
    const uint64_t *p = (const uint64_t *)(uintptr_t)fake->args[i];
    int ok = p && p[0] == 0x1093 && (p[1] & 2) && p[2] == 0;    /* the app's list was empty */
    if (!ok)
        fail(fn, "property list (want CL_QUEUE_PROPERTIES with profiling)", i, fake->args[i], given);
}

static inline void expect_arg(const char *fn, unsigned i, uint64_t want)
{
    if (fake->n > i && fake->args[i] != want)
        fail(fn, "argument", i, fake->args[i], want);
}

/* errcode_ret: passed through when given; when NULL, a recording shim passes
 * its own (so it can record the error) and a disabled one passes NULL. */
static inline void expect_errcode(const char *fn, unsigned i, int32_t *given)
{
    if (fake->n > i && given && fake->args[i] != (uint64_t)(uintptr_t)given)
        fail(fn, "errcode_ret", i, fake->args[i], (uint64_t)(uintptr_t)given);
}

static inline void expect_ret(const char *fn, uint64_t got, uint64_t want)
{
    if (got != want)
        fail(fn, "return value", 0, got, want);
}

#endif
