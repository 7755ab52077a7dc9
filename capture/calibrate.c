/* The calibration on each device's first queue, before the app uses it:
 * what an event costs the calling thread on this driver (cltrace's own
 * cost, measured), clock evidence from markers polled to completion, and on
 * a GPU what a profiling queue adds to a write. Runs on the app's thread
 * inside its clCreateCommandQueue*; nothing of it is seen by the app (its
 * commands go to the app's new queue and are finished before it returns). */
#define _GNU_SOURCE
#include <stdlib.h>
#include "capture/generated/clt_hooks.h"
#include "calibrate.h"
#include "hooks.h"

enum { CL_SUCCESS_ = 0 };
typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* On the first queue of a device, before the app uses it: markers with and
 * without an event, interleaved. The difference of the medians is what an
 * event costs the calling thread on this driver (cltrace's own cost,
 * measured). Each marker with an event is also polled to completion: its
 * QUEUED time bracketed by the enqueue is a lower bound of the clock offset,
 * its END seen over a moment later an upper bound (writer/device.c, "the
 * clock"). Markers do nothing; the app never sees them. OpenCL 1.2 on. */
#define CAL_MARKERS 16
#define CAL_SYNCS 12
#define CAL_SYNCS_NOT_SLOWER_MAX 2  /* pairs the profiling queue may not be the slower in */

struct calibration {
    uint64_t without[CAL_MARKERS], with[CAL_MARKERS];      /* a marker without, with an event */
    /* a fill without, with an event: apart from the markers', which stand
     * where a driver fails the fills part-way */
    uint64_t fill_without[CAL_MARKERS], fill_with[CAL_MARKERS];
    uint64_t plain[CAL_SYNCS], profiling[CAL_SYNCS];       /* a write + clFinish on each queue */
    uint64_t write_event;                                  /* what an event adds to a 4-byte write (ticks) */
    unsigned n_syncs;
};

/* One 4-byte command into buf on queue, after the n events of list: with an event where ev is not NULL. */
typedef int32_t (*cal_cmd_t)(void *queue, void *buf, uint32_t n, void *const *list, void **ev);
static const uint32_t cal_zero = 0;

static int32_t fill4(void *queue, void *buf, uint32_t n, void *const *list, void **ev)
{
    typedef int32_t (*fill_t)(void *, void *, const void *, size_t, size_t, size_t, uint32_t, const void *, void **);
    fill_t fill = REAL(clEnqueueFillBuffer);
    return fill ? fill(queue, buf, &cal_zero, 4, 0, 4, n, list, ev) : -1;
}

/* non-blocking, as the app's writes usually are */
static int32_t write4(void *queue, void *buf, uint32_t n, void *const *list, void **ev)
{
    typedef int32_t (*write_t)(void *, void *, uint32_t, size_t, size_t, const void *, uint32_t, const void *, void **);
    write_t write = REAL(clEnqueueWriteBuffer);
    return write ? write(queue, buf, 0, 0, 4, &cal_zero, n, list, ev) : -1;
}

/* A 4-byte write + clFinish on a plain queue of ours against the same on
 * the app's, which has profiling on because of cltrace: on NVIDIA's driver a
 * host-to-device write on a profiling queue takes ~7 us longer (fills and
 * kernels do not: scripts/evcollect.c), a cost cltrace adds that only a
 * plain queue shows. */
static void write_penalty(void *queue, void *ctx, void *dev, void *buf, struct calibration *cal)
{
    typedef void *(*create_q_t)(void *, void *, uint64_t, int32_t *);
    typedef int32_t (*obj_fn_t)(void *);
    create_q_t create = REAL(clCreateCommandQueue);
    obj_fn_t finish = REAL(clFinish), rel_q = REAL(clReleaseCommandQueue);
    int32_t err = -1;
    void *plain = create && rel_q ? create(ctx, dev, 0, &err) : NULL;
    if (!plain || err != CL_SUCCESS_)
        return;
    unsigned i = 0, not_slower = 0;
    for (; i < CAL_SYNCS; i++) {      /* interleaved, each first every other time */
        void *q[2] = { i & 1 ? queue : plain, i & 1 ? plain : queue };
        uint64_t t[3];
        t[0] = clt_now();
        for (int k = 0; k < 2; k++) {
            if (write4(q[k], buf, 0, NULL, NULL) != CL_SUCCESS_ || finish(q[k]) != CL_SUCCESS_)
                goto out;
            t[k + 1] = clt_now();
        }
        cal->plain[i] = i & 1 ? t[2] - t[1] : t[1] - t[0];
        cal->profiling[i] = i & 1 ? t[1] - t[0] : t[2] - t[1];
        /* Once the profiling queue was not the slower more often than
         * write_penalty_of allows, the answer is 0 whatever follows: the
         * pairs left are not run (on PoCL, where a sync's time is noise,
         * they were ~0.5 ms of the app's first queue). */
        not_slower += cal->profiling[i] <= cal->plain[i];
        if (not_slower > CAL_SYNCS_NOT_SLOWER_MAX) {
            i++;
            break;
        }
    }
out:
    cal->n_syncs = i;
    rel_q(plain);
}

/* The pairs' median difference, when the profiling queue was the slower in
 * at least 10 of 12 pairs; else 0 (a write + sync's time varies far more
 * than an enqueue's: PoCL's on two cores by tens of us either way). Fewer
 * pairs measured: a failed write, or write_penalty stopped early. */
static uint64_t write_penalty_of(const struct calibration *cal)
{
    if (cal->n_syncs != CAL_SYNCS)
        return 0;
    uint64_t d[CAL_SYNCS];
    unsigned slower = 0;
    for (unsigned i = 0; i < CAL_SYNCS; i++) {
        slower += cal->profiling[i] > cal->plain[i];
        d[i] = cal->profiling[i] > cal->plain[i] ? cal->profiling[i] - cal->plain[i] : 0;
    }
    if (slower < CAL_SYNCS - CAL_SYNCS_NOT_SLOWER_MAX)
        return 0;
    qsort(d, CAL_SYNCS, sizeof *d, cmp_u64);
    return d[CAL_SYNCS / 2];
}

/* CAL_MARKERS of cmd without and with an event, interleaved: each one's
 * enqueue time (ticks) into without[] and with[]; then the queue is
 * finished. Returns how many pairs were measured (CAL_MARKERS: all). On a
 * queue timed by callbacks, the one with an event is held and timed as a
 * timed command of the app's is (cbtime.c): that is the event's price. */
static unsigned cal_pairs(void *queue, void *buf, cal_cmd_t cmd, uint64_t *without, uint64_t *with)
{
    typedef int32_t (*obj_fn_t)(void *);
    obj_fn_t rel_ev = REAL(clReleaseEvent), finish = REAL(clFinish);
    if (!rel_ev || !finish)
        return 0;
    int by_cb = clt_queue_by_callbacks(queue);
    unsigned i = 0;
    for (; i < CAL_MARKERS; i++) {
        void *ev = NULL;
        uint64_t a = clt_now();
        if (cmd(queue, buf, 0, NULL, NULL) != CL_SUCCESS_)
            break;
        uint64_t b = clt_now();
        struct clt_gate *g = by_cb ? clt_cb_gate(queue, 0, NULL) : NULL;
        int32_t err = cmd(queue, buf, g ? g->n : 0, g ? g->list : NULL, &ev);
        if (g)
            clt_cb_open(g, err == CL_SUCCESS_ ? ev : NULL);
        clt_cb_take_armed();
        if (err != CL_SUCCESS_ || !ev)
            break;
        uint64_t c = clt_now();
        rel_ev(ev);
        without[i] = b - a;
        with[i] = c - b;
    }
    finish(queue);
    return i;
}

/* What an event adds to a 4-byte host-to-device write: the difference of
 * the medians. Not what it adds to a fill or a kernel: on NVIDIA's driver
 * ~0 against ~7.5 us (scripts/evcollect.c), so charging writes the fill's
 * price overstated a write + kernel + clFinish loop by 30-56 %. */
static uint64_t write_event_cost(void *queue, void *buf)
{
    uint64_t without[CAL_MARKERS], with[CAL_MARKERS];
    if (cal_pairs(queue, buf, write4, without, with) != CAL_MARKERS)
        return 0;
    qsort(without, CAL_MARKERS, sizeof *without, cmp_u64);
    qsort(with, CAL_MARKERS, sizeof *with, cmp_u64);
    return with[CAL_MARKERS / 2] > without[CAL_MARKERS / 2] ? with[CAL_MARKERS / 2] - without[CAL_MARKERS / 2] : 0;
}

/* Fills of 4 bytes, with and without an event, interleaved, into a buffer
 * made and released here; then what an event adds to a write, and, where
 * the app did not ask for profiling and the device is not a CPU, the write
 * penalty. 1: measured (CAL_MARKERS of each). */
static int event_cost_fill(void *queue, void *dev, int cpu_device, int app_profiling, struct calibration *cal)
{
    typedef void *(*create_buf_t)(void *, uint64_t, size_t, void *, int32_t *);
    typedef int32_t (*obj_fn_t)(void *);
    get_info_t qinfo = REAL(clGetCommandQueueInfo);
    create_buf_t create = REAL(clCreateBuffer);
    obj_fn_t rel_mem = REAL(clReleaseMemObject);
    void *ctx = NULL;
    int32_t err = -1;
    if (!qinfo || !create || !rel_mem ||
        qinfo(queue, 0x1090 /* CL_QUEUE_CONTEXT */, sizeof ctx, &ctx, NULL) != CL_SUCCESS_ || !ctx)
        return 0;
    void *buf = create(ctx, 1 /* CL_MEM_READ_WRITE */, 4, NULL, &err);
    if (!buf || err != CL_SUCCESS_)
        return 0;
    int measured = cal_pairs(queue, buf, fill4, cal->fill_without, cal->fill_with) == CAL_MARKERS;
    if (measured)
        cal->write_event = write_event_cost(queue, buf);
    /* A CPU device's write is a copy on the host, not a DMA a profiling
     * queue slows: on PoCL the pairs never showed a penalty (stopped after
     * 3-7, each a sync ~0.1 ms on 2 cores) */
    if (measured && !app_profiling && !cpu_device)
        write_penalty(queue, ctx, dev, buf, cal);
    /* the fills done first: PoCL keeps a buffer released with commands pending, and its
     * reference on the app's context, which the app may read ("5" where untraced "3") */
    obj_fn_t finish = REAL(clFinish);
    if (finish)
        finish(queue);
    rel_mem(buf);
    return measured;
}

/* Markers n..to-1, without and with an event (each polled: clock evidence,
 * clock.c) into cal; how many there are then. */
static unsigned cal_markers(struct clt_thread *th, void *queue, void *dev, int cpu_device, struct calibration *cal,
                            unsigned n, unsigned to)
{
    typedef int32_t (*marker_t)(void *, uint32_t, const void *, void **);
    marker_t mark = REAL(clEnqueueMarkerWithWaitList);
    for (; mark && n < to; n++) {
        uint64_t a = clt_now();
        if (mark(queue, 0, NULL, NULL) != CL_SUCCESS_)
            break;
        uint64_t b = clt_now();
        if (!clt_clock_marker(th, queue, dev, cpu_device, &cal->with[n]))
            break;
        cal->without[n] = b - a;
    }
    return n;
}

/* On a CPU device each marker waits for the device's threads to wake:
 * ~125 us on PoCL's 2 cores, 16 of them 2 ms of the app's first queue. The
 * collector takes more while commands run (clock.c); these few are the
 * first evidence. */
#define CAL_MARKERS_CPU 4

/* A queue without profiling (PoCL's, timed by callbacks) gives its markers
 * no times: polled for nothing there (4 of them 0.54 ms of the app's first
 * queue on PoCL, 2 cores), they are taken only where the fills fail. */
int clt_calibrate(struct clt_thread *th, void *queue, void *dev, int cpu_device, int app_profiling, int profiled,
                  struct clt_evcost *out)
{
    struct calibration cal = { .n_syncs = 0 };
    uint64_t *without = cal.without, *with = cal.with;
    unsigned first = !profiled ? 0 : cpu_device ? CAL_MARKERS_CPU : CAL_MARKERS;
    unsigned n = cal_markers(th, queue, dev, cpu_device, &cal, 0, first);
    /* A marker costs the same with or without an event on NVIDIA (it makes
     * one anyway); a 4-byte fill of a buffer of ours pays for the event as a
     * kernel launch does (7.5 us against 7.4, scripts/evcollect.c): measure
     * on that where the driver lets us; else the markers' pairs, all 16. */
    if (event_cost_fill(queue, dev, cpu_device, app_profiling, &cal)) {
        n = CAL_MARKERS;
        without = cal.fill_without;
        with = cal.fill_with;
    } else if (n == first && n < CAL_MARKERS)
        n = cal_markers(th, queue, dev, cpu_device, &cal, n, CAL_MARKERS);
    if (n < 8)
        return 0;
    qsort(without, n, sizeof *without, cmp_u64);
    qsort(with, n, sizeof *with, cmp_u64);
    *out = (struct clt_evcost){ without[n / 2], with[n / 2], n, write_penalty_of(&cal), cal.write_event };
    return 1;
}
