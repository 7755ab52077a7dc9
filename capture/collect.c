/* Completions of the commands cltrace times, collected off the app's threads.
 *
 * What the calling thread does per timed command: the driver makes the event (the one cost the
 * driver imposes; cltrace's own event when the app passed none), the app's event is retained, and
 * three words go into a hand-off ring (a ticket, no lock). No completion callback (~8 us a command
 * on NVIDIA's calling thread, scripts/evcollect.c), except on a CPU device's queue left plain,
 * where callbacks are the times (cbtime.c).
 *
 * A collector thread takes the events from the ring and asks the driver, in batches, which have
 * completed: CL_PROFILING_COMMAND_END first (available only once the command is complete), the
 * execution status only when that fails. On an in-order queue the first pending command still
 * running stops the round for that queue (the later ones cannot be complete); it then sleeps,
 * longer the longer nothing completes. Each completion becomes a CLT_REC_COMMAND record in the
 * collector's own ring, the event is released.
 *
 * It asks only while the app is not enqueuing. NVIDIA's driver serialises the collector's queries
 * with the app's launches: a thread polling the oldest event alone costs the launching thread 2-3
 * us a launch there (scripts/evcollect.c), more than cltrace's whole own share. So the collector
 * holds the completions back while the app keeps enqueuing (an enqueue, timed or not, within
 * QUIET_NS), up to DEFER_MAX of them, and collects when the app pauses (waits in clFinish,
 * computes, exits) or past that backlog. Its clock markers stay (one every 10 ms, 0.1 % of the
 * collector's time), a few more at each quiet moment, where they are narrowest (clock.c). On a CPU
 * device (PoCL) a pause of the app is no quiet moment while the device runs: it waits until the
 * queue ran dry. Commands in flight at exit are waited for (bounded; before the libraries'
 * destructors, life.c), counted, the wait stated (cltrace.exit_wait_ns). libunwind loads here, off
 * the app's thread (callstack.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "capture/callstack.h"
#include "capture/generated/clt_hooks.h"
#include "capture/complete.h"
#include "cbtime.h"
#include "queues.h"
#include "common/map.h"
#include "trace/ring.h"
#include "shim.h"

enum { CL_EVENT_COMMAND_EXECUTION_STATUS_ = 0x11D3 };
typedef clt_info_fn info_t;
typedef int32_t (*event_fn_t)(void *);

/* ---- the hand-off ring: many app threads in, the collector out --------- */

#define HAND_SLOTS 16384
#define COLLECTOR_LINGER_NS 10000000ull   /* 10 ms of napping before a futex sleep */
#define QUIET_NS 200000ull                /* no enqueue for 200 us: the app has paused */
#define DEFER_MAX 32768u                  /* completions held back at most (events the driver keeps) */
struct hand_slot {            /* 32 bytes: a slot's address is a shift */
    _Atomic uint32_t turn;    /* 2*lap: free for lap's producer; 2*lap+1: filled (mod 2^32) */
    uint32_t cb;              /* its times' slot, timed by callbacks (cbtime.c); 0: by profiling */
    uint64_t flow;
    void *event, *queue;
};
static struct hand_slot hand[HAND_SLOTS];
/* In flight = hand_head - collected: the calling threads write only the ticket, never a
 * counter the collector writes too (that line would bounce between the cores on every command);
 * what both read often, on a line of its own. A cache line each: _Alignas on a lone variable let
 * the compiler put the collector's nap state in the rest of last_handed's line, which the app's
 * threads store to at every launch. */
static struct {
    _Alignas(64) _Atomic uint64_t hand_head;   /* next ticket (calling threads) */
    _Alignas(64) _Atomic uint64_t collected;   /* recorded (under pass_lock) */
    /* how far collecting took: written under pass_lock, atomically (read outside it) */
    _Alignas(64) uint64_t hand_tail;
    _Alignas(64) _Atomic int collector_state;  /* read on every command, written once */
    /* clt_now() of the latest enqueue (timed or sampled out): the app threads store it
     * (relaxed), the collector reads it; ns_per_tick (measured over its first 2 ms) converts. */
    _Alignas(64) _Atomic uint64_t last_handed;
} lines;
static _Atomic int collector_idle, draining;
static _Atomic uint32_t wake_word;         /* futex the idle collector sleeps on */
/* The app's exit has collected what it waits for: the collector calls into
 * the driver no more, which is about to tear down what it would ask about. */
