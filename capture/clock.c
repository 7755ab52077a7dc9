/* Where each device's clock stands against the host's, as evidence for the
 * writer (writer/device.c, "the clock"): a marker with an event, whose
 * QUEUED time the enqueue brackets (a lower bound of the offset host -
 * device), polled until it is over (its END and the moment it is seen over:
 * an upper bound). On NVIDIA's driver one such marker leaves an interval of
 * 5.0-5.4 us, the narrowest of the ways scripts/clockprobe.c measures.
 *
 * The first queue of each device gets 16 at once, a CPU device's 4
 * (hooks.c, calibrate). The
 * upper bound then ages with the clocks' drift (~20 us/s on NVIDIA): in a
 * 20,000-launch loop the residual grew from 4.7 us to 15 us in half a
 * second, the launches' own brackets being ~14 us wide. So while commands
 * are in flight the collector thread takes one more every KEEP_PERIOD_NS,
 * on a queue of cltrace's own in the app's context: its markers wait for
 * nothing of the app's, the app's queues never see them, and a marker costs
 * the driver ~13 us of the collector's time, 0.1 % of a 10 ms period. That
 * queue would keep the app's context alive: it is released when the app
 * releases the context, and made again with the app's next queue; the
 * reference it adds is taken out of what the app reads of the context's
 * count.
 *
 * A device whose profiling clock is the host's CLOCK_MONOTONIC_RAW (PoCL's,
 * checked where its queues are timed by callbacks: capture/queues.c) needs
 * no queue and no marker: that clock read between two ticks of cltrace's is
 * evidence ~30-60 ns wide (the writer gives it 100 ns each side: its own
 * line from ticks to the trace's clock), where a marker on PoCL took
 * ~100-170 us of polling on the app's cores (the exit's 8 were 0.8-1.4 ms
 * of it, 2 cores). */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include <string.h>
#include "capture/generated/clt_hooks.h"
#include "queues.h"
#include "shim.h"

enum { CL_SUCCESS_ = 0, CL_COMPLETE_ = 0, CL_CONTEXT_REFERENCE_COUNT_ = 0x1080, CL_QUEUE_PROFILING_ENABLE_ = 2, CL_QUEUE_PROPERTIES_ = 0x1093,
       CL_DEVICE_VERSION_ = 0x102F, CL_EVENT_COMMAND_EXECUTION_STATUS_ = 0x11D3, CL_DEVICE_TYPE_ = 0x1000,
       CL_DEVICE_TYPE_CPU_ = 2,
       CL_PROFILING_COMMAND_QUEUED_ = 0x1280, CL_PROFILING_COMMAND_END_ = 0x1283 };
typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);

void clt_put_clock(struct clt_thread *th, void *dev, uint64_t before, uint64_t device_ts, uint64_t after,
                   int32_t status, unsigned kind)
{
    struct clt_rec *rec = th ? clt_rec_begin(th, sizeof(struct clt_rec) + 8 * CLK_N) : NULL;
    if (!rec)
        return;
    struct clt_extra x = clt_extra_init(rec, CLK_N);
    rec->arg[CLK_DEVICE] = (uint64_t)(uintptr_t)dev;
    rec->arg[CLK_HOST_BEFORE] = before;
    rec->arg[CLK_DEVICE_TS] = device_ts;
    rec->arg[CLK_HOST_AFTER] = after;
    rec->arg[CLK_STATUS] = (uint64_t)(int64_t)status;
    rec->arg[CLK_KIND] = kind;
    uint64_t now = clt_now();
    clt_rec_commit(th, rec, &x, CLT_REC_CLOCK, now, now, 0);
}

/* A CPU device (PoCL): its markers run on the cores the app needs. */
int clt_clock_cpu_device(void *dev)
{
    uint64_t type = 0;
    get_info_t dinfo = REAL(clGetDeviceInfo);
    return dinfo && dinfo(dev, CL_DEVICE_TYPE_, sizeof type, &type, NULL) == CL_SUCCESS_ && (type & CL_DEVICE_TYPE_CPU_);
}

