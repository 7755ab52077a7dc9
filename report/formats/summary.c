/* The first screen in text and Markdown (md), and what backs it up: the
 * device-timing statement and cltrace's cost account (--explain cost). */
#include <stdio.h>
#include <stdlib.h>
#include "report/escape/escape.h"
#include "report/model/describe.h"
#include "formats.h"

static void counts(const unsigned by[3], char *buf, size_t cap)
{
    unsigned n = by[SEV_ERROR] + by[SEV_WARNING] + by[SEV_INFO];
    snprintf(buf, cap, "%u finding%s (%u error%s, %u warning%s, %u info)", n, n == 1 ? "" : "s", by[SEV_ERROR],
             by[SEV_ERROR] == 1 ? "" : "s", by[SEV_WARNING], by[SEV_WARNING] == 1 ? "" : "s", by[SEV_INFO]);
}

/* The first screen's lines after the devices': what was timed, device memory. */
static void text_sample_and_memory(FILE *o, const struct report_in *r)
{
    char sampled[1024], memory[768];
    summary_sampling_words(r->sum, sampled, sizeof sampled);
    if (sampled[0])
        text_wrap(o, "sample: ", "        ", sampled, TEXT_COLS);
    memory_words(r->m, &r->sum->memory, 0, memory, sizeof memory);
    if (memory[0])
        text_wrap(o, "memory: ", "        ", memory, TEXT_COLS);
}

/* "49.7 ms from the first command's start to the last's end, busy 2.4 %: ..." */
static void device_words(const struct summary_view *v, char *buf, size_t cap)
{
    if (v->device_unusable)
        snprintf(buf, cap, "device timing unusable on this platform: %s. No device time, bandwidth, idle or gain "
                 "is derived from it; %llu kernel launches and %llu transfers were seen", v->device_unusable,
                 (unsigned long long)v->launches, (unsigned long long)v->transfers);
    else if (!v->device_known)
        snprintf(buf, cap, "no device command timed in this trace");
    else
        snprintf(buf, cap, "%.3f ms from the first command's start to the last's end, busy %.1f %%: kernels "
                 "%.3f ms (%llu launch%s), transfers %.3f ms (%llu), idle %.3f ms", v->span_ns / 1e6, v->busy_pct,
                 v->kernel_ns / 1e6, (unsigned long long)v->launches, v->launches == 1 ? "" : "es",
                 v->transfer_ns / 1e6, (unsigned long long)v->transfers, v->idle_ns / 1e6);
}

static void gain_words(const struct rm_model *m, const struct finding *f, char *buf, size_t cap)
{
    if (f->gain_ns >= 0)
        snprintf(buf, cap, "%.3f ms (%.1f %%)", f->gain_ns / 1e6, finding_gain_percent(m, f));
    else
        snprintf(buf, cap, "-");
}

static void text_top(FILE *o, const struct report_in *r)
{
    const struct summary_view *v = r->sum;
    if (!v->n_top)
        return;
    fprintf(o, "\nTop findings (errors first, then by what the fix would save)\n  %-8s %-22s %-18s %s\n", "severity",
            "rule", "estimated gain", "where");
    for (unsigned i = 0; i < v->n_top; i++) {
        const struct finding *f = &r->fs->v[v->top[i]];
        char gain[48], cut[128];
        gain_words(r->m, f, gain, sizeof gain);
        int gw = (int)strlen(gain) > 18 ? (int)strlen(gain) : 18;     /* a slow run's gain is wider */
        fprintf(o, "  %-8s %-22s %-*s %s\n", sev_name[f->sev], f->rule, gw, gain,
                text_cut(f->where, (unsigned)(TEXT_COLS - 35 - gw), cut, sizeof cut));
    }
    unsigned n = v->by_sev[0] + v->by_sev[1] + v->by_sev[2];
    if (n > v->n_top)
        fprintf(o, "  ... and %u more below\n", n - v->n_top);
}

static void md_top(FILE *o, const struct report_in *r)
{
    const struct summary_view *v = r->sum;
    if (!v->n_top)
        return;
    fputs("\n| severity | rule | estimated gain | where |\n|---|---|---:|---|\n", o);
    for (unsigned i = 0; i < v->n_top; i++) {
        const struct finding *f = &r->fs->v[v->top[i]];
        char gain[48], *cut;
        gain_words(r->m, f, gain, sizeof gain);
        fprintf(o, "| **%s** | `%s` | %s | ", sev_name[f->sev], f->rule, gain);
        md_cell(o, where_short(f->where, &cut));
        free(cut);
        fputs(" |\n", o);
    }
}

