/* cltrace's own threads at idle priority (writer/ownthreads.c): lowered as
 * they start, put back while the app waits for them and lowered again a
 * second after; a thread started inside the collector's calls into the
 * driver (which inherits its idle priority) put at normal priority, one the
 * app had before left alone; the trace's attributes. Needs CAP_SYS_NICE or
 * RLIMIT_NICE 20 (the kernel's rule for going back): without, it checks
 * that nothing was lowered and says what it skipped. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "writer/emit.h"
#include "check.h"

/* the attributes, as the writer would put them */
static char attr_keys[8][64], attr_vals[8][160];
static unsigned n_attrs;
void clt_attr_str(struct clt_attrs *a, const char *key, const char *v)
{
    (void)a;
    if (n_attrs < 8) {
        snprintf(attr_keys[n_attrs], sizeof attr_keys[0], "%s", key);
        snprintf(attr_vals[n_attrs++], sizeof attr_vals[0], "%s", v);
    }
}
void clt_attr_int(struct clt_attrs *a, const char *key, int64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)v);
    clt_attr_str(a, key, s);
}
static const char *attr(const char *key)
{
    for (unsigned i = 0; i < n_attrs; i++)
        if (!strcmp(attr_keys[i], key))
            return attr_vals[i];
    return NULL;
}

static int policy_of(pid_t tid)
{
    return sched_getscheduler(tid);
}

static _Atomic int stop, own_tid, child_tid;
static void *sleeper(void *arg)
{
    (void)arg;
    __atomic_store_n(&child_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        usleep(1000);
    return NULL;
}

/* an own thread (the writer's kind): lowered as it starts; a thread it
 * starts inside the watched calls; then it waits to be stopped */
static void *own(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-test", 1);
    __atomic_store_n(&own_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        usleep(1000);
    clt_own_thread_end();
    return NULL;
}

static void wait_for(_Atomic int *v)
{
    while (!__atomic_load_n(v, __ATOMIC_ACQUIRE))
        usleep(100);
}

int main(void)
{
    pthread_t t, app_idle, c;
    /* a thread the app runs at idle priority itself, before cltrace's */
    struct sched_param sp = { 0 };
    pthread_create(&app_idle, NULL, sleeper, NULL);
    wait_for(&child_tid);
    int app_idle_tid = __atomic_exchange_n(&child_tid, 0, __ATOMIC_ACQ_REL);
    int app_may_idle = sched_setscheduler(app_idle_tid, SCHED_IDLE, &sp) == 0;

    pthread_create(&t, NULL, own, NULL);
    wait_for(&own_tid);
    int tid = __atomic_load_n(&own_tid, __ATOMIC_ACQUIRE);
    CHECK(clt_own_thread_is(tid) && !clt_own_thread_is(app_idle_tid), "own thread %d known", tid);
    struct clt_attrs *none = NULL;
    clt_own_threads_attrs(none, 0);
    const char *pri = attr("cltrace.own_threads_priority");
    CHECK(pri && (!strcmp(pri, "idle") || !strcmp(pri, "normal")), "priority attribute %s", pri ? pri : "absent");
    if (!pri || strcmp(pri, "idle")) {
        CHECK(policy_of(tid) == SCHED_OTHER && attr("cltrace.own_threads_normal_why"), "normal, and why");
        printf("ownthreads: SKIP the idle cases: %s\n", attr("cltrace.own_threads_normal_why"));
        __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        pthread_join(t, NULL);
        pthread_join(app_idle, NULL);
        return failures != 0;
    }
    CHECK(policy_of(tid) == SCHED_IDLE, "own thread at %d, not idle", policy_of(tid));

    /* a thread started inside watched calls, from an idle thread: the
     * test's main thread lowers itself to stand for the collector */
    long before = clt_own_driver_begin();
    CHECK(before > 0, "the first rounds are watched (%ld)", before);
    sched_setscheduler(0, SCHED_IDLE, &sp);
    pthread_create(&c, NULL, sleeper, NULL);
    wait_for(&child_tid);
    int child = __atomic_load_n(&child_tid, __ATOMIC_ACQUIRE);
    CHECK(policy_of(child) == SCHED_IDLE, "the kernel gave the driver's thread its creator's priority");
    clt_own_driver_end(before);
    CHECK(policy_of(child) == SCHED_OTHER, "the driver's thread left at %d", policy_of(child));
    CHECK(!app_may_idle || policy_of(app_idle_tid) == SCHED_IDLE, "the app's own idle thread changed");
    CHECK(policy_of(tid) == SCHED_IDLE, "cltrace's own thread changed");
    sched_setscheduler(0, SCHED_OTHER, &sp);

    /* the app waits for them: normal priority; said; lowered again a second
     * after, and not after the exit's lift */
    clt_own_threads_lift(CLT_LIFT_RING);
    CHECK(policy_of(tid) == SCHED_OTHER, "lifted: %d", policy_of(tid));
    clt_own_threads_settle();
    CHECK(policy_of(tid) == SCHED_OTHER, "settled at once");
    n_attrs = 0;
    clt_own_threads_attrs(none, 0);
    CHECK(attr("cltrace.own_threads_lifted") && !strcmp(attr("cltrace.own_threads_lifted"),
                                                        "an app thread waited for room in its ring") &&
              attr("cltrace.own_threads_lifts") && !strcmp(attr("cltrace.own_threads_lifts"), "1"),
          "lift said");
    struct timespec ts = { 1, 100000000 };
    nanosleep(&ts, NULL);
    clt_own_threads_settle();
    CHECK(policy_of(tid) == SCHED_IDLE, "lowered again: %d", policy_of(tid));
    clt_own_threads_lift(CLT_LIFT_SNAPSHOT);
    clt_own_threads_lift(CLT_LIFT_EXIT);
    nanosleep(&ts, NULL);
    clt_own_threads_settle();
    CHECK(policy_of(tid) == SCHED_OTHER, "lowered after the exit: %d", policy_of(tid));
    n_attrs = 0;
    clt_own_threads_attrs(none, 0);
    CHECK(attr("cltrace.own_threads_lifts") && !strcmp(attr("cltrace.own_threads_lifts"), "2"),
          "lifts before the exit: %s", attr("cltrace.own_threads_lifts"));

    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    pthread_join(c, NULL);
    pthread_join(app_idle, NULL);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("ownthreads: every case as expected\n");
    return failures != 0;
}
