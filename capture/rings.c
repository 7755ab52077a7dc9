/* Per-thread rings: a thread's ring made on its first recorded call (the
 * process's first starts the writer, through what life.c set at load), the
 * slow path of a record's reservation (the ring full: wait for the writer,
 * or drop and count), and cltrace's own cost as the calling threads measure
 * it. Below everything that records; uses real.c and the writer. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "shim.h"

__thread struct clt_thread *clt_tls __attribute__((tls_model("initial-exec")));

/* A thread's end marks its ring for the writer. Through the C library's
 * thread_local destructor list rather than a pthread key: a second C library
 * in a dlmopen namespace (an ICD loader and driver loaded there) hands out
 * the same key numbers over the same per-thread slots, so the driver would
 * read our ring as its own object and write into it. */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int writer_state;          /* 0 not started, 1 running, -1 failed */
static const struct clt_rings_life *life;

void clt_rings_set_life(const struct clt_rings_life *l)
{
    life = l;
}

int clt_rings_state(void)
{
    return __atomic_load_n(&writer_state, __ATOMIC_ACQUIRE);
}

/* At exit: the writer finished (later calls only forward); 1 if it ran. */
int clt_rings_finish(void)
{
    pthread_mutex_lock(&start_lock);
    int was = writer_state == 1;
    if (was)
        writer_state = 2;
    pthread_mutex_unlock(&start_lock);
    return was;
}

/* A fork child: no writer, no rings of its own yet; it starts afresh on its
 * next call (unless the parent's writer had finished: then it only forwards). */
void clt_rings_forget(void)
{
    pthread_mutex_init(&start_lock, NULL);
    __atomic_store_n(&clt_threads, NULL, __ATOMIC_RELAXED);
    clt_tls = NULL;
    if (writer_state != 0 && writer_state != 2) {
        writer_state = 0;
        __atomic_store_n(&clt_active, !clt_cfg.DISABLE, __ATOMIC_RELAXED);
    }
}

static void thread_gone(void *arg)
{
    struct clt_thread *th = arg;
    /* The main thread's list runs inside exit(), before the exit handlers
     * (ours among them), and the thread goes on calling: its ring stays its
     * own. Freed here, the writer would hand the ring to the next call and
     * state its cost twice, or take it as a new thread's. */
    if (th->tid == clt_pid)
        return;
    if (clt_tls == th)
        clt_tls = NULL;
    __atomic_store_n(&th->state, CLT_TH_DEAD, __ATOMIC_RELEASE);
}

