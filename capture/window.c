/* When cltrace records: windows (CLTRACE_WINDOW, common/window_spec.h), the
 * program's own cltrace_start()/cltrace_stop(), and `cltrace ctl PID` from
 * outside (common/ctl.h).
 *
 * Outside a window the wrappers of commands that only use objects forward at
 * once (clt_recording 0: one load and a branch, as with CLTRACE_DISABLE=1);
 * the commands that make, build or let go of objects are still recorded,
 * marked CLT_RAW_OUTSIDE, so a window's trace names what it shows and the
 * leaks at exit cover the whole run. No event is asked for outside a window.
 *
 * Who moves the state: the control thread (timed starts and ends, the
 * channel), the calling thread when a trigger counts calls or waits for a
 * kernel (clt_recording 2: each call takes clt_window_tick), and the program
 * (start/stop). Transitions hold `lock`; the wrappers read clt_recording
 * only. Each opening and closing is a CLT_REC_WINDOW record in the ring of
 * the thread that made it, so the trace says which windows it holds. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "common/ctl.h"
#include "common/window_spec.h"
#include "shim.h"
#include "window.h"

int clt_recording;

static struct clt_windows ws;
static int windowed;                 /* windows given, or the program or ctl stopped recording once */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int open_now = 1;             /* without windows: open from the start */
static unsigned next_w;              /* the window the next opening is by */
static uint64_t round_ns;            /* CLTRACE_WINDOW_EVERY: this round's start, since load */
static const struct clt_window_spec *cur;   /* the open window's (NULL: opened by hand) */
static uint64_t opened_ns, opened_call;
static unsigned n_opened;
static uint64_t t_load;
static _Atomic uint64_t calls;       /* the program's calls, counted while a trigger needs them */
static _Atomic uint64_t open_at_call = UINT64_MAX, close_at_call = UINT64_MAX;
static _Atomic int kernel_wanted;
static char snap_glob[96];           /* CLTRACE_SNAPSHOT_ON=kernel:GLOB, with the flight recorder */
static _Atomic int snap_wanted;

static int ctl_fd = -1, wake_fd = -1;
static char ctl_path[108];
static pthread_t control;
static int control_up;
static _Atomic int control_quit;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the state ----------------------------------------------------------- */

static void emit(int open, const char *why)
{
    struct clt_thread *th = clt_enter();
    if (!th)
        return;
    uint64_t t = clt_now();
    struct clt_rec *rec = clt_rec_begin(th, sizeof(struct clt_rec) + 8 * 2 + CLT_MAX_STR);
    if (rec) {
        struct clt_extra x = clt_extra_init(rec, 2);
        rec->arg[0] = clt_put_str(&x, 0, 1, why);
        rec->arg[1] = (open ? CLT_WIN_OPEN : 0) | (uint64_t)n_opened << 1;
        clt_rec_commit(th, rec, &x, CLT_REC_WINDOW, t, t, 0);
    }
}

static void refresh_locked(void)
{
    const struct clt_window_spec *nx = !open_now && next_w < ws.n ? &ws.w[next_w] : NULL;
    __atomic_store_n(&open_at_call, nx && nx->at == CLT_AT_CALLS ? nx->start + 1 : UINT64_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&kernel_wanted, nx && nx->at == CLT_AT_KERNEL, __ATOMIC_RELAXED);
    __atomic_store_n(&close_at_call, open_now && cur && cur->len_kind == CLT_FOR_CALLS ? opened_call + cur->len
                                                                                      : UINT64_MAX, __ATOMIC_RELAXED);
    int counting = (ws.counts && (open_now || next_w < ws.n)) || __atomic_load_n(&snap_wanted, __ATOMIC_RELAXED);
    int gate = !clt_is_active() ? 0 : counting ? 2 : !windowed ? 1 : open_now;
    __atomic_store_n(&clt_recording, gate, __ATOMIC_RELEASE);
}

static void wake_control(void)
{
    uint64_t one = 1;
    if (wake_fd >= 0 && write(wake_fd, &one, sizeof one) < 0)
        return;     /* the control thread looks again within a second anyway */
}

static void open_locked(const struct clt_window_spec *w, uint64_t now, uint64_t call, const char *why)
{
    __atomic_store_n(&open_now, 1, __ATOMIC_RELAXED);     /* read unlocked by clt_window_tick */
    cur = w;
    opened_ns = now;
    opened_call = call;
    n_opened++;
    emit(1, why);
}

