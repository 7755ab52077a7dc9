/* Grow: a thread that records faster than the writer encodes moves to a
 * larger ring, of 4 MiB, its pages made by the writer.
 *
 * A launch loop on PoCL (2 cores, a VM: a first touch of a page costs
 * 11.5-15 us there) filled a 1 MiB ring three times over: 256 page faults
 * on the app's thread and ~1.4 MB through the spill file, whose pages the
 * kernel makes and frees again (docs/PERFORMANCE.md). Every thread's ring
 * that large from its first record would cost each thread its pages, so
 * rings start at 256 KiB and only a busy one moves: the writer, seeing a
 * ring more than a quarter full, maps the larger ring and makes its pages
 * (its faults are the writer's) as it offers it; the thread takes it on its next
 * slow path (a wrap, or a full ring: capture/rings.c), leaving CLT_FN_GROW
 * where it stopped, and goes on at the next position there. The writer,
 * reading that record, reads the new ring from then on and unmaps the old
 * one. Positions go on across the move, so nothing else changes: spilled
 * records keep the layout they were spilled in (spill.c), and no ring is
 * spilled while an offer is out (its records would straddle two).
 *
 * In pages of 4 KiB, not huge ones: on a VM a huge page the guest has not
 * used before is backed by the host as the writer touches it, 512 of the
 * host's pages at once. 4 MiB in huge pages took the writer 0.4-0.7 ms, and
 * 13 ms in 1 of 12 fresh processes (a 2-core KVM guest, 2026-12-02); in a
 * PoCL launch loop, where the app fills the small ring while the writer
 * makes it, 6 of 14 runs then waited 12-20 ms. In pages of 4 KiB it took
 * 1.2-1.7 ms every time (the kernel hands out pages it used recently), the
 * waits were 2.7-5.5 ms, and the loop ran 2-3 % shorter (81 shuffled
 * rounds, three times).
 *
 * Offered once its first GROW_HEAD is touched, the rest populated after:
 * the writer, at idle priority, first ran when the app's 256 KiB ring was
 * full (the launch loop, 8 runs of 8), and the app waited while it touched
 * all 4 MiB (1.9-2.0 ms) and encoded half the small ring (0.8-2 ms):
 * 3.4-5.5 ms. Offered at once, and the waiting thread woken for it, the
 * waits were 0.2-1.3 ms (7 runs); PoCL's queue ran its backlog meanwhile,
 * so that loop's whole run kept its length (301 rounds), where a device that
 * empties its queue faster would wait with the app.
 *
 * GROW_MOST rings at most; then 1 MiB, touched by the
 * thread as it goes (the size every ring had before). Only with
 * CLTRACE_BUFFER_KB unset: a size asked for is the size. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>
#include "common/config.h"
#include "grow.h"
#include "trace/ring.h"

#define GROW_LARGE ((uint64_t)4 << 20)
#define GROW_PLAIN ((uint64_t)1 << 20)
#define GROW_MOST 8

static unsigned grown, large_out;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23      /* Linux 5.14 */
#endif
/* The part of the ring touched before it is offered: the thread's next
 * ~1,000 launches (PoCL) */
#define GROW_HEAD ((size_t)256 << 10)

/* Faults taken for [at, at + len) of a mapping the thread may write into
 * meanwhile: the kernel's populate, which makes missing pages and writes
 * nothing (a store of ours would overwrite a record). 0: not supported. */
static int populate(uint8_t *at, size_t len)
{
    return madvise(at, len, MADV_POPULATE_WRITE) == 0;
}

/* The ring, its first GROW_HEAD (all of it where the kernel cannot
 * populate a page without writing it) touched here, one fault a page of
 * 4 KiB (where the kernel would make huge pages of every mapping, not this
 * one). *rest: how much is left to populate once it is offered. */
static uint8_t *fresh_ring(size_t len, size_t *rest)
{
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    (void)madvise(p, len, MADV_NOHUGEPAGE);
    size_t now = len > GROW_HEAD && populate(p, GROW_HEAD) ? GROW_HEAD : len;
    if (now == len) {
        long page = sysconf(_SC_PAGESIZE);
        for (size_t at = 0; at < len; at += page > 0 ? (size_t)page : 4096)
            ((volatile uint8_t *)p)[at] = 0;
    }
    *rest = len - now;
    return p;
}

/* The larger ring for a ring of size bytes, and its size; NULL: none */
static uint8_t *larger(uint64_t size, uint64_t *len, size_t *rest)
{
    *rest = 0;
    if (large_out < GROW_MOST && size < GROW_LARGE) {
        uint8_t *p = fresh_ring(GROW_LARGE, rest);
        if (p) {
            large_out++;
            *len = GROW_LARGE;
            return p;
        }
    }
    if (size >= GROW_PLAIN)
        return NULL;
    uint8_t *p = mmap(NULL, GROW_PLAIN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *len = GROW_PLAIN;
    return p == MAP_FAILED ? NULL : p;
}

int clt_grow_pending(struct clt_thread *th)
{
    if (th->offered)
        return 1;
    if (clt_cfg.BUFFER_KB || __atomic_load_n(&th->state, __ATOMIC_ACQUIRE) != CLT_TH_LIVE)
        return 0;
    uint64_t fill = __atomic_load_n(&th->head, __ATOMIC_ACQUIRE) - __atomic_load_n(&th->tail, __ATOMIC_RELAXED);
    uint64_t size = th->rmask + 1, len = 0;
    size_t rest;
    uint8_t *p;
    if (fill <= size / 4 || !(p = larger(size, &len, &rest)))
        return 0;
    th->offered = p;
    th->offer_mask = len - 1;
    /* offered before the rest is populated, and a thread waiting on its
     * full ring woken to take it (seq_cst: against its store of waiting) */
    __atomic_store_n(&th->offer, p, __ATOMIC_SEQ_CST);
    clt_ring_wake(th);
    if (rest)
        (void)populate(p + (len - rest), rest);
    return 1;
}

void clt_grow_adopt(struct clt_thread *th, uint64_t pos)
{
    uint8_t *old = th->rbuf;
    uint64_t old_size = th->rmask + 1;
    th->rbuf = th->offered;
    th->rmask = th->offer_mask;
    th->offered = NULL;
    __atomic_store_n(&th->tail, pos + 8, __ATOMIC_SEQ_CST);
    munmap(old, old_size);      /* page-aligned: the ring after its header's page(s) (rings.c) */
    grown++;
}

void clt_grow_cancel(struct clt_thread *th)
{
    if (!th->offered)
        return;
    __atomic_store_n(&th->offer, NULL, __ATOMIC_RELAXED);
    munmap(th->offered, th->offer_mask + 1);
    th->offered = NULL;
    if (th->offer_mask + 1 == GROW_LARGE)
        large_out--;
}

unsigned clt_grow_count(void)
{
    return grown;
}

void clt_grow_forget(void)
{
    grown = large_out = 0;
}
