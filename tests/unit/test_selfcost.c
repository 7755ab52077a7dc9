/* What the report says cltrace added, on models built here (no trace):
 * the estimate of what its threads took from the app, where the app wanted
 * every CPU and where its threads waited for one (report/views/selfcost.c),
 * the total as the sum of its parts,
 * and the sentence of each kind of trace (with the scheduler's account,
 * without it, before the exit was stated). */
#include <stdio.h>
#include <string.h>
#include "report/views/views.h"
#include "check.h"

#define MS 1000000ull

/* A run of 400 ms on CPUS CPUs whose app threads wanted WANT of them on
 * average, WAIT_MS of that waiting for one; cltrace's threads used 8 ms of
 * CPU while it ran. */
static void model(struct rm_model *m, unsigned cpus, double want, double wait_ms)
{
    memset(m, 0, sizeof *m);
    struct rm_selfcost *c = &m->self;
    c->known = c->exit_known = 1;
    c->self_ns = 5 * MS;
    c->hot_ns = 5 * MS;
    c->run_ns = 450 * MS;
    c->exit_ns = 15 * MS;
    c->exit_wait_ns = 1 * MS;
    c->load_ns = MS / 10;
    c->cpus = cpus;
    c->writer_cpu_ns = 9 * MS;
    c->collector_cpu_ns = 1 * MS;
    c->process_cpu_ns = 700 * MS;
    c->sched_known = 1;
    c->sched_span_ns = 400 * MS;
    c->sched_own_cpu_ns = 8 * MS;
    c->sched_app_cpu_ns = (uint64_t)((want * 400 - wait_ms) * MS);
    c->sched_app_wait_ns = (uint64_t)(wait_ms * MS);
}

static void competing(unsigned cpus, double want, double wait_ms, double expect_ms)
{
    struct rm_model m;
    model(&m, cpus, want, wait_ms);
    double got = selfcost_competing_ns(&m) / 1e6;
    CHECK(got > expect_ms - 0.01 && got < expect_ms + 0.01, "%u CPUs, %.2f wanted: %.3f ms taken, expected %.3f",
          cpus, want, got, expect_ms);
    uint64_t sum = m.self.self_ns + m.self.exit_ns + m.self.load_ns + selfcost_competing_ns(&m);
    CHECK(selfcost_total_ns(&m) == sum, "%u CPUs, %.2f wanted: total %llu, parts %llu", cpus, want,
          (unsigned long long)selfcost_total_ns(&m), (unsigned long long)sum);
}

