/* Output formats: text (terminals), JSON (machines), Markdown (a CI step
 * summary), JUnit (each rule a test case). HTML is in html.c. */
#include <stdio.h>
#include <string.h>
#include "job.h"
#include "report.h"

void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

const char *const bucket_name[RM_BUCKETS] = { "<4K", "4K-32K", "32K-256K", "256K-2M", "2M-16M", ">=16M" };

/* Transfers by direction and size bucket: count, bytes, time, GB/s. */
static void transfers_text(FILE *o, const struct rm_model *m, int markdown)
{
    static const char *const dir[RM_DIRS] = { "host to device", "device to host", "device to device", "fill" };
    int any = 0;
    for (int d = 0; d < RM_DIRS; d++)
        for (int k = 0; k < RM_BUCKETS; k++)
            if (m->xfer.count[d][k] && !any++)
                fprintf(o, markdown ? "\n| transfers | size | count | bytes | µs | GB/s |\n|---|---|---:|---:|---:|---:|\n"
                                    : "\nTransfers\n  %-18s %-9s %9s %14s %12s %8s\n",
                        "direction", "size", "count", "bytes", "us", "GB/s");
    for (int d = 0; d < RM_DIRS; d++)
        for (int k = 0; k < RM_BUCKETS; k++) {
            uint64_t c = m->xfer.count[d][k], b = m->xfer.bytes[d][k], ns = m->xfer.ns[d][k];
            if (c)
                fprintf(o, markdown ? "| %s | %s | %llu | %llu | %.1f | %.2f |\n" : "  %-18s %-9s %9llu %14llu %12.1f %8.2f\n",
                        dir[d], bucket_name[k], (unsigned long long)c, (unsigned long long)b, ns / 1e3,
                        ns ? (double)b / (double)ns : 0.0);
        }
    if (any)
        fprintf(o, markdown ? "\nSmall transfers: below %llu bytes (%s).\n" : "  small: below %llu bytes (%s)\n",
                (unsigned long long)m->small_threshold, small_source(m));
}

void out_json(FILE *o, const struct rm_model *m)
{
    fprintf(o, "{\"schema\":\"cltrace-report/1\",\"truncated\":%s,\"packets\":%llu,\"api\":[",
            m->truncated || !m->has_attributes ? "true" : "false", (unsigned long long)m->packets);
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, a->name);
        fprintf(o, ",\"count\":%llu,\"errors\":%llu,\"total_ns\":%llu,\"mean_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,"
                   "\"timed\":%llu}",
                (unsigned long long)a->count, (unsigned long long)a->errors, (unsigned long long)a->total_ns,
                (unsigned long long)(a->count ? a->total_ns / a->count : 0), (unsigned long long)a->min_ns,
                (unsigned long long)a->max_ns, (unsigned long long)(a->count - a->untimed));
    }
    char occ[400];
    occ_model_note(m, occ, sizeof occ);
    fprintf(o, "],\"occupancy_model\":");
    json_str(o, occ);
    const struct rm_timeline *tl = &m->tl;     /* the span gains are a share of */
    fprintf(o, ",\"timeline\":{\"span_ns\":%llu,\"idle_ns\":%llu,\"kernel_ns\":%llu,\"transfer_ns\":%llu}",
            (unsigned long long)rm_timeline_span(tl),
            (unsigned long long)tl->idle_ns, (unsigned long long)tl->kernel_ns, (unsigned long long)tl->transfer_ns);
    fprintf(o, ",\"small_transfers\":{\"below_bytes\":%llu,\"source\":", (unsigned long long)m->small_threshold);
    json_str(o, small_source(m));
    fputc('}', o);
    fprintf(o, ",\"kernels\":[");
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, k->name);
        fprintf(o, ",\"launches\":%llu,\"device_ns\":%llu,\"work_group_size\":%llu,\"local_null\":%s,\"work_groups\":%llu,"
                   "\"timed_launches\":%llu,\"extrapolated\":%s}",
                (unsigned long long)k->launches, (unsigned long long)k->device_ns, (unsigned long long)k->wg_size,
                k->local_null ? "true" : "false", (unsigned long long)k->work_groups, (unsigned long long)k->timed,
                k->untimed ? "true" : "false");
    }
    static const char *const dirs[RM_DIRS] = { "host_to_device", "device_to_host", "device_to_device", "fill" };
    fprintf(o, "],\"transfers\":{");
    for (int d = 0; d < RM_DIRS; d++) {
        uint64_t c = 0, b = 0, ns = 0;
        for (int k = 0; k < RM_BUCKETS; k++) {
            c += m->xfer.count[d][k];
            b += m->xfer.bytes[d][k];
            ns += m->xfer.ns[d][k];
        }
        fprintf(o, "%s\"%s\":{\"count\":%llu,\"bytes\":%llu,\"ns\":%llu,\"gbps\":%.3f,\"buckets\":[",
                d ? "," : "", dirs[d], (unsigned long long)c, (unsigned long long)b, (unsigned long long)ns,
                ns ? (double)b / (double)ns : 0.0);
        for (int k = 0; k < RM_BUCKETS; k++)
            fprintf(o, "%s{\"size\":\"%s\",\"count\":%llu,\"bytes\":%llu,\"ns\":%llu}", k ? "," : "",
                    bucket_name[k], (unsigned long long)m->xfer.count[d][k], (unsigned long long)m->xfer.bytes[d][k],
                    (unsigned long long)m->xfer.ns[d][k]);
        fputs("]}", o);
    }
    fprintf(o, "},\"findings\":[");
    for (unsigned i = 0; i < n_findings; i++) {
        const struct finding *f = &findings[i];
        fprintf(o, "%s{\"rule\":\"%s\",\"severity\":\"%s\",\"where\":", i ? "," : "", f->rule, sev_name[f->sev]);
        json_str(o, f->where);
        fprintf(o, ",\"numbers\":");
        json_str(o, f->numbers);
        fprintf(o, ",\"fix\":");
        json_str(o, f->fix);
        fprintf(o, ",\"phase\":");
        json_str(o, f->phase >= 0 ? m->phases[f->phase].path : "");
        if (f->gain_ns >= 0) {
            fprintf(o, ",\"estimated_gain_ns\":%.0f,\"estimated_gain_percent\":%.2f,\"gain_method\":", f->gain_ns,
                    finding_gain_percent(m, f));
            json_str(o, f->gain_method);
        } else {
            fprintf(o, ",\"estimated_gain_ns\":null");
            if (f->gain_method[0]) {      /* why not */
                fprintf(o, ",\"gain_method\":");
                json_str(o, f->gain_method);
            }
        }
        fputc('}', o);
    }
    fputc(']', o);
    selfcost_json(o, m);
    phases_json(o, m);
    if (job_ranks() > 1)
        job_json(o);
    fprintf(o, "}\n");
}

