/* The CPU sample's signal handler: the interrupted thread's C frames (the
 * unwinder from the signal frame on) and its Python frames, written into
 * the thread's buffer (trace/samples.h). No lock, no allocation; names and
 * lines of C frames are the writer's to find; a Python frame's line is read
 * here (the writer cannot trust its code object to be alive by then). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <pthread.h>
#include "cpusample.h"
#include "unwind.h"
#include "python.h"
#include "put.h"

__thread int clt_sample_slot __attribute__((tls_model("initial-exec"))) = -1;
__thread uint32_t clt_sample_gen __attribute__((tls_model("initial-exec")));

#define MAX_SAMPLE_BYTES (sizeof(struct clt_cpu_sample) + 8 * CLT_SAMPLE_WORDS)

/* libunwind's cursor (UNW_TDEP_CURSOR_LEN words: 127 on x86-64, 250 on
 * arm64), its flag for a signal's context, its register of the pc */
#define CURSOR_WORDS 264
#define UNW_INIT_SIGNAL_FRAME 1
#if defined(__x86_64__)
#define UNW_REG_IP 16
#else
#define UNW_REG_IP 32
#endif

CLT_ANY_THREAD static uint64_t interrupted_pc(const void *ucv)
{
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uint64_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* Room for one sample at the head: its place in the buffer (a pad before
 * it where the end is near), NULL when the writer has not caught up. */
CLT_ANY_THREAD static struct clt_cpu_sample *reserve(struct clt_sbuf *b, uint64_t *head)
{
    uint64_t h = __atomic_load_n(&b->head, __ATOMIC_RELAXED);
    uint64_t t = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
    uint64_t off = h & (CLT_SBUF_BYTES - 1), pad = 0;
    if (off + MAX_SAMPLE_BYTES > CLT_SBUF_BYTES)
        pad = CLT_SBUF_BYTES - off;
    if (h + pad + MAX_SAMPLE_BYTES - t > CLT_SBUF_BYTES)
        return NULL;
    if (pad) {
        ((struct clt_cpu_sample *)(b->buf + off))->size = 0;
        h += pad;
        off = 0;
    }
    *head = h;
    return (struct clt_cpu_sample *)(b->buf + off);
}

/* unw_backtrace from the handler up: its list cut where it passes through
 * the signal's return trampoline (the handler's return address) to the
 * interrupted instruction; 0 where it went another way */
CLT_ANY_THREAD static unsigned fast_frames(uint64_t *out, uint64_t pc, void *trampoline, uint32_t *flags)
{
    uint64_t pcs[CLT_SAMPLE_C_DEPTH + 8];
    int n = clt_backtrace((void **)pcs, (int)(sizeof pcs / sizeof pcs[0]));
    for (int i = 0; i + 1 < n && i < 8; i++) {
        if (pcs[i] != (uint64_t)(uintptr_t)trampoline || pcs[i + 1] != pc)
            continue;
        unsigned k = 1;
        for (int j = i + 2; j < n && k < CLT_SAMPLE_C_DEPTH; j++)
            out[k++] = pcs[j];
        *flags |= CLT_SAMPLE_UNWOUND;
        return k;
    }
    return 0;
}

/* The C frames from the interrupted one outward: the objects' frame
 * information read here (unwind.c) on a thread whose stack is known, else
 * unw_backtrace's fast path on a thread where it is warm, else libunwind
 * from the signal's context, frame by frame. Only that instruction where
 * the unwinder is not there, or this thread is inside it already. */
CLT_ANY_THREAD static unsigned c_frames(uint64_t *out, uint64_t pc, void *uc, void *trampoline,
                                        struct clt_unw_rule *rules, uint32_t *flags)
{
    uint64_t cursor[CURSOR_WORDS];
    int (*step)(void *) = __atomic_load_n(&clt_unwinder.step, __ATOMIC_ACQUIRE);
    out[0] = pc + 1;            /* read by the writer as a return address: the instruction itself */
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer delivers a signal late, at its next safe point, with
     * a copy of the context as it was: the stack has moved on since */
    (void)cursor, (void)step, (void)uc, (void)trampoline, (void)rules;
    return 1;
#endif
    unsigned own = clt_stack_hi ? clt_unwind(uc, out + 1, CLT_SAMPLE_C_DEPTH - 1, rules, clt_stack_lo, clt_stack_hi)
                                : 0;
    if (own) {
        *flags |= CLT_SAMPLE_UNWOUND;
        return own == CLT_UNW_NONE ? 1 : own + 1;
    }
    if (!step || clt_unwinding)
        return 1;
    unsigned fast = clt_unw_cache_made ? fast_frames(out, pc, trampoline, flags) : 0;
    if (fast)
        return fast;
    if (clt_unwinder.init(cursor, uc, UNW_INIT_SIGNAL_FRAME) < 0)
        return 1;
    unsigned k = 1;
    while (k < CLT_SAMPLE_C_DEPTH && step(cursor) > 0) {
        uint64_t ip;
        if (clt_unwinder.get_reg(cursor, UNW_REG_IP, &ip) < 0 || !ip)
            break;
        out[k++] = ip;
    }
    *flags |= CLT_SAMPLE_UNWOUND;
    return k;
}

CLT_ANY_THREAD static void take(struct clt_sbuf *b, const siginfo_t *si, void *uc, void *trampoline)
{
    uint64_t head;
    struct clt_cpu_sample *s = reserve(b, &head);
    if (!s) {
        __atomic_fetch_add(&b->lost, 1, __ATOMIC_RELAXED);
        return;
    }
    struct timespec c0, c1;     /* the thread's CPU time: cltrace's cost, the time off the CPU apart */
    int cpu = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0) == 0;
    s->t = clt_now();
    s->flags = 0;
    s->weight = 1 + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    uint64_t cpcs[CLT_SAMPLE_C_DEPTH];
    unsigned n = c_frames(cpcs, interrupted_pc(uc), uc, trampoline, b->unw_rules, &s->flags);
    if (__atomic_load_n(&clt_py_on, __ATOMIC_ACQUIRE)) {
        n = clt_py_stack_sampled(b->py_seen, s->stack, CLT_SAMPLE_WORDS, cpcs, n);
        s->flags |= CLT_SAMPLE_PYTHON;
    } else {
        memcpy(s->stack, cpcs, 8 * (size_t)n);
    }
    s->words = n;
    s->size = (uint32_t)(sizeof *s + 8 * (size_t)n);
    __atomic_fetch_add(&b->taken, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&b->head, head + s->size, __ATOMIC_RELEASE);
    __atomic_fetch_add(&b->handler_ticks, clt_now() - s->t, __ATOMIC_RELAXED);
    if (cpu && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1) == 0)      /* cltrace's cost, stated */
        __atomic_fetch_add(&b->handler_cpu_ns, (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000LL +
                                                          (c1.tv_nsec - c0.tv_nsec)), __ATOMIC_RELAXED);
}

/* The timer's value: its slot and generation. A signal of an earlier
 * thread's timer, delivered late, finds another generation: nothing. */
CLT_ANY_THREAD __attribute__((noinline)) void clt_cpusample_on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    void *trampoline = __builtin_return_address(0);
    int saved = errno;
    uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
    unsigned slot = (uint32_t)v;
    uint32_t gen = (uint32_t)(v >> 32);
    struct clt_sbuf *b = si->si_code == SI_TIMER && slot < CLT_SBUF_MAX
                             ? __atomic_load_n(&clt_sbufs[slot], __ATOMIC_ACQUIRE) : NULL;
    /* its state first (acquire: what arm() wrote before it went live), then its generation */
    if (b && __atomic_load_n(&b->state, __ATOMIC_ACQUIRE) == CLT_SBUF_LIVE &&
        __atomic_load_n(&b->gen, __ATOMIC_RELAXED) == gen) {
        clt_sample_slot = (int)slot;
        clt_sample_gen = gen;
        take(b, si, uc, trampoline);
    }
    errno = saved;
}
