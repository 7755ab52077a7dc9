/* cltrace-report diff BASE NEW: what got slower or newly wrong between two
 * runs of the same program (or two jobs: folders of traces, summed). Kernels
 * are matched by name and launch configuration (mean device time per
 * launch), API functions by name (mean time per call), transfers by
 * direction (total time). Exit 1 when a kernel or a transfer direction got
 * slower by more than the threshold, or a new finding at or over --fail-on
 * appeared; 0 otherwise; 2 unusable input. Slower is the model's one rule
 * (report/model/compare.h), one run each: by more than the threshold
 * (RM_TREND_PERCENT_ONE_RUN by default) and by a microsecond. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "report/escape/escape.h"
#include "report/model/compare.h"
#include "report/model/describe.h"
#include "report/model/paths.h"

struct change { char what[200]; double base, now, pct; int gate; };
struct changes { struct change *v; unsigned n; };

/* A trace, or a job's folder of traces (summed: a job against a job). */
static int read_one(struct rm_model *m, const char *path, const struct thresholds *th)
{
    char err[512];
    rm_model_init(m);
    m->small_threshold = th->small_bytes;
    m->small_given = th->small_given;
    struct rm_paths ps = { 0 };
    int rc = rm_paths_add(&ps, path) == 0 && ps.n ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i < ps.n; i++)
        if (rm_read(m, ps.p[i], err, sizeof err) != 0) {
            fprintf(stderr, "cltrace-report: %s\n", err);
            rc = -1;
        }
    rm_paths_free(&ps);
    return rc;
}

static void add(struct changes *c, double base, double now, int gate)
{
    struct change *x = &c->v[c->n++];
    x->base = base;
    x->now = now;
    x->pct = rm_change_percent(base, now);
    x->gate = gate;
}

/* Kernels (mean per launch), transfer directions (total), API functions
 * (mean per call: host call times are too noisy to gate on). */
static void compare(const struct rm_model *base, const struct rm_model *now, struct changes *c)
{
    unsigned cap = base->n_kernels + now->n_kernels;
    struct rm_kernel_pair *p = calloc(cap + 1, sizeof *p);
    unsigned n = p ? rm_kernel_pairs(base, now, RM_MATCH_CONFIG, p, cap) : 0;
    for (unsigned i = 0; i < n; i++) {
        if (!p[i].base_launches || !p[i].now_launches)
            continue;
        kernel_config(p[i].now, c->v[c->n].what, sizeof c->v[c->n].what);
        add(c, (double)p[i].base_ns / (double)p[i].base_launches, (double)p[i].now_ns / (double)p[i].now_launches, 1);
    }
    free(p);
    static const char *const dir[RM_DIRS] = { "transfers host to device", "transfers device to host",
                                              "transfers device to device", "fills" };
    for (int d = 0; d < RM_DIRS; d++) {
        uint64_t b = 0, x = 0;
        for (int k = 0; k < RM_BUCKETS; k++) {
            b += base->xfer.ns[d][k];
            x += now->xfer.ns[d][k];
        }
        if (!b || !x)
            continue;
        snprintf(c->v[c->n].what, sizeof c->v[c->n].what, "%s (total)", dir[d]);
        add(c, (double)b, (double)x, 1);
    }
    for (unsigned i = 0; i < now->n_api; i++)
        for (unsigned j = 0; j < base->n_api; j++) {
            const struct rm_api *a = &now->api[i], *b = &base->api[j];
            if (strcmp(a->name, b->name) || !a->count || !b->count)
                continue;
            snprintf(c->v[c->n].what, sizeof c->v[c->n].what, "%s (mean per call)", a->name);
            add(c, (double)b->total_ns / (double)b->count, (double)a->total_ns / (double)a->count, 0);
            break;
        }
}

