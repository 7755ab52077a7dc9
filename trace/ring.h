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
extern _Atomic uint64_t clt_collector_cpu_ns;    /* CPU time of the completion collector thread */
/* clt_now() ticks the app's threads were held at the limit of commands in
 * flight while every command left still ran on its device: the device set
 * the pace, not cltrace (capture/collect.c); not in their cost_waited. */
extern _Atomic uint64_t clt_paced_wait_ticks;
/* Completions the collector recorded: where the app had paused, while it
 * was enqueuing (a backlog past its bound, a released queue), at its exit. */
extern _Atomic uint64_t clt_collected_paused, clt_collected_forced, clt_collected_exit;
/* CLTRACE_SAMPLE's budget (capture/sample.c): what timing the commands timed
 * cost (ns, each at the price of its time), the price last charged */
extern _Atomic uint64_t clt_budget_spent_ns, clt_budget_price_ns;
/* the writer's time drawing device commands (ns) and how many: what a timed
 * command costs it, for the budget's price */
extern _Atomic uint64_t clt_writer_command_ns, clt_writer_commands;

#endif
