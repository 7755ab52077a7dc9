/* cltrace-report diff BASE NEW: what got slower or newly wrong between two
 * runs of the same program (or two jobs: folders of traces, summed). Kernels are matched by name and launch
 * configuration (mean device time per launch), API functions by name (mean
 * time per call), transfers by direction (total time). Exit 1 when a kernel
 * or a transfer direction got slower by more than the threshold, or a new
 * finding at or over --fail-on appeared; 0 otherwise; 2 unusable input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

struct change { char what[200]; double base, now, pct; int gate; };

static double pct(double base, double now) { return base > 0 ? 100.0 * (now - base) / base : 0; }

static int same_config(const struct rm_kernel *a, const struct rm_kernel *b)
{
    return !strcmp(a->name, b->name) && a->work_dim == b->work_dim && a->local_null == b->local_null &&
           !memcmp(a->gws, b->gws, sizeof a->gws) && !memcmp(a->lws, b->lws, sizeof a->lws);
}

/* A trace, or a job's folder of traces (summed: a job against a job). */
static int read_one(struct rm_model *m, const char *path, const struct thresholds *th)
{
    char err[512];
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

int report_diff(int argc, char **argv, const struct thresholds *th)
{
    double threshold = 10;     /* percent */
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
    /* findings of each; a new one is a rule and place NEW has and BASE has not */
    rules(&base, th);
    unsigned n_base = n_findings;
    rules(&now, th);

    struct change *ch = calloc(now.n_kernels + now.n_api + RM_DIRS + 1, sizeof *ch);
    unsigned nc = 0;
    if (!ch)
        return 2;
    for (unsigned i = 0; i < now.n_kernels; i++) {
        const struct rm_kernel *k = &now.kernels[i];
        for (unsigned j = 0; j < base.n_kernels; j++) {
            const struct rm_kernel *b = &base.kernels[j];
            if (!same_config(k, b) || !k->launches || !b->launches)
                continue;
            struct change *c = &ch[nc++];
            kernel_config(k, c->what, sizeof c->what);
            c->base = (double)b->device_ns / (double)b->launches;
            c->now = (double)k->device_ns / (double)k->launches;
            c->pct = pct(c->base, c->now);
            c->gate = 1;
            break;
        }
    }
    static const char *const dir[RM_DIRS] = { "transfers host to device", "transfers device to host",
                                              "transfers device to device", "fills" };
    for (int d = 0; d < RM_DIRS; d++) {
        uint64_t b = 0, x = 0;
        for (int k = 0; k < RM_BUCKETS; k++) {
            b += base.xfer.ns[d][k];
            x += now.xfer.ns[d][k];
        }
        if (!b || !x)
            continue;
        struct change *c = &ch[nc++];
        snprintf(c->what, sizeof c->what, "%s (total)", dir[d]);
        c->base = (double)b;
        c->now = (double)x;
        c->pct = pct(c->base, c->now);
        c->gate = 1;
    }
    for (unsigned i = 0; i < now.n_api; i++) {
        const struct rm_api *a = &now.api[i];
        for (unsigned j = 0; j < base.n_api; j++)
            if (!strcmp(a->name, base.api[j].name) && a->count && base.api[j].count) {
                struct change *c = &ch[nc++];
                snprintf(c->what, sizeof c->what, "%s (mean per call)", a->name);
                c->base = (double)base.api[j].total_ns / (double)base.api[j].count;
                c->now = (double)a->total_ns / (double)a->count;
                c->pct = pct(c->base, c->now);
                c->gate = 0;      /* host call times are too noisy to gate on */
                break;
            }
    }
    int rc = 0;
    int json = !strcmp(format, "json");
    if (json)
        printf("{\"schema\":\"cltrace-report-diff/1\",\"threshold_percent\":%.1f,\"changes\":[", threshold);
    else
        printf("%-60s %12s %12s %8s\n", "what", "base us", "new us", "change");
    for (unsigned i = 0; i < nc; i++) {
        const struct change *c = &ch[i];
        int regressed = c->gate && c->pct > threshold && c->now - c->base > 1000;   /* and > 1 us */
        rc |= regressed;
        if (json) {
            printf("%s{\"what\":", i ? "," : "");
            json_str(stdout, c->what);
            printf(",\"base_ns\":%.0f,\"new_ns\":%.0f,\"change_percent\":%.1f,\"gated\":%s,\"regression\":%s}",
                   c->base, c->now, c->pct, c->gate ? "true" : "false", regressed ? "true" : "false");
        } else {
            printf("%-60.60s %12.2f %12.2f %+7.1f%%%s\n", c->what, c->base / 1e3, c->now / 1e3, c->pct,
                   regressed ? "  REGRESSION" : "");
        }
    }
    if (json)
        printf("],\"new_findings\":[");
    else
        printf("\nnew findings (in NEW, not in BASE):\n");
    unsigned shown = 0;
    for (unsigned i = n_base; i < n_findings; i++) {
        const struct finding *f = &findings[i];
        int old = 0;
        for (unsigned j = 0; j < n_base && !old; j++)
            old = !strcmp(findings[j].rule, f->rule) && !strcmp(findings[j].where, f->where);
        if (old)
            continue;
        if ((int)f->sev >= fail_on)
            rc = 1;
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
    if (json)
        printf("],\"regression\":%s}\n", rc ? "true" : "false");
    else if (!shown)
        printf("  none\n");
    free(ch);
    rm_free(&base);
    rm_free(&now);
    return rc;
}