int clt_clock_marker(struct clt_thread *th, void *queue, void *dev, int cpu_device, uint64_t *call_ticks)
{
    typedef int32_t (*marker_t)(void *, uint32_t, const void *, void **);
    typedef int32_t (*obj_fn_t)(void *);
    marker_t mark = REAL(clEnqueueMarkerWithWaitList);
    get_info_t prof = REAL(clGetEventProfilingInfo), ev_info = REAL(clGetEventInfo);
    obj_fn_t rel = REAL(clReleaseEvent), flush = REAL(clFlush);
    if (!mark || !prof || !ev_info || !rel || !flush)
        return 0;
    void *ev = NULL;
    uint64_t b = clt_now();
    int32_t st = mark(queue, 0, NULL, &ev);
    uint64_t c = clt_now();
    if (st != CL_SUCCESS_ || !ev)
        return 0;
    *call_ticks = c - b;
    flush(queue);
    /* polled, so that the moment it is seen over is close to its END; on a
     * CPU device (PoCL) asleep between looks: the device's own threads and
     * the app's need the core (a spinning collector cost a program of 4,000
     * small blocking writes ~20 ms on 2 cores), and a sched_yield there
     * handed it to any busy thread for its whole slice: beside two CPU hogs
     * the first queue's 16 markers took 5-47 ms, where a 20 us sleep lets
     * the device's thread, which has just woken, run first */
    int32_t status = 1;
    uint64_t seen, limit = c + 20 * (c - b + 1000000);
    const struct timespec nap = { 0, 20000 };
    while (ev_info(ev, CL_EVENT_COMMAND_EXECUTION_STATUS_, sizeof status, &status, NULL) == CL_SUCCESS_ &&
           status > 0 && clt_now() < limit)
        if (cpu_device)
            nanosleep(&nap, NULL);
    seen = clt_now();
    uint64_t queued = 0, end = 0;
    if (status == CL_COMPLETE_ && prof(ev, CL_PROFILING_COMMAND_QUEUED_, sizeof queued, &queued, NULL) == CL_SUCCESS_ &&
        prof(ev, CL_PROFILING_COMMAND_END_, sizeof end, &end, NULL) == CL_SUCCESS_ && queued && end) {
        clt_put_clock(th, dev, b, queued, c, 0, CLT_CLK_MARKER);
        clt_put_clock(th, dev, seen, end, seen, 0, CLT_CLK_UPPER);
    }
    rel(ev);      /* a marker still pending after the limit is released all the same */
    return 1;
}

/* ---- kept fresh while commands run ---------------------------------------- */

#define KEEP_DEVICES 16
#define KEEP_PERIOD_NS 10000000ull
/* On a CPU device a marker runs on the cores the app needs, and the
 * collector wakes for it (collect.c, nap_max_ns); its clock is the host's
 * own, whose drift against cltrace's is the host's (NTP's slew: ppm), and
 * the writer draws the drift as straight between markers (writer/clock.c,
 * "chords"). */
#define KEEP_PERIOD_CPU_NS 100000000ull
#define QUIET_MARKERS 8                 /* taken at once where the app has paused */

static struct keep {
    void *device, *context, *queue;   /* queue: cltrace's own, NULL once the context was released */
    uint64_t last_ns, last_quiet_ns;
    int cpu_device;                   /* clt_clock_cpu_device, asked once when the queue was made */
    int raw;                          /* its clock is CLOCK_MONOTONIC_RAW: read, no queue */
    uint32_t context_refs;            /* the references our queue added to the context's count */
} keeps[KEEP_DEVICES];
static unsigned n_keeps;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;

/* keep_lock as an app's thread takes it. The collector holds it across its
 * markers, at idle priority: beside two CPU hogs it then got no CPU, and
 * the app's clReleaseContext waited for it 90-550 ms (tests/apps/host_gap.c,
 * 5 runs). Where it is held, cltrace's threads are put back at normal
 * priority first, as where the app waits for ring room. */
static void keep_lock_for_app(void)
{
    if (pthread_mutex_trylock(&keep_lock) == 0)
        return;
    clt_own_threads_lift(CLT_LIFT_CLOCK);
    pthread_mutex_lock(&keep_lock);
}

/* A profiling queue of ours on dev in context, or NULL (markers need 1.2). */
static void *own_queue(void *context, void *dev)
{
    typedef void *(*create_t)(void *, void *, uint64_t, int32_t *);
    typedef void *(*create_props_t)(void *, void *, const uint64_t *, int32_t *);
    get_info_t dinfo = REAL(clGetDeviceInfo);
    char version[1024] = "";     /* the whole string, or the driver refuses (PoCL's is long) */
    if (!dinfo || dinfo(dev, CL_DEVICE_VERSION_, sizeof version, version, NULL) != CL_SUCCESS_)
        return NULL;
    version[sizeof version - 1] = 0;
    int v = clt_cl_version(version);
    int32_t err = -1;
    void *q = NULL;
    if (v >= 200) {       /* clCreateCommandQueue is deprecated there; a 1.2 device lacks this one */
        create_props_t create = REAL(clCreateCommandQueueWithProperties);
        const uint64_t props[] = { CL_QUEUE_PROPERTIES_, CL_QUEUE_PROFILING_ENABLE_, 0 };
        q = create ? create(context, dev, props, &err) : NULL;
    } else if (v >= 102) {
        create_t create = REAL(clCreateCommandQueue);
        q = create ? create(context, dev, CL_QUEUE_PROFILING_ENABLE_, &err) : NULL;
    }
    return q && err == CL_SUCCESS_ ? q : NULL;
}