static _Atomic int finished;
/* Ends the collector's nap: bumped as the exit starts draining and as it finishes (a nanosleep
 * made the exit wait the nap out), and by an app thread whose commands the collector must take
 * now (nap_kick). Not at every command (wake_word wakes a collector asleep for want of any):
 * during the run its naps stay as long as they were. */
static _Atomic uint32_t nap_word;
/* The collector's nap is long (a CPU device's commands pending, below):
 * an app thread filling the hand-off ring, or past DEFER_MAX, ends it. */
static _Atomic int napping_long;
static double ns_per_tick = 1.0;
static _Atomic int collect_asked;          /* a queue was released: its commands now */
/* The collector's last round left only commands still running on their devices: nothing
 * complete waits for it. Cleared as a round finds completions, and while it holds back behind a
 * CPU device. */
static _Atomic int caught_up;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held by whoever collects: the collector around each look at the driver, or an app thread that
 * waits for the commands anyway (the exit, a queue's release) and collects them itself into the
 * collector's ring: a sleeping collector took 0.2-1.3 ms to wake and start (PoCL, 2 vCPUs whose
 * idle CPUs halt). Once the exit has it with `finished` set, the collector never calls the
 * driver again. */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clt_thread *_Atomic collector_th;

static void collector_start(void);
static uint64_t in_flight(void)
{
    uint64_t done = __atomic_load_n(&lines.collected, __ATOMIC_ACQUIRE);
    uint64_t handed = __atomic_load_n(&lines.hand_head, __ATOMIC_ACQUIRE);
    return handed > done ? handed - done : 0;
}

/* ---- the collector ------------------------------------------------------- */

/* An app thread is inside an enqueue now (its in_enqueue, which the
 * enqueue wrappers set around the real call): no pause, however long the call lasts (a
 * blocking transfer, a driver that takes its time). Without it, an
 * enqueue lasting QUIET_NS looked like a pause. */
static int enqueuing(void)
{
    for (struct clt_thread *t = __atomic_load_n(&clt_threads, __ATOMIC_ACQUIRE); t; t = t->next)
        if (__atomic_load_n(&t->in_enqueue, __ATOMIC_RELAXED) &&
            __atomic_load_n(&t->state, __ATOMIC_RELAXED) == CLT_TH_LIVE)
            return 1;
    return 0;
}

static void take_handed(void)
{
    for (;;) {
        struct hand_slot *s = &hand[lines.hand_tail % HAND_SLOTS];
        uint32_t lap = (uint32_t)(lines.hand_tail / HAND_SLOTS);
        if (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE) != 2 * lap + 1)
            return;
        if (clt_pend_push(s->flow, s->event, s->queue, s->cb) != 0)
            return;               /* no memory: leave it in the ring, try again */
        __atomic_store_n(&s->turn, 2 * lap + 2, __ATOMIC_RELEASE);
        __atomic_store_n(&lines.hand_tail, lines.hand_tail + 1, __ATOMIC_RELAXED);
    }
}

/* A marker every 10 ms (clock.c), not while the app exits. */
static void keep_clock(struct clt_thread *th)
{
    if (!__atomic_load_n(&draining, __ATOMIC_RELAXED))
        clt_clock_keep_tick(th);
}

/* The in-order queues of a CPU device whose newest command still runs (into queue[64]). While such
 * a device runs, the collector keeps out of the driver altogether: its queries, releases and
 * markers compete with the device's own threads on the app's cores. Behind 5,000 launches of ~0.1
 * ms on PoCL (2 cores) collecting as they completed made the app's clFinish 27 % longer, clock
 * markers at each pause 15 %; collecting once the queue has run dry, 3 %. */
