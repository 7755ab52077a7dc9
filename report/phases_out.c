/* The phases table in every output format (figures: phases.c). */
#include <stdio.h>
#include <string.h>
#include "phases.h"
#include "report.h"

static unsigned findings_in(const struct rm_model *m, int idx)
{
    unsigned n = 0;
    for (unsigned i = 0; i < n_findings; i++)
        n += findings[i].phase >= 0 && rm_phase_within(m, findings[i].phase, idx);
    return n;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

static uint64_t api_total(const struct rm_model *m)
{
    uint64_t ns = 0;
    for (unsigned i = 0; i < m->n_api; i++)
        ns += m->api[i].total_ns;
    return ns;
}

/* The phases in tree order: each phase followed by its children. */
static unsigned tree_order(const struct rm_model *m, int parent, unsigned *out, unsigned n)
{
    for (unsigned i = 0; i < m->n_phases; i++)
        if (m->phases[i].parent == parent) {
            out[n++] = i;
            n = tree_order(m, (int)i, out, n);
        }
    return n;
}

void phases_text(FILE *o, const struct rm_model *m, int markdown)
{
    if (!m->n_phases)
        return;
    unsigned order[RM_MAX_PHASES], n = tree_order(m, -1, order, 0);
    uint64_t api = api_total(m), dev = m->phase_device_ns;
    if (markdown)
        fprintf(o, "\n**Phases** (ranges the program marked; nested phases included)\n\n"
                   "| phase | times | wall ms | API ms | %% API | device ms | %% device | transfers | bytes | findings |\n"
                   "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(o, "\nPhases (ranges the program marked; nested phases included)\n  %-28s %6s %10s %10s %6s %10s %8s %9s %12s %8s\n",
                "phase", "times", "wall ms", "API ms", "% API", "device ms", "% device", "transfers", "bytes", "findings");
    for (unsigned k = 0; k < n; k++) {
        const struct rm_phase *p = &m->phases[order[k]];
        char label[300];
        snprintf(label, sizeof label, "%*s%s", markdown ? 0 : 2 * p->depth, "", markdown ? p->path : p->name);
        if (markdown) {
            fputs("| ", o);
            for (const char *c = label; *c; c++)
                fputs(*c == '|' ? "\\|" : *c == '<' ? "&lt;" : (char[2]){ *c, 0 }, o);
            fprintf(o, " | %llu | %.3f | %.3f | %.1f | %.3f | %.1f | %llu | %llu | %u |\n",
                    (unsigned long long)p->entered, p->wall_ns / 1e6, p->api_ns / 1e6, pct(p->api_ns, api),
                    p->device_ns / 1e6, pct(p->device_ns, dev), (unsigned long long)p->transfers,
                    (unsigned long long)p->transfer_bytes, findings_in(m, (int)order[k]));
        } else {
            fprintf(o, "  %-28s %6llu %10.3f %10.3f %6.1f %10.3f %8.1f %9llu %12llu %8u\n", label,
                    (unsigned long long)p->entered, p->wall_ns / 1e6, p->api_ns / 1e6, pct(p->api_ns, api),
                    p->device_ns / 1e6, pct(p->device_ns, dev), (unsigned long long)p->transfers,
                    (unsigned long long)p->transfer_bytes, findings_in(m, (int)order[k]));
        }
    }
    /* the one line a reader wants: where the device time went */
    int top = -1;
    for (unsigned i = 0; i < m->n_phases; i++)
        if (m->phases[i].parent < 0 && (top < 0 || m->phases[i].device_ns > m->phases[top].device_ns))
            top = (int)i;
    if (top >= 0 && dev)
        fprintf(o, markdown ? "\nphase **%s**: %.0f %% of device time, %u finding(s)\n"
                            : "  phase %s: %.0f %% of device time, %u finding(s)\n",
                m->phases[top].path, pct(m->phases[top].device_ns, dev), findings_in(m, top));
}

void phases_json(FILE *o, const struct rm_model *m)
{
    uint64_t api = api_total(m), dev = m->phase_device_ns;
    fputs(",\"phases\":[", o);
    for (unsigned i = 0; i < m->n_phases; i++) {
        const struct rm_phase *p = &m->phases[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, p->name);
        fputs(",\"path\":", o);
        json_str(o, p->path);
        fprintf(o, ",\"parent\":%d,\"times\":%llu,\"wall_ns\":%llu,\"calls\":%llu,\"api_ns\":%llu,\"api_pct\":%.2f,"
                   "\"device_ns\":%llu,\"device_pct\":%.2f,\"kernel_ns\":%llu,\"transfers\":%llu,\"transfer_bytes\":%llu,"
                   "\"errors\":%llu,\"findings\":%u}",
                p->parent, (unsigned long long)p->entered, (unsigned long long)p->wall_ns,
                (unsigned long long)p->calls, (unsigned long long)p->api_ns, pct(p->api_ns, api),
                (unsigned long long)p->device_ns, pct(p->device_ns, dev), (unsigned long long)p->kernel_ns,
                (unsigned long long)p->transfers, (unsigned long long)p->transfer_bytes,
                (unsigned long long)p->errors, findings_in(m, (int)i));
    }
    fputc(']', o);
}

void phases_junit(FILE *o, const struct rm_model *m)
{
    if (!m->n_phases)
        return;
    uint64_t dev = m->phase_device_ns;
    for (unsigned i = 0; i < m->n_phases; i++) {
        const struct rm_phase *p = &m->phases[i];
        fputs("    <property name=\"phase.", o);
        xml_text(o, p->path);
        fprintf(o, "\" value=\"api_ms=%.3f device_ms=%.3f device_pct=%.1f transfer_bytes=%llu findings=%u\"/>\n",
                p->api_ns / 1e6, p->device_ns / 1e6, pct(p->device_ns, dev), (unsigned long long)p->transfer_bytes,
                findings_in(m, (int)i));
    }
}

void phases_html(FILE *o, const struct rm_model *m)
{
    if (!m->n_phases)
        return;
    unsigned order[RM_MAX_PHASES], n = tree_order(m, -1, order, 0);
    uint64_t api = api_total(m), dev = m->phase_device_ns;
    fputs("<h2>Phases</h2>\n<p>Ranges the program marked (cltrace.h); nested phases included.</p>\n<table>"
          "<tr><th>phase</th><th>times</th><th>wall ms</th><th>API ms</th><th>% API</th><th>device ms</th>"
          "<th>% device</th><th>transfers</th><th>bytes</th><th>findings</th></tr>\n", o);
    for (unsigned k = 0; k < n; k++) {
        const struct rm_phase *p = &m->phases[order[k]];
        fprintf(o, "<tr><td style=\"padding-left:%dem\">", 1 + 2 * p->depth);
        xml_text(o, p->name);
        fprintf(o, "</td><td>%llu</td><td>%.3f</td><td>%.3f</td><td>%.1f</td><td>%.3f</td><td>%.1f</td>"
                   "<td>%llu</td><td>%llu</td><td>%u</td></tr>\n",
                (unsigned long long)p->entered, p->wall_ns / 1e6, p->api_ns / 1e6, pct(p->api_ns, api),
                p->device_ns / 1e6, pct(p->device_ns, dev), (unsigned long long)p->transfers,
                (unsigned long long)p->transfer_bytes, findings_in(m, (int)order[k]));
    }
    fputs("</table>\n", o);
}