static void close_locked(const char *why)
{
    emit(0, why);
    __atomic_store_n(&open_now, 0, __ATOMIC_RELAXED);
    if (cur || (next_w < ws.n && ws.w[next_w].at == CLT_AT_MANUAL))
        next_w++;           /* a window of the list is over */
    cur = NULL;
    if (next_w >= ws.n && ws.every_ns) {
        next_w = 0;
        round_ns += ws.every_ns;
    }
}

static int kernel_name(const void *kernel, char *name, size_t cap)
{
    typedef int32_t (*info_fn)(const void *, uint32_t, size_t, void *, size_t *);
    info_fn info = (info_fn)clt_real(CLT_FN_clGetKernelInfo);
    if (!info || info(kernel, 0x1190 /* CL_KERNEL_FUNCTION_NAME */, cap, name, NULL) != 0)
        return -1;
    name[cap - 1] = 0;
    return 0;
}

static int kernel_matches(const void *kernel, const char *glob)
{
    static struct { const void *k; int match; } seen[64];
    static unsigned n_seen;
    for (unsigned i = 0; i < n_seen && i < 64; i++)
        if (seen[i].k == kernel)
            return seen[i].match;
    char name[256];
    if (kernel_name(kernel, name, sizeof name) != 0)
        return 0;
    int m = fnmatch(glob, name, 0) == 0;
    seen[n_seen % 64].k = kernel;
    seen[n_seen++ % 64].match = m;
    return m;
}

/* call: the number of the call being decided (the next one, from the timer) */
static void transition_locked(uint64_t now, uint64_t call, const void *kernel)
{
    for (unsigned guard = 0; guard < 2 * CLT_WINDOWS_MAX + 2; guard++) {
        if (open_now) {
            if (!cur || !((cur->len_kind == CLT_FOR_TIME && now >= opened_ns + cur->len) ||
                          (cur->len_kind == CLT_FOR_CALLS && call >= opened_call + cur->len)))
                break;
            close_locked(cur->len_kind == CLT_FOR_TIME ? "its duration" : "its call count");
        }
        if (next_w >= ws.n)
            break;
        const struct clt_window_spec *w = &ws.w[next_w];
        const char *why = NULL;
        if (w->at == CLT_AT_TIME && now >= t_load + round_ns + w->start)
            why = "its start time";
        else if (w->at == CLT_AT_CALLS && call > w->start)
            why = "its call count";
        else if (w->at == CLT_AT_KERNEL && kernel && kernel_matches(kernel, w->glob))
            why = "its kernel";
        if (!why)
            break;
        open_locked(w, now, call, why);
    }
    refresh_locked();
}

/* CLTRACE_SNAPSHOT_ON=kernel:GLOB: the flight recorder's memory written at
 * the first launch of such a kernel (not waited for). */
static void snapshot_at_kernel(const void *kernel)
{
    char name[256], why[300];
    if (kernel_name(kernel, name, sizeof name) != 0 || fnmatch(snap_glob, name, 0) != 0)
        return;
    if (!__atomic_exchange_n(&snap_wanted, 0, __ATOMIC_ACQ_REL))
        return;
    pthread_mutex_lock(&lock);
    refresh_locked();
    pthread_mutex_unlock(&lock);
    snprintf(why, sizeof why, "the first launch of %s", name);
    clt_writer_snapshot(why, 0);
}

int clt_window_tick(unsigned fn, const void *kernel)
{
    (void)fn;
    if (kernel && __atomic_load_n(&snap_wanted, __ATOMIC_RELAXED)) {
        int saved = errno;
        snapshot_at_kernel(kernel);
        errno = saved;
    }
    uint64_t n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&open_now, __ATOMIC_RELAXED)) {
        if (n < __atomic_load_n(&close_at_call, __ATOMIC_RELAXED))
            return 1;
    } else if (n < __atomic_load_n(&open_at_call, __ATOMIC_RELAXED) &&
               !(kernel && __atomic_load_n(&kernel_wanted, __ATOMIC_RELAXED))) {
        return 0;
    }
    int saved = errno;
    pthread_mutex_lock(&lock);
    transition_locked(now_ns(), n, kernel);
    int in = open_now;
    pthread_mutex_unlock(&lock);
    wake_control();         /* a window that lasts a time: its end is the control thread's */
    errno = saved;
    return in;
}