static unsigned cpu_queues_running(void **queue)
{
    info_t ev_info = REAL(clGetEventInfo);
    void *newest[64];
    unsigned n = ev_info ? clt_pend_cpu_newest(queue, newest, 64) : 0, running = 0;
    for (unsigned q = 0; q < n; q++) {
        int32_t status = 0;
        if (ev_info(newest[q], CL_EVENT_COMMAND_EXECUTION_STATUS_, sizeof status, &status, NULL) == 0 && status > 0)
            queue[running++] = queue[q];
    }
    return running;
}

/* One pass over the pending commands; returns how many completed. With
 * since (clt_now() ticks) set, the pass ends early once the app enqueues
 * after it: the rest wait for its next pause. It ends too once every queue
 * with commands pending waits on one still running (pending.c says why). */
static unsigned collect_round(struct clt_thread *th, uint64_t since, void *const *held, unsigned n_held)
{
    info_t prof = REAL(clGetEventProfilingInfo), ev_info = REAL(clGetEventInfo);
    void *blocked[64];            /* in-order queues whose oldest pending command still runs */
    unsigned n_blocked = n_held, done = 0, first, end;
    memcpy(blocked, held, n_held * sizeof *held);   /* a CPU device's queues still running: not now */
    struct clt_pending *pend = clt_pend_span(&first, &end);
    int whole = 1;                /* not cut short: every command left still runs */
    for (unsigned i = first; i < end; i++) {
        struct clt_pending *p = &pend[i];
        if (!p->event)
            continue;             /* collected */
        if (since && i % 16 == 0 && __atomic_load_n(&lines.last_handed, __ATOMIC_RELAXED) > since) {
            whole = 0;
            break;
        }
        int skip = 0;
        for (unsigned b = 0; b < n_blocked && !skip; b++)
            skip = blocked[b] == p->queue;
        if (skip)
            continue;
        if (clt_complete_try(th, p, prof, ev_info)) {
            clt_pend_done(p);
            if (!done)
                __atomic_store_n(&caught_up, 0, __ATOMIC_RELAXED);
            /* a round behind a launch loop can last 100 ms (~10 us of
             * queries a command on NVIDIA): the clock is kept within it */
            if (++done % 64 == 0)
                keep_clock(th);
            continue;
        }
        if (n_blocked < 64 && clt_queue_in_order(p->queue)) {
            blocked[n_blocked++] = p->queue;
            if (n_blocked == clt_pend_queues())
                break;            /* every queue waits: the rest cannot be complete */
        }
    }
    clt_pend_tidy();
    if (done)
        __atomic_store_n(&lines.collected, __atomic_load_n(&lines.collected, __ATOMIC_RELAXED) + done, __ATOMIC_RELEASE);
    if (whole)
        __atomic_store_n(&caught_up, 1, __ATOMIC_RELAXED);
    return done;
}

/* ns since the app last handed a command over (now: clt_now() ticks); 0
 * where another core's clock is a few ticks ahead: busy. */
static double since_handed_ns(uint64_t now)
{
    uint64_t last = __atomic_load_n(&lines.last_handed, __ATOMIC_RELAXED);
    return now > last ? (double)(now - last) * ns_per_tick : 0;
}

/* How long to nap: at least until a pause could begin. While the app enqueues nothing is collected
 * before QUIET_NS have passed since its last command, and each wake-up in between takes a core
 * from the driver's threads: behind a loop of write + kernel + finish on PoCL (2 cores, a command
 * every ~15 us) its loop ran +0.45 ms against untraced with naps starting at 20 us, +0.35 ms with
 * this (151 rounds). */
static long until_pause_ns(long nap)
{
    double since = since_handed_ns(clt_now());
    long left = since < QUIET_NS ? (long)(QUIET_NS - since) : 0;
    return left > nap ? left : nap;
}

