/* The writer thread: the only code that touches the trace file.
 *
 * It drains every thread's ring, turns each record into Perfetto packets
 * (dispatch.c and the modules under it) and appends them to one output buffer, written with whole packets
 * only, so a file cut at any point (crash, full disk) loses at most the
 * packet being written. With CLTRACE_COMPRESS (the default) the buffer is
 * gzipped as it is written (gzstream.c), on a second thread while the
 * writer fills its other buffer: the file is a whole .pftrace.gz after
 * every flush, and the exit has nothing left to compress. */
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include "emit.h"
#include "lifetime.h"
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
static _Atomic uint32_t flush_req, flush_done;   /* clt_writer_flush_now() handshake */
static _Atomic uint64_t flush_until = UINT64_MAX; /* the records a flush waits for: those before it (ticks) */

/* A producer whose ring is filling up wakes an idle writer at once instead
 * of letting it finish its sleep. */
void clt_writer_kick(void)
{
    if (__atomic_load_n(&sleeping, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&wake_seq, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Expand %p (pid), %e (program), %r (rank, "0" outside a job), %h (host).
 * A directory (or a name ending in '/', made if missing) gets the default
 * name; without %p, .<pid> is added. Under a launcher that names ranks (MPI,
 * Slurm: common/job.h) the name carries the rank and host, and the default
 * output is a directory of the job: cltrace-job-<id>/. */
static void trace_path(char *out, size_t cap, const struct clt_job *job)
{
    const char *pat = clt_cfg.OUTPUT;
    const char *name = job->rank >= 0 ? "cltrace-%e-r%r-%h-%p.pftrace" : "cltrace-%e-%p.pftrace";
    char tmp[PATH_MAX], dir[PATH_MAX / 2];
    size_t plen = strlen(pat);
    if (job->rank >= 0 && !getenv("CLTRACE_OUTPUT")) {
        snprintf(dir, sizeof dir, "cltrace-job-%s", job->id[0] ? job->id : "unnamed");
        pat = dir;
        mkdir(dir, 0755);              /* every rank tries; EEXIST is fine */
    } else if (plen && pat[plen - 1] == '/') {
        snprintf(dir, sizeof dir, "%s", pat);
        mkdir(dir, 0755);
    }
    if (is_dir(pat)) {
        size_t dl = strlen(pat);
        snprintf(tmp, sizeof tmp, "%.*s/%s", (int)(dl > 1 && pat[dl - 1] == '/' ? dl - 1 : dl), pat, name);
        pat = tmp;
    }
    size_t n = 0;
    int has_pid = 0;
    for (const char *s = pat; *s && n + 1 < cap; s++) {
        if (s[0] == '%' && (s[1] == 'p' || s[1] == 'e' || s[1] == 'r' || s[1] == 'h')) {
            int w = s[1] == 'p' ? snprintf(out + n, cap - n, "%d", (int)getpid())
                  : s[1] == 'e' ? snprintf(out + n, cap - n, "%s", program_invocation_short_name)
                  : s[1] == 'r' ? snprintf(out + n, cap - n, "%d", job->rank >= 0 ? job->rank : 0)
                                : snprintf(out + n, cap - n, "%s", job->host);
            has_pid |= s[1] == 'p';
            n += w > 0 ? (size_t)w : 0;
            s++;
        } else {
            out[n++] = *s;
        }
    }
    out[n < cap ? n : cap - 1] = 0;
    if (!has_pid) {
        char *dot = strstr(out, ".pftrace");
        char suffix[64];
        snprintf(suffix, sizeof suffix, "%s", dot ? dot : ".pftrace");
        if (dot)
            *dot = 0;
        size_t len = strlen(out);
        snprintf(out + len, cap - len, ".%d%s", (int)getpid(), suffix);
    }
}

/* Exclusive create, never through a symlink: a trace never overwrites. */
static int open_trace(void)
{
    char base[PATH_MAX - 16];
    clt_job_detect(&W.job);
    trace_path(base, sizeof base, &W.job);
    if (clt_cfg.COMPRESS) {
        size_t bl = strlen(base);
        if (bl < 3 || strcmp(base + bl - 3, ".gz") != 0)
            snprintf(base + bl, sizeof base - bl, ".gz");
    }
    snprintf(W.path, sizeof W.path, "%s", base);
    for (int i = 1; i < 100; i++) {
        W.fd = open(W.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (W.fd >= 0 || errno != EEXIST)
            break;
        char *dot = strstr(base, ".pftrace");
        snprintf(W.path, sizeof W.path, "%.*s-%d%s", dot ? (int)(dot - base) : (int)strlen(base), base, i,
                 dot ? dot : "");
    }
    if (W.fd < 0) {
        clt_msg("cannot create trace %s: %s; running untraced", W.path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The end of the last whole packet in buf[0, n): buf starts on a packet. */
static size_t whole_packets(const uint8_t *buf, size_t n)
{
    size_t pos = 0;
    for (;;) {
        size_t p = pos + 1, len = 0;
        int shift = 0;
        while (p < n && shift < 35) {
            len |= (size_t)(buf[p] & 0x7F) << shift;
            shift += 7;
            if (!(buf[p++] & 0x80))
                break;
        }
        if (p > n || p + len > n || pos + 1 >= n)
            return pos;
        pos = p + len;
    }
}

/* Write iov[0, n) (n <= 2) at offset `at`, all of it: 0, or the errno. */
static int pwrite_all(int fd, const struct iovec *iov, int n, uint64_t at)
{
    struct iovec v[2];
    int k = 0;
    for (int i = 0; i < n && k < 2; i++)
        if (iov[i].iov_len)
            v[k++] = iov[i];
    while (k) {
        ssize_t r = pwritev(fd, v, k, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : ENOSPC;
        at += (uint64_t)r;
        while (k && (size_t)r >= v[0].iov_len) {
            r -= (ssize_t)v[0].iov_len;
            v[0] = v[1];
            k--;
        }
        if (k) {
            v[0].iov_base = (uint8_t *)v[0].iov_base + r;
            v[0].iov_len -= (size_t)r;
        }
    }
    return 0;
}

/* buf[kept, end) -- whole Perfetto packets after kept bytes of what came
 * before -- gzipped, and the new whole bytes and a fresh tail written over
 * the old tail in one write: 0, or the errno, the file and the stream then
 * back as they were (the old tail put back: the file stays a whole gzip
 * file up to the last flush that made it). */
static int put_and_write(struct clt_writer *w, const uint8_t *buf, size_t kept, size_t end)
{
    struct clt_gz *z = w->gz;
    struct clt_gz_mark mark;
    clt_gz_mark(z, &mark);
    clt_gz_put(z, buf, kept, end);
    uint8_t tail[CLT_GZ_TAIL_MAX];
    size_t tail_len = clt_gz_tail(z, tail);
    struct iovec iov[2] = { { z->out, z->out_len }, { tail, tail_len } };
    int err = pwrite_all(w->fd, iov, 2, w->bytes_written);
    if (err) {
        struct iovec old = { w->gz_tail, w->gz_tail_len };
        if (ftruncate(w->fd, (off_t)w->bytes_written) != 0 || pwrite_all(w->fd, &old, 1, w->bytes_written) != 0)
            clt_msg("%s may be unreadable: its end could not be rewritten", w->path);
        clt_gz_rewind(z, &mark);
        return err;
    }
    w->bytes_written += z->out_len;
    z->out_len = 0;
    memcpy(w->gz_tail, tail, tail_len);
    w->gz_tail_len = tail_len;
    return 0;
}

/* A write of the trace failed (the file is back at its last whole flush, or
 * raw, cut to its last whole packet): stop recording, the app runs on; on a
 * full disk the room set aside at start (disk.c) is given back and the
 * trace's last packet says the disk filled. */
static void write_failed(struct clt_writer *w, int err, uint64_t raw_end)
{
    uint8_t note[512 + 64] = { 0 };     /* + 64: clt_gz_put reads ahead */
    size_t n = clt_disk_full_packet(note, 512, strerror(err), w->bytes_written);
    clt_disk_release();
    int said = n && (w->gz ? put_and_write(w, note, 0, n) == 0 : pwrite(w->fd, note, n, (off_t)raw_end) == (ssize_t)n);
    clt_msg("writing %s failed: %s; trace stops here (%s), the app runs on", w->path, strerror(err),
            said ? "it says so at its end" : "its end could not say why");
    __atomic_store_n(&w->io_failed, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&clt_active, 0, __ATOMIC_RELAXED);
}

/* Compressed: buf[kept, len) written (put_and_write); on a full disk, as
 * many of its packets as still fit (a half, a quarter, ...) before the end. */
static void write_gz(struct clt_writer *w, const uint8_t *buf, size_t kept, size_t len)
{
    if (__atomic_load_n(&w->io_failed, __ATOMIC_ACQUIRE))
        return;                 /* a buffer handed over before an earlier write failed */
    int err = put_and_write(w, buf, kept, len), first = err;
    size_t end = len;
    while ((err == ENOSPC || err == EDQUOT || err == EFBIG) &&
           (end = kept + whole_packets(buf + kept, (end - kept) / 2)) > kept)
        err = put_and_write(w, buf, kept, end);
    if (first)
        write_failed(w, first, 0);
}

/* The writer's helper threads: the compressor and the spill's writes. Each
 * takes one job at a time; state is the handshake (a futex word). */
enum { JOB_IDLE, JOB_GIVEN, JOB_STOP };
struct helper {
    pthread_t thread;
    int started;
    _Atomic uint32_t state;
    uint64_t cpu_ns;            /* its CPU time, kept when it stops */
};

static void helper_set(struct helper *h, uint32_t st)
{
    __atomic_store_n(&h->state, st, __ATOMIC_RELEASE);
    syscall(SYS_futex, &h->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* In the helper: the next job, 0 when told to stop. */
static int helper_next(struct helper *h)
{
    while (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == JOB_IDLE)
        syscall(SYS_futex, &h->state, FUTEX_WAIT_PRIVATE, JOB_IDLE, NULL, NULL, 0);
    return __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == JOB_GIVEN;
}

/* Wait for the job in hand, at most ms: a dead disk must hang neither the
 * writer nor the app's exit. 0: the job is still in hand. */
static int helper_wait_idle(struct helper *h, unsigned ms)
{
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (h->started && __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == JOB_GIVEN) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = (end.tv_sec - now.tv_sec) * 1000000000L + (end.tv_nsec - now.tv_nsec);
        if (left <= 0)
            return 0;
        struct timespec ts = { left / 1000000000L, left % 1000000000L };
        syscall(SYS_futex, &h->state, FUTEX_WAIT_PRIVATE, JOB_GIVEN, &ts, NULL, 0);
    }
    return 1;
}

/* Its CPU time so far, or until it stopped: cltrace's own cost, stated
 * with the writer's. */
static uint64_t helper_cpu_ns(struct helper *h)
{
    clockid_t c;
    return h->started && pthread_getcpuclockid(h->thread, &c) == 0 ? clt_clock_ns(c) : h->cpu_ns;
}

/* At exit: 0 if its last job did not end within 10 s (then it is left). */
static int helper_stop(struct helper *h)
{
    if (!h->started)
        return 1;
    if (!helper_wait_idle(h, 10000))
        return 0;
    h->cpu_ns = helper_cpu_ns(h);       /* idle now: nothing more to count */
    helper_set(h, JOB_STOP);
    pthread_join(h->thread, NULL);
    h->started = 0;
    return 1;
}

/* The compressor thread: the writer hands it each full buffer and goes on
 * encoding into the other one, so gzip (a third of the writer's work) runs
 * beside the encoding instead of after it. One buffer at a time, in order.
 * Without the thread (it could not be started), the writer compresses
 * itself. */
static struct {
    struct helper h;
    uint8_t *spare;             /* the buffer W.out is not: the job's while one runs */
    const uint8_t *buf;         /* the job: buf[kept, len) to compress after buf[0, kept) */
    size_t kept, len;
} gzt;

static void *gz_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-gzip", 1);
    while (helper_next(&gzt.h)) {
        write_gz(&W, gzt.buf, gzt.kept, gzt.len);
        helper_set(&gzt.h, JOB_IDLE);
    }
    clt_own_thread_end();
    return NULL;
}

/* A write that has not ended in 10 s: the disk stopped answering. Its
 * thread is left to it; the trace stops, the app runs on. */
static void give_up_stalled(struct clt_writer *w)
{
    if (!__atomic_exchange_n(&w->io_failed, 1, __ATOMIC_ACQ_REL)) {
        clt_msg("writing %s takes more than 10 s; trace stops here, the app runs on", w->path);
        __atomic_store_n(&clt_active, 0, __ATOMIC_RELAXED);
    }
}

/* A spill's writes (spill.c), on a thread of their own where the process
 * may use 4 CPUs or more (as the compressor): a disk that stops answering
 * holds that thread, not the writer, which gives up after 10 s as for the
 * trace's own writes. The writer waits for each (the ring is given back
 * once its bytes are in the file), but not behind a buffer being gzipped. */
static struct {
    struct helper h;
    struct clt_spill_write job;
} spt;

static int spill_do(struct clt_spill_write *job)
{
    return pwrite_all(job->fd, job->iov, job->n, job->at) == 0;
}

static void *spill_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-spill", 1);
    while (helper_next(&spt.h)) {
        spt.job.ok = spill_do(&spt.job);
        helper_set(&spt.h, JOB_IDLE);
    }
    clt_own_thread_end();
    return NULL;
}

static int spill_write(struct clt_spill_write *job)
{
    if (!spt.h.started && gzt.h.started)   /* the writer blocks all signals: so does the thread */
        spt.h.started = pthread_create(&spt.h.thread, NULL, spill_main, NULL) == 0;
    if (!spt.h.started)
        return spill_do(job);
    spt.job = *job;
    helper_set(&spt.h, JOB_GIVEN);
    if (!helper_wait_idle(&spt.h, 10000)) {
        give_up_stalled(&W);
        return 0;
    }
    return spt.job.ok;
}

static void flush_gz(struct clt_writer *w)
{
    size_t keep = w->len < CLT_GZ_WINDOW ? w->len : CLT_GZ_WINDOW;
    if (!gzt.h.started) {
        write_gz(w, w->out, w->kept, w->len);
        /* the last 32 KiB stay at the front: the next packets match against them */
        memmove(w->out, w->out + w->len - keep, keep);
    } else {
        if (!helper_wait_idle(&gzt.h, 10000)) {     /* the spare buffer is still being written */
            give_up_stalled(w);
            w->len = w->kept;
            return;
        }
        gzt.buf = w->out;
        gzt.kept = w->kept;
        gzt.len = w->len;
        memcpy(gzt.spare, w->out + w->len - keep, keep);
        w->out = gzt.spare;
        gzt.spare = (uint8_t *)gzt.buf;
        helper_set(&gzt.h, JOB_GIVEN);
    }
    w->kept = w->len = keep;
}

/* Start the compressor thread (gzip mode; the caller blocks signals) where
 * it pays: with fewer than 4 CPUs it would take the app's. */
static void gz_start(void)
{
    gzt.h.started = 0;
    gzt.h.state = JOB_IDLE;
    cpu_set_t cpus;
    long want = clt_cfg.COMPRESS_THREAD;
    if (want < 0)
        want = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 4;
    if (!want)
        return;
    if (!gzt.spare)
        gzt.spare = calloc(1, CLT_OUT_CAP + 64);    /* as W.out: 64 bytes readable past the end */
    if (gzt.spare && pthread_create(&gzt.h.thread, NULL, gz_main, NULL) == 0)
        gzt.h.started = 1;
}


static void file_flush(struct clt_writer *w);

/* ---- the flight recorder's way out (recorder.c) ------------------------ */

/* Whole packets into the file, as much as the output buffer takes at a time. */
static void rec_put_file(struct clt_writer *w, const uint8_t *p, size_t n)
{
    while (n && !w->io_failed) {
        size_t room = CLT_OUT_CAP - w->len - 16;
        size_t k = n <= room ? n : whole_packets(p, room);
        if (!k)
            return;     /* a packet larger than the buffer: cannot happen */
        memcpy(w->out + w->len, p, k);
        w->len += k;
        file_flush(w);
        p += k;
        n -= k;
    }
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
    clt_rec_dump(w, rec_put_file);
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
 * written: the channel answers within a second whatever the app does. */
#define SNAP_DRAIN_NS 300000000ull
static _Atomic uint64_t snap_until = UINT64_MAX;    /* a snapshot of the memory as it was then (ticks) */
static char snap_path[PATH_MAX], snap_why[300];
static unsigned n_snaps;

/* Records made before `until` (ticks) not encoded yet, on any thread. */
static int records_before(uint64_t until)
{
    for (struct clt_thread *th = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); th; th = th->next) {
        int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
        if ((st == CLT_TH_LIVE || st == CLT_TH_DEAD) && clt_thread_next_t0(th) <= until)
            return 1;
    }
    return 0;
}

static int drain_all(int may_spill, uint64_t deadline_ns);

/* The records made before `until` encoded, for a snapshot or a flush
 * (drain_all stops at the request's limit); bounded: SNAP_DRAIN_NS at
 * most. 1: every one of them encoded. */
static int drain_before(uint64_t until, int bounded)
{
    uint64_t end = bounded ? clt_boottime_ns() + SNAP_DRAIN_NS : 0;
    for (int i = 0; i < 4096 && drain_all(0, end) && (!end || clt_boottime_ns() < end); i++)
        ;
    return !records_before(until);
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
        clt_writer_flush_now(timeout_ms);
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
    __atomic_store_n(&snap_until, clt_now(), __ATOMIC_RELEASE);
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

void clt_writer_flush(struct clt_writer *w)
{
    if (clt_rec_on() && !w->rec_dumping) {      /* into the flight recorder's memory */
        if (clt_rec_take(w->out + w->kept, w->len - w->kept))
            w->epoch_due = 1;       /* started at the next record's start (dispatch.c) */
        w->len = w->kept;
        return;
    }
    file_flush(w);
}

static void file_flush(struct clt_writer *w)
{
    if (w->gz) {
        if (__atomic_load_n(&w->io_failed, __ATOMIC_ACQUIRE))
            w->len = w->kept;
        else if (w->len > w->kept)
            flush_gz(w);
        return;
    }
    size_t done = 0;
    while (done < w->len && !w->io_failed) {
        ssize_t n = write(w->fd, w->out + done, w->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (size_t)n < w->len - done) {
            /* Full disk, a size limit or an I/O error: cut the file back to
             * its last whole packet, so it stays readable; stop recording,
             * the app runs on. */
            int err = n < 0 ? errno : ENOSPC;
            if (n > 0)
                done += (size_t)n;
            size_t keep = whole_packets(w->out, done);
            if (ftruncate(w->fd, (off_t)(w->bytes_written + keep)) == 0)
                done = keep;
            w->bytes_written += done;
            done = 0;
            write_failed(w, err, w->bytes_written);
            break;
        }
        done += (size_t)n;
    }
    w->bytes_written += done;
    w->len = 0;
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
            if (may_spill)
                busy |= clt_spill_maybe(&W, th, spill_write);
            uint64_t t = clt_thread_next_t0(th);
            if (t == UINT64_MAX) {
                if (st == CLT_TH_DEAD) {
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
        unsigned f = (unsigned)(used * 1024 / (th->mask + 1));
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

/* What the writer holds, in the file, not only handed to the compressor;
 * 0: a write has stalled (10 s). */
static int flush_to_file(void)
{
    clt_writer_flush(&W);
    return helper_wait_idle(&gzt.h, 10000);
}

static void *writer_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-writer", 1);
    clt_clock_init(&W.clock);       /* here, not on the app's first call: it sleeps 5 ms */
    /* No warm-up of the symbolizer here: libdw loads on the first frame
     * the writer names (its first flush, or the exit). Read at the
     * writer's start, the modules and the program's symbols (~1 ms of CPU)
     * ran beside the app's own start: on 2 cores PoCL's context +1.16 ms
     * against +0.58; on 16, 4,000 small transfers on PoCL alone +25 ms
     * against +20 (medians of seven sets each; the launch loop the same
     * either way), where it was not stated (docs/PERFORMANCE.md). */
    uint64_t last_cal = clt_boottime_ns(), last_flush = last_cal;
    long idle_us = 500;
    while (!__atomic_load_n(&stop_requested, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&sleeping, __ATOMIC_RELAXED))
            __atomic_store_n(&sleeping, 0, __ATOMIC_RELAXED);
        uint32_t req = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE);
        int busy = drain_all(1, 0);
        clt_dev_flush_pending(&W, 0);
        uint32_t sreq = __atomic_load_n(&snap_req, __ATOMIC_ACQUIRE);
        if (sreq != __atomic_load_n(&snap_done, __ATOMIC_RELAXED)) {
            /* one asked at a call (an error, a kernel) is whole: nobody
             * waits for it; one `cltrace ctl` waits for, SNAP_DRAIN_NS */
            snap_whole = drain_before(__atomic_load_n(&snap_until, __ATOMIC_ACQUIRE),
                                      __atomic_load_n(&snap_bounded, __ATOMIC_ACQUIRE));
            rec_snapshot(&W);
            __atomic_store_n(&snap_until, UINT64_MAX, __ATOMIC_RELEASE);
            __atomic_store_n(&snap_done, sreq, __ATOMIC_RELEASE);
        }
        if (req != __atomic_load_n(&flush_done, __ATOMIC_RELAXED)) {
            /* what was committed before the request, spilled records too;
             * asked from `cltrace ctl`, what of it can be encoded within
             * SNAP_DRAIN_NS (an app recording faster than the writer
             * encodes has a backlog that grows with the run) */
            snap_whole = drain_before(__atomic_load_n(&flush_until, __ATOMIC_ACQUIRE),
                                      __atomic_load_n(&flush_bounded, __ATOMIC_ACQUIRE));
            rec_dump_main(&W, 1);   /* a crash or _exit: the flight recorder's memory to the file */
            flush_to_file();
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
        uint32_t seq = __atomic_load_n(&wake_seq, __ATOMIC_SEQ_CST);
        __atomic_store_n(&sleeping, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
        __atomic_store_n(&sleeping, 0, __ATOMIC_SEQ_CST);
        idle_us = next_nap_us(idle_us, rings_fullest(), writer_nap_max_us());
    }
    writer_cpu_ns = clt_clock_ns(CLOCK_THREAD_CPUTIME_ID);    /* cltrace's own cost, stated in the trace */
    clt_own_thread_end();
    return NULL;
}

/* From a crashing thread or _exit: have the writer drain every ring and write
 * it out, waiting at most timeout_ms. Only async-signal-safe calls. */
void clt_writer_flush_now(unsigned timeout_ms)
{
    /* the records committed before the request: a writer that waited for
     * the newest one would chase an app that records as fast as it drains */
    __atomic_store_n(&flush_until, clt_now(), __ATOMIC_RELEASE);
    uint32_t ticket = __atomic_add_fetch(&flush_req, 1, __ATOMIC_ACQ_REL);
    /* records set aside (spill.c) are encoded first: give them time too,
     * at a generous 250 ns a record of 64 bytes, 30 s at most */
    uint64_t more = clt_spill_outstanding() / 256000;
    timeout_ms += more < 30000 ? (unsigned)more : 30000;
    for (unsigned waited = 0; waited < timeout_ms * 10; waited++) {
        clt_writer_kick();
        if ((int32_t)(__atomic_load_n(&flush_done, __ATOMIC_ACQUIRE) - ticket) >= 0)
            return;
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
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
    if (open_trace() != 0)
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
    clt_disk_reserve(W.path);           /* the room to say the disk filled, if it does */
    clt_emit_header(&W);
    /* The writer takes no signals: they stay the app's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    stop_requested = 0;
    int rc = pthread_create(&writer_thread, NULL, writer_main, NULL);
    if (rc == 0 && W.gz)
        gz_start();
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
    if (W.start_ns)
        clt_cost_sched_sample(&W);
}

void clt_writer_stop(uint64_t unfinished_commands, uint64_t exit_wait_ns, uint64_t exit_began_ns, uint64_t load_ns)
{
    W.unfinished = unfinished_commands;
    W.exit_wait_ns = exit_wait_ns;
    W.exit_began_ns = exit_began_ns;
    W.load_ns = load_ns;
    __atomic_store_n(&stop_requested, 1, __ATOMIC_RELEASE);
    clt_writer_kick();
    /* Bounded: a writer stuck on a dead disk must not hang the exit. */
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    if (pthread_timedjoin_np(writer_thread, NULL, &dl) != 0)
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
        ;
    clt_spill_close();
    clt_dev_flush_pending(&W, 1);
    rec_dump_main(&W, 0);   /* the flight recorder: its memory, then the leaks and the end (which says it) */
    clt_emit_dropped(&W);
    struct clt_leak_counts leaks = { { 0 }, { 0 } };
    W.leaks = clt_life_emit_leaks(&W, clt_boottime_ns(), &leaks);
    W.leaks_serious = leaks.by_class[CLT_LEAK_DEFINITELY_LOST] + leaks.by_class[CLT_LEAK_GROWING];
    if (W.leaks) {
        char list[256] = "";
        size_t k = 0;
        for (unsigned t = 0; t < CLT_O_COUNT && k < sizeof list - 40; t++)
            if (leaks.by_type[t])
                k += (size_t)snprintf(list + k, sizeof list - k, "%s%u %s", k ? ", " : "", leaks.by_type[t],
                                      clt_otype_name(t));
        clt_msg("%u OpenCL object%s still held at exit (%s): %u definitely lost, %u growing with the run, %u still "
                "reachable; their creation stacks are in the trace", W.leaks, W.leaks == 1 ? "" : "s", list,
                leaks.by_class[CLT_LEAK_DEFINITELY_LOST], leaks.by_class[CLT_LEAK_GROWING],
                leaks.by_class[CLT_LEAK_STILL_HELD]);
    }
    clt_cost_emit(&W);
    clt_dev_footer(&W, W.unfinished);
    clt_emit_footer(&W);
    static struct clt_attrs cost;
    char sampling[160];
    struct clt_sample smp;
    clt_sample_parse(clt_cfg.SAMPLE, &smp);
    clt_sample_describe(&smp, sampling, sizeof sampling);
    cost.n = 0;
    clt_attr_str(&cost, "cltrace.sampling", sampling);
    clt_attr_int(&cost, "cltrace.spilled_bytes", (int64_t)clt_spill_total());
    if (clt_rec_on()) {
        clt_attr_int(&cost, "cltrace.ring_bytes", (int64_t)clt_rec_held());
        clt_attr_int(&cost, "cltrace.ring_dropped_bytes", (int64_t)clt_rec_dropped());
    }
    /* Everything compressed and written before the exit's figure is taken,
     * the footer too; the figure follows alone. The last flush holds the
     * exit's records (leaks, completions): compressing it after the figure
     * left 0.4-0.7 ms of every exit uncounted (4,000 small writes on PoCL,
     * 2 cores), the footer after it 0.1-0.3 ms (a 0.05 s program). These
     * last flushes compress here, not on the compressor thread: each
     * hand-off was a wake-up on another core and a wait for it, three at
     * the exit. The compressor's CPU time so far counts with the writer's. */
    if (!helper_stop(&gzt.h) || !flush_to_file())
        goto unfinished;
    /* The room set aside for a full disk's note goes back now, inside the
     * exit's figure: closing it has the file system free its blocks, 0.2 ms
     * on ext4 (2 cores) that came after the figure. What is left to write,
     * two small packets or the note, fits in what it gave back. */
    clt_disk_release();
    clt_cost_footer(&W, &cost, clt_boottime_ns() - W.start_ns,
                    writer_cpu_ns + helper_cpu_ns(&gzt.h) + helper_cpu_ns(&spt.h));
    clt_attrs_put(&W, &cost);
    if (!flush_to_file())
        goto unfinished;
    cost.n = 0;                 /* put: its packet is in the file */
    clt_cost_exit(&W, &cost);
    clt_attrs_put(&W, &cost);
    clt_writer_flush(&W);
    if (helper_wait_idle(&spt.h, 0))   /* busy only if a write stalled: given up on already */
        helper_stop(&spt.h);
    close(W.fd);
    const char *final = W.path;
    if (W.dropped_emitted)     /* said whatever else is said: a trace with holes must not look whole */
        clt_msg("%llu of %llu calls were dropped (buffer full: the writer fell behind%s); the trace counts them",
                (unsigned long long)W.dropped_emitted, (unsigned long long)(W.calls + W.dropped_emitted),
                clt_cfg.DROP ? ", CLTRACE_DROP=1" : " for 10 s");
    if (W.io_failed) {
        /* already said: the trace stops where the write failed */
    } else if (clt_cfg.NOTIFY_FD >= 0) {
        char line[sizeof W.path + 2];
        int n = snprintf(line, sizeof line, "%s\n", final);
        ssize_t w = write((int)clt_cfg.NOTIFY_FD, line, (size_t)n);
        (void)w;
    } else {
        clt_msg("trace written to %s", final);
    }
    return;
unfinished:     /* bounded waits: a writer or a disk that is stuck must not hang the exit */
    clt_msg("writer did not finish; trace %s may be incomplete", W.path);
}

unsigned clt_writer_leaks(void) { return W.leaks_serious; }

void clt_writer_forget(void)
{
    /* fork child: the parent's file and threads are not ours. */
    memset(&W, 0, sizeof W);
    W.fd = -1;
    clt_disk_release();                 /* the parent's (a copy of its descriptor) */
    clt_spill_forget();
    clt_rec_forget();
    clt_windows_forget();
    clt_own_threads_forget();
    gzt.h.started = spt.h.started = 0;
    gzt.h.state = spt.h.state = JOB_IDLE;
    gzt.h.cpu_ns = spt.h.cpu_ns = 0;
}
