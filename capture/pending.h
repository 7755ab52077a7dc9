/* The collector's list of commands handed over and not yet complete
 * (capture/pending.c). Whoever holds collect.c's pass_lock: the collector,
 * or an app thread collecting where it waits anyway. */
#ifndef CLT_PENDING_H
#define CLT_PENDING_H
#include <stdint.h>

struct clt_pending {
    uint64_t flow;
    void *event;              /* NULL: collected (a hole, skipped until the list is tidied) */
    void *queue;
    uint32_t cb;              /* its times' slot where callbacks time it (cbtime.h), else 0 */
};

/* 0, or -1 without memory (the caller leaves it where it came from). */
int clt_pend_push(uint64_t flow, void *event, void *queue, uint32_t cb);
/* Commands not yet collected. */
unsigned clt_pend_count(void);
/* The live part of the list, in hand-over order: entries [*first, *end);
 * holes among them have event NULL. */
struct clt_pending *clt_pend_span(unsigned *first, unsigned *end);
/* p was collected: a hole now; its queue has one pending command less. */
void clt_pend_done(struct clt_pending *p);
/* How many queues have commands pending; 0 when more were pending than
 * the list tracks (then "every queue waits" cannot be known). */
unsigned clt_pend_queues(void);
/* The in-order queues of a CPU device with commands pending, and the
 * newest command's event of each (alive while pending; a queue whose
 * newest was collected before older ones is left out): at most max. */
unsigned clt_pend_cpu_newest(void **queue, void **event, unsigned max);
int clt_pend_on_cpu(void);                 /* a CPU device's commands are pending */
/* After a round: skip the holes at the front, compact when the holes are
 * the larger part (amortised: each entry moves O(1) times). */
void clt_pend_tidy(void);
/* The child of fork(): nothing pending (its memory stays: the parent's). */
void clt_pend_forget(void);
#endif
