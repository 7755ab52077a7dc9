/* The writer thread: records in, packets out, in order.
 *
 * It drains every thread's ring (merged by time across threads), hands each
 * record to dispatch.c and the modules under it, and gives the packets to
 * the file (file.c); it serves the requests the capture side makes of it: a
 * flush (a crash, _exit, `cltrace ctl`), a snapshot (the flight recorder's
 * memory into a file of its own), the exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "emit.h"
#include "file.h"
#include "lifetime.h"
#include "grow.h"
#include "spill.h"
#include "common/config.h"
#include "common/job.h"
#include "trace/ring.h"
#include "writer.h"

static struct clt_writer W;
static pthread_t writer_thread;
static _Atomic int stop_requested;
static _Atomic uint32_t wake_seq;     /* futex the idle writer sleeps on */
static _Atomic uint32_t sleeping;
static _Atomic int exit_began;        /* the app's exit waits for the trace: gzip beside the drawing */
static _Atomic int sched_sampled;     /* the scheduler's account as the exit began: taken */
static _Atomic uint32_t flush_req, flush_done;   /* clt_writer_flush_now() handshake */
static _Atomic uint64_t flush_until = UINT64_MAX; /* the records a flush waits for: those before it (ticks) */

/* A producer whose ring is filling up wakes an idle writer at once instead
 * of letting it finish its sleep. Counted even while the writer is awake: a
 * writer that looked for work before this kick finds the count moved and
 * does not nap (writer_main). Counted only while it slept, the kick of the
 * exit's stop, made while the writer finished the pass the exit's start had
 * woken it for, was lost: the exit waited out the writer's nap, 16 ms on 2
 * cores (a program recording nothing in its loop: its exit +18 ms). */