int main(void)
{
    /* one CPU held by cltrace's thread: all of it where the app wanted
     * more than the others, and where it did not, as much as the app
     * waited for a CPU per ns of CPU run (wait / (app CPU + 8 ms)) */
    competing(2, 1.70, 0, 8 * 0.70);                      /* PoCL's two workers busy */
    competing(2, 1.70, 100, 8 * (0.70 + 0.30 * 100 / 588.0));
    competing(2, 1.10, 60, 8 * (0.10 + 0.90 * 60 / 388.0));  /* small blocking writes: hand-offs */
    competing(2, 1.00, 0, 0);                             /* one app thread: the other CPU was free */
    competing(2, 1.00, 300, 8);                           /* waiting more than running: never more than all */
    competing(2, 0.40, 0, 0);
    competing(2, 2.60, 200, 8);                           /* oversubscribed: all of it */
    competing(16, 3.00, 0, 0);                            /* a GPU host */
    competing(16, 15.50, 0, 8 * 0.50);
    competing(1, 0.50, 0, 8 * 0.50);                      /* one CPU: whenever the app wanted it */

    struct rm_model m;
    char s[SELFCOST_TEXT_MAX];
    model(&m, 2, 1.70, 100);
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "cltrace added 0.026 s (5.8 %) to this run") &&
              strstr(s, "; 0.006 s its own threads took from the app's (an estimate: their 0.008 s of CPU while the "
                        "app ran, the app's threads wanting 1.70 of the 2 CPUs on average and waiting for one 0.17 s "
                        "per s of CPU run). Not counted: its own threads' 0.002 s of CPU at exit") &&
              strstr(s, "the process's end after the trace closed, mostly the kernel's (the driver's teardown"),
          "with the scheduler's account: %s", s);

    /* held at the limit of commands in flight while the device ran its
     * backlog: said, not counted, and the sentence still whole */
    uint64_t before = selfcost_total_ns(&m);
    m.self.paced_wait_ns = 7600 * MS;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(selfcost_total_ns(&m) == before &&
              strstr(s, "Not counted: 7.600 s the app's threads were held at cltrace's limit of commands in flight "
                        "while the device ran its backlog (the device set the pace); its own threads' 0.002 s") &&
              strstr(s, "device timing: every command timed"),
          "a paced wait, with the scheduler's account: %s", s);
    m.self.sched_known = 0;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "Not counted: 7.600 s the app's threads were held") && strstr(s, "device timing: every command timed"),
          "a paced wait, without the scheduler's account: %s", s);
    m.self.sched_known = 1;
    m.self.paced_wait_ns = 0;

    /* its threads' turns on a CPU: said, never counted; on a virtual
     * machine the price measured on one, times the count */
    before = selfcost_total_ns(&m);
    m.self.runs_known = 1;
    m.self.sched_own_runs = 200;
    m.self.sched_app_runs = 18000;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(selfcost_total_ns(&m) == before &&
              strstr(s, "inside the exit's figure; its threads' 200 turns on a CPU while the app ran (the app's "
                        "threads': 18000), each a wake-up that may delay an app thread waking on that CPU; loading") &&
              !strstr(s, "virtual machine"),
          "wake-ups, not a VM: %s", s);
    m.self.hypervisor = 1;
    snprintf(m.self.cpuidle_driver, sizeof m.self.cpuidle_driver, "haltpoll");
    m.self.halt_poll_known = 1;
    m.self.guest_halt_poll_ns = 0;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(selfcost_total_ns(&m) == before &&
              strstr(s, "most on a small virtual machine like this one, whose idle CPUs halt at once (cpuidle "
                        "haltpoll, guest halt-polling 0 ns)") && strstr(s, "~120 us each (up to 0.024 s here at that price)") &&
              strstr(s, "device timing: every command timed"),
          "wake-ups, a VM halting at once: %s", s);
    m.self.guest_halt_poll_ns = 200000;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "more on a small virtual machine like this one (cpuidle haltpoll, guest halt-polling 200 us)") &&
              strstr(s, "~30 us each (up to 0.006 s here at that price)") && strstr(s, "device timing: every command timed"),
          "wake-ups, a VM that polls: %s", s);
    snprintf(m.self.cpuidle_driver, sizeof m.self.cpuidle_driver, "none");   /* HLT: the parameter is not used */
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "whose idle CPUs halt at once (cpuidle none): ") && strstr(s, "~120 us each"),
          "wake-ups, a VM without a cpuidle driver: %s", s);
    m.self.cpus = 16;          /* the price was measured on 2 vCPUs: not given for many */
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "more on a virtual machine like this one (cpuidle none), where waking an idle CPU may leave the "
                    "hypervisor; loading") && !strstr(s, "at that price"),
          "wake-ups, a 16-CPU VM: %s", s);
    m.self.cpus = 2;
    /* the wake-ups alone where the trace has them: the price on those */
    m.self.wakeups_known = 1;
    m.self.sched_own_wakeups = 50;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(selfcost_total_ns(&m) == before &&
              strstr(s, "its threads' 50 wake-ups while the app ran (of 200 turns on a CPU; the app's threads' turns: "
                        "18000), each of which may delay") && strstr(s, "~120 us each (up to 0.006 s here at that price)"),
          "wake-ups counted apart from turns: %s", s);
    m.self.wakeups_known = 0;
    m.self.runs_known = m.self.hypervisor = 0;

    /* the priority its threads ran at: said, the total unchanged */
    snprintf(m.self.own_priority, sizeof m.self.own_priority, "idle");
    selfcost_sentence(&m, s, sizeof s);
    CHECK(selfcost_total_ns(&m) == before &&
              strstr(s, "their 0.008 s of CPU while the app ran, at idle priority (an app thread that wakes takes their "
                        "CPU at once), the app's threads wanting"),
          "idle priority: %s", s);
    snprintf(m.self.own_lifted, sizeof m.self.own_lifted, "an app thread waited for room in its ring");
    m.self.own_lifted_at_ns = 45000000;
    m.self.own_lifts = 3;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "at idle priority but put back at normal 3 times while the app waited for them (the first 0.045 s "
                    "into the run: an app thread waited for room in its ring), the app's"),
          "idle priority, lifted: %s", s);
    snprintf(m.self.own_priority, sizeof m.self.own_priority, "normal");
    snprintf(m.self.own_normal_why, sizeof m.self.own_normal_why, "no CAP_SYS_NICE and RLIMIT_NICE below 20");
    m.self.own_lifted[0] = 0;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "while the app ran, at normal priority (no CAP_SYS_NICE and RLIMIT_NICE below 20), the app's"),
          "normal priority: %s", s);
    m.self.own_priority[0] = 0;

    /* a CPU device's commands that found their queue idle: their waits for
     * the driver's thread, beyond the quickest tenth, said as an upper
     * bound, not counted; a GPU's not said */
    m.n_dev = 1;
    snprintf(m.dev[0].name, sizeof m.dev[0].name, "pthread-cpu");
    m.dev[0].type = 2;
    m.dev[0].idle_starts = 4000;
    m.dev[0].idle_start_ns = 60 * (int64_t)MS;
    m.dev[0].idle_start_quick_ns = 1000;
    m.dev[0].idle_start_median_ns = 13000;
    m.dev[0].idle_start_excess_ns = 56 * (int64_t)MS;
    selfcost_sentence(&m, s, sizeof s);
    CHECK(selfcost_total_ns(&m) == before &&
              strstr(s, "; the driver's threads waking for the app's commands on pthread-cpu: the 4000 that found their "
                        "queue idle waited 0.060 s for it to start them (13.0 us the median, 1.0 us the quickest "
                        "tenth); where cltrace's time on the calling thread, or its threads' wake-ups, made a hand-off "
                        "find the driver's thread asleep, the wait is cltrace's: up to the 0.056 s they waited beyond "
                        "the quickest tenth; loading") && !strstr(s, "halt at once, like this one"),
          "hand-offs on a CPU device: %s", s);
    m.self.hypervisor = 1;
    snprintf(m.self.cpuidle_driver, sizeof m.self.cpuidle_driver, "none");
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "beyond the quickest tenth (on a 2-vCPU VM whose idle CPUs halt at once, like this one, a bare 250 "
                    "ns before each of 4,000 small blocking writes cost +1.8 us a write, 1 us +9.7 us; two threads "
                    "that only slept, made at the program's start, +8 to +12 ms in all, and nothing when the writes "
                    "began 0.4 s later: cltrace's threads, made at its start, weigh the same); loading") &&
              strlen(s) < SELFCOST_TEXT_MAX - 1,
          "hand-offs on a VM halting at once: %s", s);
    m.dev[0].type = 4;          /* a GPU: its start is no thread waking */
    selfcost_sentence(&m, s, sizeof s);
    CHECK(!strstr(s, "driver's threads waking"), "hand-offs on a GPU: %s", s);
    m.n_dev = 0;
    m.self.hypervisor = 0;
    m.self.cpuidle_driver[0] = 0;

    m.self.sched_known = 0;     /* a kernel without schedstat, or a trace before it */
    CHECK(selfcost_competing_ns(&m) == 0 && selfcost_app_cpus_wanted(&m) < 0 && selfcost_app_wait_per_cpu(&m) < 0,
          "no account, no estimate");
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "cltrace added 0.020 s (4.5 %) to this run") && strstr(s, "0.0001 s starting. Not counted: its "
                                                                              "own threads' 0.010 s of CPU (writer "
                                                                              "0.009, collector 0.001)") &&
              strstr(s, "the process kept its 2 CPUs 78 % busy") &&
              strstr(s, "the process's end after the trace closed, mostly the kernel's (the driver's teardown"),
          "without the scheduler's account: %s", s);

    m.self.exit_known = 0;      /* a trace before the exit was stated: the app's threads alone */
    CHECK(selfcost_total_ns(&m) == m.self.self_ns, "app threads only: %llu", (unsigned long long)selfcost_total_ns(&m));
    selfcost_sentence(&m, s, sizeof s);
    CHECK(strstr(s, "cltrace added 0.005 s (1.1 %) to this run on the app's threads"), "app threads only: %s", s);

    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("selfcost: every case as expected\n");
    return failures != 0;
}
