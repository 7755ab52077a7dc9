/* --format html: one self-contained page (no script, no network): findings,
 * summaries, and the charts (html_charts.c). Every string that comes from a
 * trace (kernel names, stacks, paths, device names) goes through
 * xml_text(): a kernel named <script> is shown as text. */
#define _GNU_SOURCE
#include <stdlib.h>
#include "report/escape/escape.h"
#include "report/model/describe.h"
#include "formats.h"

static const char *const css =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;"
    "vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".error{color:#b00020;font-weight:600}.warning{color:#a05a00;font-weight:600}.info{color:#225}"
    "svg{background:#fcfcfc;border:1px solid #e4e4e4;margin:6px 0}svg text{font:11px sans-serif;fill:#333}"
    ".note{color:#666}";

/* HTML: the job's table as text in a <pre> (escaped). */
void html_job(FILE *o, const struct job_view *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    text_job(m, j, 0);
    fclose(m);
    fputs("<h2>Job</h2>\n<pre>", o);
    xml_text(o, buf);
    fputs("</pre>\n", o);
    free(buf);
}

static void head(FILE *o, const struct rm_model *m)
{
    fprintf(o, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
               "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
               "img-src data:\"><title>cltrace report</title><style>%s</style></head><body>\n", css);
    fprintf(o, "<h1>cltrace report</h1>\n");
    if (rm_cut_short(m)) {
        fputs("<p class=warning>The trace was cut short (", o);
        xml_text(o, rm_cut_short(m));
        fputs("): this reports what it holds.</p>\n", o);
    }
    if (m->self.known) {
        char s[SELFCOST_TEXT_MAX];
        selfcost_sentence(m, s, sizeof s);
        fputs("<p class=selfcost>", o);
        xml_text(o, s);
        fputs("</p>\n", o);
    } else {
        fprintf(o, "<p class=note>cltrace's own cost: not stated in this trace (cut short, or an older "
                   "cltrace)</p>\n");
    }
    for (unsigned i = 0; i < m->n_dev; i++) {
        fprintf(o, "<p>Device %u: ", i);
        xml_text(o, m->dev[i].name);
        char c[300];
        selfcost_clock(&m->dev[i], c, sizeof c);
        fprintf(o, " (%lld compute units; ", (long long)m->dev[i].compute_units);
        xml_text(o, c);
        fputs(")</p>\n", o);
    }
}

static void findings(FILE *o, const struct rm_model *m, const struct findings *fs)
{
    fprintf(o, "<h2>Findings: %u</h2>\n", fs->n);
    if (!fs->n)
        return;
    fprintf(o, "<table id=findings><tr><th>severity</th><th>rule</th><th>where</th><th>numbers</th><th>fix</th></tr>\n");
    for (unsigned i = 0; i < fs->n; i++) {
        const struct finding *f = &fs->v[i];
        fprintf(o, "<tr><td class=%s>%s</td><td>%s</td><td>", sev_name[f->sev], sev_name[f->sev], f->rule);
        xml_text(o, f->where);
        fputs("</td><td>", o);
        xml_text(o, f->numbers);
        fputs("</td><td>", o);
        xml_text(o, f->fix);
        if (f->gain_ns >= 0) {
            fprintf(o, "<br>estimated gain %.3f ms (%.1f %% of the device timeline): ", f->gain_ns / 1e6,
                    finding_gain_percent(m, f));
            xml_text(o, f->gain_method);
        } else if (f->gain_method[0]) {
            fputs("<br>estimated gain: ", o);
            xml_text(o, f->gain_method);
        }
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
}

static void phases(FILE *o, const struct rm_model *m, const struct phase_view *v)
{
    if (!m->n_phases)
        return;
    fputs("<h2>Phases</h2>\n<p>Ranges the program marked (cltrace.h); nested phases included.</p>\n<table>"
          "<tr><th>phase</th><th>times</th><th>wall ms</th><th>API ms</th><th>% API</th><th>device ms</th>"
          "<th>% device</th><th>transfers</th><th>bytes</th><th>findings</th></tr>\n", o);
    for (unsigned k = 0; k < v->n; k++) {
        unsigned i = v->order[k];
        const struct rm_phase *p = &m->phases[i];
        fprintf(o, "<tr><td style=\"padding-left:%dem\">", 1 + 2 * p->depth);
        xml_text(o, p->name);
        fprintf(o, "</td><td>%llu</td><td>%.3f</td><td>%.3f</td><td>%.1f</td><td>%.3f</td><td>%.1f</td>"
                   "<td>%llu</td><td>%llu</td><td>%u</td></tr>\n",
                (unsigned long long)p->entered, p->wall_ns / 1e6, p->api_ns / 1e6, v->api_pct[i],
                p->device_ns / 1e6, v->device_pct[i], (unsigned long long)p->transfers,
                (unsigned long long)p->transfer_bytes, v->findings[i]);
    }
    fputs("</table>\n", o);
}

static void api_and_kernels(FILE *o, const struct rm_model *m)
{
    fprintf(o, "<h2>API calls</h2>\n<table><tr><th>function</th><th>calls</th><th>errors</th><th>total us</th>"
               "<th>mean us</th><th>min us</th><th>max us</th></tr>\n");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        char note[96];
        selfcost_api_note(a, note, sizeof note);
        fputs("<tr><td>", o);
        xml_text(o, a->name);
        xml_text(o, note);
        fprintf(o, "</td><td class=n>%llu</td><td class=n>%llu</td><td class=n>%.1f</td><td class=n>%.2f</td>"
                   "<td class=n>%.2f</td><td class=n>%.2f</td></tr>\n", (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0,
                a->min_ns / 1e3, a->max_ns / 1e3);
    }
    fputs("</table>\n", o);
    if (!m->n_kernels)
        return;
    fprintf(o, "<h2>Kernels</h2>\n<table><tr><th>kernel and launch configuration</th><th>launches</th>"
               "<th>device us</th></tr>\n");
    for (unsigned i = 0; i < m->n_kernels; i++) {
        char cfg[160], note[96];
        kernel_config(&m->kernels[i], cfg, sizeof cfg);
        selfcost_kernel_note(&m->kernels[i], note, sizeof note);
        fputs("<tr><td>", o);
        xml_text(o, cfg);
        fprintf(o, "</td><td class=n>%llu</td><td class=n>%.1f", (unsigned long long)m->kernels[i].launches,
                m->kernels[i].device_ns / 1e3);
        xml_text(o, note);
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
}

void format_html(FILE *o, const struct report_in *r)
{
    head(o, r->m);
    findings(o, r->m, r->fs);
    if (r->job)
        html_job(o, r->job);
    phases(o, r->m, r->phases);
    html_charts(o, r->m, r->th);
    api_and_kernels(o, r->m);
    fprintf(o, "<p class=note>Written by cltrace-report from %llu packets.</p>\n</body></html>\n",
            (unsigned long long)r->m->packets);
}
