/* Spill: a thread that records faster than the writer encodes does not wait.
 *
 * Encoding a record costs the writer 60 ns on one machine and 170-190 ns on
 * another (a 16-core Xeon VM, README), while a light call costs its thread
 * well under that: a loop of clSetKernelArg would run at the writer's pace
 * once its ring is full. So when a ring is more than half full, the writer
 * does not decode it: it writes the ring's committed bytes, as they are,
 * into a file beside the trace (one pwritev straight from the ring, no
 * copy of ours), hands the room back at once, and encodes those records
 * later, in order, when it has caught up (or at exit) -- the consumer that
 * only copies, as LTTng's. A thread's spilled records come before what is
 * in its ring; the merge by time across threads sees each thread's oldest,
 * wherever it is.
 *
 * A chunk is read back to the same ring offsets in a ring-sized buffer of
 * the writer's, so the records, the padding at the ring's end and the walk
 * over them are the ring's own. The file is unlinked (O_TMPFILE): nothing is
 * left behind; consumed chunks are punched out, and the file is cut to
 * nothing whenever every chunk is consumed. Bounded by CLTRACE_SPILL_MB; a
 * failed write (full disk) stops spilling, and the calling threads wait for
 * the writer as they would without it: nothing is lost. The write is done
 * where writer.c says (a thread of its own: a stalled disk holds it, not
 * the writer). The trace states how much went through the file
 * (cltrace.spilled_bytes). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>
#include "common/config.h"
#include "common/map.h"
#include "trace/ring.h"
#include "emit.h"
#include "spill.h"

struct chunk { uint64_t off, tail, head, t0, mask; };   /* file offset; ring positions [tail, head) of a ring of mask + 1 */
struct backlog {
    struct chunk *q;
    unsigned first, n, cap;    /* FIFO: q[first, first + n) */
    uint8_t *shadow;           /* ring-sized: the oldest chunk at its ring offsets */
    uint64_t shadow_size, pos; /* pos: encoded up to here in that chunk */
    int loaded;
};

static int fd = -1, failed;
static uint64_t end_off, total;
static uint64_t room;          /* the most the file may take: half the disk's free space at its start */
static _Atomic uint64_t outstanding;     /* read by a crash's flush (writer.c) */

static int open_file(const struct clt_writer *w)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", w->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        snprintf(dir, sizeof dir, ".");
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {               /* a file system without O_TMPFILE: a name, unlinked at once */
        char p[PATH_MAX + 8];
        snprintf(p, sizeof p, "%s.spill", w->path);
        fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            unlink(p);
    }
    if (fd < 0)
        return -1;
    /* the trace needs the disk too (its records are encoded from here):
     * set aside at most half of what is free, then let the threads wait */
    struct statvfs sv;
    room = fstatvfs(fd, &sv) == 0 ? (uint64_t)sv.f_bavail * sv.f_frsize / 2 : UINT64_MAX;
    return 0;
}

int clt_spill_maybe(struct clt_writer *w, struct clt_thread *th, int (*write)(struct clt_spill_write *),
                    uint64_t limit)
{
    if (failed || clt_cfg.SPILL_MB <= 0)
        return 0;
    struct backlog *b = th->spill;
    uint64_t tail = __atomic_load_n(&th->tail, __ATOMIC_RELAXED);
    uint64_t head = __atomic_load_n(&th->head, __ATOMIC_ACQUIRE);
    uint64_t size = th->rmask + 1, fill = head - tail;
    /* behind already: keep the ring nearly empty, the thread far from a wait */
    uint64_t most = (uint64_t)clt_cfg.SPILL_MB << 20;
    if (fill <= (b && b->n ? size / 8 : size / 2) || outstanding + fill > (limit < most ? limit : most))
        return 0;
    uint64_t t0 = clt_span_first_t0(th->rbuf, th->rmask, tail, head);
    if (t0 != UINT64_MAX) {
        /* Any failure (no file, full disk, no memory) stops spilling, quietly:
         * the records stay in the ring, the threads wait for the writer. */
        if ((fd < 0 && open_file(w) != 0) || (!b && !(b = th->spill = calloc(1, sizeof *b)))) {
            failed = 1;
            return 0;
        }
        if (end_off + fill > room)      /* the trace's room: the thread waits for the writer instead */
            return 0;
        if (b->first && b->first + b->n == b->cap) {    /* consumed ones at the front: reuse */
            memmove(b->q, b->q + b->first, b->n * sizeof *b->q);
            b->first = 0;
        }
        if (clt_grow(&b->q, b->first + b->n, &b->cap, sizeof *b->q, 64) != 0) {
            failed = 1;
            return 0;
        }
        uint64_t off = tail & th->rmask, first = size - off < fill ? size - off : fill;
        struct clt_spill_write job = { fd, fill > first ? 2 : 1,
                                       { { th->rbuf + off, first }, { th->rbuf, fill - first } }, end_off, 0 };
        if (!write(&job)) {
            failed = 1;
            return 0;
        }
        b->q[b->first + b->n++] = (struct chunk){ end_off, tail, head, t0, th->rmask };
        end_off += fill;
        outstanding += fill;
        total += fill;
    }
    __atomic_store_n(&th->tail, head, __ATOMIC_SEQ_CST);
    clt_ring_wake(th);
    return 1;
}

