/* Commands timed by their events' callbacks, on a queue cltrace leaves plain.
 *
 * Why: a queue with profiling on costs every command, timed or not. On PoCL
 * (it reads the clock four times a command) ~0.21 us a launch untraced
 * (scripts/profq.c), 4.5 ms of a 20,000-launch loop that cltrace times 1 in
 * 41 of; and PoCL cannot switch a queue's profiling (queues.c). So on a CPU
 * device that cannot, where not every command is timed (the budget,
 * CLTRACE_SAMPLE), the app's queue stays as the app made it, and a timed
 * command's times come from callbacks on its event: CL_SUBMITTED, CL_RUNNING
 * and CL_COMPLETE, each reading CLOCK_MONOTONIC_RAW on the driver's thread
 * as the status changes (its QUEUED time is left 0: the enqueue's own
 * window on the host says when it was queued). PoCL's profiling reads that clock at the same points
 * (2,000 small launches: the callbacks' times 43 and 70 ns after its
 * START and END, the duration +26 ns, mean), so the times are the device
 * clock's, and the writer places them as it places profiled ones; that the
 * clock is the device's is checked once per device (queues.c: a marker's
 * QUEUED time between two reads of it), else the queue gets profiling as
 * elsewhere.
 *
 * Setting three callbacks and the user event costs the calling thread ~1 us
 * (PoCL, 2 cores), only for timed commands; the calibration counts it in
 * the event's price.
 * A callback set after its status was reached runs at once, with the wrong
 * time: so a timed command is held until both are set, by a user event of
 * cltrace's own in its wait list, set complete at once after (clt_cb_gate,
 * clt_cb_open; without it 41 of 900 commands of tests/apps/churn.c, each
 * on an idle queue, had started before). A blocking command cannot be timed
 * so: the wrappers enqueue it non-blocking, set the callbacks, open it and
 * wait for it (clt_cb_block): the app's call returns when it would have.
 * Where a command was not held (a wait list of CLT_GATE_MAX or more) and
 * started before its callbacks were set, it is not timed (start and end 0:
 * counted, not drawn).
 *
 * The slots: a ring larger than the commands the collector lets be in flight
 * (collect.c, MAX_IN_FLIGHT), each tagged with its serial; a callback whose
 * tag is gone (its command outlived its slot) writes nothing. */
#define _GNU_SOURCE
#include <time.h>
#include "capture/generated/clt_hooks.h"
#include "cbtime.h"
#include "hooks.h"

#define CB_SLOTS 131072u
#define START_LATE UINT64_MAX
enum { CL_SUBMITTED_ = 2, CL_RUNNING_ = 1, CL_COMPLETE_ = 0 };
enum { ARMING = 1, ARMED, FAILED };

struct cb_slot {
    _Atomic uint64_t serial, submit, start, end;
    _Atomic int32_t status;
    _Atomic uint32_t state;
};
static struct cb_slot slots[CB_SLOTS];
static _Atomic uint64_t next_serial = 1;
/* the slot armed at the enqueue, for clt_track_command; the thread's gate
 * (one at a time: a command re-entering itself is not recorded) */
static __thread uint32_t armed_here __attribute__((tls_model("initial-exec")));
static __thread struct clt_gate gate __attribute__((tls_model("initial-exec")));

static struct cb_slot *slot_of(void *user, int *on_time)
{
    uint64_t serial = (uint64_t)(uintptr_t)user;
    struct cb_slot *s = &slots[serial % CB_SLOTS];
    if (__atomic_load_n(&s->serial, __ATOMIC_ACQUIRE) != serial)
        return NULL;
    *on_time = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == ARMED;
    return s;
}

/* On the driver's thread: nothing but the clock and a few stores. */
static void on_submitted(void *event, int32_t status, void *user)
{
    (void)event;
    uint64_t t = clt_clock_ns(CLOCK_MONOTONIC_RAW);
    int on_time = 0;
    struct cb_slot *s = slot_of(user, &on_time);
    if (s && status >= 0 && on_time)
        __atomic_store_n(&s->submit, t, __ATOMIC_RELAXED);
}

static void on_running(void *event, int32_t status, void *user)
{
    (void)event;
    uint64_t t = clt_clock_ns(CLOCK_MONOTONIC_RAW);
    int on_time = 0;
    struct cb_slot *s = slot_of(user, &on_time);
    if (s && status >= 0)
        __atomic_store_n(&s->start, on_time ? t : START_LATE, __ATOMIC_RELAXED);
}

