/* What cltrace itself added to the run, and what sampling left untimed, as
 * the trace states them (TRACE_FORMAT.md, "cltrace's own cost"); shown in
 * every output format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

void rm_selfcost_attr(struct rm_model *m, const char *key, int64_t v, const char *s)
{
    static const struct { const char *key; size_t off; } ints[] = {
        { "cltrace.self_ns", offsetof(struct rm_selfcost, self_ns) },
        { "cltrace.self_hot_path_ns", offsetof(struct rm_selfcost, hot_ns) },
        { "cltrace.self_device_timing_ns", offsetof(struct rm_selfcost, device_timing_ns) },
        { "cltrace.self_waited_ns", offsetof(struct rm_selfcost, waited_ns) },
        { "cltrace.calls_waited", offsetof(struct rm_selfcost, calls_waited) },
        { "cltrace.run_ns", offsetof(struct rm_selfcost, run_ns) },
        { "cltrace.writer_cpu_ns", offsetof(struct rm_selfcost, writer_cpu_ns) },
        { "cltrace.collector_cpu_ns", offsetof(struct rm_selfcost, collector_cpu_ns) },
    };
    struct rm_selfcost *c = &m->self;
    for (unsigned i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(key, ints[i].key)) {
            *(uint64_t *)((char *)c + ints[i].off) = v > 0 ? (uint64_t)v : 0;
            c->known |= i == 0;
            return;
        }
    if (!strcmp(key, "cltrace.sampling") && s) {
        snprintf(c->sampling, sizeof c->sampling, "%s", s);
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

/* A sampled kernel's device time: its timed launches plus each untimed one
 * at the mean of the timed ones after the first (a kernel's first launch
 * carries one-time setup: a JIT build, a cold cache). A configuration never
 * timed keeps 0 (unknown) and says so. */
void rm_extrapolate(struct rm_model *m)
{
    for (unsigned i = 0; i < m->n_kernels; i++) {
        struct rm_kernel *k = &m->kernels[i];
        if (!k->untimed)
            continue;
        double mean = k->timed > 1 ? (double)(k->device_ns - k->first_ns) / (double)(k->timed - 1)
                                   : (double)k->device_ns;
        if (k->timed)
            k->device_ns += (uint64_t)(mean * (double)k->untimed);
        k->launches = k->timed + k->untimed;
    }
}

/* "cltrace added 0.41 s (12 %) to this run": on the calling threads. */
static void sentence(const struct rm_model *m, char *buf, size_t cap)
{
    const struct rm_selfcost *c = &m->self;
    double pct = c->run_ns ? 100.0 * (double)c->self_ns / (double)c->run_ns : 0;
    snprintf(buf, cap,
             "cltrace added %.3f s (%.1f %%) to this run on the app's threads: %.3f s recording calls, "
             "%.3f s device timing (events it asked for), %.3f s waiting for the writer (%llu calls waited); "
             "its own threads used %.3f s CPU (writer %.3f, collector %.3f); device timing: %s",
             c->self_ns / 1e9, pct, c->hot_ns / 1e9, c->device_timing_ns / 1e9, c->waited_ns / 1e9,
             (unsigned long long)c->calls_waited, (c->writer_cpu_ns + c->collector_cpu_ns) / 1e9,
             c->writer_cpu_ns / 1e9, c->collector_cpu_ns / 1e9,
             !c->sampling[0] || !strcmp(c->sampling, "off") ? "every command timed" : c->sampling);
}

void selfcost_text(FILE *o, const struct rm_model *m, int markdown)
{
    char s[600];
    if (!m->self.known) {
        fprintf(o, markdown ? "> cltrace's own cost: not stated in this trace (cut short, or an older cltrace)\n\n"
                            : "cltrace's own cost: not stated in this trace (cut short, or an older cltrace)\n\n");
        return;
    }
    sentence(m, s, sizeof s);
    fprintf(o, markdown ? "> %s\n" : "%s\n", s);
    for (unsigned i = 0; i < m->n_dev; i++)
        if (m->dev[i].clock_method[0])
            fprintf(o, markdown ? "> device %u (%s): clock residual %.1f µs (%s)\n"
                                : "device %u (%s): clock residual %.1f us (%s)\n",
                    i, m->dev[i].name, m->dev[i].clock_residual_ns / 1e3, m->dev[i].clock_method);
    fputc('\n', o);
}