static void nap_end(void)
{
    __atomic_fetch_add(&nap_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &nap_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* A nap the exit, or an app thread that needs the collector now, ends early; the flags are set
 * before nap_word moves, so a nap begun after it returns at once (the futex sees another value). */
static void collector_nap(long ns)
{
    uint32_t seq = __atomic_load_n(&nap_word, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&napping_long, ns > 2000000, __ATOMIC_SEQ_CST);
    struct timespec ts = { ns / 1000000000, ns % 1000000000 };
    syscall(SYS_futex, &nap_word, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    __atomic_store_n(&napping_long, 0, __ATOMIC_RELAXED);
}

/* Checked by an app thread every 1,024th command: a collector in a long nap is woken where the
 * hand-off ring is half full (a full one makes the calling thread wait) or DEFER_MAX commands wait
 * (it then collects all the same). One atomic load otherwise. */
static void nap_kick(uint64_t ticket)
{
    if (__atomic_load_n(&napping_long, __ATOMIC_RELAXED) &&
        (ticket - __atomic_load_n(&lines.hand_tail, __ATOMIC_RELAXED) >= HAND_SLOTS / 2 || in_flight() >= DEFER_MAX))
        nap_end();
}

/* The longest nap while commands are pending: 1 ms; 4 ms while a CPU device runs them all (held:
 * nothing to collect until it is done); 100 ms while any of a CPU device's are pending. A CPU
 * device's threads share the app's cores: each wake-up of the collector lands on a core they or
 * the app's thread were about to take, and on a VM whose idle CPUs halt at once (2 vCPUs) a thread
 * waking every 1 ms cost 4,000 small blocking writes on PoCL +16 ms, every 4 ms +14, every 16 ms
 * +7, every 100 ms +1 (15 paired runs each; tests/bench/placebo.c). The collector collects only at
 * the app's pauses anyway: a long nap notices one later, not less (the exit collects what is
 * left), and an app thread ends it where commands pile up (nap_kick). On a GPU a pause is noticed
 * within 1 ms, as before. */
static long nap_max_ns(int held, int on_cpu)
{
    if (on_cpu)
        return 100000000;
    return held ? 4000000 : 1000000;
}

/* clt_now()'s ticks per ns (TSC), over the collector's first 2 ms: slept at
 * its start, they were waited out by an app releasing its queue right after
 * its first commands (nbody on an H200: 1.8 ms). Until measured a 4 GHz
 * guess: a pause seen late, never early. */
static void ticks_calibrate(void)
{
    static uint64_t t0, n0;
    static int done;
    if (!clt_use_tsc || done)
        return;
    uint64_t t = clt_now(), n = clt_clock_ns(CLOCK_MONOTONIC);
    if (!t0) {
        t0 = t, n0 = n;
        ns_per_tick = 0.25;
    } else if (n - n0 >= 2000000) {
        if (t > t0)
            ns_per_tick = (double)(n - n0) / (double)(t - t0);
        done = 1;
    }
}

/* One look at the commands pending: the clock kept, the completed ones
 * collected where the app pauses (or must: draining, too many, asked).
 * *waking: the first look after a start or a sleep; *held: every queue
 * pending is a CPU device's, still running. The commands collected. */
static unsigned collect_pass(struct clt_thread *th, int *waking, int *held)
{
    unsigned done = 0, n_pend = clt_pend_count();
    *held = 0;
    if (!n_pend) {
        if (since_handed_ns(clt_now()) < QUIET_NS || enqueuing())
            clt_clock_keep_raw_tick(th);      /* untimed commands run: a raw clock kept all the same */
        return 0;
    }
    uint64_t now = clt_now();
    int drain = __atomic_load_n(&draining, __ATOMIC_RELAXED);
    int quiet = since_handed_ns(now) >= QUIET_NS && !enqueuing();
    /* the narrowest markers: nobody else in the driver; and where the app
     * starts enqueuing after a while without (its first command is often
     * waited for, as a warm-up): the loop that follows may run for a long
     * time before the app pauses, and the calibration may be seconds old
     * (a program build) */
    void *running[64];
    int forced = drain || n_pend >= DEFER_MAX || __atomic_exchange_n(&collect_asked, 0, __ATOMIC_RELAXED);
    unsigned n_running = (quiet || forced) && !drain && n_pend < DEFER_MAX ? cpu_queues_running(running) : 0;
    *held = n_running && n_running == clt_pend_queues();
    if (*held)     /* completions may wait, held back by choice: a wait then is cltrace's */
        __atomic_store_n(&caught_up, 0, __ATOMIC_RELAXED);
    if ((quiet && !n_running) || drain || *waking)
        clt_clock_keep_quiet(th);     /* its markers count as the 10 ms one's */
    else
        keep_clock(th);
    *waking = 0;
    /* a released queue's commands are not held back: the writer keeps a
     * released queue's track only until they are drawn */
    if ((quiet || forced) && !*held)
        done = collect_round(th, forced ? 0 : now, running, n_running);
    __atomic_fetch_add(drain ? &clt_shared.collected_exit : forced ? &clt_shared.collected_forced : &clt_shared.collected_paused, done,
                       __ATOMIC_RELAXED);
    return done;
}

/* Nothing in flight for a while: asleep until a command is handed over
 * (or 50 ms, to look at the end of the run). */
static void sleep_until_handed(void)
{
    uint32_t seq = __atomic_load_n(&wake_word, __ATOMIC_SEQ_CST);
    __atomic_store_n(&collector_idle, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&lines.hand_head, __ATOMIC_SEQ_CST) == __atomic_load_n(&lines.hand_tail, __ATOMIC_RELAXED)) {
        struct timespec ts = { 0, 50000000 };
        syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    }
    __atomic_store_n(&collector_idle, 0, __ATOMIC_SEQ_CST);
}

static void *collector_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-collect", 1);
    clt_callstack_libunwind();
    long sleep_ns = 20000;
    uint64_t idle_since = 0;      /* boottime ns the pending list emptied; 0: not empty */
    int waking = 1;               /* first commands after a start or a sleep */
    int held = 0;                 /* every queue pending is a CPU device's, still running */
    for (;;) {
        if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
            clt_own_thread_end();
            return NULL;
        }
        pthread_mutex_lock(&pass_lock);
        if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
            pthread_mutex_unlock(&pass_lock);
            continue;
        }
        ticks_calibrate();
        /* a thread the driver starts in these calls inherits its priority */
        long watch = clt_own_driver_begin();
        take_handed();
        int raised = clt_pend_count() ? clt_own_raise() : 0;   /* a driver lock held idle holds the app */
        struct clt_thread *th = clt_enter();
        __atomic_store_n(&collector_th, th, __ATOMIC_RELEASE);
        unsigned done = collect_pass(th, &waking, &held);    /* into its own ring, as any records */
        clt_own_lower(raised);
        clt_own_driver_end(watch);
        unsigned pending = clt_pend_count();     /* the list is the lock's */
        int on_cpu = clt_pend_on_cpu();
        pthread_mutex_unlock(&pass_lock);
        if (done) {
            sleep_ns = 20000;
            idle_since = 0;
            continue;
        }
        uint64_t cpu = clt_clock_ns(CLOCK_THREAD_CPUTIME_ID);   /* cltrace's own cost, stated in the trace */
        if (cpu)
            __atomic_store_n(&clt_shared.collector_cpu_ns, cpu, __ATOMIC_RELAXED);
        uint64_t now = clt_boottime_ns();
        if (pending)
            idle_since = 0;
        else if (!idle_since)
            idle_since = now;
        /* Right after the last command it only naps: in a launch loop the
         * GPU finishes each command long before the next is enqueued, and
         * waking a sleeping collector would cost the app's thread a system
         * call on every command. */
        if (idle_since && now - idle_since > COLLECTOR_LINGER_NS) {
            sleep_until_handed();
            sleep_ns = 20000;
            waking = 1;
            continue;
        }
        /* commands running: look again soon, less often the longer they run */
        long nap = __atomic_load_n(&draining, __ATOMIC_RELAXED) ? 20000 : until_pause_ns(sleep_ns);
        collector_nap(nap);
        if (nap > sleep_ns)
            sleep_ns = nap;
        if (sleep_ns < nap_max_ns(held, on_cpu))
            sleep_ns += sleep_ns / 2;
    }
    return NULL;
}