void clt_writer_kick(void)
{
    __atomic_fetch_add(&wake_seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sleeping, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The memory into the trace file, once (exit, a fatal signal, _exit); what
 * the writer encodes after it goes straight to the file. say: what it held
 * as attributes now (a crash: no footer will say it). */
static void rec_dump_main(struct clt_writer *w, int say)
{
    if (!clt_rec_on() || w->rec_dumping)
        return;
    clt_writer_flush(w);
    w->rec_dumping = 1;
    clt_rec_dump(w, clt_file_put_whole);
    if (say) {
        static struct clt_attrs a;
        a.n = 0;
        clt_attr_int(&a, "cltrace.ring_bytes", (int64_t)clt_rec_held());
        clt_attr_int(&a, "cltrace.ring_dropped_bytes", (int64_t)clt_rec_dropped());
        clt_attrs_put(w, &a);
    }
}

static int snap_fd = -1;
static void rec_put_fd(struct clt_writer *w, const uint8_t *p, size_t n)
{
    (void)w;
    while (n && snap_fd >= 0) {
        ssize_t k = write(snap_fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            clt_msg("writing a snapshot failed: %s", k < 0 ? strerror(errno) : "nothing written");
            close(snap_fd);
            snap_fd = -1;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static _Atomic uint32_t snap_req, snap_done;
static _Atomic int snap_whole = 1;      /* the last snapshot (or ctl flush) held every record before its asking */
static _Atomic int flush_bounded;       /* the flush asked for is `cltrace ctl`'s: SNAP_DRAIN_NS at most */
static _Atomic int snap_bounded;        /* the snapshot asked for is waited for: SNAP_DRAIN_NS at most */
/* How long a snapshot asked for by `cltrace ctl` may drain before it is
 * written: the channel answers within a second whatever the app does. With
 * the backlog bounded (below) the drain ends well before; this is the net. */
#define SNAP_DRAIN_NS 700000000ull
static _Atomic uint64_t snap_until = UINT64_MAX;    /* a snapshot of the memory as it was then (ticks) */
static char snap_path[PATH_MAX], snap_why[300];
static unsigned n_snaps;

enum { ASKED_SNAPSHOT, ASKED_FLUSH };

/* At the asking: where each ring's committed records end. Every ring, the
 * free ones too (a thread that takes one later starts past the mark).
 * Async-signal-safe (a crash's flush). */
static void mark_heads(int k)
{
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next)
        th->asked_head[k] = __atomic_load_n(&th->head, __ATOMIC_ACQUIRE);
}

/* Records committed before the asking k not encoded yet, on any thread. By
 * position, not time: a call in flight at the asking (begun, not returned)
 * is not one of them. */
static int records_before(int k)
{
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next) {
        int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
        uint64_t at;
        if (st != CLT_TH_LIVE && st != CLT_TH_DEAD)
            continue;
        if (!clt_spill_encoded_to(th, &at))
            at = __atomic_load_n(&th->tail, __ATOMIC_ACQUIRE);
        if (at < th->asked_head[k])
            return 1;
    }
    return 0;
}

static int drain_all(int may_spill, uint64_t deadline_ns);

/* ---- the backlog's bound ------------------------------------------------
 * With a control channel (windows, the flight recorder: capture/window.c),
 * a snapshot or a flush asked for must find every record made before the
 * asking encoded within the channel's second, however fast the app
 * records. So the records not yet encoded are held to what the writer
 * encodes in BACKLOG_NS at its pace measured in this run (its wall time
 * while draining, the app's competition for the CPUs included): past that
 * a ring is not spilled, and its thread waits for the writer as it would
 * without a spill. The run takes about as long (what was spilled was
 * encoded at the exit instead); the app's loop runs at the writer's pace
 * once that much is behind. Without a channel nothing asks: the spill
 * keeps the app at its own pace (CLTRACE_SPILL_MB). */
#define BACKLOG_NS 100000000.0
#define BACKLOG_MIN (4ull << 20)
static _Atomic int backlog_bounded;
static double pace_bytes_per_ns = 0.02;     /* until measured: a sanitizer build's (20 MB/s) */

void clt_writer_bound_backlog(void)
{
    __atomic_store_n(&backlog_bounded, 1, __ATOMIC_RELEASE);
}

/* The pace over each 50 ms of draining (short passes on a core that was
 * free for a moment would flatter it); it falls at once and rises slowly:
 * a snapshot drains while the app competes for the CPUs. */
static void pace_note(uint64_t bytes, uint64_t ns)
{
    static uint64_t sum_bytes, sum_ns;
    sum_bytes += bytes;
    sum_ns += ns;
    if (sum_ns < 50000000u || sum_bytes < (256u << 10))
        return;
    double now = (double)sum_bytes / (double)sum_ns;
    pace_bytes_per_ns = now < pace_bytes_per_ns ? now : 0.75 * pace_bytes_per_ns + 0.25 * now;
    sum_bytes = sum_ns = 0;
}

static uint64_t spill_limit(void)
{
    if (!__atomic_load_n(&backlog_bounded, __ATOMIC_ACQUIRE))
        return UINT64_MAX;
    uint64_t b = (uint64_t)(pace_bytes_per_ns * BACKLOG_NS);
    return b > BACKLOG_MIN ? b : BACKLOG_MIN;
}

/* The records made before the asking k encoded, for a snapshot or a flush
 * (drain_all stops at the request's time); bounded: SNAP_DRAIN_NS at most.
 * 1: every one of them encoded. */
static int drain_before(int k, int bounded)
{
    uint64_t end = bounded ? clt_boottime_ns() + SNAP_DRAIN_NS : 0;
    for (int i = 0; i < 4096 && drain_all(0, end) && (!end || clt_boottime_ns() < end); i++)
        ;
    return !records_before(k);
}

int clt_writer_snapshot_whole(void)
{
    return __atomic_load_n(&snap_whole, __ATOMIC_ACQUIRE);
}

/* What the memory holds now, into a file of its own beside the trace
 * (raw .pftrace: whole at once), with attributes that say what it is. */
static void rec_snapshot(struct clt_writer *w)
{
    clt_writer_flush(w);
    char base[PATH_MAX];
    snprintf(base, sizeof base, "%s", w->path);
    char *dot = strstr(base, ".pftrace");
    if (dot)
        *dot = 0;
    snprintf(snap_path, sizeof snap_path, "%.*s.snapshot-%u.pftrace", (int)(sizeof snap_path - 32), base, ++n_snaps);
    snap_fd = open(snap_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (snap_fd < 0) {
        clt_msg("cannot create %s: %s", snap_path, strerror(errno));
        snap_path[0] = 0;
        return;
    }
    clt_rec_dump(w, rec_put_fd);
    static struct clt_attrs a;
    a.n = 0;
    clt_attr_str(&a, "cltrace.snapshot", snap_why);
    clt_attr_int(&a, "cltrace.snapshot_whole", snap_whole);
    /* the asking, on the trace's clock: the calls it holds end there */
    clt_attr_int(&a, "cltrace.snapshot_asked_ns", (int64_t)clt_clock_to_ns(&w->clock, snap_until));
    /* the times it recorded: after `ctl stop` and `start` the ring may
     * hold calls from either side of the stopped time */
    clt_windows_attr(&a, clt_clock_to_ns(&w->clock, snap_until));
    clt_attr_int(&a, "cltrace.ring_bytes", (int64_t)clt_rec_held());
    clt_attr_int(&a, "cltrace.ring_dropped_bytes", (int64_t)clt_rec_dropped());
    clt_attr_str(&a, "cltrace.host", w->job.host);
    w->rec_dumping = 2;     /* not kept apart */
    size_t at = w->len;
    clt_attrs_put(w, &a);
    rec_put_fd(w, w->out + at, w->len - at);
    w->len = at;
    w->rec_dumping = 0;
    if (snap_fd >= 0)
        close(snap_fd);
    snap_fd = -1;
}

const char *clt_writer_snapshot(const char *why, unsigned timeout_ms)
{
    if (timeout_ms)             /* waited for: the writer gets its CPU */
        clt_own_threads_lift(CLT_LIFT_SNAPSHOT);
    if (!clt_rec_on()) {
        __atomic_store_n(&flush_bounded, timeout_ms != 0, __ATOMIC_RELEASE);
        clt_writer_flush_now(timeout_ms, 0);
        __atomic_store_n(&flush_bounded, 0, __ATOMIC_RELEASE);
        return W.path;
    }
    if (!timeout_ms && __atomic_load_n(&snap_req, __ATOMIC_ACQUIRE) != __atomic_load_n(&snap_done, __ATOMIC_ACQUIRE))
        return NULL;      /* one is pending already */
    snprintf(snap_why, sizeof snap_why, "%s", why);
    /* what the memory held when it was asked for: from a call, at that
     * call; from `cltrace ctl`, at the asking. Never more: under load the
     * app records as fast as the writer drains, and a writer that chased
     * the newest record would never take it */
    mark_heads(ASKED_SNAPSHOT);       /* first: what it marks began before the time below */
    __atomic_store_n(&snap_until, clt_now_after_loads(), __ATOMIC_RELEASE);
    __atomic_store_n(&snap_bounded, timeout_ms != 0, __ATOMIC_RELEASE);
    uint32_t ticket = __atomic_add_fetch(&snap_req, 1, __ATOMIC_ACQ_REL);
    for (unsigned waited = 0; waited < timeout_ms * 10; waited++) {
        clt_writer_kick();
        if ((int32_t)(__atomic_load_n(&snap_done, __ATOMIC_ACQUIRE) - ticket) >= 0)
            return snap_path[0] ? snap_path : NULL;
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    clt_writer_kick();
    return NULL;
}

/* The writer gives up its core every 50 us of draining when an app thread
 * wants it (sched_yield returns at once when none does): an app thread woken
 * from a blocking call then runs at once instead of waiting for the writer's
 * time slice (measured: 4,000 blocking 1 KiB writes on 2 cores slowed by
 * 26 ms with the slice, by ~12 without). At normal priority still: on a
 * machine whose every core is busy the writer keeps its fair share, so a
 * fast-calling app never waits for it for long. */
static void writer_yield_now_and_then(void)
{
    static uint64_t last;
    uint64_t now = clt_clock_ns(CLOCK_MONOTONIC);
    if (now - last >= 50000) {
        sched_yield();
        last = clt_clock_ns(CLOCK_MONOTONIC);
    }
}

/* Every ring, merged by time: the thread with the oldest record goes until
 * its records pass the next oldest thread's, so that, e.g., a command's
 * completion (callback thread) is seen before the app's later release of
 * its queue even when one ring was left to fill up. */
static int drain_all(int may_spill, uint64_t deadline_ns)
{
    int busy = 0;
    uint64_t spill_most = may_spill ? spill_limit() : 0;    /* the pace changes between passes, not in one */
    for (unsigned round = 0; round < 65536; round++) {   /* bounded: the loop has other work too */
        if (deadline_ns && !(round & 63) && clt_boottime_ns() > deadline_ns)
            return busy;        /* a snapshot asked for waits no longer (SNAP_DRAIN_NS) */
        /* a snapshot or a flush asked for: nothing later before it is done,
         * and the writer's loop (may_spill) goes to it at once, where its
         * drain is bounded */
        int snap = __atomic_load_n(&snap_req, __ATOMIC_ACQUIRE) != __atomic_load_n(&snap_done, __ATOMIC_ACQUIRE);
        int flush = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE) != __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE);
        if (may_spill && (snap || flush))
            return busy;
        uint64_t limit = snap ? __atomic_load_n(&snap_until, __ATOMIC_ACQUIRE) : UINT64_MAX;
        if (flush) {
            uint64_t f = __atomic_load_n(&flush_until, __ATOMIC_ACQUIRE);
            limit = f < limit ? f : limit;
        }
        struct clt_thread *oldest = NULL;
        uint64_t t_oldest = UINT64_MAX, t_next = UINT64_MAX;
        for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next) {
            int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
            if (st != CLT_TH_LIVE && st != CLT_TH_DEAD)
                continue;
            if (may_spill && !clt_grow_pending(th))
                busy |= clt_spill_maybe(&W, th, clt_file_spill_write, spill_most);
            uint64_t t = clt_thread_next_t0(th);
            if (t == UINT64_MAX) {
                if (st == CLT_TH_DEAD) {
                    clt_grow_cancel(th);
                    clt_cost_thread_ended(&W, th);
                    __atomic_store_n(&th->state, CLT_TH_FREE, __ATOMIC_RELEASE);
                }
                continue;
            }
            if (t < t_oldest) {
                t_next = t_oldest;
                t_oldest = t;
                oldest = th;
            } else if (t < t_next) {
                t_next = t;
            }
        }
        if (!oldest || t_oldest > limit)
            return busy;
        busy |= clt_emit_thread(&W, oldest, t_next < limit ? t_next : limit);
        writer_yield_now_and_then();
    }
    return busy;
}

static uint64_t writer_cpu_ns;
#define FLUSH_WORTH (64 * 1024)
#define FLUSH_AGE_NS 20000000u
#define NAP_MIN_US 1000
#define NAP_MAX_US 16000

/* How full the fullest ring is, in 1/1024ths of it. */
static unsigned rings_fullest(void)
{
    unsigned most = 0;
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next) {
        int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
        if (st != CLT_TH_LIVE && st != CLT_TH_DEAD)
            continue;
        uint64_t used = __atomic_load_n(&th->head, __ATOMIC_ACQUIRE) - __atomic_load_n(&th->tail, __ATOMIC_ACQUIRE);
        unsigned f = (unsigned)(used * 1024 / (th->rmask + 1));
        most = f > most ? f : most;
    }
    return most;
}

/* The writer's next nap, from how full the fullest ring was when it woke:
 * a ring a quarter full or more, 1 ms; under 1/32, twice the last, up to
 * nap_max_us. A trickle of records (4,000 small blocking writes on PoCL, ~25
 * records a ms, 1 MiB rings) woke it every 1 ms, ~360 times a run, each
 * wake-up a chance to land on a CPU where an app thread was about to run.
 * A ring filling faster still wakes it at once (clt_writer_kick, past half
 * full), and a flush still happens once what is held is 20 ms old. */
static long next_nap_us(long nap_us, unsigned fill, long nap_max_us)
{
    if (fill >= 256)
        return NAP_MIN_US;
    if (fill < 32)
        return nap_us * 2 < nap_max_us ? nap_us * 2 : nap_max_us;
    return nap_us;
}

/* The longest nap: 1 ms where 8 CPUs or more are the process's and no
 * queue is on a CPU device, 16 ms otherwise. With cores to spare a wake-up
 * every ms takes nothing from the app, and the writer keeps up: after 16 ms
 * naps, a 0.05 s program's loop (100 x write + kernel + finish) was all
 * still in the rings at exit, 524 of 565 records, and encoding them took
 * 1.0 ms of a 2.6 ms exit on an H100 host, where NVIDIA's teardown after
 * the exit grows with it (the whole run +18.0 ms traced, +8.0 ms with 1 ms
 * naps, 171 interleaved runs each, docs/PERFORMANCE.md). A CPU device's
 * threads take every core (PoCL on 16: its write loop 0.87x -> 0.64x
 * stated/measured with 1 ms naps), and on 2 cores any wake-up may take the
 * app's. */
static _Atomic int cpu_device_seen;

void clt_writer_cpu_device(void)
{
    __atomic_store_n(&cpu_device_seen, 1, __ATOMIC_RELAXED);
}

static long writer_nap_max_us(void)
{
    static long spare = -1;     /* 8 CPUs or more are the process's; the writer's thread alone asks */
    if (spare < 0) {
        cpu_set_t cpus;
        spare = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 8;
    }
    return spare && !__atomic_load_n(&cpu_device_seen, __ATOMIC_RELAXED) ? NAP_MIN_US : NAP_MAX_US;
}

/* On the writer's thread, not on the app's first call (0.3-0.7 ms of it,
 * PoCL, 2 cores), before any record: the compressor's tables, the trace's
 * first packets, the room to say the disk filled (if it does), the
 * compressor's thread (this one takes no signals: neither does that), the
 * clock (it sleeps 5 ms). No warm-up of the symbolizer: libdw loads on the
 * first frame the writer names (its first flush, or the exit). Read here,
 * the modules and the program's symbols (~1 ms of CPU) ran beside the app's
 * own start: on 2 cores PoCL's context +1.16 ms against +0.58; on 16, 4,000
 * small transfers on PoCL alone +25 ms against +20 (medians of seven sets
 * each; the launch loop the same either way). */
static void writer_begin(void)
{
    if (W.gz)
        clt_gz_begin(W.gz);
    clt_emit_begin(&W);
    clt_disk_watch(W.fd, W.path);
    if (W.gz)
        clt_file_start();
    clt_cost_start();
    clt_clock_init(&W.clock);
}

/* The scheduler's account of every thread (selfcost.c), once: by the
 * writer as it sees the exit begin, beside the app's drain (~40 reads of
 * /proc, 0.3 ms of the exiting thread on 2 cores), else as it ends (while
 * it still counts as cltrace's: after it, its own CPU would read 0). */
static void sched_sample_once(void)
{
    if (W.start_ns && !__atomic_exchange_n(&sched_sampled, 1, __ATOMIC_ACQ_REL))
        clt_cost_sched_sample(&W);
}

static void *writer_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-writer", 1);
    writer_begin();
    uint64_t last_cal = clt_boottime_ns(), last_flush = last_cal;
    long idle_us = 500;
    for (;;) {
        /* before looking for work: a kick after this ends the nap below */
        uint32_t seq = __atomic_load_n(&wake_seq, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&stop_requested, __ATOMIC_SEQ_CST))
            break;
        if (__atomic_load_n(&sleeping, __ATOMIC_RELAXED))
            __atomic_store_n(&sleeping, 0, __ATOMIC_RELAXED);
        uint32_t req = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE);
        uint64_t t_drain = clt_boottime_ns(), drained = W.raw_bytes;
        if (__atomic_load_n(&exit_began, __ATOMIC_ACQUIRE))
            sched_sample_once();
        int busy = drain_all(1, 0);
        pace_note(W.raw_bytes - drained, clt_boottime_ns() - t_drain), clt_samples_drain(&W);
        clt_dev_flush_pending(&W, 0);
        uint32_t sreq = __atomic_load_n(&snap_req, __ATOMIC_ACQUIRE);
        if (sreq != __atomic_load_n(&snap_done, __ATOMIC_RELAXED)) {
            /* one asked at a call (an error, a kernel) is whole: nobody
             * waits for it; one `cltrace ctl` waits for, SNAP_DRAIN_NS */
            snap_whole = drain_before(ASKED_SNAPSHOT, __atomic_load_n(&snap_bounded, __ATOMIC_ACQUIRE));
            rec_snapshot(&W);
            __atomic_store_n(&snap_until, UINT64_MAX, __ATOMIC_RELEASE);
            __atomic_store_n(&snap_done, sreq, __ATOMIC_RELEASE);
        }
        if (req != __atomic_load_n(&flush_done, __ATOMIC_RELAXED)) {
            /* what was committed before the request, spilled records too;
             * asked from `cltrace ctl`, what of it can be encoded within
             * SNAP_DRAIN_NS (an app recording faster than the writer
             * encodes has a backlog that grows with the run) */
            snap_whole = drain_before(ASKED_FLUSH, __atomic_load_n(&flush_bounded, __ATOMIC_ACQUIRE));
            clt_samples_drain(&W);
            rec_dump_main(&W, 1);   /* a crash or _exit: the flight recorder's memory to the file */
            clt_file_sync(&W);
            __atomic_store_n(&flush_until, UINT64_MAX, __ATOMIC_RELEASE);
            __atomic_store_n(&flush_done, req, __ATOMIC_RELEASE);
        }
        uint64_t now = clt_boottime_ns();
        if (now - last_cal > 100000000u) {          /* re-calibrate every 100 ms */
            clt_clock_update(&W.clock);
            clt_cost_emit(&W);
            last_cal = now;
        }
        clt_emit_dropped(&W);
        if (busy) {
            if (W.len > clt_rec_flush_at())
                clt_writer_flush(&W);
            continue;
        }
        /* Caught up: what it holds goes to the file once it is worth a
         * write or 20 ms old. A flush on every pass woke the compressor
         * and wrote the file ~5,000 times a second behind a program of
         * small blocking transfers, on the cores the program needed. */
        if (W.len > W.kept && (W.len - W.kept >= FLUSH_WORTH || now - last_flush >= FLUSH_AGE_NS)) {
            clt_writer_flush(&W);
            last_flush = now;
        }
        clt_own_threads_settle();       /* caught up: back to idle priority a while after a lift */
        struct timespec ts = { 0, idle_us * 1000 };
        __atomic_store_n(&sleeping, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
        __atomic_store_n(&sleeping, 0, __ATOMIC_SEQ_CST);
        idle_us = next_nap_us(idle_us, rings_fullest(), writer_nap_max_us());
    }
    if (__atomic_load_n(&exit_began, __ATOMIC_ACQUIRE))
        sched_sample_once();        /* while this thread is one of cltrace's to count */
    writer_cpu_ns = clt_clock_ns(CLOCK_THREAD_CPUTIME_ID);    /* cltrace's own cost, stated in the trace */
    clt_own_thread_end();
    return NULL;
}

