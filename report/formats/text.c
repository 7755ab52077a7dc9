/* --format text (the default): for a person at a terminal, prose wrapped
 * at 100 columns; a wrapped line's continuations are indented 8 spaces,
 * which no other line is (a script joins them back: tests/run.sh unwrap). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/escape/escape.h"
#include "report/model/describe.h"
#include "formats.h"

const char *const bucket_name[RM_BUCKETS] = { "<4K", "4K-32K", "32K-256K", "256K-2M", "2M-16M", ">=16M" };

/* The job section, in text or in Markdown (markdown.c): the same figures,
 * aligned columns or a table. */
void text_job(FILE *o, const struct job_view *j, int md)
{
    fprintf(o, md ? "## Job: %u ranks\n\n| rank | host | API ms | device busy ms | device idle ms | kernel ms | "
                    "transfers MB | findings |\n|---:|---|---:|---:|---:|---:|---:|---:|\n"
                  : "Job: %u ranks (each rank's own device time)\n  %5s %-16s %10s %14s %14s %10s %13s %9s\n",
            j->n, "rank", "host", "API ms", "device busy ms", "device idle ms", "kernel ms", "transfers MB", "findings");
    for (unsigned i = 0; i < j->n; i++) {
        const struct rank_row *r = &j->rows[i];
        fprintf(o, md ? "| %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %u |\n"
                      : "  %5d %-16s %10.3f %14.3f %14.3f %10.3f %13.3f %9u\n",
                r->rank, r->host, r->api_ms, r->device_ms, r->device_idle_ms, r->kernel_ms, r->transfer_mb, r->findings);
    }
    fprintf(o, md ? "\n**Imbalance** (max / mean)\n\n" : "\nImbalance (max / mean)\n");
    for (unsigned k = 0; k < JOB_METRICS; k++) {
        const struct job_stat *s = &j->imbalance[k];
        fprintf(o, md ? "- %s: max %.3f (rank %d), mean %.3f, **%.2fx**\n" : "  %-12s max %.3f (rank %d), mean %.3f, %.2fx\n",
                s->name, s->max, s->rank, s->mean, s->ratio);
    }
    fprintf(o, md ? "\nslowest rank: **%d** (%s)" : "  slowest rank: %d (%s)", j->slowest->rank, j->slowest->host);
    if (j->kernel)
        fprintf(o, "; kernel %s: %.3f ms more than its mean over the ranks", j->kernel, j->kernel_extra_ms);
    if (j->transfer_mean_mb > 0 && j->slowest->transfer_mb > 1.2 * j->transfer_mean_mb)
        fprintf(o, "; transfers %.3f MB against a mean of %.3f", j->slowest->transfer_mb, j->transfer_mean_mb);
    fprintf(o, md ? "\n\n**Findings by rule, across ranks**\n\n" : "\n\nFindings by rule, across ranks\n");
    for (unsigned i = 0; i < j->n_by_rule; i++)
        fprintf(o, md ? "- `%s`: rank%s %s\n" : "  %-24s rank%s %s\n", j->by_rule[i].rule, j->by_rule[i].n > 1 ? "s" : "",
                j->by_rule[i].ranks);
    if (!j->n_by_rule)
        fputs(md ? "none (no warning or error on any rank)\n" : "  none (no warning or error on any rank)\n", o);
    text_job_mpi(o, j, md);
    fputc('\n', o);
}

/* MPI and the device per rank, where the ranks used MPI: each rank's clock
 * against rank 0's (what merge and the summed report correct by), its time
 * inside MPI and the device's state meanwhile. */
