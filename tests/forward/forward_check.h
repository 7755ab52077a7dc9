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

extern struct fake_log *fake;        /* the fake vendor library's log */
extern int64_t *fake_ret_int_p;
extern uint64_t *fake_ret_ptr_p;
extern unsigned failures;
extern int32_t errslot[4];
extern uint8_t arena[16][512];

static inline int64_t fake_ret_int_now(void) { return *fake_ret_int_p; }
static inline uint64_t fake_ret_ptr_now(void) { return *fake_ret_ptr_p; }
static inline uint64_t as_u64_d(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline void reset_arena(void) { memset(arena, 0, sizeof arena); memset(fake, 0, sizeof *fake); }
static inline void some_callback(void) {}

static inline void fail(const char *fn, const char *what, unsigned i, uint64_t got, uint64_t want)
{
    if (failures++ < 20)
        fprintf(stderr, "forward: %s: %s %u: got 0x%llx, want 0x%llx\n", fn, what, i,
                (unsigned long long)got, (unsigned long long)want);
}

static inline void expect_fn(const char *fn, unsigned n)
{
    if (!fake->fn || strcmp(fake->fn, fn) != 0 || fake->n != n) {
        fail(fn, "not forwarded (vendor saw another call)", 0, 0, 0);
        fake->n = 0;
    }
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