/* From a crashing thread or _exit: have the writer drain every ring and write
 * it out, waiting at most timeout_ms. Only async-signal-safe calls. */
void clt_writer_flush_now(unsigned timeout_ms, unsigned moving_s)
{
    /* the records committed before the request: a writer that waited for
     * the newest one would chase an app that records as fast as it drains */
    mark_heads(ASKED_FLUSH);       /* first: what it marks began before the time below */
    __atomic_store_n(&flush_until, clt_now_after_loads(), __ATOMIC_RELEASE);
    uint32_t ticket = __atomic_add_fetch(&flush_req, 1, __ATOMIC_ACQ_REL);
    /* records set aside (spill.c) are encoded first: give them time too,
     * at a generous 250 ns a record of 64 bytes, 30 s at most */
    uint64_t more = clt_spill_outstanding() / 256000;
    timeout_ms += more < 30000 ? (unsigned)more : 30000;
    /* past it, as long as the writer moves (moving_s: a crash's flush of a
     * million records set aside took over 0.8 s beside two CPU hogs, and the
     * trace lost calls already recorded): a second without progress ends it */
    uint64_t seen = __atomic_load_n(&W.raw_bytes, __ATOMIC_RELAXED);
    for (unsigned waited = 0; waited < (timeout_ms + 1000 * moving_s) * 10; waited++) {
        clt_writer_kick();
        if ((int32_t)(__atomic_load_n(&flush_done, __ATOMIC_ACQUIRE) - ticket) >= 0)
            return;
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
        if (waited >= timeout_ms * 10 && waited % 10000 == 0) {
            uint64_t now = __atomic_load_n(&W.raw_bytes, __ATOMIC_RELAXED);
            if (now == seen)
                return;
            seen = now;
        }
    }
}