/* Prints the changes; 1 if one regressed (slower by the model's rule). */
static int print_changes(const struct changes *c, double threshold, int json)
{
    int rc = 0;
    if (json)
        printf("{\"schema\":\"cltrace-report-diff/1\",\"threshold_percent\":%.1f,\"changes\":[", threshold);
    else
        printf("%-60s %12s %12s %8s\n", "what", "base us", "new us", "change");
    for (unsigned i = 0; i < c->n; i++) {
        const struct change *x = &c->v[i];
        struct rm_spread b = { x->base, x->base, x->base, 1 }, n = { x->now, x->now, x->now, 1 };
        int regressed = x->gate && rm_trend_of(&b, &n, threshold) == RM_SLOWER;
        rc |= regressed;
        if (json) {
            printf("%s{\"what\":", i ? "," : "");
            json_str(stdout, x->what);
            printf(",\"base_ns\":%.0f,\"new_ns\":%.0f,\"change_percent\":%.1f,\"gated\":%s,\"regression\":%s}",
                   x->base, x->now, x->pct, x->gate ? "true" : "false", regressed ? "true" : "false");
        } else {
            printf("%-60.60s %12.2f %12.2f %+7.1f%%%s\n", x->what, x->base / 1e3, x->now / 1e3, x->pct,
                   regressed ? "  REGRESSION" : "");
        }
    }
    return rc;
}

/* The findings NEW has that BASE has not (a rule and place); 1 if one is at or over fail_on. */
static int print_new_findings(const struct findings *base, const struct findings *now, int fail_on, int json)
{
    int rc = 0;
    unsigned shown = 0;
    printf(json ? "],\"new_findings\":[" : "\nnew findings (in NEW, not in BASE):\n");
    for (unsigned i = 0; i < now->n; i++) {
        const struct finding *f = &now->v[i];
        int old = 0;
        for (unsigned j = 0; j < base->n && !old; j++)
            old = !strcmp(base->v[j].rule, f->rule) && !strcmp(base->v[j].where, f->where);
        if (old)
            continue;
        rc |= (int)f->sev >= fail_on;
        if (json) {
            printf("%s{\"rule\":\"%s\",\"severity\":\"%s\",\"where\":", shown ? "," : "", f->rule, sev_name[f->sev]);
            json_str(stdout, f->where);
            printf(",\"numbers\":");
            json_str(stdout, f->numbers);
            putchar('}');
        } else {
            printf("  [%s] %s: %s\n      %s\n", sev_name[f->sev], f->rule, f->where, f->numbers);
        }
        shown++;
    }
    if (!json && !shown)
        printf("  none\n");
    return rc;
}

int report_diff(int argc, char **argv, const struct thresholds *th)
{
    double threshold = RM_TREND_PERCENT_ONE_RUN;
    const char *format = "text", *paths[2] = { NULL, NULL };
    int fail_on = SEV_ERROR, n = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--threshold") && i + 1 < argc)
            threshold = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--format") && i + 1 < argc)
            format = argv[++i];
        else if (!strcmp(argv[i], "--fail-on") && i + 1 < argc) {
            const char *s = argv[++i];
            fail_on = !strcmp(s, "info") ? SEV_INFO : !strcmp(s, "warning") ? SEV_WARNING : SEV_ERROR;
        } else if (argv[i][0] != '-' && n < 2)
            paths[n++] = argv[i];
        else
            n = 3;
    }
    if (n != 2 || (strcmp(format, "text") && strcmp(format, "json"))) {
        fprintf(stderr, "usage: cltrace-report diff [--threshold PERCENT] [--fail-on info|warning|error] "
                        "[--format text|json] BASE NEW\n");
        return 2;
    }
    static struct rm_model base, now;
    if (read_one(&base, paths[0], th) || read_one(&now, paths[1], th))
        return 2;
    struct findings fb = { 0 }, fn = { 0 };
    rules_run(&base, th, &fb);
    rules_run(&now, th, &fn);
    struct changes c = { calloc(now.n_kernels + now.n_api + RM_DIRS + 1, sizeof *c.v), 0 };
    if (!c.v)
        return 2;
    compare(&base, &now, &c);
    int json = !strcmp(format, "json");
    int rc = print_changes(&c, threshold, json);
    rc |= print_new_findings(&fb, &fn, fail_on, json);
    if (json)
        printf("],\"regression\":%s}\n", rc ? "true" : "false");
    free(c.v);
    findings_free(&fb);
    findings_free(&fn);
    rm_free(&base);
    rm_free(&now);
    return rc;
}
