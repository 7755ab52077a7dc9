/* Reading what the trace states of cltrace's own cost and of sampling
 * (TRACE_FORMAT.md), and each sampled kernel's device time extrapolated
 * from the launches that were timed. The output side is selfcost.c. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "model.h"
#include "reader.h"

/* How the machine's idle CPUs wait, the priority cltrace's threads ran at,
 * and the sampling rule; 1: key was one. */
static int machine_attr(struct rm_selfcost *c, const char *key, int64_t v, const char *s)
{
    if (!strcmp(key, "cltrace.hypervisor"))
        c->hypervisor = v != 0;
    else if (!strcmp(key, "cltrace.guest_halt_poll_ns")) {
        c->guest_halt_poll_ns = v > 0 ? (uint64_t)v : 0;
        c->halt_poll_known = 1;
    } else if (!strcmp(key, "cltrace.cpuidle_driver") && s)
        snprintf(c->cpuidle_driver, sizeof c->cpuidle_driver, "%s", s);
    else if (!strcmp(key, "cltrace.own_threads_priority") && s)
        snprintf(c->own_priority, sizeof c->own_priority, "%s", s);
    else if (!strcmp(key, "cltrace.own_threads_normal_why") && s)
        snprintf(c->own_normal_why, sizeof c->own_normal_why, "%s", s);
    else if (!strcmp(key, "cltrace.own_threads_lifted") && s)
        snprintf(c->own_lifted, sizeof c->own_lifted, "%s", s);
    else if (!strcmp(key, "cltrace.own_threads_lifted_at_ns"))
        c->own_lifted_at_ns = v > 0 ? (uint64_t)v : 0;
    else if (!strcmp(key, "cltrace.own_threads_lifts"))
        c->own_lifts = v > 0 ? (uint64_t)v : 0;
    else if (!strcmp(key, "cltrace.sampling") && s)
        snprintf(c->sampling, sizeof c->sampling, "%s", s);
    else if (!strcmp(key, "cltrace.sampling_mode") && s)
        snprintf(c->sampling_mode, sizeof c->sampling_mode, "%s", s);
    else if (!strcmp(key, "cltrace.budget_percent_x100"))
        c->budget_percent = (double)v / 100;
    else if (!strcmp(key, "cltrace.budget_spent_ns"))
        c->budget_spent_ns = v > 0 ? (uint64_t)v : 0;
    else if (!strcmp(key, "cltrace.budget_price_ns"))
        c->budget_price_ns = v > 0 ? (uint64_t)v : 0;
    else if (!strcmp(key, "cltrace.timing_measured_ns"))
        c->timing_measured_ns = v > 0 ? (uint64_t)v : 0;
    else if (!strcmp(key, "cltrace.budget_first"))
        c->budget_first = v > 0 ? (uint64_t)v : 0;
    else if (!strcmp(key, "cltrace.exit_by") && s)
        snprintf(c->exit_by, sizeof c->exit_by, "%s", s);
    else if (!strcmp(key, "cltrace.exit_status"))
        c->exit_status = (int)v + 1;     /* + 1: a model cleared to zero has none */
    else
        return 0;
    return 1;
}

/* The attributes that are a whole figure each, and where each goes */
static const struct { const char *key; size_t off; } ints[] = {
    { "cltrace.self_ns", offsetof(struct rm_selfcost, self_trace_ns) },
    { "cltrace.self_hot_path_ns", offsetof(struct rm_selfcost, hot_ns) },
    { "cltrace.self_cpu_samples_ns", offsetof(struct rm_selfcost, cpu_samples_ns) },
    { "cltrace.self_cpu_samples_off_cpu_ns", offsetof(struct rm_selfcost, cpu_samples_off_ns) },
    { "cltrace.light_calls_measured", offsetof(struct rm_selfcost, light_measured) },
    { "cltrace.light_calls_measured_ns", offsetof(struct rm_selfcost, light_measured_ns) },
    { "cltrace.light_calls_cut", offsetof(struct rm_selfcost, light_cut) },
    { "cltrace.light_calls_cut_ns", offsetof(struct rm_selfcost, light_cut_ns) },
    { "cltrace.self_device_timing_ns", offsetof(struct rm_selfcost, device_timing_ns) },
    { "cltrace.self_waited_ns", offsetof(struct rm_selfcost, waited_ns) },
    { "cltrace.calls_waited", offsetof(struct rm_selfcost, calls_waited) },
    { "cltrace.device_paced_wait_ns", offsetof(struct rm_selfcost, paced_wait_ns) },
    { "cltrace.run_ns", offsetof(struct rm_selfcost, run_ns) },
    { "cltrace.writer_cpu_ns", offsetof(struct rm_selfcost, writer_cpu_ns) },
    { "cltrace.collector_cpu_ns", offsetof(struct rm_selfcost, collector_cpu_ns) },
    { "cltrace.exit_wait_ns", offsetof(struct rm_selfcost, exit_wait_ns) },
    { "cltrace.exit_regs_wait_ns", offsetof(struct rm_selfcost, exit_regs_wait_ns) },
    { "cltrace.exit_regs_not_in", offsetof(struct rm_selfcost, exit_regs_not_in) },
    { "cltrace.load_ns", offsetof(struct rm_selfcost, load_ns) },
    { "cltrace.exit_ns", offsetof(struct rm_selfcost, exit_ns) },
    { "cltrace.cpus", offsetof(struct rm_selfcost, cpus) },
    { "cltrace.process_cpu_ns", offsetof(struct rm_selfcost, process_cpu_ns) },
    { "cltrace.sched_span_ns", offsetof(struct rm_selfcost, sched_span_ns) },
    { "cltrace.sched_own_cpu_ns", offsetof(struct rm_selfcost, sched_own_cpu_ns) },
    { "cltrace.sched_app_cpu_ns", offsetof(struct rm_selfcost, sched_app_cpu_ns) },
    { "cltrace.sched_app_wait_ns", offsetof(struct rm_selfcost, sched_app_wait_ns) },
    { "cltrace.sched_own_runs", offsetof(struct rm_selfcost, sched_own_runs) },
    { "cltrace.sched_own_wakeups", offsetof(struct rm_selfcost, sched_own_wakeups) },
    { "cltrace.sched_app_runs", offsetof(struct rm_selfcost, sched_app_runs) },
    { "cltrace.queues_timed_by_callbacks", offsetof(struct rm_selfcost, queues_by_callbacks) },
};

