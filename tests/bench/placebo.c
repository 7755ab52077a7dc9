/* A control for scripts/selfcost-check.py --placebo: preloaded, it starts
 * threads that do nothing but wake up, as often as cltrace's own threads
 * do (PLACEBO_THREADS, default 2; PLACEBO_NAP_US, default 1000), and
 * nothing else. Whatever it costs a program is what any such thread would:
 * on a virtual machine whose idle CPUs halt at once, that moves a program
 * of hand-offs between threads both ways, by as much as cltrace's whole
 * slowdown there (docs/PERFORMANCE.md, "Wake-ups on a 2-vCPU VM"). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

static long nap_ns = 1000000;

static void *waker(void *arg)
{
    (void)arg;
    struct timespec t = { nap_ns / 1000000000, nap_ns % 1000000000 };
    for (;;)
        nanosleep(&t, NULL);
    return NULL;
}

__attribute__((constructor)) static void placebo_start(void)
{
    const char *n = getenv("PLACEBO_THREADS"), *us = getenv("PLACEBO_NAP_US");
    int threads = n ? atoi(n) : 2;
    if (us && atol(us) > 0)
        nap_ns = atol(us) * 1000;
    sigset_t all, old;
    sigfillset(&all);           /* the program's signals stay the program's */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < threads && i < 16; i++) {
        pthread_t t;
        pthread_create(&t, &at, waker, NULL);
    }
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
