/* --format html: one self-contained page (no script, no network): findings,
 * summaries, and four charts drawn as inline SVG. Every string that comes
 * from a trace (kernel names, stacks, paths, device names) goes through
 * xml_text(): a kernel named <script> is shown as text. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "occupancy.h"
#include "job.h"
#include "report.h"

static const char *const css =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;"
    "vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".error{color:#b00020;font-weight:600}.warning{color:#a05a00;font-weight:600}.info{color:#225}"
    "svg{background:#fcfcfc;border:1px solid #e4e4e4;margin:6px 0}svg text{font:11px sans-serif;fill:#333}"
    ".note{color:#666}";

/* Colors of the charts (the headless-browser test looks for them). */
#define C_KERNEL "#1f77b4"
#define C_TRANSFER "#2ca02c"
#define C_OTHER "#9467bd"
#define C_OCC "#ff7f0e"
#define C_MARK "#d62728"

static void chart_kernels(FILE *o, const struct rm_model *m)
{
    fprintf(o, "<h2>Device time per kernel</h2>\n");
    if (!m->n_kernels) {
        fprintf(o, "<p class=note>No kernel launches were timed.</p>\n");
        return;
    }
    unsigned n = m->n_kernels < 16 ? m->n_kernels : 16;
    uint64_t max = 1;
    for (unsigned i = 0; i < m->n_kernels; i++)
        if (m->kernels[i].device_ns > max)
            max = m->kernels[i].device_ns;
    unsigned h = 24 * n + 20;
    fprintf(o, "<svg id=chart-kernels width=900 height=%u role=img aria-label='device time per kernel'>\n", h);
    for (unsigned i = 0; i < n; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        char cfg[160];
        kernel_config(k, cfg, sizeof cfg);
        double w = 400.0 * (double)k->device_ns / (double)max;
        fprintf(o, "<text x=4 y=%u>", 24 * i + 22);
        xml_text(o, cfg);
        fprintf(o, "</text><rect x=330 y=%u width=%.1f height=16 fill='" C_KERNEL "'><title>", 24 * i + 10,
                w < 1 ? 1 : w);
        xml_text(o, k->name);
        fprintf(o, ": %.1f us</title></rect><text x=%.0f y=%u>%.1f us, %llu launch(es)</text>\n", k->device_ns / 1e3,
                336 + w, 24 * i + 22, k->device_ns / 1e3, (unsigned long long)k->launches);
    }
    fprintf(o, "</svg>\n");
}

static void chart_transfers(FILE *o, const struct rm_model *m)
{
    static const char *const bucket[RM_BUCKETS] = { "<4K", "4K-32K", "32K-256K", "256K-2M", "2M-16M", ">=16M" };
    static const double edge[RM_BUCKETS + 1] = { 512, 4096, 32768, 262144, 2097152, 16777216, 134217728 };
    static const char *const color[3] = { C_TRANSFER, "#17becf", "#bcbd22" };
    static const char *const dir[3] = { "host to device", "device to host", "device to device" };
    fprintf(o, "<h2>Transfer sizes</h2>\n");
    uint64_t max = 0, total = 0;
    for (int b = 0; b < RM_BUCKETS; b++) {
        uint64_t c = m->xfer.count[RM_H2D][b] + m->xfer.count[RM_D2H][b] + m->xfer.count[RM_D2D][b];
        total += c;
        if (c > max)
            max = c;
    }
    if (!total) {
        fprintf(o, "<p class=note>No host/device transfers were timed.</p>\n");
        return;
    }
    fprintf(o, "<svg id=chart-transfers width=900 height=260 role=img aria-label='transfer size histogram'>\n");
    for (int b = 0; b < RM_BUCKETS; b++) {
        double y = 220;
        for (int d = 0; d < 3; d++) {
            double hgt = 190.0 * (double)m->xfer.count[d][b] / (double)max;
            if (hgt <= 0)
                continue;
            y -= hgt;
            fprintf(o, "<rect x=%d y=%.1f width=110 height=%.1f fill='%s'><title>%s, %s: %llu</title></rect>\n",
                    60 + 130 * b, y, hgt, color[d], bucket[b], dir[d], (unsigned long long)m->xfer.count[d][b]);
        }
        fprintf(o, "<text x=%d y=238>%s</text><text x=%d y=%.0f>%llu</text>\n", 90 + 130 * b, bucket[b],
                100 + 130 * b, y - 4, (unsigned long long)(m->xfer.count[0][b] + m->xfer.count[1][b] +
                                                         m->xfer.count[2][b]));
    }
    /* the small-transfer threshold, placed on the log-size axis */
    double t = (double)m->small_threshold, x = 60;
    for (int b = 0; b < RM_BUCKETS; b++)
        if (t >= edge[b] && t <= edge[b + 1])
            x = 60 + 130 * b + 130 * (log2(t) - log2(edge[b])) / (log2(edge[b + 1]) - log2(edge[b]));
    fprintf(o, "<line x1=%.1f y1=20 x2=%.1f y2=222 stroke='" C_MARK "' stroke-width=2 stroke-dasharray='6 4'/>"
               "<text x=%.1f y=16>small-transfer threshold: %llu bytes</text>\n", x, x, x + 4,
            (unsigned long long)m->small_threshold);
    for (int d = 0; d < 3; d++)
        fprintf(o, "<rect x=%d y=248 width=10 height=10 fill='%s'/><text x=%d y=257>%s</text>\n", 560 + 110 * d,
                color[d], 574 + 110 * d, dir[d]);
    fprintf(o, "</svg>\n");
}