void text_summary(FILE *o, const struct report_in *r, int md)
{
    const struct summary_view *v = r->sum;
    char n[120], dev[600], cost[200];
    counts(v->by_sev, n, sizeof n);
    char ended[64] = "";
    const struct rm_selfcost *sc = &r->m->self;
    if (sc->exit_by[0] && sc->exit_status)
        snprintf(ended, sizeof ended, ", ended by %s(%d)", sc->exit_by, sc->exit_status - 1);
    else if (sc->exit_by[0])
        snprintf(ended, sizeof ended, ", ended by %s", sc->exit_by);
    device_words(v, dev, sizeof dev);
    selfcost_line(r->m, &v->cost, cost, sizeof cost);
    if (md) {
        fputs("## cltrace report: ", o);
        md_cell(o, v->program);
        fputs("\n\n| | |\n|---|---|\n| program | `", o);
        md_cell(o, v->program);
        fprintf(o, "`, %.3f s |\n| findings | %s |\n", v->wall_ns / 1e9, n);
        for (unsigned i = 0; i < r->m->n_overrides; i++) {   /* not the program as it is: said first */
            fprintf(o, "| %s | ", strcmp(r->m->overrides[i].what, "failed") ? "override" : "override failed");
            md_cell(o, r->m->overrides[i].text);
            fputs(" |\n", o);
        }
        for (unsigned i = 0; i < (v->n_devices ? v->n_devices : 1); i++) {
            char line[768];
            if (v->n_devices)
                summary_device_words(r->m, i, line, sizeof line);
            fprintf(o, "| device%s | ", v->n_devices ? " " : "");
            if (v->n_devices)
                fprintf(o, "%u: ", i);
            md_cell(o, v->n_devices ? line : dev);
            fputs(" |\n", o);
        }
        char sampled[1024];
        summary_sampling_words(v, sampled, sizeof sampled);
        if (sampled[0]) {
            fputs("| device timing | ", o);
            md_cell(o, sampled);
            fputs(" |\n", o);
        }
        char memory[768];
        memory_words(r->m, &v->memory, 1, memory, sizeof memory);
        if (memory[0]) {
            fputs("| device memory | ", o);
            md_cell(o, memory);
            fputs(" |\n", o);
        }
        fprintf(o, "| cltrace's cost | %s |\n", cost);
        md_top(o, r);
        fputc('\n', o);
        return;
    }
    fprintf(o, "cltrace report: %s ran %.3f s%s; %s\n\n", v->program, v->wall_ns / 1e9, ended, n);
    for (unsigned i = 0; i < r->m->n_overrides; i++)     /* not the program as it is: said first */
        text_wrap(o, strcmp(r->m->overrides[i].what, "failed") ? "override: " : "override failed: ", "        ",
                  r->m->overrides[i].text, TEXT_COLS);
    if (r->m->n_overrides)
        fputc('\n', o);
    if (v->n_devices) {          /* a line per device: ranks sharing one are one device's time, not a sum */
        fprintf(o, "devices: %u\n", v->n_devices);
        for (unsigned i = 0; i < v->n_devices; i++) {
            char line[768], head[16];
            summary_device_words(r->m, i, line, sizeof line);
            snprintf(head, sizeof head, "  %u  ", i);
            text_wrap(o, head, "        ", line, TEXT_COLS);
        }
    } else {
        text_wrap(o, "device: ", "        ", dev, TEXT_COLS);
    }
    text_sample_and_memory(o, r);
    text_wrap(o, "cost:   ", "        ", cost, TEXT_COLS);
    fputs("        (the account: cltrace-report --explain cost TRACE)\n", o);
    text_top(o, r);
    fputc('\n', o);
}

/* --explain cost (text), and the Markdown's <details> block */
void text_cost_account(FILE *o, const struct rm_model *m, const struct cost_account *a, int md)
{
    char line[200];
    selfcost_line(m, a, line, sizeof line);
    if (!a->known) {
        fprintf(o, "%s\n", line);
        return;
    }
    if (md)
        fprintf(o, "<details><summary>cltrace's own cost: %s</summary>\n\n| what | ms |\n|---|---:|\n", line);
    else
        text_wrap(o, "", "", line, TEXT_COLS);
    const struct { const char *title; const struct cost_row *rows; unsigned n; } part[] = {
        { "counted in the figure", a->counted, a->n_counted },
        { "added for the bound: measured here, may be cltrace's", a->bound, a->n_bound },
    };
    for (unsigned p = 0; p < 2; p++) {
        if (!md)
            fprintf(o, "\n  %-84s %10s\n", part[p].title, "ms");
        else
            fprintf(o, "| **%s** | |\n", part[p].title);
        for (unsigned i = 0; i < part[p].n; i++)
            fprintf(o, md ? "| %s | %.3f |\n" : "    %-82s %10.3f\n", part[p].rows[i].what, part[p].rows[i].ns / 1e6);
        fprintf(o, md ? "| **%s** | **%.3f** |\n" : "    %-82s %10.3f\n", p ? "upper bound" : "the figure",
                (p ? a->upper_ns : a->figure_ns) / 1e6);
    }
    fputs(md ? "\n" : "\n  said, not counted\n", o);
    for (unsigned i = 0; i < a->n_said; i++) {
        char s[360];
        if (a->said[i].ns)
            snprintf(s, sizeof s, "%s: %.3f ms", a->said[i].what, a->said[i].ns / 1e6);
        else
            snprintf(s, sizeof s, "%s", a->said[i].what);
        if (md)
            fprintf(o, "- %s\n", s);
        else
            text_wrap(o, "  - ", "    ", s, TEXT_COLS);
    }
    const char *doc = "What such costs were measured to be on other machines: docs/PERFORMANCE.md.";
    if (md)
        fprintf(o, "\n%s\n\n</details>\n\n", doc);
    else
        fprintf(o, "\n  %s\n", doc);
}
