/* The app's queues as cltrace changed them: the properties the app asked
 * for (it reads back exactly those: hooks.c), and where profiling is
 * switched per timed command instead of on for the whole queue.
 *
 * Why switch: on NVIDIA's driver a queue with profiling on makes every
 * host-to-device write ~7 us slower (a 4 KiB write + kernel + clFinish loop:
 * 19.1 us against 13.0 on an H100; scripts/profq.c). By default and with
 * CLTRACE_SAMPLE most commands of a busy loop are not timed, so they should
 * not pay for profiling. Where the driver lets a queue's profiling be
 * switched (clSetCommandQueueProperty, OpenCL 1.0, deprecated but there), a
 * queue the app made without profiling stays plain: profiling goes on for a
 * timed command and stays on while the commands after it are timed too, and
 * goes off before the next untimed one. On an H200 (2026-11-30, 12 rounds)
 * 4,000 small writes ran 8.00 us each against 7.88 untraced, 15.64 with
 * profiling on throughout; a write + kernel + clFinish loop 5.33 against
 * 4.89 and 6.92. Switching on and off around every timed command instead
 * made 512 non-blocking small writes, most of them timed, slower than
 * profiling on throughout (1.069x untraced against 1.031x): a switch among
 * commands in flight is dear. Timed commands of several threads on one queue
 * share one switch (a count under the lock).
 *
 * Whether a driver can: tried once per device, on its first such queue.
 * The command must be in the queue's ICD dispatch table (PoCL's entry is
 * NULL: a call through the loader would jump to 0), read without trusting
 * the handle's memory; the switch must succeed both ways; and a marker
 * enqueued while it is on must carry profiling times (Oclgrind accepts the
 * call and changes nothing, but profiles every queue). Otherwise the queue
 * is made again with profiling on, as without sampling. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "common/map.h"
#include "shim.h"
#include "hooks.h"

enum { PROFILING = 2, CL_SUCCESS_ = 0, PROFILING_COMMAND_QUEUED = 0x1280, PROFILING_COMMAND_END = 0x1283,
       DISPATCH_SLOT = 13 };

int clt_queue_modes;
static _Atomic unsigned queues_profiling;    /* switched queues with profiling on now */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct clt_queue_ent *queues;
static unsigned n_queues, cap_queues;

static struct clt_queue_ent *find(void *q)
{
    for (unsigned i = 0; i < n_queues; i++)
        if (queues[i].queue == q)
            return &queues[i];
    return NULL;
}

