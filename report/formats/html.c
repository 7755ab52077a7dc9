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
    ".note{color:#666}.stack .lib{color:#999}"
    "#summary{border:1px solid #ccd;background:#f8f9fc;padding:10px 16px;margin:8px 0 16px}"
    ".figs{display:flex;gap:28px;flex-wrap:wrap;margin:4px 0 10px}.figs div{min-width:120px}"
    ".figs b{display:block;font-size:22px}.figs span{color:#555;font-size:12px}"
    ".bar{display:flex;height:18px;width:100%;border:1px solid #bbb;margin:4px 0}.bar div{height:100%}"
    ".k{background:#3b6fb6}.t{background:#e0a030}.i{background:#ddd}.legend span{margin-right:14px;font-size:12px}"
    ".sw{display:inline-block;width:10px;height:10px;margin-right:4px}";

static void head(FILE *o, const struct rm_model *m)
{
    fprintf(o, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
               "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
               "img-src data:\"><title>cltrace report</title><style>%s</style></head><body>\n", css);
    fputs("<h1>cltrace report: ", o);
    xml_text(o, m->program[0] ? m->program : "(unnamed)");
    fputs("</h1>\n", o);
    for (unsigned i = 0; i < m->n_overrides; i++) {      /* not the program as it is: said first */
        fputs(strcmp(m->overrides[i].what, "failed") ? "<p class=warning>Override: " : "<p class=warning>Override "
              "failed: ", o);
        xml_text(o, m->overrides[i].text);
        fputs("</p>\n", o);
    }
    if (rm_cut_short(m)) {
        fputs("<p class=warning>The trace was cut short (", o);
        xml_text(o, rm_cut_short(m));
        fputs("): this reports what it holds.</p>\n", o);
    }
}

/* Where the device's time went, as a bar: kernels, transfers, idle. */
static void time_bar(FILE *o, const struct summary_view *v)
{
    if (!v->device_known)
        return;
    double span = (double)v->span_ns, k = 100.0 * (double)v->kernel_ns / span,
           t = 100.0 * (double)v->transfer_ns / span, i = 100.0 * (double)v->idle_ns / span;
    if (k + t > 100 - i)        /* kernels and transfers overlapped: scale them into the busy share */
        k = (100 - i) * k / (k + t), t = 100 - i - k;
    fprintf(o, "<div class=bar title=\"device timeline\"><div class=k style=\"width:%.2f%%\"></div><div class=t "
               "style=\"width:%.2f%%\"></div><div class=i style=\"width:%.2f%%\"></div></div>\n<div class=legend>"
               "<span><i class=\"sw k\"></i>kernels %.3f ms</span><span><i class=\"sw t\"></i>transfers %.3f ms</span>"
               "<span><i class=\"sw i\"></i>idle %.3f ms</span><span>of %.3f ms from the first command to the last"
               "</span></div>\n", k, t, i, v->kernel_ns / 1e6, v->transfer_ns / 1e6, v->idle_ns / 1e6, v->span_ns / 1e6);
}

/* The summary panel: headline figures, the device's time as a bar, the
 * top findings; above the fold at 1280x800 (a test looks in Chromium). */
static void summary(FILE *o, const struct report_in *r)
{
    const struct summary_view *v = r->sum;
    char fig[32], up[32];
    duration_words(v->cost.figure_ns, fig, sizeof fig);
    duration_words(v->cost.upper_ns, up, sizeof up);
    fprintf(o, "<section id=summary><div class=figs><div><b>%.3f s</b><span>the run</span></div>", v->wall_ns / 1e9);
    if (v->device_known)
        fprintf(o, "<div><b>%.1f %%</b><span>device busy</span></div>", v->busy_pct);
    fprintf(o, "<div><b>%u</b><span>findings: %u error%s, %u warning%s, %u info</span></div>",
            v->by_sev[0] + v->by_sev[1] + v->by_sev[2], v->by_sev[SEV_ERROR], v->by_sev[SEV_ERROR] == 1 ? "" : "s",
            v->by_sev[SEV_WARNING], v->by_sev[SEV_WARNING] == 1 ? "" : "s", v->by_sev[SEV_INFO]);
    if (v->cost.known)
        fprintf(o, "<div><b>%s</b><span>cltrace added (%.1f %%), at most %s</span></div>", fig, v->cost.percent, up);
    fputs("</div>\n", o);
    if (v->device_unusable) {
        fputs("<p class=warning id=device-timing>Device timing unusable on this platform: ", o);
        xml_text(o, v->device_unusable);
        fputs(". No device time, bandwidth, idle or gain is derived from it.</p>\n", o);
    }
    time_bar(o, v);
    if (v->n_top) {
        fputs("<table id=top><tr><th>severity</th><th>rule</th><th>estimated gain</th><th>where</th></tr>\n", o);
        for (unsigned i = 0; i < v->n_top; i++) {
            const struct finding *f = &r->fs->v[v->top[i]];
            char *cut;
            fprintf(o, "<tr><td class=%s>%s</td><td>%s</td><td class=n>", sev_name[f->sev], sev_name[f->sev], f->rule);
            if (f->gain_ns >= 0)
                fprintf(o, "%.3f ms (%.1f %%)", f->gain_ns / 1e6, finding_gain_percent(r->m, f));
            else
                fputs("-", o);
            fputs("</td><td>", o);
            xml_text(o, where_short(f->where, &cut));
            free(cut);
            fputs("</td></tr>\n", o);
        }
        fputs("</table>\n", o);
    }
    fputs("</section>\n", o);
}