static void chart_timeline(FILE *o, const struct rm_model *m)
{
    fprintf(o, "<h2>Device queues</h2>\n");
    if (!m->n_cmds) {
        fprintf(o, "<p class=note>No device commands were timed.</p>\n");
        return;
    }
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (unsigned i = 0; i < m->n_cmds; i++) {
        if (m->cmds[i].start < t0)
            t0 = m->cmds[i].start;
        if (m->cmds[i].start + m->cmds[i].dur > t1)
            t1 = m->cmds[i].start + m->cmds[i].dur;
    }
    double span = t1 > t0 ? (double)(t1 - t0) : 1;
    unsigned h = 30 * m->n_lanes + 40;
    fprintf(o, "<svg id=chart-timeline width=900 height=%u role=img aria-label='device queue timeline'>\n", h);
    for (unsigned l = 0; l < m->n_lanes; l++) {
        fprintf(o, "<text x=4 y=%u>", 30 * l + 24);
        xml_text(o, m->lanes[l].name);
        fprintf(o, "</text><line x1=170 y1=%u x2=890 y2=%u stroke='#eee'/>\n", 30 * l + 30, 30 * l + 30);
    }
    static const char *const color[3] = { C_OTHER, C_KERNEL, C_TRANSFER };
    for (unsigned i = 0; i < m->n_cmds; i++) {
        const struct rm_cmd *c = &m->cmds[i];
        double x = 170 + 720.0 * (double)(c->start - t0) / span, w = 720.0 * (double)c->dur / span;
        fprintf(o, "<rect x=%.1f y=%u width=%.1f height=18 fill='%s'/>\n", x, 30 * c->lane + 10, w < 1 ? 1 : w,
                color[c->kind < 3 ? c->kind : 0]);
    }
    fprintf(o, "<text x=170 y=%u>0</text><text x=820 y=%u>%.3f ms</text>", h - 8, h - 8, span / 1e6);
    fprintf(o, "<rect x=300 y=%u width=10 height=10 fill='" C_KERNEL "'/><text x=314 y=%u>kernel</text>"
               "<rect x=380 y=%u width=10 height=10 fill='" C_TRANSFER "'/><text x=394 y=%u>transfer</text>"
               "<rect x=470 y=%u width=10 height=10 fill='" C_OTHER "'/><text x=484 y=%u>other</text>\n",
            h - 18, h - 9, h - 18, h - 9, h - 18, h - 9);
    fprintf(o, "</svg>\n");
    if (m->n_cmds == RM_MAX_CMDS)
        fprintf(o, "<p class=note>The first %u commands.</p>\n", RM_MAX_CMDS);
}

