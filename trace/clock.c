/* Tick -> BOOTTIME ns. With the TSC, the rate is the slope between the first
 * calibration point and the latest one, so it gets more exact as the run goes
 * on and follows any drift; without it, ticks already are BOOTTIME ns. */
#include <stdio.h>
#include <string.h>
#include "clock.h"

int clt_use_tsc;

/* The TSC is usable only if it is invariant (constant rate, keeps counting in
 * sleep states); the kernel says so in /proc/cpuinfo. */
static int tsc_invariant(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

static void sample(uint64_t *tick, uint64_t *ns)
{
    /* Bracket the clock read with two ticks and keep the tightest of a few
     * tries, so a preemption between the reads does not skew the pair. */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = clt_now(), n = clt_boottime_ns(), b = clt_now();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
}

void clt_clock_select(void)
{
    clt_use_tsc = tsc_invariant();
}

void clt_clock_init(struct clt_clock *c)
{
    sample(&c->tick0, &c->ns0);
    c->tick1 = c->tick0;
    c->ns1 = c->ns0;
    c->ns_per_tick = 1.0;
    c->ns_per_tick_q40 = 1ll << 40;
    if (clt_use_tsc) {
        /* A first rate from a 5 ms baseline; refined by clt_clock_update. */
        struct timespec d = { 0, 5000000 };
        nanosleep(&d, NULL);
        clt_clock_update(c);
    }
}

void clt_clock_update(struct clt_clock *c)
{
    if (!clt_use_tsc)
        return;
    uint64_t t, n;
    sample(&t, &n);
    if (t <= c->tick0 || n <= c->ns0)
        return;
    c->tick1 = t;
    c->ns1 = n;
    c->ns_per_tick = (double)(n - c->ns0) / (double)(t - c->tick0);
    c->ns_per_tick_q40 = (int64_t)(c->ns_per_tick * (double)(1ll << 40) + 0.5);   /* < 2^43: TSC >= 125 MHz */
}

