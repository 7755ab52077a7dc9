/* --format markdown: fits a CI step summary (>> $GITHUB_STEP_SUMMARY).
 * Table cells go through md_cell(). */
#include <stdlib.h>
#include "report/escape/escape.h"
#include "report/model/describe.h"
#include "formats.h"

/* Each finding a <details> block: its line in the summary, the evidence
 * and the fix one click away (GitHub renders Markdown inside). */
static void findings(FILE *o, const struct rm_model *m, const struct findings *fs)
{
    fprintf(o, "### Findings: %u\n\n", fs->n);
    for (unsigned i = 0; i < fs->n; i++) {
        const struct finding *f = &fs->v[i];
        char *cut;
        fprintf(o, "<details><summary><b>%s</b> <code>%s</code>: ", sev_name[f->sev], f->rule);
        xml_text(o, where_short(f->where, &cut));
        free(cut);
        if (f->gain_ns >= 0)
            fprintf(o, " (estimated gain %.3f ms, %.1f %%)", f->gain_ns / 1e6, finding_gain_percent(m, f));
        fputs("</summary>\n\n", o);
        md_cell(o, f->numbers);
        fputs("\n\n**Fix:** ", o);
        md_cell(o, f->fix);
        if (f->gain_method[0]) {
            fputs("\n\n**Estimated gain:** ", o);
            md_cell(o, f->gain_method);
        }
        if (f->phase >= 0) {
            fputs("\n\n**Phase:** ", o);
            md_cell(o, m->phases[f->phase].path);
        }
        fputs("\n\n</details>\n\n", o);
    }
}

static void api_and_kernels(FILE *o, const struct rm_model *m)
{
    fprintf(o, "| API function | calls | errors | total µs | mean µs |\n|---|---:|---:|---:|---:|\n");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        char note[96];
        selfcost_api_note(a, note, sizeof note);
        fprintf(o, "| `%s`%s | %llu | %llu | %.1f | %.2f |\n", a->name, note, (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0);
    }
    if (!m->n_kernels)
        return;
    fprintf(o, "\n| kernel and launch configuration | launches | device µs |\n|---|---:|---:|\n");
    for (unsigned i = 0; i < m->n_kernels; i++) {
        char cfg[160], note[96];
        kernel_config(&m->kernels[i], cfg, sizeof cfg);
        selfcost_kernel_note(&m->kernels[i], note, sizeof note);
        fputs("| ", o);
        md_cell(o, cfg);
        if (m->dt.unusable)
            fprintf(o, " | %llu | -%s |\n", (unsigned long long)m->kernels[i].launches, note);
        else
            fprintf(o, " | %llu | %.1f%s |\n", (unsigned long long)m->kernels[i].launches,
                    m->kernels[i].device_ns / 1e3, note);
    }
    char occ[400];
    occ_model_note(m, occ, sizeof occ);
    fputs("\n", o);
    md_cell(o, occ);
    fputs("\n", o);
}

static void transfers(FILE *o, const struct rm_model *m)
{
    static const char *const dir[RM_DIRS] = { "host to device", "device to host", "device to device", "fill" };
    int any = 0;
    for (int d = 0; d < RM_DIRS; d++)
        for (int k = 0; k < RM_BUCKETS; k++) {
            uint64_t c = m->xfer.count[d][k], b = m->xfer.bytes[d][k], ns = m->xfer.ns[d][k];
            if (c && !any++)
                fprintf(o, "\n| transfers | size | count | bytes | µs | GB/s |\n|---|---|---:|---:|---:|---:|\n");
            if (c && m->dt.unusable)     /* no time or bandwidth from a device clock that cannot be true */
                fprintf(o, "| %s | %s | %llu | %llu | - | - |\n", dir[d], bucket_name[k], (unsigned long long)c,
                        (unsigned long long)b);
            else if (c)
                fprintf(o, "| %s | %s | %llu | %llu | %.1f | %.2f |\n", dir[d], bucket_name[k], (unsigned long long)c,
                        (unsigned long long)b, ns / 1e3, ns ? (double)b / (double)ns : 0.0);
        }
    if (any)
        fprintf(o, "\nSmall transfers: below %llu bytes (%s).\n", (unsigned long long)m->small_threshold,
                small_source(m));
}

