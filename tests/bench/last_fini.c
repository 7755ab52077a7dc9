/* Loaded by `bench_calls --last-dso` just before main returns, so finalized
 * after the driver's libraries and cltrace: its destructor's time is the
 * end of the process's user space (scripts/teardown-check.py). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

__attribute__((destructor)) static void last_fini(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    char line[64];
    int n = snprintf(line, sizeof line, "last_fini_mono_ns %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
    if (write(STDOUT_FILENO, line, (size_t)n) != n)
        return;     /* nothing to do about it at exit */
}