static struct clt_thread *thread_new(void)
{
    /* Reuse the ring of a thread that ended and was drained. */
    for (struct clt_thread *t = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
        int expect = CLT_TH_FREE;
        if (__atomic_compare_exchange_n(&t->state, &expect, CLT_TH_CLAIMED, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return t;
    }
    /* unset: 256 KiB, a busy thread moved to a larger one (writer/grow.c) */
    size_t size = 64 * 1024, want = clt_cfg.BUFFER_KB ? (size_t)clt_cfg.BUFFER_KB * 1024 : (size_t)256 << 10;
    while (size < want && size < ((size_t)1 << 30))
        size <<= 1;
    /* Rings and their headers are never freed (reused by later threads);
     * they live in mappings of their own, away from the heap, which other
     * code in the process can get wrong (a second C library in a dlmopen
     * namespace has been seen writing into heap blocks it did not own). */
    size_t hdr = (sizeof(struct clt_thread) + 4095) & ~(size_t)4095;
    uint8_t *map = mmap(NULL, hdr + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    struct clt_thread *t = (struct clt_thread *)map;
    uint8_t *buf = map + hdr;
    t->buf = t->rbuf = buf;
    t->mask = t->rmask = size - 1;
    t->state = CLT_TH_CLAIMED;
    static _Atomic uint32_t next_seq = 2;   /* 1 is the writer's own sequence */
    t->seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
    t->next = __atomic_load_n(&clt_threads, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&clt_threads, &t->next, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return t;
}

struct clt_thread *clt_thread_attach(void)
{
    int saved = errno;
    uint64_t t_attach = clt_now();
    struct clt_thread *th = NULL;
    int began = 0;
    if (__atomic_load_n(&writer_state, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&start_lock);
        if (writer_state == 0) {
            __atomic_store_n(&writer_state, life->start() == 0 ? 1 : -1, __ATOMIC_RELEASE);
            began = writer_state == 1;
        }
        pthread_mutex_unlock(&start_lock);
    }
    if (writer_state != 1) {
        __atomic_store_n(&clt_active, 0, __ATOMIC_RELAXED);
        life->stopped();
        goto out;
    }
    th = thread_new();
    if (!th)
        goto out;
    th->tid = (int)syscall(SYS_gettid);
    th->dropped = 0;
    th->cost_countdown = CLT_COST_EVERY;   /* each measured light call stands for 64 */
    th->cost_rng = (uint32_t)th->tid * 2654435761u | 1u;
    __atomic_store_n(&th->cost_exact, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_sampled, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_samples, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_cuts, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_cut, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->cost_waited, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&th->waits, 0, __ATOMIC_RELAXED);
    th->generation++;
    th->head_local = th->tail_cached = __atomic_load_n(&th->tail, __ATOMIC_ACQUIRE);
    __atomic_store_n(&th->head, th->head_local, __ATOMIC_RELAXED);
    __atomic_store_n(&th->state, CLT_TH_LIVE, __ATOMIC_RELEASE);
    clt_tls = th;
    __cxa_thread_atexit_impl(thread_gone, th, &__dso_handle);
    if (began)
        life->started();        /* its first window and control thread, with a ring to say so */
    /* a thread's first call: its ring (and the first thread's writer) */
    __atomic_store_n(&th->cost_exact, clt_now() - t_attach, __ATOMIC_RELAXED);
out:
    errno = saved;
    return th;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}


static int ring_fits(struct clt_thread *th, size_t max, uint64_t *pad)
{
    uint64_t size = th->mask + 1, head = th->head_local, off = head & th->mask;
    *pad = off + max > size ? size - off : 0;
    th->tail_cached = __atomic_load_n(&th->tail, __ATOMIC_SEQ_CST);
    return head + *pad + max - th->tail_cached <= size;
}

/* The ring is full (or wraps): wait for the writer on a futex -- by default
 * until there is room (back-pressure: nothing is lost), at most 10 s so that
 * a writer that cannot run (a deadlock on a lock the app holds) never hangs
 * the app; with CLTRACE_DROP=1 up to CLTRACE_WAIT_US. Then the call is
 * dropped and counted. A thread that is already dropping does not wait again
 * until there is room: one slow call when the writer falls behind, not one
 * per call. */
#define BACKPRESSURE_NS 10000000000L
#define WAIT_NAP_NS 100000000L
/* A wait of the calling thread (ring room, the collector), kept out of the
 * call being measured and counted in cltrace's own cost, less the paced
 * ticks of it where the device, not cltrace, set the pace. */
void clt_count_wait(struct clt_thread *th, uint64_t since, uint64_t paced)
{
    uint64_t ticks = clt_now() - since;
    th->wait_pending += ticks;
    paced = paced < ticks ? paced : ticks;
    __atomic_store_n(&th->cost_waited, __atomic_load_n(&th->cost_waited, __ATOMIC_RELAXED) + ticks - paced,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&th->waits, __atomic_load_n(&th->waits, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* What one clock read costs the calling thread: the best of a few runs of
 * 32 reads in a row, divided by 32. Not the gap of a back-to-back pair: on
 * AMD Zen two rdtsc overlap and their gap is ~1 tick where a read in a run
 * costs ~23, so subtracting the pair's gap left two reads in every measured
 * light call (2.5 times their cost); on Intel both are ~25 cycles. */
uint64_t clt_clock_read_ticks;
void clt_rings_measure_clock(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = clt_now(), b = a;
        for (int j = 0; j < 32; j++)
            b = clt_now();
        if (b - a < best)
            best = b - a;
    }
    clt_clock_read_ticks = (best + 16) / 32;
}

/* The next measured light call: 1 to 127 calls on, 64 on average. A fixed
 * gap of 64 met records of one size at one place in the ring every time (64
 * records of 64 bytes: the same offset in a cache line, the same distance
 * from the line the last prefetch asked for), and a run measured either its
 * cheap or its dear calls. */
static uint32_t next_gap(struct clt_thread *th)
{
    uint32_t x = th->cost_rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    th->cost_rng = x;
    return 1 + x % (2 * CLT_COST_EVERY - 1);
}

/* What a light call's recording may take at most, in clock reads: a record
 * of 64 bytes and three reads cost 4-10 reads' time (2026-11-28, this
 * VM and an H200 host); 256 leaves room for cache and TLB misses and a
 * page fault on the ring's first pass, not for a lost CPU. */
#define LIGHT_MOST_READS 256

/* From te to now lie three clock reads: t0's, t1's and now's (te's lies
 * before it). inner takes away the app's call and t1's read (t1 - t0 holds
 * it) and, for a one-clock call (one whose unmeasured calls read t0 only),
 * one read more (gen/gen.py). What is left holds as many reads as an
 * unmeasured call makes. An exact call also made te's and now's: two more. */
void clt_cost_add(struct clt_thread *th, uint64_t te, uint64_t inner, int exact)
{
    int64_t spent = (int64_t)(clt_now() - te - inner) - (int64_t)th->wait_pending;
    th->wait_pending = 0;
    if (!exact) {
        __atomic_store_n(&th->cost_samples, __atomic_load_n(&th->cost_samples, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        th->cost_countdown = next_gap(th);
        /* It stands for CLT_COST_EVERY calls: one that lost the CPU for 4 ms
         * inside the measure would add 256 ms. A light call records one
         * record with a few clock reads; past LIGHT_MOST_READS reads' time
         * the rest is not cltrace's, and is counted apart. */
        int64_t most = LIGHT_MOST_READS * (int64_t)(clt_clock_read_ticks ? clt_clock_read_ticks : 1);
        if (spent > most) {
            __atomic_store_n(&th->cost_cuts, __atomic_load_n(&th->cost_cuts, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
            __atomic_store_n(&th->cost_cut, __atomic_load_n(&th->cost_cut, __ATOMIC_RELAXED) + (uint64_t)(spent - most),
                             __ATOMIC_RELAXED);
            spent = most;
        }
    } else {
        spent += 2 * (int64_t)clt_clock_read_ticks;
    }
    _Atomic uint64_t *sum = exact ? &th->cost_exact : &th->cost_sampled;
    __atomic_store_n(sum, __atomic_load_n(sum, __ATOMIC_RELAXED) + (uint64_t)(spent > 0 ? spent : 0),
                     __ATOMIC_RELAXED);
}
/* The larger ring the writer offered (writer/grow.c), taken where this
 * ring has room for the 8 bytes that say so: the records go on there, at
 * the next position. */
static void take_offer(struct clt_thread *th)
{
    uint8_t *next = __atomic_load_n(&th->offer, __ATOMIC_ACQUIRE);
    if (!next)
        return;
    uint64_t head = th->head_local;
    th->tail_cached = __atomic_load_n(&th->tail, __ATOMIC_SEQ_CST);
    if (head + 8 - th->tail_cached > th->mask + 1)
        return;
    struct clt_rec *mark = (struct clt_rec *)(th->buf + (head & th->mask));
    mark->fn = CLT_FN_GROW;
    mark->size = 8;
    th->head_local = head + 8;
    th->buf = next;
    th->mask = th->offer_mask;
    __atomic_store_n(&th->offer, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&th->head, th->head_local, __ATOMIC_RELEASE);
}

struct clt_rec *clt_ring_reserve_slow(struct clt_thread *th, size_t max)
{
    uint64_t pad, w0 = clt_now();
    int saved = errno, waited = 0;
    take_offer(th);
    if (max > (th->mask + 1) / 4)
        goto drop;
    /* Called about once per trip around the ring: a good moment to make sure
     * the writer is awake when the ring is more than half full. */
    if (th->head_local - __atomic_load_n(&th->tail, __ATOMIC_RELAXED) > (th->mask + 1) / 2)
        clt_writer_kick();
    long budget_ns = th->dropping && !__atomic_load_n(&clt_symbolizer_busy, __ATOMIC_RELAXED) ? 0
                     : clt_cfg.DROP ? clt_cfg.WAIT_US * 1000 : BACKPRESSURE_NS;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!ring_fits(th, max, &pad)) {
        waited = 1;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        /* The writer reading a binary's symbols for the first time (tens of
         * ms, once per binary): wait for it rather than lose calls. */
        long limit = __atomic_load_n(&clt_symbolizer_busy, __ATOMIC_RELAXED) && budget_ns < 1000000000L
                     ? 1000000000L : budget_ns;
        long left = limit - ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec));
        if (left <= 0 || !__atomic_load_n(&clt_active, __ATOMIC_RELAXED))
            goto drop;
        /* the app waits for the writer: at idle priority it would get
         * no CPU while the app's other threads want them all */
        clt_own_threads_lift(CLT_LIFT_RING);
        uint32_t seq = __atomic_load_n(&th->wake_seq, __ATOMIC_SEQ_CST);
        __atomic_store_n(&th->waiting, 1, __ATOMIC_SEQ_CST);
        clt_writer_kick();
        take_offer(th);     /* one made before this thread said it waits */
        if (!ring_fits(th, max, &pad)) {
            /* in naps of 100 ms at most, each lifting cltrace's threads again: a
             * lift holds a second (clt_own_threads_settle), and one 10 s sleep
             * let them fall back to idle priority on 2 cores loaded by 4-12 busy
             * processes, the gzip thread then starved, the writer waiting on it
             * and 8 threads' rings full until the 10 s ran out (their calls
             * dropped: 10 runs in 62; 0 in 32 since) */
            long nap = left < WAIT_NAP_NS ? left : WAIT_NAP_NS;
            struct timespec ts = { nap / 1000000000L, nap % 1000000000L };
            futex(&th->wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
        }
        __atomic_store_n(&th->waiting, 0, __ATOMIC_RELAXED);
        /* a larger ring offered while the app waited: taken as soon as the
         * writer frees the 8 bytes that say so (a thread the writer is always
         * behind met a full ring at each slow path and never moved) */
        take_offer(th);
    }
    if (pad) {
        struct clt_rec *p = (struct clt_rec *)(th->buf + (th->head_local & th->mask));
        p->fn = CLT_FN_PAD;
        p->size = 0;
        th->head_local += pad;
        __atomic_store_n(&th->head, th->head_local, __ATOMIC_RELEASE);
    }
    th->dropping = 0;
    if (waited)
        clt_count_wait(th, w0, 0);
    errno = saved;
    return (struct clt_rec *)(th->buf + (th->head_local & th->mask));
drop:
    if (waited)
        clt_count_wait(th, w0, 0);
    th->dropping = 1;
    th->dropped++;
    __atomic_store_n(&th->dropped_pub, th->dropped, __ATOMIC_RELEASE);
    errno = saved;
    return NULL;
}

