/* The per-thread rings as both sides see them: the list of every ring ever
 * attached (the writer walks it), the switch that says whether to record,
 * and the wake-up a producer waiting for room sleeps on. The capture side
 * makes and fills rings (capture/rings.c, capture/put.h); the writer drains
 * them (writer/dispatch.c). */
#ifndef CLT_RING_H
#define CLT_RING_H
#include "trace/record.h"

extern int clt_active;                           /* 0: forward only, record nothing */
extern struct clt_thread *_Atomic clt_threads;   /* every ring ever attached */
extern int clt_stacks_recorded;                  /* records may carry call stacks */

void clt_ring_wake(struct clt_thread *th);        /* the writer gave room back */
/* Counters one side writes and the app's threads read on every command (the
 * budget's price), a cache line for each writer: a line the collector or
 * the writer writes is one the app's next call must fetch again, and
 * _Alignas on a lone variable lets the compiler fill the rest of its line
 * with others (capture/collect.c's "line of its own" shared one with seven
 * of the collector's). */
struct clt_shared_counts {
    /* the collector's: its CPU time; clt_now() ticks the app's threads were
     * held at the limit of commands in flight while every command left still
     * ran on its device (the device set the pace, not cltrace; not in their
     * cost_waited); completions it recorded where the app had paused, while
     * it was enqueuing (a backlog past its bound, a released queue), at exit */
    _Alignas(64) _Atomic uint64_t collector_cpu_ns, paced_wait_ticks;
    _Atomic uint64_t collected_paused, collected_forced, collected_exit;
    /* the writer's time drawing device commands (ns) and how many: what a
     * timed command costs it, for the budget's price */
    _Alignas(64) _Atomic uint64_t writer_command_ns, writer_commands;
    /* the app's threads': CLTRACE_SAMPLE's budget (capture/sample.c), what
     * the commands timed cost (ns, each at the price of its time), the price
     * last charged */
    _Alignas(64) _Atomic uint64_t budget_spent_ns, budget_price_ns;
};
extern struct clt_shared_counts clt_shared;

#endif