/* cltrace_start / `cltrace ctl PID start`: 0 started, 1 already recording */
static int start_by_hand(const char *why)
{
    pthread_mutex_lock(&lock);
    int was = open_now;
    if (!was) {
        const struct clt_window_spec *w = next_w < ws.n && ws.w[next_w].at == CLT_AT_MANUAL ? &ws.w[next_w] : NULL;
        open_locked(w, now_ns(), __atomic_load_n(&calls, __ATOMIC_RELAXED) + 1, why);
        refresh_locked();
    }
    pthread_mutex_unlock(&lock);
    wake_control();
    return was;
}

/* 0 stopped, 1 not recording */
static int stop_by_hand(const char *why)
{
    pthread_mutex_lock(&lock);
    int was = open_now;
    if (was) {
        if (!windowed) {    /* the whole run so far was the first window */
            windowed = 1;
            n_opened = 1;
        }
        close_locked(why);
        refresh_locked();
    }
    pthread_mutex_unlock(&lock);
    wake_control();
    return !was;
}

void clt_window_start(void)
{
    start_by_hand("cltrace_start()");
}

void clt_window_stop(void)
{
    stop_by_hand("cltrace_stop()");
}

/* ---- the control thread: timed starts and ends, the channel ------------- */

static uint64_t deadline_locked(void)
{
    if (open_now && cur && cur->len_kind == CLT_FOR_TIME)
        return opened_ns + cur->len;
    if (!open_now && next_w < ws.n && ws.w[next_w].at == CLT_AT_TIME)
        return t_load + round_ns + ws.w[next_w].start;
    return UINT64_MAX;
}

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && send(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1, MSG_NOSIGNAL) < 0)
        return;     /* the asker went away */
}

static void serve_one(void)
{
    int fd = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    /* the command is read first, whoever sent it: a socket closed with
     * unread bytes resets, and the asker would not see the answer */
    char cmd[64] = "";
    struct pollfd p = { fd, POLLIN, 0 };
    if (poll(&p, 1, 2000) == 1) {
        ssize_t n = recv(fd, cmd, sizeof cmd - 1, 0);
        cmd[n > 0 ? n : 0] = 0;
        cmd[strcspn(cmd, "\r\n ")] = 0;
    }
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid()) {
        reply(fd, "refused: only user %u may control this program\n", (unsigned)geteuid());
        close(fd);
        return;
    }
    if (strcmp(cmd, "start") == 0) {
        reply(fd, start_by_hand("cltrace ctl start") ? "already recording\n" : "recording\n");
    } else if (strcmp(cmd, "stop") == 0) {
        reply(fd, stop_by_hand("cltrace ctl stop") ? "was not recording\n" : "stopped\n");
    } else if (strcmp(cmd, "snapshot") == 0) {
        const char *path = clt_writer_snapshot("cltrace ctl snapshot", 5000);
        if (path && clt_writer_snapshot_whole())
            reply(fd, "written: %s (whole up to now)\n", path);
        else if (path)
            reply(fd, "written: %s (what cltrace's writer encoded within 0.7 s: the calls just before now were "
                  "still queued)\n", path);
        else
            reply(fd, "refused: the snapshot could not be written (see the program's stderr)\n");
    } else if (strcmp(cmd, "status") == 0) {
        pthread_mutex_lock(&lock);
        int o = open_now;
        unsigned n = n_opened;
        pthread_mutex_unlock(&lock);
        reply(fd, "pid %d: %s; windows opened: %u; trace: %s\n", (int)getpid(),
              o ? "recording" : "not recording (outside a window)", n, clt_writer_path());
    } else {
        reply(fd, "unknown command '%s': start, stop, snapshot or status\n", cmd);
    }
    close(fd);
}

