/* capture/pending.c: the collector's pending list. Holes where commands
 * were collected, the front advancing over them, compaction keeping the
 * hand-over order, the count of queues with commands pending (what lets a
 * round stop once every queue waits), the newest command of each CPU
 * queue, and a table that overflows. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include "capture/pending.h"

/* pending.c asks capture/queues.c whether a queue is in order on a CPU
 * device: here, the queues whose address is odd */
int clt_queue_in_order_on_cpu(void *queue) { return (uintptr_t)queue & 1; }

static void *Q(uintptr_t n) { return (void *)n; }
static void *E(uintptr_t n) { return (void *)(0x10000 + n); }

static struct clt_pending *find(uint64_t flow)
{
    unsigned f, e;
    struct clt_pending *p = clt_pend_span(&f, &e);
    for (unsigned i = f; i < e; i++)
        if (p[i].event && p[i].flow == flow)
            return &p[i];
    return NULL;
}

int main(void)
{
    /* two queues, interleaved: 0..999 on queue 2, 1000..1999 on queue 3 (CPU) */
    for (uint64_t i = 0; i < 2000; i++)
        assert(clt_pend_push(i, E(i), i < 1000 ? Q(2) : Q(3), 0) == 0);
    assert(clt_pend_count() == 2000 && clt_pend_queues() == 2);
    void *q[4], *ev[4];
    assert(clt_pend_cpu_newest(q, ev, 4) == 1 && q[0] == Q(3) && ev[0] == E(1999));

    /* collect queue 2's first 700 and queue 3's first 10: holes, front advances */
    for (uint64_t i = 0; i < 700; i++)
        clt_pend_done(find(i));
    for (uint64_t i = 1000; i < 1010; i++)
        clt_pend_done(find(i));
    clt_pend_tidy();
    assert(clt_pend_count() == 1290);
    unsigned f, e;
    struct clt_pending *p = clt_pend_span(&f, &e);
    for (unsigned i = f, last = 0, n = 0; i < e; i++)    /* order kept, every live one there once */
        if (p[i].event) {
            assert(!n || p[i].flow > last);
            last = (unsigned)p[i].flow, n++;
            if (i + 1 == e)
                assert(n == 1290);
        }

    /* queue 2 emptied: one queue left pending */
    for (uint64_t i = 700; i < 1000; i++)
        clt_pend_done(find(i));
    clt_pend_tidy();
    assert(clt_pend_queues() == 1 && clt_pend_count() == 990);
    assert(find(1010) && !find(999));

    /* the newest collected before older ones (out of order): no longer offered */
    assert(clt_pend_push(5000, E(5000), Q(5), 0) == 0 && clt_pend_push(5001, E(5001), Q(5), 0) == 0);
    assert(clt_pend_cpu_newest(q, ev, 4) == 2);
    clt_pend_done(find(5001));
    assert(clt_pend_cpu_newest(q, ev, 4) == 1 && q[0] == Q(3));
    clt_pend_done(find(5000));
    clt_pend_tidy();
    assert(clt_pend_queues() == 1 && clt_pend_count() == 990);

    /* pushes after compaction keep the order */
    for (uint64_t i = 2000; i < 2100; i++)
        assert(clt_pend_push(i, E(i), Q(3), 0) == 0);
    assert(clt_pend_cpu_newest(q, ev, 4) == 1 && ev[0] == E(2099));
    for (uint64_t i = 1010; i < 2100; i++)
        clt_pend_done(find(i));
    clt_pend_tidy();
    assert(clt_pend_count() == 0 && clt_pend_queues() == 0);

    /* more queues than the table holds: "how many queues" is then unknown (0) */
    for (uint64_t i = 0; i < 100; i++)
        assert(clt_pend_push(i, E(i), Q(100 + 2 * i), 0) == 0);
    assert(clt_pend_queues() == 0 && clt_pend_count() == 100);
    for (uint64_t i = 0; i < 100; i++)
        clt_pend_done(find(i));
    clt_pend_tidy();
    assert(clt_pend_count() == 0);
    assert(clt_pend_push(1, E(1), Q(8), 0) == 0 && clt_pend_queues() == 1);   /* known again once empty */
    clt_pend_forget();
    assert(clt_pend_count() == 0 && clt_pend_queues() == 0);
    puts("pending: ok");
    return 0;
}