/* A finding's "where" for a person reading a terminal or a CI summary: its
 * first WHERE_FRAMES frames (innermost first: where the call was made), the
 * rest counted; JSON and HTML keep the whole stack. A 17-frame chain that
 * ends in an interpreter's own functions tells a reader nothing more. */
#define WHERE_FRAMES 4
static const char *where_short(const char *where, char *buf, size_t cap)
{
    const char *p = where;
    for (unsigned n = 0; n < WHERE_FRAMES && (p = strstr(p, " <- ")) != NULL; n++)
        p += 4;
    if (!p)
        return where;
    unsigned more = 1;
    for (const char *q = p; (q = strstr(q, " <- ")) != NULL; q += 4)
        more++;
    snprintf(buf, cap, "%.*s <- ... (%u more frame%s in the JSON and HTML reports)", (int)(p - 4 - where), where, more,
             more == 1 ? "" : "s");
    return buf;
}

void out_text(FILE *o, const struct rm_model *m)
{
    if (m->dropped_calls)
        fprintf(o, "WARNING: %llu calls were dropped while tracing; every count below is short by them\n\n",
                (unsigned long long)m->dropped_calls);
    selfcost_text(o, m, 0);
    fprintf(o, "API calls%s\n  %-36s %9s %7s %12s %10s %10s %10s\n",
            m->truncated || !m->has_attributes ? " (trace cut short: the app did not exit cleanly)" : "",
            "function", "count", "errors", "total us", "mean us", "min us", "max us");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        char note[96];
        selfcost_api_note(a, note, sizeof note);
        fprintf(o, "  %-36s %9llu %7llu %12.1f %10.2f %10.2f %10.2f%s\n", a->name, (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0,
                a->min_ns / 1e3, a->max_ns / 1e3, note);
    }
    if (m->n_kernels) {
        fprintf(o, "\nKernels\n  %-48s %9s %12s\n", "kernel and launch configuration", "launches", "device us");
        for (unsigned i = 0; i < m->n_kernels; i++) {
            char cfg[160], note[96];
            kernel_config(&m->kernels[i], cfg, sizeof cfg);
            selfcost_kernel_note(&m->kernels[i], note, sizeof note);
            fprintf(o, "  %-48s %9llu %12.1f%s\n", cfg, (unsigned long long)m->kernels[i].launches,
                    m->kernels[i].device_ns / 1e3, note);
        }
        char occ[400];
        occ_model_note(m, occ, sizeof occ);
        fprintf(o, "  %s\n", occ);
    }
    transfers_text(o, m, 0);
    phases_text(o, m, 0);
    fprintf(o, "\nFindings: %u\n", n_findings);
    for (unsigned i = 0; i < n_findings; i++) {
        const struct finding *f = &findings[i];
        char shortw[sizeof f->where + 80];
        fprintf(o, "  [%s] %s: %s\n      %s\n      fix: %s\n", sev_name[f->sev], f->rule,
                where_short(f->where, shortw, sizeof shortw), f->numbers, f->fix);
        if (f->gain_ns >= 0)
            fprintf(o, "      estimated gain: %.3f ms (%.1f %% of the device timeline): %s\n",
                    f->gain_ns / 1e6, finding_gain_percent(m, f), f->gain_method);
        else if (f->gain_method[0])
            fprintf(o, "      estimated gain: %s\n", f->gain_method);
        if (f->phase >= 0)
            fprintf(o, "      phase: %s\n", m->phases[f->phase].path);
    }
}

