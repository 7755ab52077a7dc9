/* capture/unwind.c against libunwind, sample by sample: preloaded into a
 * program (tests/run.sh runs it under CPython and a C program), it takes
 * the main thread's SIGPROF every millisecond of CPU time and walks the
 * interrupted stack both ways, from the same signal context. At exit: how
 * many samples, how many read by unwind.c, how many left to libunwind, how
 * many differ (a frame's return address or the depth, within 64 frames);
 * exit status 1 where one differs or too few were read by unwind.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
#include "capture/unwind.h"

#define DEPTH 64
#define CURSOR_WORDS 264
#define UNW_REG_IP 16

static int (*init_local2)(void *, void *, int), (*step)(void *), (*get_reg)(void *, int, uint64_t *);
static struct clt_unw_rule rules[CLT_UNW_RULES];
static uint64_t stack_lo, stack_hi;
static int main_tid;
static volatile unsigned samples, read_here, left, differ;
static uint64_t first_ours[DEPTH], first_theirs[DEPTH];
static unsigned first_n_ours, first_n_theirs;
static uint64_t left_at[4];     /* where the first samples left to libunwind stopped */

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
    if ((int)syscall(SYS_gettid) != main_tid)
        return;
    uint64_t ours[DEPTH], theirs[DEPTH], cursor[CURSOR_WORDS];
    unsigned n = clt_unwind(uc, ours, DEPTH, rules, stack_lo, stack_hi), k = 0;
    samples++;
    if (!n) {
        if (left < 4)
            left_at[left] = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] + 1;
        left++;
        return;
    }
    read_here++;
    n = n == CLT_UNW_NONE ? 0 : n;
    if (init_local2(cursor, uc, 1) >= 0)
        while (k < DEPTH && step(cursor) > 0 && get_reg(cursor, UNW_REG_IP, &theirs[k]) >= 0 && theirs[k])
            k++;
    int same = n == k || (n == DEPTH && k == DEPTH);
    for (unsigned i = 0; same && i < n && i < k; i++)
        same = ours[i] == theirs[i];
    if (!same && differ++ == 0) {
        memcpy(first_ours, ours, sizeof ours);
        memcpy(first_theirs, theirs, sizeof theirs);
        first_n_ours = n;
        first_n_theirs = k;
    }
}

static void name(uint64_t pc)
{
    Dl_info di;
    if (dladdr((void *)(uintptr_t)(pc - 1), &di) && di.dli_fname)
        fprintf(stderr, "  %#lx %s (%s)\n", (unsigned long)pc, di.dli_sname ? di.dli_sname : "?", di.dli_fname);
    else
        fprintf(stderr, "  %#lx\n", (unsigned long)pc);
}

__attribute__((destructor)) static void report(void)
{
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_PROF, &off, NULL);
    for (unsigned i = 0; i < left && i < 4; i++)
        fprintf(stderr, "left to libunwind, stopped at:"), name(left_at[i]);
    if (differ) {
        fprintf(stderr, "first that differs: unwind.c %u frames, libunwind %u\n", first_n_ours, first_n_theirs);
        for (unsigned i = 0; i < first_n_ours || i < first_n_theirs; i++) {
            if (i < first_n_ours) name(first_ours[i]);
            if (i < first_n_theirs && (i >= first_n_ours || first_theirs[i] != first_ours[i]))
                fprintf(stderr, "   libunwind:"), name(first_theirs[i]);
        }
    }
    /* the verdict last: a failing test's last line says why */
    fprintf(stderr, "unwind (%s): %u samples, %u read by unwind.c, %u left to libunwind, %u differ\n",
            program_invocation_short_name, samples, read_here, left, differ);
    if (differ || samples < 20 || read_here < samples * 9 / 10)
        _exit(1);
}

__attribute__((constructor)) static void start(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    init_local2 = h ? (int (*)(void *, void *, int))dlsym(h, "_ULx86_64_init_local2") : NULL;
    step = h ? (int (*)(void *))dlsym(h, "_ULx86_64_step") : NULL;
    get_reg = h ? (int (*)(void *, int, uint64_t *))dlsym(h, "_ULx86_64_get_reg") : NULL;
    if (!init_local2 || !step || !get_reg) {
        fprintf(stderr, "unwind: no libunwind to compare with\n");
        _exit(1);
    }
    /* the first thread's stack as the handler has it, within glibc's (which reads /proc/self/maps) */
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) || pthread_attr_getstack(&attr, &lo, &size) ||
        clt_stack_bounds(&stack_lo, &stack_hi))
        _exit(1);
    uint64_t glibc_hi = (uint64_t)(uintptr_t)lo + size, here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    if (stack_hi > glibc_hi || here < stack_lo || here >= stack_hi) {
        fprintf(stderr, "unwind: the first thread's stack %#lx..%#lx, glibc's top %#lx, a frame at %#lx\n",
                (unsigned long)stack_lo, (unsigned long)stack_hi, (unsigned long)glibc_hi, (unsigned long)here);
        _exit(1);
    }
    main_tid = (int)syscall(SYS_gettid);
    clt_unwind_load();
    uint64_t cursor[CURSOR_WORDS];
    ucontext_t uc;
    if (getcontext(&uc) == 0 && init_local2(cursor, &uc, 0) >= 0)
        step(cursor);            /* libunwind's global state made here, not in the handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval every = { { 0, 1000 }, { 0, 1000 } };
    setitimer(ITIMER_PROF, &every, NULL);
}
