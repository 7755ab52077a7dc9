/* The trace file: the only code that writes it.
 *
 * The writer's output buffer holds whole packets only and is written with
 * whole packets only, so a file cut at any point (crash, full disk) loses at
 * most the packet being written. With CLTRACE_COMPRESS (the default) the
 * buffer is gzipped as it is written (gzstream.c), on a second thread while
 * the writer fills its other buffer: the file is a whole .pftrace.gz after
 * every flush, and the exit has nothing left to compress. With the flight
 * recorder a flush goes to its memory instead (recorder.c). A spill's
 * writes (spill.c) run on a thread of this part's too: a stalled disk holds
 * that thread, never the writer's. Uses recorder.c, disk.c, gzstream.c,
 * ownthreads.c (its threads' names and priority); nothing here encodes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "emit.h"
#include "file.h"
#include "spill.h"
#include "common/cache.h"
#include "common/config.h"
#include "common/job.h"
#include "trace/ring.h"

static struct clt_writer *owner;    /* the one writer: its helper threads write for it */
static void file_flush(struct clt_writer *w);

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Expand %p (pid), %e (program), %r (rank, "0" outside a job), %h (host).
 * A directory (or a name ending in '/', made with its parents if missing) gets the default
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
        clt_make_dirs(dir, 0755);      /* as mkdir -p: results/run1/ in a fresh folder */
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
int clt_file_open(struct clt_writer *w)
{
    owner = w;
    char base[PATH_MAX - 16];
    clt_job_detect(&w->job);
    trace_path(base, sizeof base, &w->job);
    if (clt_cfg.COMPRESS) {
        size_t bl = strlen(base);
        if (bl < 3 || strcmp(base + bl - 3, ".gz") != 0)
            snprintf(base + bl, sizeof base - bl, ".gz");
    }
    snprintf(w->path, sizeof w->path, "%s", base);
    for (int i = 1; i < 100; i++) {
        w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (w->fd >= 0 || errno != EEXIST)
            break;
        char *dot = strstr(base, ".pftrace");
        snprintf(w->path, sizeof w->path, "%.*s-%d%s", dot ? (int)(dot - base) : (int)strlen(base), base, i,
                 dot ? dot : "");
    }
    if (w->fd < 0) {
        clt_msg("cannot create trace %s: %s; running untraced", w->path, strerror(errno));
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
    clt_disk_written(w->fd, w->bytes_written);
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
    const char *when;           /* it started: for the whole run, at the exit (cltrace.gzip_thread) */
    _Atomic int at_exit;        /* the exit began: its first full buffer starts it */
} gzt;

static void *gz_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-gzip", 1);
    while (helper_next(&gzt.h)) {
        write_gz(owner, gzt.buf, gzt.kept, gzt.len);
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

int clt_file_spill_write(struct clt_spill_write *job)
{
    if (!spt.h.started && gzt.h.started)   /* the writer blocks all signals: so does the thread */
        spt.h.started = pthread_create(&spt.h.thread, NULL, spill_main, NULL) == 0;
    if (!spt.h.started)
        return spill_do(job);
    spt.job = *job;
    helper_set(&spt.h, JOB_GIVEN);
    if (!helper_wait_idle(&spt.h, 10000)) {
        give_up_stalled(owner);
        return 0;
    }
    return spt.job.ok;
}

static void start_at_exit(void);

static void flush_gz(struct clt_writer *w)
{
    size_t keep = w->len < CLT_GZ_WINDOW ? w->len : CLT_GZ_WINDOW;
    if (__atomic_load_n(&gzt.at_exit, __ATOMIC_ACQUIRE) && !gzt.h.started && w->len - w->kept >= CLT_OUT_FLUSH / 2)
        start_at_exit();        /* a backlog at the exit: compressed beside the encoding */
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

static void compressor_start(void)
{
    if (!gzt.spare)
        gzt.spare = malloc(CLT_OUT_CAP + 64);       /* as W.out: 64 bytes readable past the end */
    if (gzt.spare && pthread_create(&gzt.h.thread, NULL, gz_main, NULL) == 0)
        gzt.h.started = 1;
}

/* Start the compressor thread (gzip mode; the caller blocks signals) where
 * it pays: with fewer than 4 CPUs it would take the app's. */
void clt_file_start(void)
{
    gzt.h.started = 0;
    gzt.at_exit = 0;
    gzt.h.state = JOB_IDLE;
    cpu_set_t cpus;
    long want = clt_cfg.COMPRESS_THREAD;
    if (want < 0)
        want = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 4;
    if (want)
        compressor_start();
    gzt.when = gzt.h.started ? "run" : "none";
}

/* The app's exit: its threads wait for the trace, their CPUs are free. The
 * writer's last work (a launch loop's completions on a CPU device, held
 * until its queue ran dry: 10-16 ms of drawing and gzip on 2 cores) then
 * compresses beside the drawing, from the first full buffer flushed after
 * the exit began (by the one thread that flushes: the writer, or the exit
 * after it ended). Not before one fills: for an exit with little to write
 * the thread was all cost (0.4 ms of the exiting thread to start it, PoCL,
 * 2 cores). Never with CLTRACE_COMPRESS_THREAD=0. */
void clt_file_exit_begins(const struct clt_writer *w)
{
    if (w->gz && clt_cfg.COMPRESS_THREAD)
        __atomic_store_n(&gzt.at_exit, 1, __ATOMIC_RELEASE);
}

static void start_at_exit(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);       /* the app's signals stay the app's */
    compressor_start();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (gzt.h.started)
        gzt.when = "exit";
}

const char *clt_file_compressor(void)
{
    return gzt.when ? gzt.when : "none";
}




/* Whole packets into the file, as much as the output buffer takes at a time. */
void clt_file_put_whole(struct clt_writer *w, const uint8_t *p, size_t n)
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
    clt_disk_written(w->fd, w->bytes_written);
}

/* What the writer holds, in the file, not only handed to the compressor;
 * 0: a write has stalled (10 s). */
int clt_file_sync(struct clt_writer *w)
{
    clt_writer_flush(w);
    return helper_wait_idle(&gzt.h, 10000);
}

int clt_file_stop_compressor(void)
{
    __atomic_store_n(&gzt.at_exit, 0, __ATOMIC_RELEASE);   /* the last flushes are the caller's */
    return helper_stop(&gzt.h);
}

uint64_t clt_file_threads_cpu_ns(void)
{
    return helper_cpu_ns(&gzt.h) + helper_cpu_ns(&spt.h);
}

void clt_file_stop_spill(void)
{
    if (helper_wait_idle(&spt.h, 0))   /* busy only if a write stalled: given up on already */
        helper_stop(&spt.h);
}

void clt_file_forget(void)
{
    gzt.h.started = spt.h.started = 0;
    gzt.at_exit = 0;
    gzt.h.state = spt.h.state = JOB_IDLE;
    gzt.h.cpu_ns = spt.h.cpu_ns = 0;
    gzt.when = NULL;
}

/* The trace closed: what was dropped said, and where it went. */
void clt_file_say_written(struct clt_writer *w)
{
    if (w->dropped_emitted)     /* said whatever else is said: a trace with holes must not look whole */
        clt_msg("%llu of %llu calls were dropped (buffer full: the writer fell behind%s); the trace counts them",
                (unsigned long long)w->dropped_emitted, (unsigned long long)(w->calls + w->dropped_emitted),
                clt_cfg.DROP ? ", CLTRACE_DROP=1" : " for 10 s");
    if (w->io_failed) {
        /* already said: the trace stops where the write failed */
    } else if (clt_cfg.NOTIFY_FD >= 0) {
        char line[sizeof w->path + 2];
        int n = snprintf(line, sizeof line, "%s\n", w->path);
        ssize_t put = write((int)clt_cfg.NOTIFY_FD, line, (size_t)n);
        (void)put;
    } else {
        clt_msg("trace written to %s", w->path);
    }
}
