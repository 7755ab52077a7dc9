/* make bench: the cost of a cltrace.h range push + pop, in thread-CPU ns per
 * pair (best of 5 rounds of N pairs). Run without cltrace, under it with
 * CLTRACE_DISABLE=1, and recording. Prints "ns_per_pair X". */
#include <cltrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

__attribute__((noinline)) static void loop(long n)
{
    for (long i = 0; i < n; i++) {
        cltrace_range_push("phase");
        cltrace_range_pop();
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_ns();
        loop(n);
        double t = (now_ns() - t0) / (double)n;
        if (t < best)
            best = t;
    }
    printf("ns_per_pair %.2f\n", best);
    return 0;
}
