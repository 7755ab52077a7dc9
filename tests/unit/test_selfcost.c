/* What the report says cltrace added, on models built here (no trace):
 * the estimate of what its threads took from the app, where the app wanted
 * every CPU and where its threads waited for one (report/views/selfcost.c),
 * the total as the sum of its parts, the account and its bound for each
 * kind of trace (with the scheduler's account, without it, before the exit
 * was stated), and device timing a platform made up (devtiming.c). */
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

static void competing_at(const char *priority, unsigned cpus, double want, double wait_ms, double expect_ms)
{
    struct rm_model m;
    model(&m, cpus, want, wait_ms);
    snprintf(m.self.own_priority, sizeof m.self.own_priority, "%s", priority);
    double got = selfcost_competing_ns(&m) / 1e6;
    CHECK(got > expect_ms - 0.01 && got < expect_ms + 0.01, "%u CPUs, %.2f wanted, priority '%s': %.3f ms taken, "
          "expected %.3f", cpus, want, priority, got, expect_ms);
    uint64_t sum = m.self.self_ns + m.self.exit_ns + m.self.load_ns + selfcost_competing_ns(&m);
    CHECK(selfcost_total_ns(&m) == sum, "%u CPUs, %.2f wanted: total %llu, parts %llu", cpus, want,
          (unsigned long long)selfcost_total_ns(&m), (unsigned long long)sum);
}