uint32_t clt_context_refs(void *context)
{
    get_info_t info = REAL(clGetContextInfo);
    uint32_t n = 0;
    if (!context || !info || info(context, CL_CONTEXT_REFERENCE_COUNT_, sizeof n, &n, NULL) != CL_SUCCESS_)
        return 0;
    return n;
}

/* After cltrace's calibration on an app's queue: until the context holds
 * no more references than before it (at most 100 ms). A driver keeps a
 * released buffer or queue of ours, and its commands' events, until its
 * own thread lets them go (PoCL on a loaded machine: the app read its
 * context's count 2 high right after making its queue). */
static void context_settle(void *context, uint32_t before)
{
    if (!before)
        return;
    for (unsigned i = 0; i < 1000 && clt_context_refs(context) > before; i++) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

/* The host's raw clock, bracketed by ticks: a device's clock sample where
 * that clock is the device's. */
static void host_raw_read(struct clt_thread *th, void *dev)
{
    uint64_t before = clt_now(), raw = clt_clock_ns(CLOCK_MONOTONIC_RAW), after = clt_now();
    clt_put_clock(th, dev, before, raw, after, 0, CLT_CLK_HOST_RAW);
}

void clt_clock_keep(struct clt_thread *th, void *context, void *dev, int cpu_device, uint32_t refs_before)
{
    if (!context || !dev)
        return;
    context_settle(context, refs_before);   /* the calibration's commands let go first */
    int raw = clt_profiling_clock_known_raw(dev);
    keep_lock_for_app();
    struct keep *k = NULL;
    for (unsigned i = 0; i < n_keeps; i++)
        if (keeps[i].device == dev)
            k = &keeps[i];
    if (!k && n_keeps < KEEP_DEVICES)
        k = &keeps[n_keeps++];
    if (k && raw && !k->raw) {        /* evidence from the start, then as markers would be taken */
        k->device = dev;
        k->cpu_device = cpu_device;
        k->raw = 1;
        k->last_ns = clt_clock_ns(CLOCK_MONOTONIC);
        host_raw_read(th, dev);
    } else if (k && !k->queue && !k->raw) {
        uint32_t before = clt_context_refs(context);
        k->device = dev;
        k->cpu_device = cpu_device;
        k->queue = own_queue(context, dev);
        k->context = k->queue ? context : NULL;
        uint32_t after = k->queue ? clt_context_refs(context) : 0;
        k->context_refs = after > before ? after - before : 0;
        k->last_ns = clt_clock_ns(CLOCK_MONOTONIC);          /* the calibration has just taken its markers */
    }
    pthread_mutex_unlock(&keep_lock);
}

void clt_pre_clReleaseContext(struct clt_hook *h, void **context)
{
    (void)h;
    typedef int32_t (*obj_fn_t)(void *);
    obj_fn_t rel = REAL(clReleaseCommandQueue);
    keep_lock_for_app();
    for (unsigned i = 0; i < n_keeps; i++)
        if (keeps[i].queue && keeps[i].context == *context) {
            if (rel)
                rel(keeps[i].queue);
            keeps[i].queue = keeps[i].context = NULL;
        }
    pthread_mutex_unlock(&keep_lock);
}

/* The app reads its context's reference count as it would untraced: less
 * what our queue in it added (PoCL counts a queue's reference; measured when
 * the queue was made). */
void clt_pre_clGetContextInfo(struct clt_hook *h, void **context, uint32_t *param_name, size_t *param_value_size,
                              void **param_value, void **param_value_size_ret)
{
    (void)h, (void)context, (void)param_name, (void)param_value_size, (void)param_value, (void)param_value_size_ret;
}

void clt_post_clGetContextInfo(struct clt_hook *h, int32_t *ret, void *context, uint32_t param_name,
                               size_t param_value_size, void *param_value, void *param_value_size_ret)
{
    (void)h, (void)param_value_size_ret;
    if (*ret != CL_SUCCESS_ || param_name != CL_CONTEXT_REFERENCE_COUNT_ || !param_value ||
        param_value_size < sizeof(uint32_t))
        return;
    keep_lock_for_app();
    for (unsigned i = 0; i < n_keeps; i++)
        if (keeps[i].queue && keeps[i].context == context) {
            uint32_t n;
            memcpy(&n, param_value, sizeof n);
            n = n > keeps[i].context_refs ? n - keeps[i].context_refs : n;
            memcpy(param_value, &n, sizeof n);
        }
    pthread_mutex_unlock(&keep_lock);
}

/* On each device's queue of ours, n markers, where the last time (of the
 * ones taken every KEEP_PERIOD_NS, or of the quiet ones) is that long ago. */
static void keep_markers(struct clt_thread *th, int quiet, unsigned n, int raw_only)
{
    uint64_t now = clt_clock_ns(CLOCK_MONOTONIC);
    if (pthread_mutex_trylock(&keep_lock) != 0)
        return;           /* an app thread is making or releasing one: next time */
    for (unsigned i = 0; i < n_keeps; i++) {
        struct keep *k = &keeps[i];
        uint64_t ticks;
        uint64_t period = k->cpu_device && !k->raw ? KEEP_PERIOD_CPU_NS : KEEP_PERIOD_NS;
        if ((k->raw || (k->queue && !raw_only)) && now - (quiet ? k->last_quiet_ns : k->last_ns) >= period) {
            k->last_ns = now;
            if (quiet)
                k->last_quiet_ns = now;
            if (k->raw)
                host_raw_read(th, k->device);     /* one: it is as narrow as the clock reads */
            else
                for (unsigned m = 0; m < n && clt_clock_marker(th, k->queue, k->device, k->cpu_device, &ticks); m++)
                    ;
        }
    }
    pthread_mutex_unlock(&keep_lock);
}

void clt_clock_keep_tick(struct clt_thread *th)
{
    keep_markers(th, 0, 1, 0);
}

/* Nothing pending while the app enqueues (its launches untimed): the raw
 * clocks read all the same, every KEEP_PERIOD_NS (no driver call); a queue
 * of ours takes markers only beside the app's timed commands. */
void clt_clock_keep_raw_tick(struct clt_thread *th)
{
    keep_markers(th, 0, 0, 1);
}

/* The app has paused (collect.c): nothing of its competes for the driver,
 * so markers taken now are the narrowest evidence there is (on NVIDIA
 * ~5 us against 6-12 us for those taken amid a launch loop). A few at once,
 * at most once a KEEP_PERIOD_NS per device. */
void clt_clock_keep_quiet(struct clt_thread *th)
{
    keep_markers(th, 1, QUIET_MARKERS, 0);
}

/* The exit's read, on each device whose clock is the host's raw one: the
 * last commands bracketed though the collector, at idle priority, may not
 * have looked since they ran (nothing pending at the exit, so no drain: on a
 * fast machine 30,000 launches ended with the reads of the queue's making
 * and of the collector's first look only). Free: no driver call. */
void clt_clock_keep_exit(struct clt_thread *th)
{
    if (!th)
        return;
    keep_lock_for_app();
    for (unsigned i = 0; i < n_keeps; i++)
        if (keeps[i].raw)
            host_raw_read(th, keeps[i].device);
    pthread_mutex_unlock(&keep_lock);
}

/* At exit, once the collector has returned: cltrace's own queues go back
 * to the driver inside the exit's figure, not left to the driver's
 * teardown after the trace has closed (NVIDIA, 11-41 paired runs: within
 * that teardown's own +-10 ms either way). */
void clt_clock_keep_release(void)
{
    typedef int32_t (*obj_fn_t)(void *);
    obj_fn_t rel = REAL(clReleaseCommandQueue);
    keep_lock_for_app();
    for (unsigned i = 0; i < n_keeps; i++)
        if (keeps[i].queue) {
            if (rel)
                rel(keeps[i].queue);
            keeps[i].queue = keeps[i].context = NULL;
        }
    pthread_mutex_unlock(&keep_lock);
}

unsigned clt_clock_keeps(void)
{
    unsigned n = 0;
    keep_lock_for_app();
    for (unsigned i = 0; i < n_keeps; i++)
        n += keeps[i].queue != NULL;
    pthread_mutex_unlock(&keep_lock);
    return n;
}

/* The child of fork(): the parent's queues are not the child's to use. */
void clt_clock_keep_forget(void)
{
    pthread_mutex_init(&keep_lock, NULL);
    memset(keeps, 0, sizeof keeps);
    n_keeps = 0;
}