/* What the busiest thread ran while the device waited, as text.c says it */
static void host_table(FILE *o, const struct rm_model *m)
{
    const struct rm_host *h = &m->hostcpu;
    if (!h->period_ns || !h->gap_ns)
        return;
    fprintf(o, "\n**Host while the device waited** (idle %.3f ms; a sample is %.1f ms of a thread's CPU time)\n\n",
            h->gap_ns / 1e6, h->period_ns / 1e6);
    if (!h->busiest_samples) {
        fputs("No thread of the program was on the CPU then (no sample in the idle time).\n", o);
        return;
    }
    fprintf(o, "Thread %u%s, on the CPU %.0f %% of it.\n\n| function | where | samples | share |\n"
               "|---|---|---:|---:|\n", h->busiest_tid,
            m->pid && h->busiest_tid == (uint32_t)m->pid ? " (the main thread)" : "", 100 * h->on_cpu_share);
    for (unsigned i = 0; i < h->n_top; i++) {
        fputs("| ", o);
        md_cell(o, h->top[i].function);
        fputs(" | ", o);
        char where[200];
        md_cell(o, rm_host_where(&h->top[i], where, sizeof where));
        fprintf(o, " | %llu | %.0f %% |\n", (unsigned long long)h->top[i].samples, 100 * h->top[i].share);
    }
    for (unsigned i = 0; i < h->n_blocked && h->blocked[i].share >= 0.005; i++)
        fprintf(o, "| %s | off the CPU, in this call | - | %.0f %% |\n", h->blocked[i].name, 100 * h->blocked[i].share);
}

static void phases(FILE *o, const struct rm_model *m, const struct phase_view *v)
{
    if (!m->n_phases)
        return;
    fprintf(o, "\n**Phases** (ranges the program marked; nested phases included)\n\n"
               "| phase | times | wall ms | API ms | %% API | device ms | %% device | transfers | bytes | findings |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (unsigned k = 0; k < v->n; k++) {
        unsigned i = v->order[k];
        const struct rm_phase *p = &m->phases[i];
        fputs("| ", o);
        md_cell(o, p->path);
        fprintf(o, " | %llu | %.3f | %.3f | %.1f | %.3f | %.1f | %llu | %llu | %u |\n", (unsigned long long)p->entered,
                p->wall_ns / 1e6, p->api_ns / 1e6, v->api_pct[i], p->device_ns / 1e6, v->device_pct[i],
                (unsigned long long)p->transfers, (unsigned long long)p->transfer_bytes, v->findings[i]);
    }
    if (v->top >= 0 && m->phase_device_ns)
        fprintf(o, "\nphase **%s**: %.0f %% of device time, %u finding(s)\n", m->phases[v->top].path,
                v->device_pct[v->top], v->findings[v->top]);
}

/* Each device's clock: how well its commands sit on the host's. */
static void devices(FILE *o, const struct rm_model *m)
{
    for (unsigned i = 0; i < m->n_dev; i++)
        if (m->dev[i].clock_method[0]) {
            char c[300];
            selfcost_clock(&m->dev[i], c, sizeof c);
            fprintf(o, "%s- device %u (", i ? "" : "\n**Devices**\n\n", i);
            md_cell(o, m->dev[i].name);
            fputs("): ", o);
            md_cell(o, c);
            fputc('\n', o);
        }
}

void format_markdown(FILE *o, const struct report_in *r)
{
    const struct rm_model *m = r->m;
    text_summary(o, r, 1);
    if (rm_cut_short(m))
        fprintf(o, "> The trace was cut short (%s): this reports what it holds.\n\n", rm_cut_short(m));
    if (m->n_windows)
        fprintf(o, "> Windows (CLTRACE_WINDOW): %u, %.3f s recorded. API, transfer and device figures cover the "
                "windows; objects and leaks the whole run.\n\n", m->n_windows, m->window_ns / 1e9);
    if (r->job)
        text_job(o, r->job, 1);
    findings(o, m, r->fs);
    api_and_kernels(o, m);
    transfers(o, m);
    host_table(o, m);
    phases(o, m, r->phases);
    devices(o, m);
    fputc('\n', o);
    text_cost_account(o, m, &r->sum->cost, 1);
}