static void on_complete(void *event, int32_t status, void *user)
{
    (void)event;
    uint64_t t = clt_clock_ns(CLOCK_MONOTONIC_RAW);
    int on_time = 0;
    struct cb_slot *s = slot_of(user, &on_time);
    if (!s)
        return;
    if (!on_time)
        __atomic_store_n(&s->start, START_LATE, __ATOMIC_RELAXED);
    __atomic_store_n(&s->status, status, __ATOMIC_RELAXED);
    __atomic_store_n(&s->end, t ? t : 1, __ATOMIC_RELEASE);
}

uint32_t clt_cb_arm(void *event)
{
    typedef int32_t (*set_cb_t)(void *, int32_t, void (*)(void *, int32_t, void *), void *);
    set_cb_t set = REAL(clSetEventCallback);
    if (!set || !event)
        return 0;
    uint64_t serial = __atomic_fetch_add(&next_serial, 1, __ATOMIC_RELAXED);
    struct cb_slot *s = &slots[serial % CB_SLOTS];
    __atomic_store_n(&s->state, ARMING, __ATOMIC_RELAXED);
    __atomic_store_n(&s->submit, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->start, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->end, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->serial, serial, __ATOMIC_RELEASE);
    void *user = (void *)(uintptr_t)serial;
    int ok = set(event, CL_SUBMITTED_, on_submitted, user) == 0 && set(event, CL_RUNNING_, on_running, user) == 0 &&
             set(event, CL_COMPLETE_, on_complete, user) == 0;
    __atomic_store_n(&s->state, ok ? ARMED : FAILED, __ATOMIC_RELEASE);
    return (uint32_t)(serial % CB_SLOTS) + 1;
}

int clt_cb_times(uint32_t slot, uint64_t *submit, uint64_t *start, uint64_t *end, int32_t *status)
{
    struct cb_slot *s = &slots[(slot - 1) % CB_SLOTS];
    uint64_t e = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);
    if (!e)
        return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == FAILED ? -1 : 0;
    uint64_t st = __atomic_load_n(&s->start, __ATOMIC_RELAXED);
    *status = __atomic_load_n(&s->status, __ATOMIC_RELAXED);
    int timed = st && st != START_LATE && st <= e && *status >= 0;
    uint64_t sub = __atomic_load_n(&s->submit, __ATOMIC_RELAXED);
    *submit = timed && sub <= st ? sub : 0;
    *start = timed ? st : 0;
    *end = timed ? e : 0;
    return 1;
}

struct clt_gate *clt_cb_gate(void *queue, uint32_t n, const void *list)
{
    struct clt_gate *g = &gate;
    typedef int32_t (*qinfo_t)(void *, uint32_t, size_t, void *, size_t *);
    typedef void *(*user_t)(void *, int32_t *);
    qinfo_t qinfo = REAL(clGetCommandQueueInfo);
    user_t make = REAL(clCreateUserEvent);
    void *context = NULL;
    int32_t err = -1;
    g->user = NULL;
    if (n >= CLT_GATE_MAX || (n > 0) != (list != NULL) || !qinfo || !make ||
        qinfo(queue, 0x1090 /* CL_QUEUE_CONTEXT */, sizeof context, &context, NULL) != 0)
        return NULL;
    void *user = make(context, &err);
    if (!user || err != 0)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        g->room[i] = ((void *const *)list)[i];
    g->room[n] = user;
    g->user = user;
    g->n = n + 1;
    g->list = g->room;
    return g;
}

void clt_cb_open(struct clt_gate *g, void *event)
{
    typedef int32_t (*status_t)(void *, int32_t);
    typedef int32_t (*obj_t)(void *);
    status_t set = REAL(clSetUserEventStatus);
    obj_t rel = REAL(clReleaseEvent);
    void *user = g->user;         /* the gate is free again: a callback of the app's may enqueue inside set */
    g->user = NULL;
    uint32_t slot = event ? clt_cb_arm(event) : 0;
    if (set)
        set(user, CL_COMPLETE_);
    if (rel)
        rel(user);
    armed_here = slot;
}

int32_t clt_cb_block(void *event)
{
    typedef int32_t (*wait_t)(uint32_t, void *const *);
    wait_t wait = REAL(clWaitForEvents);
    return wait ? wait(1, &event) : 0;
}

uint32_t clt_cb_take_armed(void)
{
    uint32_t s = armed_here;
    armed_here = 0;
    return s;
}

uint32_t clt_cb_slot(void *event, void *queue)
{
    uint32_t cb = clt_cb_take_armed();
    return cb || !queue || !clt_queue_by_callbacks(queue) ? cb : clt_cb_arm(event);
}