static void competing(unsigned cpus, double want, double wait_ms, double expect_ms)
{
    competing_at("normal", cpus, want, wait_ms, expect_ms);
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
    /* at idle priority the scheduler ran cltrace's thread only on a CPU the
     * app left free: the delays alone (PoCL's launch loop: 1.48x its
     * measured slowdown counted the other way, 1.00-1.08x this way) */
    competing_at("idle", 2, 1.70, 0, 0);
    competing_at("idle", 2, 1.70, 100, 8 * 100 / 588.0);
    competing_at("idle", 2, 1.10, 60, 8 * 60 / 388.0);
    competing_at("idle", 1, 0.50, 0, 0);

    struct rm_model m;
    struct cost_account a;
    char s[200];
    model(&m, 2, 1.70, 100);
    selfcost_account(&m, &a);
    selfcost_line(&m, &a, s, sizeof s);
    /* the figure: 5 + 15 + 0.1 + the 6.2 ms estimate; the bound adds the
     * rest of its threads' 8 ms of CPU */
    CHECK(a.known && a.figure_ns == selfcost_total_ns(&m) && a.upper_ns == a.figure_ns + 8 * MS -
                                                                             selfcost_competing_ns(&m),
          "figure %llu, bound %llu", (unsigned long long)a.figure_ns, (unsigned long long)a.upper_ns);
    CHECK(!strcmp(s, "cltrace added 26 ms (5.8 %), at most 28 ms (6.2 %) on this machine"), "the line: %s", s);
    uint64_t counted = 0;
    for (unsigned i = 0; i < a.n_counted; i++)
        counted += a.counted[i].ns;
    CHECK(counted == a.figure_ns, "the counted rows sum to the figure: %llu of %llu", (unsigned long long)counted,
          (unsigned long long)a.figure_ns);

    /* held at the limit of commands in flight while the device ran its
     * backlog: said, not counted */
    uint64_t before = selfcost_total_ns(&m);
    m.self.paced_wait_ns = 7600 * MS;
    selfcost_account(&m, &a);
    CHECK(selfcost_total_ns(&m) == before && a.n_said && a.said[0].ns == 7600 * MS &&
              strstr(a.said[0].what, "limit of commands in flight"),
          "a paced wait: %s", a.said[0].what);
    m.self.paced_wait_ns = 0;

    /* its threads' wake-ups: said, never counted or priced (a price
     * measured on some other machine is docs/PERFORMANCE.md's) */
    m.self.runs_known = m.self.wakeups_known = m.self.hypervisor = 1;
    m.self.sched_own_runs = 200;
    m.self.sched_own_wakeups = 50;
    m.self.sched_app_runs = 18000;
    snprintf(m.self.cpuidle_driver, sizeof m.self.cpuidle_driver, "none");
    selfcost_account(&m, &a);
    int woke = 0, vm = 0;
    for (unsigned i = 0; i < a.n_said; i++) {
        woke |= strstr(a.said[i].what, "woke 50 times") != NULL;
        vm |= strstr(a.said[i].what, "idle CPUs halt at once (cpuidle none)") != NULL;
        CHECK(!strstr(a.said[i].what, "us each") && !strstr(a.said[i].what, "2-vCPU"), "no price from elsewhere: %s",
              a.said[i].what);
    }
    CHECK(woke && vm && selfcost_total_ns(&m) == before && a.upper_ns == before + 8 * MS - selfcost_competing_ns(&m),
          "wake-ups said, not counted");
    m.self.runs_known = m.self.wakeups_known = m.self.hypervisor = 0;

    /* a CPU device's commands that found their queue idle: the median's
     * wait beyond the quickest tenth's, times their count, into the bound
     * (at most all they waited beyond it); a GPU's not */
    m.n_dev = 1;
    snprintf(m.dev[0].name, sizeof m.dev[0].name, "pthread-cpu");
    m.dev[0].type = 2;
    m.dev[0].idle_starts = 4000;
    m.dev[0].idle_start_ns = 60 * (int64_t)MS;
    m.dev[0].idle_start_quick_ns = 1000;
    m.dev[0].idle_start_median_ns = 13000;
    m.dev[0].idle_start_excess_ns = 56 * (int64_t)MS;
    selfcost_account(&m, &a);
    CHECK(a.figure_ns == before && a.upper_ns == before + 8 * MS - selfcost_competing_ns(&m) + 48 * MS,
          "hand-offs on a CPU device: bound %llu", (unsigned long long)a.upper_ns);
    m.dev[0].idle_start_excess_ns = 20 * (int64_t)MS;       /* a few long waits: no more than they waited */
    selfcost_account(&m, &a);
    CHECK(a.upper_ns == before + 8 * MS - selfcost_competing_ns(&m) + 20 * MS, "hand-offs, capped: %llu",
          (unsigned long long)a.upper_ns);
    m.dev[0].type = 4;          /* a GPU: its start is no thread waking */
    selfcost_account(&m, &a);
    CHECK(a.upper_ns == before + 8 * MS - selfcost_competing_ns(&m), "hand-offs on a GPU: none");
    m.n_dev = 0;

    m.self.sched_known = 0;     /* a kernel without schedstat, or a trace before it */
    CHECK(selfcost_competing_ns(&m) == 0 && selfcost_app_cpus_wanted(&m) < 0 && selfcost_app_wait_per_cpu(&m) < 0,
          "no account, no estimate");
    selfcost_account(&m, &a);
    selfcost_line(&m, &a, s, sizeof s);
    CHECK(a.upper_ns == a.figure_ns + 10 * MS && !strcmp(s, "cltrace added 20 ms (4.5 %), at most 30 ms (6.7 %) on "
                                                             "this machine"),
          "without the scheduler's account, its threads' whole CPU bounds: %s", s);

    m.self.exit_known = 0;      /* a trace before the exit was stated: the app's threads alone */
    CHECK(selfcost_total_ns(&m) == m.self.self_ns, "app threads only: %llu", (unsigned long long)selfcost_total_ns(&m));
    selfcost_account(&m, &a);
    selfcost_line(&m, &a, s, sizeof s);
    CHECK(strstr(s, "cltrace added 5.0 ms (1.1 %) on the app's threads, at most"), "app threads only: %s", s);
    m.self.known = 0;
    selfcost_account(&m, &a);
    selfcost_line(&m, &a, s, sizeof s);
    CHECK(strstr(s, "not stated in this trace"), "an older trace: %s", s);

    /* device timing a platform made up (report/model/devtiming.c) */
    struct rm_devtiming t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 5; i++) {
        rm_devtiming_command(&t, 0, 2, 3);
        rm_devtiming_enqueue(&t, 1000 + 5 * MS * (uint64_t)i);
    }
    rm_devtiming_judge(&t);
    CHECK(t.unusable && strstr(t.why, "every one of the 5 commands took 1 ns") &&
              strstr(t.why, "the device's clock moved 3 ns while the host's moved 20.0 ms"), "0, 1, 2, 3: %s", t.why);
    memset(&t, 0, sizeof t);
    rm_devtiming_command(&t, 0, 3, 2);
    rm_devtiming_command(&t, 0, 3, 2);
    rm_devtiming_judge(&t);
    CHECK(t.unusable && strstr(t.why, "2 of 2 commands end before they start"), "END < START: %s", t.why);
    memset(&t, 0, sizeof t);     /* PoCL: a kernel built at its first launch starts 40 ms after its enqueue */
    rm_devtiming_command(&t, 1000000, 41000000, 41030000);
    rm_devtiming_command(&t, 1100000, 41040000, 41041000);
    rm_devtiming_enqueue(&t, 5000000);
    rm_devtiming_enqueue(&t, 5100000 + 40 * MS);
    rm_devtiming_judge(&t);
    CHECK(!t.unusable, "a real device's late start: %s", t.why);
    memset(&t, 0, sizeof t);     /* one command: nothing to judge by */
    rm_devtiming_command(&t, 0, 2, 3);
    rm_devtiming_judge(&t);
    CHECK(!t.unusable, "one command: %s", t.why);

    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("selfcost: every case as expected\n");
    return failures != 0;
}