/* Markdown: fits a CI step summary. Table cells: '|' and newlines escaped. */
static void md_cell(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", o);
        else if (*s == '\n')
            fputc(' ', o);
        else if (*s == '<')
            fputs("&lt;", o);
        else
            fputc(*s, o);
    }
}

void out_markdown(FILE *o, const struct rm_model *m)
{
    fprintf(o, "## cltrace report\n\n");
    if (m->truncated || !m->has_attributes)
        fprintf(o, "> The trace was cut short (the app crashed or was killed): this reports what it holds.\n\n");
    if (job_ranks() > 1)
        job_text(o, 1);
    selfcost_text(o, m, 1);
    fprintf(o, "**%u finding(s)**\n\n", n_findings);
    if (n_findings) {
        fprintf(o, "| severity | rule | where | numbers | fix |\n|---|---|---|---|---|\n");
        for (unsigned i = 0; i < n_findings; i++) {
            const struct finding *f = &findings[i];
            fprintf(o, "| %s | `%s` | ", sev_name[f->sev], f->rule);
            char shortw[sizeof f->where + 80];
            md_cell(o, where_short(f->where, shortw, sizeof shortw));
            fputs(" | ", o);
            md_cell(o, f->numbers);
            fputs(" | ", o);
            md_cell(o, f->fix);
            if (f->gain_ns >= 0)
                fprintf(o, " (estimated gain %.3f ms, %.1f %%)", f->gain_ns / 1e6, finding_gain_percent(m, f));
            fputs(" |\n", o);
        }
        fputc('\n', o);
    }
    fprintf(o, "| API function | calls | errors | total µs | mean µs |\n|---|---:|---:|---:|---:|\n");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        char note[96];
        selfcost_api_note(a, note, sizeof note);
        fprintf(o, "| `%s`%s | %llu | %llu | %.1f | %.2f |\n", a->name, note, (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0);
    }
    if (m->n_kernels) {
        fprintf(o, "\n| kernel and launch configuration | launches | device µs |\n|---|---:|---:|\n");
        for (unsigned i = 0; i < m->n_kernels; i++) {
            char cfg[160], note[96];
            kernel_config(&m->kernels[i], cfg, sizeof cfg);
            selfcost_kernel_note(&m->kernels[i], note, sizeof note);
            fputs("| ", o);
            md_cell(o, cfg);
            fprintf(o, " | %llu | %.1f%s |\n", (unsigned long long)m->kernels[i].launches,
                    m->kernels[i].device_ns / 1e3, note);
        }
        char occ[400];
        occ_model_note(m, occ, sizeof occ);
        fputs("\n", o);
        md_cell(o, occ);
        fputs("\n", o);
    }
    transfers_text(o, m, 1);
    phases_text(o, m, 1);
}

void xml_text(FILE *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, o);
        }
    }
}

/* JUnit: each rule a test case; it fails when it has a finding at or over
 * `fail_at` (warning unless --fail-on says otherwise). */
void out_junit(FILE *o, const struct rm_model *m, int fail_at)
{
    unsigned N_RULES = 0, failures = 0;
    while (all_rules[N_RULES])
        N_RULES++;
    for (unsigned r = 0; r < N_RULES; r++)
        for (unsigned i = 0; i < n_findings; i++)
            if (!strcmp(findings[i].rule, all_rules[r]) && (int)findings[i].sev >= fail_at) {
                failures++;
                break;
            }
    fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
               "<testsuite name=\"cltrace-report\" tests=\"%u\" failures=\"%u\">\n", (unsigned)N_RULES, failures);
    if (m->n_phases || job_ranks() > 1 || m->self.known) {
        fputs("  <properties>\n", o);
        selfcost_junit(o, m);
        phases_junit(o, m);
        if (job_ranks() > 1)
            job_junit(o);
        fputs("  </properties>\n", o);
    }
    for (unsigned r = 0; r < N_RULES; r++) {
        fprintf(o, "  <testcase classname=\"cltrace\" name=\"%s\">\n", all_rules[r]);
        int failed = 0;
        for (unsigned i = 0; i < n_findings; i++) {
            const struct finding *f = &findings[i];
            if (strcmp(f->rule, all_rules[r]))
                continue;
            if ((int)f->sev >= fail_at && !failed++) {
                fprintf(o, "    <failure message=\"");
                xml_text(o, f->numbers);
                fprintf(o, "\" type=\"%s\">", sev_name[f->sev]);
            }
            if ((int)f->sev >= fail_at) {
                xml_text(o, f->where);
                fputs(": ", o);
                xml_text(o, f->numbers);
                fputs(" (fix: ", o);
                xml_text(o, f->fix);
                fputs(")\n", o);
            }
        }
        if (failed)
            fputs("</failure>\n", o);
        fputs("  </testcase>\n", o);
    }
    fputs("</testsuite>\n</testsuites>\n", o);
}

