/* Tick -> BOOTTIME ns. With the TSC, the rate is the slope between the first
 * calibration point and the latest one, so it gets more exact as the run goes
 * on and follows any drift; without it, ticks already are BOOTTIME ns. */
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "clock.h"

int clt_use_tsc;

#if defined(__aarch64__)
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
/* arm64: the virtual counter where the kernel keeps time with it (its
 * clocksource is arch_sys_counter, and the vDSO reads the same register):
 * a kernel that found the counter broken (an erratum, a firmware that left
 * it unset) picks another clocksource, and so does qemu-user on an x86 host
 * (the host's). One small read at load; open/read, not stdio, from a
 * constructor. */
static int arm64_counter_usable(void)
{
    char buf[64] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 && strncmp(buf, "arch_sys_counter", 16) == 0;
}
#endif

/* The TSC is usable only if it is invariant (constant rate, keeps counting in
 * sleep states): CPUID leaf 0x80000007, EDX bit 8, the bit from which the
 * kernel sets both constant_tsc and nonstop_tsc in /proc/cpuinfo, where a
 * hypervisor that does not promise it hides it. Reading /proc/cpuinfo for
 * them cost every traced process 50-70 us at start on a 2-core VM (the
 * kernel samples each CPU's frequency for it; some kernels slept 10 ms);
 * the instruction costs ~9 us there, where it traps to the hypervisor. */
static int tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
#elif defined(__aarch64__)
    return arm64_counter_usable();
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