void clt_queue_remember(const struct clt_queue_ent *made)
{
    pthread_mutex_lock(&lock);
    struct clt_queue_ent *e = find(made->queue);     /* an address reused after a release */
    if (e && e->profiling)                 /* its queue released with profiling on */
        __atomic_fetch_sub(&queues_profiling, 1, __ATOMIC_RELAXED);
    if (!e && clt_grow(&queues, n_queues, &cap_queues, sizeof *queues, 16) == 0) {
        e = &queues[n_queues++];
        memset(e, 0, sizeof *e);           /* clt_grow's memory is not zeroed */
    }
    if (e) {
        *e = *made;         /* timing and profiling 0: none yet */
        e->timing = 0;
        e->profiling = 0;
    }
    if (made->mode == CLT_QUEUE_SWITCHED)
        __atomic_fetch_or(&clt_queue_modes, CLT_MODE_SWITCHED, __ATOMIC_RELAXED);
    if (made->mode == CLT_QUEUE_BY_CALLBACKS)
        __atomic_fetch_or(&clt_queue_modes, CLT_MODE_CALLBACKS, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}

int clt_queue_lookup(void *q, struct clt_queue_ent *out)
{
    pthread_mutex_lock(&lock);
    struct clt_queue_ent *e = find(q);
    if (e)
        *out = *e;
    pthread_mutex_unlock(&lock);
    return e != NULL;
}

int clt_queue_by_callbacks(void *queue)
{
    struct clt_queue_ent q;
    return clt_queue_lookup(queue, &q) && q.mode == CLT_QUEUE_BY_CALLBACKS;
}

int clt_queue_in_order(void *queue)
{
    struct clt_queue_ent q;
    return clt_queue_lookup(queue, &q) && !(q.app_props & 1);   /* CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE */
}

int clt_queue_in_order_on_cpu(void *queue)
{
    struct clt_queue_ent q;
    return clt_queue_lookup(queue, &q) && !(q.app_props & 1) && q.cpu_device;
}

typedef int32_t (*set_prop_t)(void *, uint64_t, uint32_t, uint64_t *);

int clt_profiling_on(void *queue)
{
    set_prop_t set = REAL(clSetCommandQueueProperty);
    pthread_mutex_lock(&lock);
    struct clt_queue_ent *e = find(queue);
    int on = e && e->mode == CLT_QUEUE_SWITCHED && set;
    if (on && e->timing++ == 0 && !e->profiling) {
        set(queue, PROFILING, 1, NULL);
        e->profiling = 1;
        __atomic_fetch_add(&queues_profiling, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
    return on;
}

/* The timed command is enqueued: profiling stays on for the next. */
void clt_profiling_done(void *queue)
{
    pthread_mutex_lock(&lock);
    struct clt_queue_ent *e = find(queue);
    if (e && e->mode == CLT_QUEUE_SWITCHED && e->timing)
        e->timing--;
    pthread_mutex_unlock(&lock);
}

/* An untimed command next: off, unless a timed one is being enqueued on
 * the queue now. One load where no switched queue has it on. */
void clt_profiling_plain(void *queue)
{
    if (!__atomic_load_n(&queues_profiling, __ATOMIC_RELAXED))
        return;
    set_prop_t set = REAL(clSetCommandQueueProperty);
    pthread_mutex_lock(&lock);
    struct clt_queue_ent *e = find(queue);
    if (e && e->mode == CLT_QUEUE_SWITCHED && set && e->profiling && !e->timing) {
        set(queue, PROFILING, 0, NULL);
        e->profiling = 0;
        __atomic_fetch_sub(&queues_profiling, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
}

/* n bytes at p, or 0 where they cannot be read: a pipe takes them or says
 * EFAULT, where a plain read would fault. */
static int read_safely(const void *p, void *out, size_t n)
{
    int fd[2];
    if (pipe(fd) != 0)
        return 0;
    int ok = write(fd[1], p, n) == (ssize_t)n && read(fd[0], out, n) == (ssize_t)n;
    close(fd[0]);
    close(fd[1]);
    return ok;
}

/* The switch in the ICD dispatch table an object of the driver starts with
 * (a queue's, or its device's: the same driver's table). */
static int in_dispatch(void *object)
{
    void *const *table = NULL;
    void *entry = NULL;
    return read_safely(object, &table, sizeof table) && table &&
           read_safely(table + DISPATCH_SLOT, &entry, sizeof entry) && entry;
}

typedef int32_t (*wait_t)(uint32_t, void *const *);
typedef int32_t (*prof_t)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*rel_t)(void *);

/* A marker enqueued now on q, its event (NULL: none), CLOCK_MONOTONIC_RAW
 * read just before and after its enqueue into raw[2]. */
static void *marker_bracketed(void *q, uint64_t raw[2])
{
    typedef int32_t (*marker_t)(void *, uint32_t, const void *, void **);
    marker_t mark = REAL(clEnqueueMarkerWithWaitList);
    void *ev = NULL;
    if (!mark)
        return NULL;
    raw[0] = clt_clock_ns(CLOCK_MONOTONIC_RAW);
    int32_t err = mark(q, 0, NULL, &ev);
    raw[1] = clt_clock_ns(CLOCK_MONOTONIC_RAW);
    return err == CL_SUCCESS_ ? ev : NULL;
}

/* A marker enqueued now on q and waited for: its profiling time `which`
 * (0: none). */
static uint64_t marker_time(void *q, uint32_t which)
{
    wait_t wait = REAL(clWaitForEvents);
    prof_t prof = REAL(clGetEventProfilingInfo);
    rel_t rel = REAL(clReleaseEvent);
    uint64_t t = 0, raw[2];
    void *ev = wait && prof && rel ? marker_bracketed(q, raw) : NULL;
    if (!ev)
        return 0;
    if (wait(1, &ev) != CL_SUCCESS_ || prof(ev, which, sizeof t, &t, NULL) != CL_SUCCESS_)
        t = 0;
    rel(ev);
    return t;
}

/* A marker enqueued now on q: did its event get profiling times? */
static int marker_timed(void *q)
{
    return marker_time(q, PROFILING_COMMAND_END) != 0;
}

static int try_switch(void *queue)
{
    set_prop_t set = REAL(clSetCommandQueueProperty);
    uint64_t old = 0;
    if (!set || !in_dispatch(queue) || set(queue, PROFILING, 1, &old) != CL_SUCCESS_)
        return 0;
    int ok = marker_timed(queue);
    return set(queue, PROFILING, 0, NULL) == CL_SUCCESS_ && ok;
}

/* Per device: whether profiling can be switched (1 yes, -1 no, 0 not
 * tried yet); whether its plain queues' events carry profiling times anyway
 * (1 yes, -1 no, 0 not asked yet: asked when the app first reads profiling
 * it did not ask for, not at every program's start); whether its profiling
 * clock is CLOCK_MONOTONIC_RAW (1, -1, 0: asked at the first queue that
 * would be timed by callbacks). */
static struct { void *device; int switchable, unasked, raw_clock; } devs[64];
static unsigned n_devs;
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device's entry (made if new; NULL when the table is full). Under devs_lock. */
static unsigned dev_index(void *device)
{
    unsigned i = 0;
    while (i < n_devs && devs[i].device != device)
        i++;
    if (i == n_devs && n_devs < 64) {
        devs[i].device = device;
        devs[i].switchable = devs[i].unasked = devs[i].raw_clock = 0;
        n_devs++;
    }
    return i;
}

/* A driver without the switch in its table (PoCL) is known from the device
 * alone: its queues get profiling at once, not made plain and then again. */
int clt_profiling_refused(void *device)
{
    int saved = errno;
    pthread_mutex_lock(&devs_lock);
    unsigned i = dev_index(device);
    if (i < n_devs && !devs[i].switchable && !in_dispatch(device))
        devs[i].switchable = -1;
    int refused = i < n_devs && devs[i].switchable < 0;
    pthread_mutex_unlock(&devs_lock);
    errno = saved;
    return refused;
}

/* Three markers on a profiling queue of ours in context: each QUEUED time
 * between the reads of CLOCK_MONOTONIC_RAW around its enqueue. Waited for
 * together: one at a time, each wait a hand-off to the driver's thread
 * and back (~0.1 ms of the app's first queue on PoCL, 2 cores). */
static int raw_is_device_clock(void *context, void *device)
{
    typedef void *(*create_t)(void *, void *, uint64_t, int32_t *);
    create_t create = REAL(clCreateCommandQueue);
    rel_t rel_q = REAL(clReleaseCommandQueue), rel_ev = REAL(clReleaseEvent);
    wait_t wait = REAL(clWaitForEvents);
    prof_t prof = REAL(clGetEventProfilingInfo);
    int32_t err = -1;
    void *q = create && rel_q && rel_ev && wait && prof ? create(context, device, PROFILING, &err) : NULL;
    if (!q || err != CL_SUCCESS_)
        return 0;
    void *ev[3] = { NULL, NULL, NULL };
    uint64_t raw[3][2];
    int n = 0;
    while (n < 3 && (ev[n] = marker_bracketed(q, raw[n])) != NULL)
        n++;
    int ok = n == 3 && wait(3, ev) == CL_SUCCESS_;
    for (int i = 0; i < n; i++) {
        uint64_t queued = 0;
        ok = ok && prof(ev[i], PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL) == CL_SUCCESS_ && queued &&
             queued >= raw[i][0] && queued <= raw[i][1];
        rel_ev(ev[i]);
    }
    rel_q(q);
    return ok;
}

int clt_profiling_clock_is_raw(void *context, void *device)
{
    int saved = errno;
    pthread_mutex_lock(&devs_lock);      /* held through the trial: one per device */
    unsigned i = dev_index(device);
    int verdict = i < n_devs && devs[i].raw_clock ? devs[i].raw_clock : raw_is_device_clock(context, device) ? 1 : -1;
    if (i < n_devs)
        devs[i].raw_clock = verdict;
    pthread_mutex_unlock(&devs_lock);
    errno = saved;
    return verdict > 0;
}

/* The verdict above where one was reached, without a trial: 1 raw. */
int clt_profiling_clock_known_raw(void *device)
{
    int saved = errno;
    pthread_mutex_lock(&devs_lock);
    int raw = 0;
    for (unsigned i = 0; i < n_devs && !raw; i++)
        raw = devs[i].device == device && devs[i].raw_clock > 0;
    pthread_mutex_unlock(&devs_lock);
    errno = saved;
    return raw;
}

int clt_profiling_switchable(void *queue, void *device)
{
    int saved = errno;
    pthread_mutex_lock(&devs_lock);      /* held through the trial: one per device */
    unsigned i = dev_index(device);
    int verdict = i < n_devs && devs[i].switchable ? devs[i].switchable : try_switch(queue) ? 1 : -1;
    if (i < n_devs)
        devs[i].switchable = verdict;
    pthread_mutex_unlock(&devs_lock);
    errno = saved;
    return verdict > 0;
}

/* A marker's event on a plain queue of ours, on the device and context of
 * queue: does it carry profiling times? Only asked of an OpenCL 1.2 device
 * (markers with events; cltrace calls only what the device has). */
static int plain_queue_profiles(void *queue, void **device)
{
    typedef int32_t (*info_t)(void *, uint32_t, size_t, void *, size_t *);
    typedef void *(*create_t)(void *, void *, uint64_t, int32_t *);
    typedef int32_t (*obj_t)(void *);
    info_t qinfo = REAL(clGetCommandQueueInfo), dinfo = REAL(clGetDeviceInfo);
    create_t create = REAL(clCreateCommandQueue);
    obj_t rel_q = REAL(clReleaseCommandQueue);
    void *context = NULL;
    char version[128] = "";
    if (!qinfo || !dinfo || !create || !rel_q ||
        qinfo(queue, 0x1091 /* CL_QUEUE_DEVICE */, sizeof *device, device, NULL) != CL_SUCCESS_ ||
        qinfo(queue, 0x1090 /* CL_QUEUE_CONTEXT */, sizeof context, &context, NULL) != CL_SUCCESS_ ||
        dinfo(*device, 0x102F /* CL_DEVICE_VERSION */, sizeof version - 1, version, NULL) != CL_SUCCESS_ ||
        clt_cl_version(version) < 102)
        return 0;
    int32_t err = -1;
    void *q = create(context, *device, 0, &err);
    if (!q || err != CL_SUCCESS_)
        return 0;
    int on = marker_timed(q);
    rel_q(q);
    return on;
}

int clt_profiles_unasked(void *queue)
{
    typedef int32_t (*info_t)(void *, uint32_t, size_t, void *, size_t *);
    info_t qinfo = REAL(clGetCommandQueueInfo);
    void *device = NULL;
    if (!qinfo || qinfo(queue, 0x1091 /* CL_QUEUE_DEVICE */, sizeof device, &device, NULL) != CL_SUCCESS_)
        return 0;
    int saved = errno;
    pthread_mutex_lock(&devs_lock);
    unsigned i = dev_index(device);
    int v = i < n_devs && devs[i].unasked ? devs[i].unasked : plain_queue_profiles(queue, &device) ? 1 : -1;
    if (i < n_devs)
        devs[i].unasked = v;
    pthread_mutex_unlock(&devs_lock);
    errno = saved;
    return v > 0;
}
