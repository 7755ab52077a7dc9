/* What the host ran while the device waited (model/host.c), said on the
 * findings about the device's idle time: device-idle, serialization,
 * mpi-wait-idle-device. "the device idled 465.000 ms; thread 4242 (the
 * main thread) was on the CPU for 96 % of it: prepare_batch (host_gap.c:12)
 * 91 %, clWaitForEvents 4 %; off the CPU 4 %: in clFinish 3 %". */
#include <stdio.h>
#include <string.h>
#include "rules.h"

void finding_host(const struct rm_model *m, struct finding *f)
{
    const struct rm_host *h = &m->hostcpu;
    if (!h->period_ns || !h->gap_ns)
        return;             /* the trace has no CPU samples, or the device no idle time */
    f->host = 1;
    char line[1024];
    size_t n = (size_t)snprintf(line, sizeof line, "the device idled %.3f ms", h->gap_ns / 1e6);
    if (!h->busiest_samples) {
        snprintf(line + n, sizeof line - n, "; no thread of the program was on the CPU then (no sample in it)");
        finding_set(&f->numbers, "%s; %s", f->numbers, line);
        return;
    }
    n += (size_t)snprintf(line + n, sizeof line - n, "; thread %u%s was on the CPU for %.0f %% of it:",
                          h->busiest_tid, m->pid && h->busiest_tid == (uint32_t)m->pid ? " (the main thread)" : "",
                          100 * h->on_cpu_share);
    for (unsigned i = 0; i < h->n_top && i < 3 && n < sizeof line; i++) {
        char where[200];
        rm_host_where(&h->top[i], where, sizeof where);
        int from = !strncmp(where, "from ", 5) || !where[0];
        n += (size_t)snprintf(line + n, sizeof line - n, "%s %s%s%s%s %.0f %%", i ? "," : "", h->top[i].function,
                              from ? (where[0] ? " " : "") : " (", where, from ? "" : ")", 100 * h->top[i].share);
    }
    if (h->on_cpu_share < 0.995 && n < sizeof line) {
        n += (size_t)snprintf(line + n, sizeof line - n, "; off the CPU %.0f %%", 100 * (1 - h->on_cpu_share));
        for (unsigned i = 0; i < h->n_blocked && n < sizeof line && h->blocked[i].share >= 0.005; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s in %s %.0f %%", i ? "," : ":", h->blocked[i].name,
                                  100 * h->blocked[i].share);
    }
    finding_set(&f->numbers, "%s; %s", f->numbers, line);
}
