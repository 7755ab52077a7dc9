/* What cltrace itself added to the run, and what sampling left untimed, as
 * the trace states them (TRACE_FORMAT.md, "cltrace's own cost"); shown in
 * every output format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

/* "cltrace added 0.41 s (12 %) to this run": on the calling threads. */
static void sentence(const struct rm_model *m, char *buf, size_t cap)
{
    const struct rm_selfcost *c = &m->self;
    double pct = c->run_ns ? 100.0 * (double)c->self_ns / (double)c->run_ns : 0;
    snprintf(buf, cap,
             "cltrace added %.3f s (%.1f %%) to this run on the app's threads: %.3f s recording calls, "
             "%.3f s device timing (events it asked for), %.3f s waiting for the writer (%llu calls waited); "
             "at exit it held the app %.3f s more, collecting device times; "
             "its own threads used %.3f s CPU (writer %.3f, collector %.3f); device timing: %s",
             c->self_ns / 1e9, pct, c->hot_ns / 1e9, c->device_timing_ns / 1e9, c->waited_ns / 1e9,
             (unsigned long long)c->calls_waited, c->exit_wait_ns / 1e9, (c->writer_cpu_ns + c->collector_cpu_ns) / 1e9,
             c->writer_cpu_ns / 1e9, c->collector_cpu_ns / 1e9,
             !c->sampling[0] || !strcmp(c->sampling, "off") ? "every command timed" : c->sampling);
}

void selfcost_text(FILE *o, const struct rm_model *m, int markdown)
{
    char s[800];
    if (!m->self.known) {
        fprintf(o, markdown ? "> cltrace's own cost: not stated in this trace (cut short, or an older cltrace)\n\n"
                            : "cltrace's own cost: not stated in this trace (cut short, or an older cltrace)\n\n");
        return;
    }
    sentence(m, s, sizeof s);
    fprintf(o, markdown ? "> %s\n" : "%s\n", s);
    for (unsigned i = 0; i < m->n_dev; i++)
        if (m->dev[i].clock_method[0]) {
            char c[300];
            selfcost_clock(&m->dev[i], c, sizeof c);
            fprintf(o, markdown ? "> device %u (%s): %s\n" : "device %u (%s): %s\n", i, m->dev[i].name, c);
        }
    fputc('\n', o);
}

/* "clock residual 5.2 us at most, 4.9 us the median command; its evidence
 * never narrower than 4.9 us (marker_brackets+enqueue_brackets)": the
 * floor tells a residual at the driver's limit from one cltrace could
 * have narrowed (an older trace has none). */
void selfcost_clock(const struct rm_device *d, char *buf, size_t cap)
{
    char at_floor[80] = "";
    if (d->clock_floor_ns > 0)
        snprintf(at_floor, sizeof at_floor, "; its evidence never narrower than %.1f us", d->clock_floor_ns / 1e3);
    snprintf(buf, cap, "clock residual %.1f us at most, %.1f us the median command%s (%s)", d->clock_residual_ns / 1e3,
             d->clock_residual_median_ns / 1e3, at_floor, d->clock_method[0] ? d->clock_method : "no clock evidence");
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

/* The API table's note on a function whose durations were measured for a
 * sample of its calls only (one-clock calls): "" otherwise. */
void selfcost_api_note(const struct rm_api *a, char *buf, size_t cap)
{
    if (!a->untimed)
        snprintf(buf, cap, "%s", "");
    else if (a->untimed == a->count)
        snprintf(buf, cap, " (durations of none of %llu calls measured)", (unsigned long long)a->count);
    else
        snprintf(buf, cap, " (durations of %llu of %llu calls measured, total extrapolated)",
                 (unsigned long long)(a->count - a->untimed), (unsigned long long)a->count);
}

void selfcost_json(FILE *o, const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    char s[800];
    fprintf(o, ",\"self_cost\":{\"known\":%s", c->known ? "true" : "false");
    if (c->known) {
        sentence(m, s, sizeof s);
        fprintf(o, ",\"self_ns\":%llu,\"hot_path_ns\":%llu,\"device_timing_ns\":%llu,\"waited_ns\":%llu,"
                   "\"calls_waited\":%llu,\"run_ns\":%llu,\"percent\":%.2f,\"writer_cpu_ns\":%llu,"
                   "\"collector_cpu_ns\":%llu,\"exit_wait_ns\":%llu,\"sampling\":",
                (unsigned long long)c->self_ns, (unsigned long long)c->hot_ns,
                (unsigned long long)c->device_timing_ns, (unsigned long long)c->waited_ns,
                (unsigned long long)c->calls_waited, (unsigned long long)c->run_ns,
                c->run_ns ? 100.0 * (double)c->self_ns / (double)c->run_ns : 0.0,
                (unsigned long long)c->writer_cpu_ns, (unsigned long long)c->collector_cpu_ns,
                (unsigned long long)c->exit_wait_ns);
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
        fprintf(o, ",\"clock_residual_ns\":%lld,\"clock_residual_median_ns\":%lld,\"clock_floor_ns\":%lld,"
                   "\"clock_markers\":%lld,"
                   "\"clock_contradictions\":%lld,\"event_cost_ns\":%lld,\"own_events\":%lld,\"sampled_out\":%lld}",
                (long long)d->clock_residual_ns, (long long)d->clock_residual_median_ns, (long long)d->clock_floor_ns,
                (long long)d->clock_markers,
                (long long)d->clock_contradictions,
                (long long)d->event_cost_ns, (long long)d->own_events, (long long)d->sampled_out);
    }
    fputc(']', o);
}

void selfcost_junit(FILE *o, const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    if (!c->known)
        return;
    char s[800];
    sentence(m, s, sizeof s);
    fprintf(o, "    <property name=\"cltrace.self_ns\" value=\"%llu\"/>\n", (unsigned long long)c->self_ns);
    fprintf(o, "    <property name=\"cltrace.self_percent\" value=\"%.2f\"/>\n",
            c->run_ns ? 100.0 * (double)c->self_ns / (double)c->run_ns : 0.0);
    fprintf(o, "    <property name=\"cltrace.self_cost\" value=\"");
    xml_text(o, s);
    fputs("\"/>\n", o);
    for (unsigned i = 0; i < m->n_dev; i++) {
        fprintf(o, "    <property name=\"cltrace.device.%u.clock_residual_ns\" value=\"%lld\"/>\n", i,
                (long long)m->dev[i].clock_residual_ns);
        fprintf(o, "    <property name=\"cltrace.device.%u.clock_floor_ns\" value=\"%lld\"/>\n", i,
                (long long)m->dev[i].clock_floor_ns);
    }
}

void selfcost_html(FILE *o, const struct rm_model *m)
{
    char s[800];
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