const char *clt_writer_path(void)
{
    return W.path;
}

int clt_writer_start(void)
{
    memset(&W, 0, sizeof W);
    W.fd = -1;
    if (clt_file_open(&W) != 0)
        return -1;
    static struct clt_gz gz;
    clt_gz_free(&gz);                   /* a fork child's copy of the parent's */
    if (clt_cfg.COMPRESS && clt_gz_init(&gz, CLT_OUT_CAP) == 0)
        W.gz = &gz;
    if ((clt_cfg.COMPRESS && !W.gz) || clt_emit_init(&W) != 0) {
        close(W.fd);
        unlink(W.path);
        clt_msg("out of memory; running untraced");
        return -1;
    }
    W.start_ns = clt_boottime_ns();
    clt_rec_init(clt_cfg.RING_MB[0] ? strtod(clt_cfg.RING_MB, NULL) : 0);
    W.out_cap = clt_rec_on() && clt_rec_flush_at() + 131072 < CLT_OUT_CAP ? clt_rec_flush_at() + 131072 : CLT_OUT_CAP;
    /* The writer takes no signals: they stay the app's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    stop_requested = 0;
    int rc = pthread_create(&writer_thread, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(W.fd);
        unlink(W.path);
        clt_msg("cannot start the writer thread; running untraced");
        return -1;
    }
    return 0;
}

void clt_writer_exit_begins(void)
{
    clt_file_exit_begins(&W);
    __atomic_store_n(&exit_began, 1, __ATOMIC_RELEASE);
    clt_writer_kick();
}

void clt_writer_stop(const struct clt_exit_facts *e)
{
    W.exit = *e;
    __atomic_store_n(&stop_requested, 1, __ATOMIC_SEQ_CST);
    clt_writer_kick();
    /* Bounded: a writer stuck on a dead disk must not hang the exit; one
     * still draining (TSan, a loaded machine) is waited for. */
    if (clt_own_thread_join(writer_thread, &W.raw_bytes, 10, 300) != 0)
        goto unfinished;
    uint32_t sreq = __atomic_load_n(&snap_req, __ATOMIC_ACQUIRE);
    if (sreq != __atomic_load_n(&snap_done, __ATOMIC_ACQUIRE)) {   /* asked, not yet taken */
        while (drain_all(0, 0))
            ;
        rec_snapshot(&W);
        __atomic_store_n(&snap_until, UINT64_MAX, __ATOMIC_RELEASE);
        __atomic_store_n(&snap_done, sreq, __ATOMIC_RELEASE);
    }
    while (drain_all(0, 0))    /* the app records no more: bounded */
        clt_samples_drain(&W);
    clt_samples_drain(&W), clt_spill_close();
    clt_dev_flush_pending(&W, 1);
    rec_dump_main(&W, 0);   /* the flight recorder: its memory, then the leaks and the end (which says it) */
    clt_emit_dropped(&W);
    clt_life_emit_leaks(&W, clt_boottime_ns());
    clt_cost_emit(&W);
    clt_dev_footer(&W, W.exit.unfinished);
    clt_overrides_attrs(&W);
    clt_emit_footer(&W);
    static struct clt_attrs cost;
    clt_run_attrs(&cost, W.gz != NULL);
    /* Everything compressed and written before the exit's figure is taken,
     * the footer too; the figure follows alone. The last flush holds the
     * exit's records (leaks, completions): compressing it after the figure
     * left 0.4-0.7 ms of every exit uncounted (4,000 small writes on PoCL,
     * 2 cores), the footer after it 0.1-0.3 ms (a 0.05 s program). These
     * last flushes compress here, not on the compressor thread: each
     * hand-off was a wake-up on another core and a wait for it, three at
     * the exit. The compressor's CPU time so far counts with the writer's. */
    if (!clt_file_stop_compressor() || !clt_file_sync(&W))
        goto unfinished;
    /* The room set aside for a full disk's note (on a disk running low)
     * goes back now, inside the exit's figure: closing it has the file
     * system free its blocks, 0.2-0.5 ms on ext4 (2 cores) that came after
     * the figure. What is left to write, two small packets or the note,
     * fits in what it gave back. */
    clt_disk_release();
    clt_cost_footer(&W, &cost, clt_boottime_ns() - W.start_ns,
                    writer_cpu_ns + clt_file_threads_cpu_ns());
    clt_attrs_put(&W, &cost);
    if (!clt_file_sync(&W))
        goto unfinished;
    cost.n = 0;                 /* put: its packet is in the file */
    clt_cost_exit(&W, &cost);
    clt_attrs_put(&W, &cost);
    clt_writer_flush(&W);
    clt_file_stop_spill();
    close(W.fd);
    clt_file_say_written(&W);
    return;
unfinished:     /* bounded waits: a writer or a disk that is stuck must not hang the exit */
    pthread_detach(writer_thread);      /* left to end with the process, not a thread never joined */
    clt_msg("writer did not finish; trace %s may be incomplete", W.path);
}

unsigned clt_writer_leaks(void) { return W.leaks_serious; }

void clt_writer_forget(void)
{
    /* fork child: the parent's file and threads are not ours. */
    memset(&W, 0, sizeof W);
    W.fd = -1;
    __atomic_store_n(&exit_began, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sched_sampled, 0, __ATOMIC_RELAXED);
    clt_disk_release();                 /* the parent's (a copy of its descriptor) */
    clt_spill_forget();
    clt_grow_forget();
    clt_rec_forget();
    clt_windows_forget();
    clt_overrides_forget();
    clt_est_forget();
    clt_own_threads_forget();
    clt_file_forget();
}