static void (*on_start)(void);

void clt_collect_set_on_start(void (*fn)(void))
{
    on_start = fn;
}

static void collector_start(void)
{
    pthread_mutex_lock(&start_lock);
    if (__atomic_load_n(&lines.collector_state, __ATOMIC_ACQUIRE) == 0) {
        int rc = clt_spawn_own(collector_main);
        __atomic_store_n(&lines.collector_state, rc == 0 ? 1 : -1, __ATOMIC_RELEASE);
        if (rc != 0)
            clt_msg("cannot start the completion collector; device commands are not timed");
        else if (on_start)
            on_start();
    }
    pthread_mutex_unlock(&start_lock);
}

/* ---- the calling thread's side ------------------------------------------ */

/* Commands handed over and not yet collected, at most: a driver whose
 * queries are slow (NVIDIA: ~5 calls of 1-3 us per command, against a
 * launch every ~15 us) would otherwise leave the collector ever further
 * behind, holding the driver's events and the writer's memory. Past it the
 * calling thread waits, at most 10 s. The wait is cltrace's cost where the
 * collector had completions to record; where every command left still ran
 * on its device, the device set the pace: the app would have waited for it
 * later all the same (its clFinish), behind a backlog of tens of thousands
 * of commands the device never ran out of. 200,000 launches on PoCL over 16
 * cores, counted whole: 7.6 s stated against 0.95 s measured. That part is
 * stated apart (clt_shared.paced_wait_ticks). */