static void chart_occupancy(FILE *o, const struct rm_model *m, const struct thresholds *th)
{
    fprintf(o, "<h2>Occupancy per kernel</h2>\n");
    char note[400];
    occ_model_note(m, note, sizeof note);
    fputs("<p class=note>", o);
    xml_text(o, note);
    fputs("</p>\n", o);
    if (!m->n_kernels) {
        fprintf(o, "<p class=note>No kernel launches were timed.</p>\n");
        return;
    }
    unsigned n = m->n_kernels < 16 ? m->n_kernels : 16;
    fprintf(o, "<svg id=chart-occupancy width=900 height=%u role=img aria-label='occupancy per kernel'>\n",
            24 * n + 40);
    double x50 = 330 + 360 * th->min_occupancy;
    unsigned bars = 0;
    for (unsigned i = 0; i < n; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        char cfg[160];
        kernel_config(k, cfg, sizeof cfg);
        fprintf(o, "<text x=4 y=%u>", 24 * i + 22);
        xml_text(o, cfg);
        fprintf(o, "</text>");
        struct occ_model omb;
        const struct occ_model *om = kernel_occ(m, k, &omb);
        if (om && om->max_warps && k->wg_size) {
            struct occ_kernel ok = { (unsigned)k->wg_size, (unsigned)k->regs, (unsigned)k->local_bytes, 0 };
            struct occ_result r;
            occ_compute(om, &ok, &r);
            bars++;
            fprintf(o, "<rect x=330 y=%u width=%.1f height=16 fill='" C_OCC "'/><text x=%.0f y=%u>%.0f%%, "
                       "limited by %s%s</text>\n", 24 * i + 10, 360 * r.occupancy, 336 + 360 * r.occupancy, 24 * i + 22,
                    100 * r.occupancy, occ_limit_name(r.limited_by), k->regs ? "" : " (registers unknown)");
        } else {
            fprintf(o, "<text x=330 y=%u class=note>n/a: %s</text>\n", 24 * i + 22,
                    !om ? "no occupancy model for this device" : !om->max_warps ? "no documented resident maximum"
                                                                             : "no work-group size");
        }
    }
    if (bars)    /* the threshold, where there are bars to hold against it */
        fprintf(o, "<line x1=%.0f y1=4 x2=%.0f y2=%u stroke='" C_MARK "' stroke-dasharray='4 3'/><text x=%.0f y=%u>"
                   "%.0f%%</text>", x50, x50, 24 * n + 16, x50 - 10, 24 * n + 32, 100 * th->min_occupancy);
    fprintf(o, "</svg>\n");
}

void out_html(FILE *o, const struct rm_model *m, const struct thresholds *th)
{
    fprintf(o, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
               "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
               "img-src data:\"><title>cltrace report</title><style>%s</style></head><body>\n", css);
    fprintf(o, "<h1>cltrace report</h1>\n");
    if (m->truncated || !m->has_attributes)
        fprintf(o, "<p class=warning>The trace was cut short (the app crashed or was killed): this reports "
                   "what it holds.</p>\n");
    selfcost_html(o, m);
    for (unsigned i = 0; i < m->n_dev; i++) {
        fprintf(o, "<p>Device %u: ", i);
        xml_text(o, m->dev[i].name);
        char c[300];
        selfcost_clock(&m->dev[i], c, sizeof c);
        fprintf(o, " (%lld compute units; ", (long long)m->dev[i].compute_units);
        xml_text(o, c);
        fputs(")</p>\n", o);
    }
    fprintf(o, "<h2>Findings: %u</h2>\n", n_findings);
    if (n_findings) {
        fprintf(o, "<table id=findings><tr><th>severity</th><th>rule</th><th>where</th><th>numbers</th>"
                   "<th>fix</th></tr>\n");
        for (unsigned i = 0; i < n_findings; i++) {
            const struct finding *f = &findings[i];
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
    if (job_ranks() > 1)
        job_html(o);
    phases_html(o, m);
    chart_kernels(o, m);
    chart_occupancy(o, m, th);
    chart_transfers(o, m);
    chart_timeline(o, m);
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
    if (m->n_kernels) {
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
    fprintf(o, "<p class=note>Written by cltrace-report from %llu packets.</p>\n</body></html>\n",
            (unsigned long long)m->packets);
}
