/* The HTML page's job section: a row per rank in a table, a bar per rank of
 * its device time (the mean marked, the slowest rank in red), the imbalance
 * in a table, the findings by rule, and where the ranks used MPI, their
 * clocks and a bar per rank of its time in MPI, the device busy or idle
 * meanwhile. Every string from a trace goes through xml_text(). */
#include "report/escape/escape.h"
#include "formats.h"

#define C_BUSY "#1f77b4"
#define C_IDLE "#ff7f0e"
#define C_SLOW "#d62728"
#define C_MARK "#555"

static void ranks_table(FILE *o, const struct job_view *j)
{
    fputs("<table id=job-ranks><tr><th>rank</th><th>host</th><th>API ms</th><th>device busy ms</th>"
          "<th>device idle ms</th><th>kernel ms</th><th>transfers MB</th><th>findings</th><th>rules</th></tr>\n", o);
    for (unsigned i = 0; i < j->n; i++) {
        const struct rank_row *r = &j->rows[i];
        fprintf(o, "<tr><td class=n>%d</td><td>", r->rank);
        xml_text(o, r->host);
        fprintf(o, "</td><td class=n>%.3f</td><td class=n>%.3f</td><td class=n>%.3f</td><td class=n>%.3f</td>"
                   "<td class=n>%.3f</td><td class=n>%u</td><td>", r->api_ms, r->device_ms, r->device_idle_ms,
                r->kernel_ms, r->transfer_mb, r->findings);
        xml_text(o, r->rules);
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
}

/* a bar per rank of its device time; the mean a line */
static void device_chart(FILE *o, const struct job_view *j)
{
    double max = 0, mean = 0;
    for (unsigned i = 0; i < j->n; i++) {
        max = j->rows[i].device_ms > max ? j->rows[i].device_ms : max;
        mean += j->rows[i].device_ms / j->n;
    }
    if (max <= 0)
        return;
    unsigned n = j->n < 64 ? j->n : 64, h = 20 * n + 30;
    fprintf(o, "<svg id=chart-job width=900 height=%u role=img aria-label='device time per rank'>\n", h);
    for (unsigned i = 0; i < n; i++) {
        const struct rank_row *r = &j->rows[i];
        double w = 600.0 * r->device_ms / max;
        fprintf(o, "<text x=4 y=%u>rank %d</text><rect x=80 y=%u width=%.1f height=14 fill='%s'><title>rank %d: "
                   "%.3f ms</title></rect><text x=%.0f y=%u>%.3f ms</text>\n", 20 * i + 16, r->rank, 20 * i + 5,
                w < 1 ? 1 : w, r == j->slowest ? C_SLOW : C_BUSY, r->rank, r->device_ms, 86 + w, 20 * i + 16,
                r->device_ms);
    }
    double x = 80 + 600.0 * mean / max;
    fprintf(o, "<line x1=%.1f x2=%.1f y1=2 y2=%u stroke='" C_MARK "' stroke-dasharray='4 3'/><text x=%.1f y=%u>"
               "mean %.3f ms</text></svg>\n", x, x, 20 * n + 4, x + 4, 20 * n + 20, mean);
}

static void imbalance(FILE *o, const struct job_view *j)
{
    fputs("<table id=job-imbalance><tr><th>figure</th><th>max</th><th>rank</th><th>mean</th><th>max / mean</th></tr>\n",
          o);
    for (unsigned k = 0; k < JOB_METRICS; k++) {
        const struct job_stat *s = &j->imbalance[k];
        fprintf(o, "<tr><td>%s</td><td class=n>%.3f</td><td class=n>%d</td><td class=n>%.3f</td><td class=n>%.2f"
                   "</td></tr>\n", s->name, s->max, s->rank, s->mean, s->ratio);
    }
    fputs("</table>\n<p>slowest rank: <b>", o);
    fprintf(o, "%d</b> (", j->slowest->rank);
    xml_text(o, j->slowest->host);
    fputc(')', o);
    if (j->kernel) {
        fputs("; kernel <code>", o);
        xml_text(o, j->kernel);
        fprintf(o, "</code>: %.3f ms more than its mean over the ranks", j->kernel_extra_ms);
    }
    fputs("</p>\n", o);
}

static void by_rule(FILE *o, const struct job_view *j)
{
    fputs("<h3>Findings by rule, across ranks</h3>\n", o);
    if (!j->n_by_rule) {
        fputs("<p class=note>No warning or error on any rank.</p>\n", o);
        return;
    }
    fputs("<table id=job-rules><tr><th>rule</th><th>ranks</th></tr>\n", o);
    for (unsigned i = 0; i < j->n_by_rule; i++) {
        fprintf(o, "<tr><td><code>%s</code></td><td>", j->by_rule[i].rule);
        xml_text(o, j->by_rule[i].ranks);
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
}

/* where the ranks used MPI: clocks, and a bar per rank of its time in MPI */
static void mpi(FILE *o, const struct job_view *j)
{
    double max = 0;
    for (unsigned i = 0; i < j->n; i++)
        max = j->rows[i].mpi_ms > max ? j->rows[i].mpi_ms : max;
    if (max <= 0)
        return;
    fputs("<h3>MPI and the device, per rank</h3>\n<table id=job-mpi><tr><th>rank</th><th>host</th>"
          "<th>clock offset to rank 0, s</th><th>± us</th><th>drift to MPI_Finalize, us</th><th>in MPI ms</th>"
          "<th>device busy ms</th><th>device idle ms</th><th>idle in message waits ms</th></tr>\n", o);
    for (unsigned i = 0; i < j->n; i++) {
        const struct rank_row *r = &j->rows[i];
        int w = r->clock_have[0] ? 0 : 1;
        fprintf(o, "<tr><td class=n>%d</td><td>", r->rank);
        xml_text(o, r->host);
        if (r->clock_have[w])
            fprintf(o, "</td><td class=n>%+.6f</td><td class=n>%.1f</td>", r->clock_offset_ns[w] / 1e9,
                    r->clock_rtt_ns[w] / 2e3);
        else
            fputs("</td><td class=n>-</td><td class=n>-</td>", o);
        if (r->clock_have[0] && r->clock_have[1])
            fprintf(o, "<td class=n>%+.1f</td>", (r->clock_offset_ns[1] - r->clock_offset_ns[0]) / 1e3);
        else
            fputs("<td class=n>-</td>", o);
        fprintf(o, "<td class=n>%.3f</td><td class=n>%.3f</td><td class=n>%.3f</td><td class=n>%.3f</td></tr>\n",
                r->mpi_ms, r->mpi_busy_ms, r->mpi_idle_ms, r->mpi_wait_idle_ms);
    }
    fputs("</table>\n", o);
    unsigned n = j->n < 64 ? j->n : 64;
    fprintf(o, "<svg id=chart-job-mpi width=900 height=%u role=img aria-label='time in MPI per rank'>\n", 20 * n + 30);
    for (unsigned i = 0; i < n; i++) {
        const struct rank_row *r = &j->rows[i];
        double b = 600.0 * r->mpi_busy_ms / max, d = 600.0 * r->mpi_idle_ms / max;
        fprintf(o, "<text x=4 y=%u>rank %d</text><rect x=80 y=%u width=%.1f height=14 fill='" C_BUSY "'><title>"
                   "device busy %.3f ms</title></rect><rect x=%.1f y=%u width=%.1f height=14 fill='" C_IDLE "'>"
                   "<title>device idle %.3f ms</title></rect><text x=%.0f y=%u>%.3f ms in MPI</text>\n",
                20 * i + 16, r->rank, 20 * i + 5, b, r->mpi_busy_ms, 80 + b, 20 * i + 5, d, r->mpi_idle_ms,
                86 + 600.0 * r->mpi_ms / max, 20 * i + 16, r->mpi_ms);
    }
    fprintf(o, "<text x=80 y=%u>in MPI, the device: <tspan fill='" C_BUSY "'>busy</tspan>, <tspan fill='" C_IDLE
               "'>idle</tspan></text></svg>\n", 20 * n + 22);
    const char *names[RM_MPI_FNS];
    unsigned nf = job_mpi_names(j, names);
    fputs("<table id=job-mpi-calls><tr><th>rank</th>", o);
    for (unsigned k = 0; k < nf; k++)
        fprintf(o, "<th>%s ms</th>", names[k]);
    fputs("</tr>\n", o);
    for (unsigned i = 0; i < j->n; i++) {
        fprintf(o, "<tr><td class=n>%d</td>", j->rows[i].rank);
        for (unsigned k = 0; k < nf; k++)
            fprintf(o, "<td class=n>%.3f</td>", job_mpi_ms(&j->rows[i], names[k]));
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

void html_job(FILE *o, const struct job_view *j)
{
    fprintf(o, "<h2>Job: %u ranks</h2>\n", j->n);
    ranks_table(o, j);
    device_chart(o, j);
    imbalance(o, j);
    by_rule(o, j);
    mpi(o, j);
}
