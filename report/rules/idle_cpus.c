/* halting-idle-cpus: a virtual machine whose idle CPUs halt at once, under a
 * program whose threads hand work to each other. Each hand-off wakes a
 * thread whose CPU went idle, and on such a machine waking an idle CPU goes
 * through the hypervisor. The trace says how the machine's idle CPUs wait
 * and how often the app's threads were put on a CPU (writer/selfcost.c).
 *
 * Measured on a 2-vCPU KVM guest (kernel 6.18, cpuidle haltpoll), the
 * programs untraced, guest_halt_poll_ns 0 against the kernel's default
 * 200 us (21 runs each, 2026-11-26, docs/PERFORMANCE.md "Wake-ups on a
 * 2-vCPU VM"): 4,000 small blocking writes on PoCL 177 -> 140 ms, a write
 * + kernel + finish loop 271 -> 120 ms, a 0.05 s program 50 -> 44 ms, a
 * device-bound loop 496 -> 458 ms; a launch loop and 1 M light calls
 * (few hand-offs) unchanged. The app's threads were put on a CPU 7,700 to
 * 110,000 times a second in the first four, ~2,000 in the light calls. */
#include <stdio.h>
#include <string.h>
#include "rules.h"

#define HANDOFFS_PER_S 5000      /* turns on a CPU a second of the app's threads */
#define HANDOFFS_MIN 500

void rules_halting_idle_cpus(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    const struct rm_selfcost *c = &m->self;
    if (!c->runs_known || !c->hypervisor || !c->sched_span_ns || c->sched_app_runs < HANDOFFS_MIN)
        return;
    if (rm_idle_halts(c) != 1)
        return;                  /* its idle CPUs poll first (or the trace cannot tell) */
    int haltpoll = !strcmp(c->cpuidle_driver, "haltpoll");
    double span_s = c->sched_span_ns / 1e9, rate = c->sched_app_runs / span_s;
    if (rate < HANDOFFS_PER_S)
        return;
    struct finding *f = finding_add(out, "halting-idle-cpus", SEV_INFO, -1);
    finding_set(&f->where, "machine");
    char idle[80];
    snprintf(idle, sizeof idle, "cpuidle %s%s", c->cpuidle_driver[0] ? c->cpuidle_driver : "unknown",
             haltpoll ? ", guest halt-polling 0 ns" : "");
    finding_set(&f->numbers, "the app's threads were put on a CPU %llu times in %.3f s (%.0f a second: hand-offs "
                "between threads) on a %llu-CPU virtual machine whose idle CPUs halt at once (%s): each wake of an "
                "idle CPU goes through the hypervisor", (unsigned long long)c->sched_app_runs, span_s, rate,
                (unsigned long long)c->cpus, idle);
    finding_set(&f->fix, "let idle CPUs poll before they halt: as root, `echo 200000 > "
                "/sys/module/haltpoll/parameters/guest_halt_poll_ns` (the kernel's default; where the cpuidle "
                "driver is not haltpoll, boot with cpuidle_haltpoll.force=1), or ask for a machine whose idle CPUs "
                "poll; fewer hand-offs (batched transfers, non-blocking calls) help anywhere");
    finding_set(&f->gain_method, "not estimated from the trace: on a 2-vCPU KVM guest, untraced, 4,000 small "
                "blocking writes on PoCL ran 177 -> 140 ms and a write + kernel + finish loop 271 -> 120 ms with "
                "200 us of halt-polling");
}