/* The kernel table's note on a sampled kernel ("" when not sampled). */
void selfcost_kernel_note(const struct rm_kernel *k, char *buf, size_t cap)
{
    if (!k->untimed)
        snprintf(buf, cap, "%s", "");
    else if (!k->timed)
        snprintf(buf, cap, " (none of %llu launches timed: not estimated)", (unsigned long long)k->launches);
    else
        snprintf(buf, cap, " (extrapolated from %llu of %llu launches)", (unsigned long long)k->timed,
                 (unsigned long long)k->launches);
}

void selfcost_json(FILE *o, const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    char s[600];
    fprintf(o, ",\"self_cost\":{\"known\":%s", c->known ? "true" : "false");
    if (c->known) {
        sentence(m, s, sizeof s);
        fprintf(o, ",\"self_ns\":%llu,\"hot_path_ns\":%llu,\"device_timing_ns\":%llu,\"waited_ns\":%llu,"
                   "\"calls_waited\":%llu,\"run_ns\":%llu,\"percent\":%.2f,\"writer_cpu_ns\":%llu,"
                   "\"collector_cpu_ns\":%llu,\"sampling\":",
                (unsigned long long)c->self_ns, (unsigned long long)c->hot_ns,
                (unsigned long long)c->device_timing_ns, (unsigned long long)c->waited_ns,
                (unsigned long long)c->calls_waited, (unsigned long long)c->run_ns,
                c->run_ns ? 100.0 * (double)c->self_ns / (double)c->run_ns : 0.0,
                (unsigned long long)c->writer_cpu_ns, (unsigned long long)c->collector_cpu_ns);
        json_str(o, c->sampling[0] ? c->sampling : "off");
        fprintf(o, ",\"text\":");
        json_str(o, s);
    }
    fprintf(o, "},\"devices\":[");
    for (unsigned i = 0; i < m->n_dev; i++) {
        const struct rm_device *d = &m->dev[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, d->name);
        fprintf(o, ",\"clock_method\":");
        json_str(o, d->clock_method);
        fprintf(o, ",\"clock_residual_ns\":%lld,\"event_cost_ns\":%lld,\"own_events\":%lld,\"sampled_out\":%lld}",
                (long long)d->clock_residual_ns, (long long)d->event_cost_ns, (long long)d->own_events,
                (long long)d->sampled_out);
    }
    fputc(']', o);
}

void selfcost_junit(FILE *o, const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    if (!c->known)
        return;
    char s[600];
    sentence(m, s, sizeof s);
    fprintf(o, "    <property name=\"cltrace.self_ns\" value=\"%llu\"/>\n", (unsigned long long)c->self_ns);
    fprintf(o, "    <property name=\"cltrace.self_percent\" value=\"%.2f\"/>\n",
            c->run_ns ? 100.0 * (double)c->self_ns / (double)c->run_ns : 0.0);
    fprintf(o, "    <property name=\"cltrace.self_cost\" value=\"");
    xml_text(o, s);
    fputs("\"/>\n", o);
    for (unsigned i = 0; i < m->n_dev; i++)
        fprintf(o, "    <property name=\"cltrace.device.%u.clock_residual_ns\" value=\"%lld\"/>\n", i,
                (long long)m->dev[i].clock_residual_ns);
}

void selfcost_html(FILE *o, const struct rm_model *m)
{
    char s[600];
    if (!m->self.known) {
        fprintf(o, "<p class=note>cltrace's own cost: not stated in this trace (cut short, or an older "
                   "cltrace)</p>\n");
        return;
    }
    sentence(m, s, sizeof s);
    fputs("<p class=selfcost>", o);
    xml_text(o, s);
    fputs("</p>\n", o);
}