void rm_selfcost_attr(struct rm_model *m, const char *key, int64_t v, const char *s)
{
    struct rm_selfcost *c = &m->self;
    for (unsigned i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(key, ints[i].key)) {
            *(uint64_t *)((char *)c + ints[i].off) = v > 0 ? (uint64_t)v : 0;
            c->known |= i == 0;
            c->exit_known |= !strcmp(key, "cltrace.exit_ns");
            c->sched_known |= !strcmp(key, "cltrace.sched_span_ns");
            c->runs_known |= !strcmp(key, "cltrace.sched_own_runs");
            c->wakeups_known |= !strcmp(key, "cltrace.sched_own_wakeups");
            c->samples_cpu_known |= !strcmp(key, "cltrace.self_cpu_samples_off_cpu_ns");
            c->self_ns = c->self_trace_ns + c->cpu_samples_ns;    /* the trace states the samples' apart */
            return;
        }
    if (machine_attr(c, key, v, s))
        return;
    if (!strncmp(key, "cltrace.sampled_out_transfer.", 29) && s) {
        rm_untimed_transfer(m, s);
        return;
    }
    /* "name|work_dim|g0,g1,g2|l0,l1,l2 or NULL|count": launches left untimed */
    if (strncmp(key, "cltrace.sampled_out.", 20) != 0 || !s)
        return;
    struct rm_kernel k;
    memset(&k, 0, sizeof k);
    char name[RM_MAX_NAME], lws[96];
    unsigned long long g[3], count;
    const char *bar = strchr(s, '|');
    if (!bar || (size_t)(bar - s) >= sizeof name)
        return;
    memcpy(name, s, (size_t)(bar - s));
    name[bar - s] = 0;
    if (sscanf(bar + 1, "%u|%llu,%llu,%llu|%95[^|]|%llu", &k.work_dim, &g[0], &g[1], &g[2], lws, &count) != 6)
        return;
    for (int i = 0; i < 3; i++)
        k.gws[i] = g[i];
    unsigned long long l[3];
    if (!strcmp(lws, "NULL"))
        k.local_null = 1;
    else if (sscanf(lws, "%llu,%llu,%llu", &l[0], &l[1], &l[2]) == 3)
        for (int i = 0; i < 3; i++)
            k.lws[i] = l[i];
    /* the same fields the device slices give (model.c) */
    uint64_t wg = 1, groups = 1;
    for (unsigned i = 0; i < k.work_dim && i < 3 && !k.local_null; i++) {
        wg *= k.lws[i] ? k.lws[i] : 1;
        groups *= k.lws[i] ? (k.gws[i] + k.lws[i] - 1) / k.lws[i] : 1;
    }
    struct rm_kernel *x = rm_kernel_find(m, name, &k);
    if (x) {
        if (!x->timed && !x->untimed) {
            x->wg_size = k.local_null ? 0 : wg;
            x->work_groups = k.local_null ? 0 : groups;
        }
        x->untimed += count;
    }
}

/* A sampled kernel's device time: its timed launches, its untimed ones drawn
 * where they ran (estimated slices) at their drawn length, and any other at
 * the mean of the timed ones after the first (a kernel's first launch
 * carries one-time setup: a JIT build, a cold cache). A configuration never
 * timed keeps 0 (unknown) and says so. */
void rm_extrapolate(struct rm_model *m)
{
    /* One-clock calls (clSetKernelArg, clRetain...): 1 in 64 carries its
     * duration; the others count at the mean of those. None measured: 0,
     * and the outputs say so. */
    for (unsigned i = 0; i < m->n_api; i++) {
        struct rm_api *a = &m->api[i];
        uint64_t timed = a->count - a->untimed;
        if (a->untimed && timed)
            a->total_ns += (uint64_t)((double)a->total_ns / (double)timed * (double)a->untimed);
        if (!timed)
            a->min_ns = 0;
    }
    for (unsigned i = 0; i < m->n_kernels; i++) {
        struct rm_kernel *k = &m->kernels[i];
        if (!k->untimed)
            continue;
        double mean = k->timed > 1 ? (double)(k->device_ns - k->first_ns) / (double)(k->timed - 1)
                                   : (double)k->device_ns;
        /* the untimed launches drawn where they ran: their time as the timeline has it (sized by the timed
         * ones around them, within the gaps the timed ones left); the rest at the mean */
        uint64_t est = k->est_n < k->untimed ? k->est_n : k->untimed;
        if (k->timed)
            k->device_ns += k->est_ns + (uint64_t)(mean * (double)(k->untimed - est));
        k->launches = k->timed + k->untimed;
    }
}

