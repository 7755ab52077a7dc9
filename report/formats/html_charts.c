/* The HTML page's four charts, inline SVG: device time per kernel,
 * occupancy per kernel (the threshold marked), transfer sizes (the
 * small-transfer threshold marked), and the device queues' timeline.
 * Every string from the trace goes through xml_text(). */
#include <math.h>
#include "report/escape/escape.h"
#include "report/model/describe.h"
#include "report/model/occupancy.h"
#include "formats.h"

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
                    60 + 130 * b, y, hgt, color[d], bucket_name[b], dir[d], (unsigned long long)m->xfer.count[d][b]);
        }
        fprintf(o, "<text x=%d y=238>%s</text><text x=%d y=%.0f>%llu</text>\n", 90 + 130 * b, bucket_name[b],
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

void html_charts(FILE *o, const struct rm_model *m, const struct thresholds *th)
{
    if (!m->dt.unusable)        /* device time only from a device clock that can be true */
        chart_kernels(o, m);
    chart_occupancy(o, m, th);
    chart_transfers(o, m);
    if (!m->dt.unusable)
        chart_timeline(o, m);
}