void text_job_mpi(FILE *o, const struct job_view *j, int md)
{
    unsigned any = 0;
    for (unsigned i = 0; i < j->n; i++)
        any += j->rows[i].mpi_calls || j->rows[i].clock_have[0] || j->rows[i].clock_have[1];
    if (!any)
        return;
    fprintf(o, md ? "\n**MPI and the device, per rank** (clock: this rank's minus rank 0's at MPI_Init, within the "
                    "half round trip; drift: to MPI_Finalize)\n\n| rank | host | clock offset s | +/- us | drift us | "
                    "in MPI ms | device busy ms | device idle ms | idle in message waits ms |\n"
                    "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
                  : "\nMPI and the device, per rank (clock: this rank's minus rank 0's at MPI_Init, within the half "
                    "round trip;\n        drift: to MPI_Finalize; the device's state while the rank was in MPI)\n"
                    "  %5s %-16s %18s %8s %9s %10s %12s %12s %14s\n",
            "rank", "host", "clock offset s", "+/- us", "drift us", "in MPI ms", "device busy", "device idle",
            "idle in waits");
    for (unsigned i = 0; i < j->n; i++) {
        const struct rank_row *r = &j->rows[i];
        char off[32] = "-", pm[16] = "-", drift[24] = "-";
        int w = r->clock_have[0] ? 0 : 1;
        if (r->clock_have[w]) {
            snprintf(off, sizeof off, "%+.6f", r->clock_offset_ns[w] / 1e9);
            snprintf(pm, sizeof pm, "%.1f", r->clock_rtt_ns[w] / 2e3);
        }
        if (r->clock_have[0] && r->clock_have[1])
            snprintf(drift, sizeof drift, "%+.1f", (r->clock_offset_ns[1] - r->clock_offset_ns[0]) / 1e3);
        fprintf(o, md ? "| %d | %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f |\n"
                      : "  %5d %-16s %18s %8s %9s %10.3f %12.3f %12.3f %14.3f\n",
                r->rank, r->host, off, pm, drift, r->mpi_ms, r->mpi_busy_ms, r->mpi_idle_ms, r->mpi_wait_idle_ms);
    }
    text_job_mpi_calls(o, j, md);
}

/* The calls any rank made, in the order first seen */
unsigned job_mpi_names(const struct job_view *j, const char *names[RM_MPI_FNS])
{
    unsigned n = 0;
    for (unsigned i = 0; i < j->n; i++)
        for (unsigned f = 0; f < j->rows[i].n_mpi_fn; f++) {
            unsigned k = 0;
            while (k < n && strcmp(names[k], j->rows[i].mpi_fn[f].name))
                k++;
            if (k == n && n < RM_MPI_FNS)
                names[n++] = j->rows[i].mpi_fn[f].name;
        }
    return n;
}

double job_mpi_ms(const struct rank_row *r, const char *name)
{
    for (unsigned f = 0; f < r->n_mpi_fn; f++)
        if (!strcmp(r->mpi_fn[f].name, name))
            return r->mpi_fn[f].ms;
    return 0;
}

/* Each rank's time in each MPI call: where it waited (a collective's wait
 * is its slowest rank's lateness) */
void text_job_mpi_calls(FILE *o, const struct job_view *j, int md)
{
    const char *names[RM_MPI_FNS];
    unsigned n = job_mpi_names(j, names);
    if (!n)
        return;
    fputs(md ? "\n**Time in each MPI call, ms, per rank**\n\n| rank |" : "\nTime in each MPI call, ms, per rank\n  rank", o);
    for (unsigned k = 0; k < n; k++)
        fprintf(o, md ? " %s |" : " %13s", names[k]);
    if (md) {
        fputs("\n|---:|", o);
        for (unsigned k = 0; k < n; k++)
            fputs("---:|", o);
    }
    for (unsigned i = 0; i < j->n; i++) {
        fprintf(o, md ? "\n| %d |" : "\n  %4d", j->rows[i].rank);
        for (unsigned k = 0; k < n; k++)
            fprintf(o, md ? " %.3f |" : " %13.3f", job_mpi_ms(&j->rows[i], names[k]));
    }
    fputc('\n', o);
}

/* Each device's clock: how well its commands sit on the host's. */
static void devices(FILE *o, const struct rm_model *m)
{
    int any = 0;
    for (unsigned i = 0; i < m->n_dev; i++)
        if (m->dev[i].clock_method[0]) {
            char c[300], head[RM_MAX_NAME + 32];
            if (!any++)
                fputs("\nDevices\n", o);
            selfcost_clock(&m->dev[i], c, sizeof c);
            snprintf(head, sizeof head, "  device %u (%s):", i, m->dev[i].name);
            text_wrap(o, head, "        ", c, TEXT_COLS);
        }
}