#define MAX_IN_FLIGHT 65536
static void wait_for_collector(void)
{
    uint64_t t0 = clt_now(), paced = 0;
    struct timespec start, now, ts = { 0, 20000 };
    nap_end();                    /* it may be in a long nap */
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        uint64_t a = clt_now();
        nanosleep(&ts, NULL);
        if (__atomic_load_n(&caught_up, __ATOMIC_RELAXED))
            paced += clt_now() - a;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (in_flight() >= MAX_IN_FLIGHT && now.tv_sec - start.tv_sec < 10);
    __atomic_fetch_add(&clt_shared.paced_wait_ticks, paced, __ATOMIC_RELAXED);
    if (clt_tls)
        clt_count_wait(clt_tls, t0, paced);
}

void clt_collect_now(void)
{
    __atomic_store_n(&collect_asked, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    if (__atomic_load_n(&napping_long, __ATOMIC_SEQ_CST))
        nap_end();
}

/* An enqueue left untimed (sampling) ended at t1: the app is enqueuing all
 * the same. The call's own end, not a clock read of its own: a third read
 * (rdtsc, ~25 ns on a VM) was 0.5 ms of PoCL's 20,000-launch loop on its
 * thread (perf, 10 runs). The collector naps while the app enqueues: the
 * line stays in the app's core. */
void clt_collect_busy(uint64_t t1)
{
    __atomic_store_n(&lines.last_handed, t1, __ATOMIC_RELAXED);
}

void clt_track_command(uint64_t flow, void *event, void *queue)
{
    if (!event)
        return;
    int saved = errno;
    int state = __atomic_load_n(&lines.collector_state, __ATOMIC_ACQUIRE);
    if (CLT_UNLIKELY(state == 0)) {
        collector_start();
        state = __atomic_load_n(&lines.collector_state, __ATOMIC_ACQUIRE);
    }
    /* nobody to collect it (none, or finished: the exit's destructors may
     * enqueue): ours is released, the app's left alone */
    if (state != 1 || __atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
        if (clt_queue_modes & CLT_MODE_CALLBACKS)
            clt_cb_take_armed();      /* not the next command's */
        event_fn_t rel = REAL(clReleaseEvent);
        if ((flow & (1u << 31)) && rel)
            rel(event);
        errno = saved;
        return;
    }
    if (!(flow & (1u << 31))) {   /* the app's event: it may release it at once */
        event_fn_t ret = REAL(clRetainEvent);
        if (!ret || ret(event) != 0) {
            errno = saved;
            return;
        }
    }
    uint32_t cb = CLT_UNLIKELY(clt_queue_modes & CLT_MODE_CALLBACKS) ? clt_cb_slot(event, queue) : 0;
    __atomic_store_n(&lines.last_handed, clt_now(), __ATOMIC_RELAXED);
    uint64_t ticket = __atomic_fetch_add(&lines.hand_head, 1, __ATOMIC_ACQ_REL);
    if (CLT_UNLIKELY(ticket % 1024 == 0)) {
        nap_kick(ticket);
        if (in_flight() >= MAX_IN_FLIGHT)
            wait_for_collector();
    }
    struct hand_slot *s = &hand[ticket % HAND_SLOTS];
    uint32_t lap = (uint32_t)(ticket / HAND_SLOTS);
    /* Full only when the collector is HAND_SLOTS behind on taking handed
     * events (it takes them before asking the driver anything): wait. */
    for (unsigned spins = 0; __atomic_load_n(&s->turn, __ATOMIC_ACQUIRE) != 2 * lap; spins++)
        if (spins > 64)
            sched_yield();
    s->flow = flow;
    s->event = event;
    s->queue = queue;
    s->cb = cb;
    __atomic_store_n(&s->turn, 2 * lap + 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&collector_idle, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    errno = saved;
}

/* Until nothing is in flight, or no completion came for stall_ms, or
 * max_ms passed (by the clock: beside busy threads a 100 us sleep lasts a
 * millisecond and more, and counted in sleeps a queue's 100 ms wait ran to
 * 0.6-1.1 s): what is left in flight. Looked at every 100 us: a whole 1 ms
 * nap was most of a short program's exit wait (200 completions collected
 * in ~0.2 ms). */
static uint64_t wait_collected(unsigned stall_ms, unsigned max_ms)
{
    uint64_t seen = __atomic_load_n(&lines.collected, __ATOMIC_ACQUIRE);
    uint64_t start = clt_clock_ns(CLOCK_MONOTONIC), last = start, now = start;
    while (now - last < stall_ms * 1000000ull && now - start < max_ms * 1000000ull) {
        if (in_flight() == 0)
            return 0;
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
        now = clt_clock_ns(CLOCK_MONOTONIC);
        uint64_t got = __atomic_load_n(&lines.collected, __ATOMIC_ACQUIRE);
        if (got != seen) {
            seen = got;
            last = now;
        }
    }
    return in_flight();
}

/* pass_lock, waited for 50 ms at most: a collector stuck in the driver keeps it. 0: held. */
static int pass_lock_bounded(void)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 50000000;
    dl.tv_sec += dl.tv_nsec / 1000000000;
    dl.tv_nsec %= 1000000000;
    return pthread_mutex_timedlock(&pass_lock, &dl);
}

/* wait_collected's bounds, the calling thread collecting (asked: as a queue's release asks);
 * where the collector has not run yet or holds on in the driver, its wait. The stall is
 * judged after a pass that found nothing: a thread that lost its CPU for longer than the
 * stall while it napped looks once more before it leaves the commands (their queue may be
 * released next, its events' answers gone with it). */
static uint64_t collect_here(unsigned stall_ms, unsigned max_ms, int asked)
{
    struct clt_thread *th = __atomic_load_n(&collector_th, __ATOMIC_ACQUIRE);
    if (!th || pass_lock_bounded() != 0) {
        nap_end();
        return wait_collected(stall_ms, max_ms);
    }
    uint64_t start = clt_clock_ns(CLOCK_MONOTONIC), last = start;
    int waking = 0, held = 0;
    while (in_flight()) {
        take_handed();
        if (asked)
            __atomic_store_n(&collect_asked, 1, __ATOMIC_RELAXED);
        int got = collect_pass(th, &waking, &held) != 0;
        uint64_t now = clt_clock_ns(CLOCK_MONOTONIC);
        last = got ? now : last;
        if (now - start >= max_ms * 1000000ull || (!got && now - last >= stall_ms * 1000000ull))
            break;
        if (!got) {                /* commands still running: look again in 100 us */
            struct timespec ts = { 0, 100000 };
            nanosleep(&ts, NULL);
        }
    }
    pthread_mutex_unlock(&pass_lock);
    return in_flight();
}

/* At exit: the completions held back are collected (as long as they keep
 * coming, max_ms at most), commands still running waited for stall_ms
 * without a completion; here: by the calling thread (not from a signal
 * handler: a crash may be the collector's own, inside the lock). Returns
 * how many were left. */
uint64_t clt_commands_drain(unsigned stall_ms, unsigned max_ms, int here)
{
    __atomic_store_n(&draining, 1, __ATOMIC_SEQ_CST);
    if (here)
        return collect_here(stall_ms, max_ms, 0);
    nap_end();
    return wait_collected(stall_ms, max_ms);
}

/* The collector is out of the driver before the exit goes on: a query of
 * its still there when the driver's own teardown (its atexit handlers and
 * destructors) runs would race with it. With `finished` set, pass_lock
 * taken once says so (it looks at `finished` as it takes it), waited for
 * 50 ms at most: a collector stuck in the driver is left there. */
void clt_collect_finish(void)
{
    __atomic_store_n(&finished, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    nap_end();
    if (__atomic_load_n(&lines.collector_state, __ATOMIC_ACQUIRE) != 1)
        return;
    if (pass_lock_bounded() == 0)
        pthread_mutex_unlock(&pass_lock);
}

/* The app releases a queue: its commands are collected before the release reaches the
 * driver. On NVIDIA (580.159, an H200) an event's queries took 1.9 us a command while its
 * queue lived and 270-290 us once the app had released it: the transfers example's ~300
 * timed commands, collected at its exit after that, were 57-85 ms of the exit; collected
 * here, 0.7-3.2 ms. Bounded: commands still running are left (no completion for 2 ms,
 * 100 ms at most); the wait is cltrace's, counted as one (clt_count_wait). The collector
 * at idle priority gets no CPU beside busy threads: lifted first (beside two CPU hogs the
 * wait ran out its 2 ms of polls, which took ~70-100 ms there, in 1 run in 3 of
 * tests/apps/host_gap.c). The writer holds a released queue's track (of 1,024 at most)
 * until its commands are drawn. */
void clt_pre_clReleaseCommandQueue(struct clt_hook *h, void **queue)
{
    (void)h, (void)queue;
    if (!in_flight() || __atomic_load_n(&lines.collector_state, __ATOMIC_ACQUIRE) != 1 ||
        __atomic_load_n(&finished, __ATOMIC_ACQUIRE))
        return;
    uint64_t t0 = clt_now();
    clt_own_threads_lift(CLT_LIFT_RELEASE);
    collect_here(2, 100, 1);
    if (clt_tls)
        clt_count_wait(clt_tls, t0, 0);
}

/* The child of fork(): the parent's collector and its events are not ours. */
void clt_collect_forget(void)
{
    pthread_mutex_init(&start_lock, NULL);
    pthread_mutex_init(&pass_lock, NULL);
    __atomic_store_n(&collector_th, NULL, __ATOMIC_RELAXED);
    memset(hand, 0, sizeof hand);
    lines.hand_head = lines.hand_tail = 0;
    napping_long = 0;
    lines.collected = 0;
    finished = 0;
    clt_shared.collected_paused = clt_shared.collected_forced = clt_shared.collected_exit = 0;
    collector_idle = draining = lines.collector_state = 0;
    clt_pend_forget();
}