int clt_spill_encoded_to(const struct clt_thread *th, uint64_t *pos)
{
    const struct backlog *b = th->spill;
    if (!b || !b->n)
        return 0;
    *pos = b->loaded ? b->pos : b->q[b->first].tail;
    return 1;
}

int clt_spill_next_t0(const struct clt_thread *th, uint64_t *t0)
{
    const struct backlog *b = th->spill;
    if (!b || !b->n)
        return 0;
    const struct chunk *c = &b->q[b->first];
    *t0 = b->loaded ? clt_span_first_t0(b->shadow, c->mask, b->pos, c->head) : c->t0;
    return 1;
}

static int read_at(uint8_t *dst, size_t len, uint64_t at)
{
    while (len) {
        ssize_t r = pread(fd, dst, len, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        dst += r;
        len -= (size_t)r;
        at += (uint64_t)r;
    }
    return 0;
}

static void pop(struct clt_thread *th)
{
    struct backlog *b = th->spill;
    const struct chunk *c = &b->q[b->first];
    uint64_t len = c->head - c->tail;
    outstanding -= len;
    if (!outstanding) {           /* all consumed: the file starts over */
        if (ftruncate(fd, 0) == 0)
            end_off = 0;
    } else {
        (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)c->off, (off_t)len);
    }
    b->loaded = 0;
    b->first++;
    if (!--b->n)
        b->first = 0;
}

/* The read-back buffer, in huge pages where the kernel gives them (THP
 * "madvise" or "always"): chunks come back at their ring offsets, so it is
 * written whole. On a VM whose page faults trap to the hypervisor its 256
 * pages of 4 KiB were ~3 ms of the writer's (11.5-15 us each, 2-core VM,
 * 2026-11-30); one 2 MiB page is ~0.25 ms there, ~0.1 ms on bare metal. */
#define HUGE_PAGE ((size_t)2 << 20)

/* len bytes (whole huge pages) at a huge page's boundary, asked for in huge
 * pages (THP "madvise" or "always"; pages of 4 KiB where not); NULL: none */
static uint8_t *huge_map(size_t len)
{
    uint8_t *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    uint8_t *p = (uint8_t *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (p > m)
        munmap(m, (size_t)(p - m));
    munmap(p + len, (size_t)(m + len + HUGE_PAGE - (p + len)));
    (void)madvise(p, len, MADV_HUGEPAGE);
    return p;
}

static size_t shadow_len(uint64_t size)
{
    return (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
}

int clt_spill_span(struct clt_thread *th, struct clt_span *s)
{
    struct backlog *b = th->spill;
    if (!b || !b->n)
        return 0;
    const struct chunk *c = &b->q[b->first];
    uint64_t size = c->mask + 1;      /* the ring's then: a thread's ring may have grown since (grow.c) */
    if (!b->loaded) {
        if (b->shadow_size != size) {
            if (b->shadow)
                munmap(b->shadow, shadow_len(b->shadow_size));
            b->shadow_size = 0;
            if (!(b->shadow = huge_map(shadow_len(size))))
                return -1;  /* no memory now: the chunk waits, and the ring behind it */
            b->shadow_size = size;
        }
        uint64_t len = c->head - c->tail, off = c->tail & c->mask, first = size - off < len ? size - off : len;
        if (read_at(b->shadow + off, first, c->off) != 0 || read_at(b->shadow, len - first, c->off + first) != 0) {
            clt_msg("records set aside could not be read back (%s); %llu bytes of them are lost",
                    strerror(errno), (unsigned long long)len);
            pop(th);
            return 0;
        }
        b->loaded = 1;
        b->pos = c->tail;
    }
    *s = (struct clt_span){ b->shadow, c->mask, b->pos, c->head };
    return 1;
}

void clt_spill_consumed(struct clt_thread *th, uint64_t tail)
{
    struct backlog *b = th->spill;
    b->pos = tail;
    /* done, or nothing but the ring's end padding left: a chunk with no
     * record to show would hold the thread's later records back forever */
    if (clt_span_first_t0(b->shadow, b->q[b->first].mask, tail, b->q[b->first].head) == UINT64_MAX)
        pop(th);
}

uint64_t clt_spill_total(void) { return total; }

uint64_t clt_spill_outstanding(void) { return __atomic_load_n(&outstanding, __ATOMIC_RELAXED); }

void clt_spill_close(void)
{
    if (fd >= 0)
        close(fd);
    fd = -1;
}

void clt_spill_forget(void)
{
    clt_spill_close();            /* the child's copy of the descriptor */
    failed = 0;
    end_off = outstanding = total = 0;
}
