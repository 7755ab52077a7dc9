/* CPU samples of the program's threads (cpusample.c: the timers, the
 * threads; cpusample_handler.c: the signal handler). */
#ifndef CLT_CPUSAMPLE_H
#define CLT_CPUSAMPLE_H
#include <signal.h>
#include <stdint.h>
#include "trace/samples.h"

extern int clt_cpusample_signal;        /* the signal it uses; 0: none */
/* the calling thread's buffer, as its handler last saw it (-1: none) */
extern __thread int clt_sample_slot __attribute__((tls_model("initial-exec")));
extern __thread uint32_t clt_sample_gen __attribute__((tls_model("initial-exec")));

/* What runs on any thread of the program: its own handler, its start, its
 * end. A thread the program's libraries start may be one AddressSanitizer
 * never heard of (their pthread_create reaches ours, not the sanitizer's):
 * its stack, reused from a thread of before a fork, still marked as that
 * one left it (sanitizer builds of the shim only) */
#define CLT_ANY_THREAD __attribute__((no_sanitize_address))

void clt_cpusample_load(void);          /* at load: CLTRACE_CPU_SAMPLES */
void clt_cpusample_start(void);         /* recording starts: every thread armed */
void clt_cpusample_stop(void);          /* at exit */
void clt_cpusample_forget(void);        /* a fork child */
void clt_cpusample_thread_ends(void *unused);
void clt_cpusample_on_signal(int sig, siginfo_t *si, void *uc);
#endif