static void *control_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-ctl", 0);     /* it may call into the driver: normal priority */
    while (!__atomic_load_n(&control_quit, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&lock);
        uint64_t dl = deadline_locked(), now = now_ns();
        pthread_mutex_unlock(&lock);
        int timeout = 1000;
        if (dl != UINT64_MAX)
            timeout = dl <= now ? 0 : (dl - now) / 1000000u + 1 < 1000 ? (int)((dl - now) / 1000000u + 1) : 1000;
        struct pollfd p[2] = { { wake_fd, POLLIN, 0 }, { ctl_fd, POLLIN, 0 } };
        int r = poll(p, ctl_fd >= 0 ? 2 : 1, timeout);
        if (__atomic_load_n(&control_quit, __ATOMIC_ACQUIRE))
            break;
        if (r > 0 && (p[0].revents & POLLIN)) {
            uint64_t v;
            if (read(wake_fd, &v, sizeof v) < 0)
                v = 0;
        }
        pthread_mutex_lock(&lock);
        transition_locked(now_ns(), __atomic_load_n(&calls, __ATOMIC_RELAXED) + 1, NULL);
        pthread_mutex_unlock(&lock);
        if (r > 0 && ctl_fd >= 0 && (p[1].revents & POLLIN))
            serve_one();
    }
    clt_own_thread_end();
    return NULL;
}

static void open_channel(void)
{
    char err[256];
    if (clt_ctl_path(getpid(), 1, ctl_path, sizeof ctl_path, err, sizeof err) != 0) {
        clt_msg("cltrace ctl will not reach this program: %s", err);
        ctl_path[0] = 0;
        return;
    }
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    memcpy(sa.sun_path, ctl_path, sizeof sa.sun_path - 1);
    unlink(ctl_path);       /* a process of this pid that died before us */
    ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    mode_t old = umask(077);
    int ok = ctl_fd >= 0 && bind(ctl_fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(ctl_fd, 4) == 0;
    umask(old);
    if (!ok) {
        clt_msg("cltrace ctl will not reach this program: %s: %s", ctl_path, strerror(errno));
        if (ctl_fd >= 0)
            close(ctl_fd);
        ctl_fd = -1;
        ctl_path[0] = 0;
    }
}

/* ---- life cycle ------------------------------------------------------------ */

void clt_window_load(void)
{
    t_load = now_ns();
    const char *spec = getenv(CLT_ENV_PREFIX "WINDOW"), *every = getenv(CLT_ENV_PREFIX "WINDOW_EVERY");
    if (spec && *spec) {
        char err[256];
        if (clt_windows_parse(spec, every, &ws, err, sizeof err) != 0) {
            clt_msg("CLTRACE_WINDOW=%s: %s; recording the whole run", spec, err);
            memset(&ws, 0, sizeof ws);
        } else {
            windowed = 1;
            open_now = 0;
        }
    }
    const char *k = clt_cfg.RING_MB[0] ? strstr(clt_cfg.SNAPSHOT_ON, "kernel:") : NULL;
    if (k) {
        snprintf(snap_glob, sizeof snap_glob, "%.*s", (int)strcspn(k + 7, ","), k + 7);
        __atomic_store_n(&snap_wanted, snap_glob[0] != 0, __ATOMIC_RELAXED);
    }
    refresh_locked();
}

void clt_window_begin(void)
{
    if (!windowed && !clt_cfg.RING_MB[0])
        return;
    clt_writer_bound_backlog();     /* a snapshot asked for finds its calls encoded within a second */
    pthread_mutex_lock(&lock);
    transition_locked(now_ns(), 1, NULL);   /* a window from 0 s opens before the first call */
    pthread_mutex_unlock(&lock);
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    open_channel();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the program's signals are never ours */
    control_up = pthread_create(&control, NULL, control_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void clt_window_refresh(void)
{
    pthread_mutex_lock(&lock);
    refresh_locked();
    pthread_mutex_unlock(&lock);
}

void clt_window_end(void)
{
    if (control_up) {
        __atomic_store_n(&control_quit, 1, __ATOMIC_RELEASE);
        wake_control();
        pthread_join(control, NULL);
        control_up = 0;
    }
    if (ctl_fd >= 0) {
        close(ctl_fd);
        ctl_fd = -1;
    }
    if (ctl_path[0])
        unlink(ctl_path);
    ctl_path[0] = 0;
}

/* A fork child: no control thread, the parent's channel is not its own; it
 * starts again (its own channel) with its first recorded call. */
void clt_window_forget(void)
{
    pthread_mutex_init(&lock, NULL);
    control_up = 0;
    if (ctl_fd >= 0)
        close(ctl_fd);
    if (wake_fd >= 0)
        close(wake_fd);
    ctl_fd = wake_fd = -1;
    ctl_path[0] = 0;
    __atomic_store_n(&control_quit, 0, __ATOMIC_RELAXED);
}