static void api_and_kernels(FILE *o, const struct rm_model *m)
{
    const char *cut = rm_cut_short(m);
    fprintf(o, "API calls%s%s%s\n  %-34s %9s %6s %11s %10s %10s %10s\n", cut ? " (trace cut short: " : "",
            cut ? (m->disk_full[0] ? cut : "the app did not exit cleanly") : "", cut ? ")" : "",
            "function", "count", "errors", "total us", "mean us", "min us", "max us");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        char note[96];
        selfcost_api_note(a, note, sizeof note);
        fprintf(o, "  %-34s %9llu %6llu %11.1f %10.2f %10.2f %10.2f%s\n", a->name, (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0,
                a->min_ns / 1e3, a->max_ns / 1e3, note);
    }
    if (!m->n_kernels)
        return;
    fprintf(o, "\nKernels\n  %-48s %9s %12s\n", "kernel and launch configuration", "launches", "device us");
    for (unsigned i = 0; i < m->n_kernels; i++) {
        char cfg[160], note[96], us[32] = "-";
        kernel_config(&m->kernels[i], cfg, sizeof cfg);
        selfcost_kernel_note(&m->kernels[i], note, sizeof note);
        if (!m->dt.unusable)
            snprintf(us, sizeof us, "%.1f", m->kernels[i].device_ns / 1e3);
        fprintf(o, "  %-48s %9llu %12s%s\n", cfg, (unsigned long long)m->kernels[i].launches, us, note);
    }
    char occ[400];
    occ_model_note(m, occ, sizeof occ);
    text_wrap(o, "  ", "        ", occ, TEXT_COLS);
}

static void transfers(FILE *o, const struct rm_model *m)
{
    static const char *const dir[RM_DIRS] = { "host to device", "device to host", "device to device", "fill" };
    int any = 0;
    for (int d = 0; d < RM_DIRS; d++)
        for (int k = 0; k < RM_BUCKETS; k++) {
            uint64_t c = m->xfer.count[d][k], b = m->xfer.bytes[d][k], ns = m->xfer.ns[d][k];
            if (c && !any++)
                fprintf(o, "\nTransfers\n  %-18s %-9s %9s %14s %12s %8s\n", "direction", "size", "count", "bytes", "us",
                        "GB/s");
            if (!c)
                continue;
            char us[32] = "-", gbps[32] = "-";     /* none from a device clock that cannot be true */
            if (!m->dt.unusable) {
                snprintf(us, sizeof us, "%.1f", ns / 1e3);
                snprintf(gbps, sizeof gbps, "%.2f", ns ? (double)b / (double)ns : 0.0);
            }
            fprintf(o, "  %-18s %-9s %9llu %14llu %12s %8s\n", dir[d], bucket_name[k], (unsigned long long)c,
                    (unsigned long long)b, us, gbps);
        }
    if (any) {
        char small[300];
        snprintf(small, sizeof small, "below %llu bytes (%s)", (unsigned long long)m->small_threshold,
                 small_source(m));
        text_wrap(o, "  small:", "        ", small, TEXT_COLS);
    }
}

/* What the busiest thread ran while the device waited (model/host.c): its
 * functions by the program's frame, their samples and share of the idle
 * time, then the calls it sat in off the CPU. */
static void host_table(FILE *o, const struct rm_model *m)
{
    const struct rm_host *h = &m->hostcpu;
    if (!h->period_ns || !h->gap_ns)
        return;
    fprintf(o, "\nHost while the device waited (idle %.3f ms; a sample is %.1f ms of a thread's CPU time)\n",
            h->gap_ns / 1e6, h->period_ns / 1e6);
    if (!h->busiest_samples) {
        fputs("  no thread of the program was on the CPU then (no sample in the idle time)\n", o);
        return;
    }
    fprintf(o, "  thread %u%s, on the CPU %.0f %% of it\n  %-30s %-46s %7s %6s\n", h->busiest_tid,
            m->pid && h->busiest_tid == (uint32_t)m->pid ? " (the main thread)" : "", 100 * h->on_cpu_share,
            "function", "where", "samples", "share");
    for (unsigned i = 0; i < h->n_top; i++) {
        const struct rm_host_fn *t = &h->top[i];
        char where[200];
        size_t wl = strlen(rm_host_where(t, where, sizeof where));
        fprintf(o, "  %-30.30s %s%-*s %7llu %4.0f %%\n", t->function, wl > 46 ? "..." : "", wl > 46 ? 43 : 46,
                wl > 46 ? where + wl - 43 : where, (unsigned long long)t->samples, 100 * t->share);
    }
    for (unsigned i = 0; i < h->n_blocked && h->blocked[i].share >= 0.005; i++)
        fprintf(o, "  %-30.30s %-46s %7s %4.0f %%\n", h->blocked[i].name, "off the CPU, in this call", "-",
                100 * h->blocked[i].share);
}

