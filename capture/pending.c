/* The collector's pending commands, in hand-over order.
 *
 * A round asks the driver about the commands from the front; on an
 * in-order queue the first one still running ends that queue's part of the
 * round. The list used to be rebuilt on every round (each entry kept was
 * copied), and a round went on past the point where every queue waited:
 * behind a 20,000-launch loop on PoCL over 16 cores the collector used
 * 0.75 s of CPU, rounding over thousands of waiting entries every
 * 20-30 us; 0.19 s since. Now a collected entry becomes a hole, the front
 * advances over holes, the list is compacted only when holes are most of
 * it, and the count of queues with commands pending lets a round stop as
 * soon as each of them waits. */
#define _GNU_SOURCE
#include <string.h>
#include "capture/pending.h"
#include "capture/hooks.h"
#include "common/map.h"

#define TRACKED_QUEUES 64
/* The list, written by the collector at every command it takes or
 * collects: on a cache line of its own (the flag every wrapper reads,
 * clt_py_on, shared theirs). Live entries: [first, end), holes among them. */
static struct {
    _Alignas(64) struct clt_pending *pend;
    unsigned first, end, cap, holes;
} list;
static struct {
    void *queue;
    unsigned n;
    void *newest;     /* its latest command's event: on an in-order queue, collected last */
    int cpu;          /* in order, of a CPU device (clt_queue_in_order_on_cpu) */
} queues[TRACKED_QUEUES];
static unsigned n_queues;
static int overflow;      /* a queue past the table had commands pending: until the list empties */

static void compact(void)
{
    unsigned k = 0;
    for (unsigned i = list.first; i < list.end; i++)
        if (list.pend[i].event)
            list.pend[k++] = list.pend[i];
    list.first = 0, list.end = k, list.holes = 0;
}

int clt_pend_push(uint64_t flow, void *event, void *queue, uint32_t cb)
{
    if (list.end == list.cap && (list.first || list.holes))
        compact();
    if (clt_grow(&list.pend, list.end, &list.cap, sizeof *list.pend, 1024) != 0)
        return -1;
    list.pend[list.end++] = (struct clt_pending){ flow, event, queue, cb };
    for (unsigned q = 0; q < n_queues; q++)
        if (queues[q].queue == queue) {
            queues[q].n++;
            queues[q].newest = event;
            return 0;
        }
    if (n_queues < TRACKED_QUEUES)
        queues[n_queues++] = (typeof(queues[0])){ queue, 1, event, clt_queue_in_order_on_cpu(queue) };
    else
        overflow = 1;
    return 0;
}

unsigned clt_pend_count(void)
{
    return list.end - list.first - list.holes;
}

struct clt_pending *clt_pend_span(unsigned *f, unsigned *e)
{
    *f = list.first, *e = list.end;
    return list.pend;
}

void clt_pend_done(struct clt_pending *p)
{
    for (unsigned q = 0; q < n_queues; q++)
        if (queues[q].queue == p->queue) {
            if (--queues[q].n == 0)
                queues[q] = queues[--n_queues];
            else if (queues[q].newest == p->event)
                queues[q].newest = NULL;    /* collected before older ones: never asked about again */
            break;
        }
    p->event = NULL;
    list.holes++;
}

unsigned clt_pend_cpu_newest(void **queue, void **event, unsigned max)
{
    unsigned k = 0;
    for (unsigned q = 0; q < n_queues && k < max; q++)
        if (queues[q].cpu && queues[q].newest) {
            queue[k] = queues[q].queue;
            event[k++] = queues[q].newest;
        }
    return k;
}

int clt_pend_on_cpu(void)
{
    for (unsigned q = 0; q < n_queues; q++)
        if (queues[q].cpu)
            return 1;
    return 0;
}

unsigned clt_pend_queues(void)
{
    return overflow ? 0 : n_queues;
}

void clt_pend_tidy(void)
{
    while (list.first < list.end && !list.pend[list.first].event)
        list.first++, list.holes--;
    if (list.first == list.end)
        list.first = list.end = n_queues = 0, overflow = 0;   /* nothing pending: every count is 0 */
    else if (list.holes > (list.end - list.first) / 2 || list.first > list.end / 2)
        compact();
}

void clt_pend_forget(void)
{
    list.first = list.end = list.holes = n_queues = 0;
    overflow = 0;
}
