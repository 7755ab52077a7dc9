/* The clock cltrace picks (trace/clock.c): the TSC exactly where the kernel
 * says it is invariant, both constant_tsc and nonstop_tsc in /proc/cpuinfo's
 * flags, as cltrace used to read them there; and a TSC tick that follows
 * CLOCK_BOOTTIME once calibrated (within 0.1 % over 20 ms). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "trace/clock.h"

static int failures;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

static int cpuinfo_says_invariant(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return -1;
    char line[8192];
    int ok = -1;
    while (ok < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0)
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
    fclose(f);
    return ok;
}

int main(void)
{
    clt_clock_select();
    int kernel = cpuinfo_says_invariant();
#if defined(__x86_64__)
    if (kernel < 0)
        printf("test_tsc: no flags in /proc/cpuinfo: the choice is not compared\n");
    else
        EXPECT(clt_use_tsc == kernel);
#else
    EXPECT(clt_use_tsc == 0);
#endif
    struct clt_clock c;
    clt_clock_init(&c);
    struct timespec nap = { 0, 20000000 };
    nanosleep(&nap, NULL);
    clt_clock_update(&c);
    uint64_t t = clt_now(), ns = clt_boottime_ns();
    double at = (double)c.ns0 + (double)(t - c.tick0) * c.ns_per_tick;
    EXPECT(at > (double)ns - 20e6 * 1e-3 - 5e3 && at < (double)ns + 20e6 * 1e-3 + 5e3);
    printf("test_tsc: TSC %s (kernel: %s), a tick %.4f ns\n", clt_use_tsc ? "used" : "not used",
           kernel < 0 ? "unknown" : kernel ? "invariant" : "not invariant", c.ns_per_tick);
    return failures != 0;
}