static void phases(FILE *o, const struct rm_model *m, const struct phase_view *v)
{
    if (!m->n_phases)
        return;
    fprintf(o, "\nPhases (ranges the program marked; nested phases included)\n  %-28s %6s %10s %10s %6s %10s %8s %9s "
            "%12s %8s\n", "phase", "times", "wall ms", "API ms", "% API", "device ms", "% device", "transfers", "bytes",
            "findings");
    for (unsigned k = 0; k < v->n; k++) {
        unsigned i = v->order[k];
        const struct rm_phase *p = &m->phases[i];
        char label[300];
        snprintf(label, sizeof label, "%*s%s", 2 * p->depth, "", p->name);
        fprintf(o, "  %-28s %6llu %10.3f %10.3f %6.1f %10.3f %8.1f %9llu %12llu %8u\n", label,
                (unsigned long long)p->entered, p->wall_ns / 1e6, p->api_ns / 1e6, v->api_pct[i], p->device_ns / 1e6,
                v->device_pct[i], (unsigned long long)p->transfers, (unsigned long long)p->transfer_bytes,
                v->findings[i]);
    }
    if (v->top >= 0 && m->phase_device_ns && !m->dt.unusable)   /* the one line a reader wants: where the device time went */
        fprintf(o, "  phase %s: %.0f %% of device time, %u finding(s)\n", m->phases[v->top].path,
                v->device_pct[v->top], v->findings[v->top]);
}

static void findings(FILE *o, const struct rm_model *m, const struct findings *fs)
{
    fprintf(o, "Findings: %u\n", fs->n);
    for (unsigned i = 0; i < fs->n; i++) {
        const struct finding *f = &fs->v[i];
        char *cut, head[80], text[400];
        snprintf(head, sizeof head, "  [%s] %s:", sev_name[f->sev], f->rule);
        text_wrap(o, head, "        ", where_short(f->where, &cut), TEXT_COLS);
        free(cut);
        text_wrap(o, "      ", "        ", f->numbers, TEXT_COLS);
        text_wrap(o, "      fix:", "        ", f->fix, TEXT_COLS);
        if (f->gain_ns >= 0) {
            snprintf(text, sizeof text, "%.3f ms (%.1f %% %s):", f->gain_ns / 1e6,
                     finding_gain_percent(m, f), finding_gain_basis(m));
            char *all = NULL;
            if (asprintf(&all, "%s %s", text, f->gain_method) >= 0) {
                text_wrap(o, "      estimated gain:", "        ", all, TEXT_COLS);
                free(all);
            }
        } else if (f->gain_method[0]) {
            text_wrap(o, "      estimated gain:", "        ", f->gain_method, TEXT_COLS);
        }
        if (f->phase >= 0)
            text_wrap(o, "      phase:", "        ", m->phases[f->phase].path, TEXT_COLS);
    }
}

void format_text(FILE *o, const struct report_in *r)
{
    const struct rm_model *m = r->m;
    char note[600];
    if (m->dropped_calls) {     /* before anything: every figure below is short by them */
        snprintf(note, sizeof note, "%llu calls were dropped while tracing; every count below is short by them",
                 (unsigned long long)m->dropped_calls);
        text_wrap(o, "WARNING:", "        ", note, TEXT_COLS);
        fputc('\n', o);
    }
    text_summary(o, r, 0);
    if (r->job)
        text_job(o, r->job, 0);
    if (m->ring_dropped_bytes) {
        snprintf(note, sizeof note, "this trace holds the last %.1f MiB of the run (%.1f MiB before them let go, "
                 "CLTRACE_RING_MB): API, transfer and device figures cover what it holds; objects and leaks the "
                 "whole run", m->ring_bytes / 1048576.0, m->ring_dropped_bytes / 1048576.0);
        text_wrap(o, "flight recorder:", "        ", note, TEXT_COLS);
    }
    if (m->n_windows) {
        snprintf(note, sizeof note, "this trace holds %u window%s, %.3f s recorded (CLTRACE_WINDOW); calls outside "
                 "them: only those that make, build or release objects, nothing timed on the device. API, transfer "
                 "and device figures cover the windows; objects and leaks the whole run",
                 m->n_windows, m->n_windows == 1 ? "" : "s", m->window_ns / 1e9);
        text_wrap(o, "window:", "        ", note, TEXT_COLS);
    }
    findings(o, m, r->fs);
    fputc('\n', o);
    api_and_kernels(o, m);
    transfers(o, m);
    host_table(o, m);
    phases(o, m, r->phases);
    devices(o, m);
}