/* Each device's clock, and cltrace's own cost account, at the end. */
static void devices_and_cost(FILE *o, const struct rm_model *m, const struct cost_account *a)
{
    for (unsigned i = 0; i < m->n_dev; i++) {
        fprintf(o, "%s<p>Device %u: ", i ? "" : "<h2>Devices</h2>\n", i);
        xml_text(o, m->dev[i].name);
        char c[300];
        selfcost_clock(&m->dev[i], c, sizeof c);
        fprintf(o, " (%lld compute units; ", (long long)m->dev[i].compute_units);
        xml_text(o, c);
        fputs(")</p>\n", o);
    }
    char line[200];
    selfcost_line(m, a, line, sizeof line);
    fputs("<h2>cltrace's own cost</h2>\n<details><summary>", o);
    xml_text(o, line);
    fputs("</summary>\n<table id=cost><tr><th>what</th><th>ms</th></tr>\n", o);
    const struct cost_row *rows[2] = { a->counted, a->bound };
    unsigned n[2] = { a->n_counted, a->n_bound };
    for (unsigned p = 0; p < 2; p++) {
        for (unsigned i = 0; i < n[p]; i++) {
            fputs("<tr><td>", o);
            xml_text(o, rows[p][i].what);
            fprintf(o, "</td><td class=n>%.3f</td></tr>\n", rows[p][i].ns / 1e6);
        }
        fprintf(o, "<tr><th>%s</th><th class=n>%.3f</th></tr>\n", p ? "upper bound" : "the figure",
                (p ? a->upper_ns : a->figure_ns) / 1e6);
    }
    fputs("</table>\n<ul>", o);
    for (unsigned i = 0; i < a->n_said; i++) {
        fputs("<li>", o);
        xml_text(o, a->said[i].what);
        if (a->said[i].ns)
            fprintf(o, ": %.3f ms", a->said[i].ns / 1e6);
        fputs("</li>", o);
    }
    fputs("</ul>\n<p class=note>What such costs were measured to be on other machines: docs/PERFORMANCE.md in "
          "cltrace's sources.</p></details>\n", o);
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
        if (f->stack && strcmp(f->stack, f->where)) {    /* the whole stack, library frames grey */
            fputs("<details class=stack><summary>call stack</summary>", o);
            const char *p = f->stack;
            struct stack_frame fr;
            while (stack_next(&p, &fr)) {
                fprintf(o, "<div%s>", fr.library ? " class=lib" : "");
                xml_text(o, fr.fn);
                if (fr.file[0]) {
                    fputs(" (", o);
                    xml_text(o, fr.file);
                    fprintf(o, ":%u)", fr.line);
                }
                fputs("</div>", o);
            }
            fputs("</details>", o);
        }
        fputs("</td><td>", o);
        xml_text(o, f->numbers);
        fputs("</td><td>", o);
        xml_text(o, f->fix);
        if (f->gain_ns >= 0) {
            fprintf(o, "<br>estimated gain %.3f ms (%.1f %% %s): ", f->gain_ns / 1e6,
                    finding_gain_percent(m, f), finding_gain_basis(m));
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
        if (m->dt.unusable)
            fprintf(o, "</td><td class=n>%llu</td><td class=n>-", (unsigned long long)m->kernels[i].launches);
        else
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
    summary(o, r);
    findings(o, r->m, r->fs);
    if (r->job)
        html_job(o, r->job);
    phases(o, r->m, r->phases);
    html_charts(o, r->m, r->th);
    api_and_kernels(o, r->m);
    devices_and_cost(o, r->m, &r->sum->cost);
    fprintf(o, "<p class=note>Written by cltrace-report from %llu packets.</p>\n</body></html>\n",
            (unsigned long long)r->m->packets);
}
