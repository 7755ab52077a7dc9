/* cltrace-report TRACE...: what is wrong, with numbers, for people and CI.
 * Exit status: 0 fine, 1 findings at or over --fail-on, 2 unusable input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "objects.h"
#include "occupancy.h"

enum sev { SEV_INFO, SEV_WARNING, SEV_ERROR };
static const char *const sev_name[] = { "info", "warning", "error" };

struct finding {
    const char *rule;
    enum sev sev;
    char where[160], numbers[320], fix[320];
};

static struct finding *findings;
static unsigned n_findings, cap_findings;

static struct finding *add(const char *rule, enum sev sev)
{
    if (clt_grow(&findings, n_findings, &cap_findings, sizeof *findings, 32) != 0) {
        fprintf(stderr, "cltrace-report: out of memory\n");
        exit(2);
    }
    struct finding *f = &findings[n_findings++];
    memset(f, 0, sizeof *f);
    f->rule = rule;
    f->sev = sev;
    return f;
}

struct thresholds {
    uint64_t small_bytes;      /* a transfer below this is small */
    uint64_t small_count;      /* this many small transfers make a finding */
    unsigned min_wg;           /* work-items per group (seed 001: at least 64) */
    double min_occupancy;      /* seed 001: gains stop around 50 % */
};

static void kernel_config(const struct rm_kernel *k, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s global=", k->name);
    for (unsigned i = 0; i < k->work_dim && n < (int)cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, "%s%llu", i ? "x" : "", (unsigned long long)k->gws[i]);
    if (n < (int)cap && k->local_null)
        snprintf(buf + n, cap - (size_t)n, " local=NULL");
    else
        for (unsigned i = 0; i < k->work_dim && n < (int)cap; i++)
            n += snprintf(buf + n, cap - (size_t)n, "%s%llu", i ? "x" : " local=", (unsigned long long)k->lws[i]);
}

static void rules(const struct rm_model *m, const struct thresholds *th)
{
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    /* API errors */
    for (unsigned i = 0; i < m->n_errors; i++) {
        struct finding *f = add("api-errors", SEV_ERROR);
        snprintf(f->where, sizeof f->where, "%s", m->errors[i].fn);
        snprintf(f->numbers, sizeof f->numbers, "%llu call(s) returned %s", (unsigned long long)m->errors[i].count,
                 m->errors[i].error);
        snprintf(f->fix, sizeof f->fix, "check the arguments of %s where it returns %s", m->errors[i].fn,
                 m->errors[i].error);
    }
    /* small transfers */
    const struct rm_transfers *x = &m->xfer;
    uint64_t total_ns = 0;
    for (int dd = 0; dd < RM_DIRS; dd++)
        for (int b = 0; b < RM_BUCKETS; b++)
            total_ns += dd == RM_FILL ? 0 : x->ns[dd][b];
    if (x->small_count >= th->small_count) {
        struct finding *f = add("small-transfers", SEV_WARNING);
        snprintf(f->where, sizeof f->where, "host<->device transfers");
        snprintf(f->numbers, sizeof f->numbers, "%llu transfers below %llu bytes, %llu bytes in all, %.0f%% of transfer time",
                 (unsigned long long)x->small_count, (unsigned long long)th->small_bytes,
                 (unsigned long long)x->small_bytes, total_ns ? 100.0 * (double)x->small_ns / (double)total_ns : 0);
        snprintf(f->fix, sizeof f->fix, "batch small transfers into fewer large ones, or map the buffer "
                                         "(clEnqueueMapBuffer) and write in place");
    }
    /* work-group size and device fill, per kernel configuration */
    unsigned cus = d && d->compute_units > 0 ? (unsigned)d->compute_units : 0;
    unsigned warp = d && d->warp > 0 ? (unsigned)d->warp : 0;
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        char cfg[160];
        kernel_config(k, cfg, sizeof cfg);
        if (k->local_null) {
            struct finding *f = add("work-group-multiple", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu launch(es) with local_work_size NULL (left to the implementation)",
                     (unsigned long long)k->launches);
            snprintf(f->fix, sizeof f->fix, "pass a local size that is a multiple of %llu (the kernel's preferred multiple)%s",
                     (unsigned long long)(k->pref_multiple ? k->pref_multiple : warp ? warp : 32),
                     " and at least 64 work-items");
            continue;
        }
        if (k->pref_multiple && k->wg_size % k->pref_multiple) {
            struct finding *f = add("work-group-multiple", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-items per group is not a multiple of the preferred %llu",
                     (unsigned long long)k->wg_size, (unsigned long long)k->pref_multiple);
            snprintf(f->fix, sizeof f->fix, "use a multiple of %llu work-items per group",
                     (unsigned long long)k->pref_multiple);
        } else if (warp && k->wg_size % warp) {
            struct finding *f = add("work-group-multiple", SEV_WARNING);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-items per group is not a multiple of the warp (%u)",
                     (unsigned long long)k->wg_size, warp);
            snprintf(f->fix, sizeof f->fix, "use a multiple of %u work-items per group", warp);
        }
        if (k->wg_size && k->wg_size < th->min_wg) {
            struct finding *f = add("work-group-small", SEV_INFO);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-items per group (fewer than %u)",
                     (unsigned long long)k->wg_size, th->min_wg);
            snprintf(f->fix, sizeof f->fix, "use at least %u work-items per group to hide latency", th->min_wg);
        }
        if (cus && k->work_groups && k->work_groups < 2ull * cus) {
            struct finding *f = add("under-filled-device", k->work_groups < cus ? SEV_WARNING : SEV_INFO);
            snprintf(f->where, sizeof f->where, "%s", cfg);
            snprintf(f->numbers, sizeof f->numbers, "%llu work-groups for %u compute units (%s)",
                     (unsigned long long)k->work_groups, cus,
                     k->work_groups < cus ? "some compute units idle" : "fewer than 2 per compute unit");
            snprintf(f->fix, sizeof f->fix, "launch at least %u work-groups (2 per compute unit; more than 100 "
                                             "to scale to future devices): more work per launch or smaller groups",
                     2 * cus);
        }
        const struct occ_model *om = d && d->cc ? occ_nvidia((unsigned)d->cc) : NULL;
        if (om && k->regs && k->wg_size) {
            struct occ_kernel ok = { (unsigned)k->wg_size, (unsigned)k->regs, (unsigned)k->local_bytes };
            struct occ_result r;
            occ_compute(om, &ok, &r);
            if (r.occupancy < th->min_occupancy) {
                struct finding *f = add("occupancy", SEV_WARNING);
                snprintf(f->where, sizeof f->where, "%s", cfg);
                snprintf(f->numbers, sizeof f->numbers, "%.0f%% occupancy (%u warps of %u), limited by %s: "
                         "%llu registers/work-item, %llu bytes local memory/group",
                         100 * r.occupancy, r.warps, om->max_warps, occ_limit_name(r.limited_by),
                         (unsigned long long)k->regs, (unsigned long long)k->local_bytes);
                snprintf(f->fix, sizeof f->fix, "reduce the limiting resource (%s) or change the work-group size",
                         occ_limit_name(r.limited_by));
            }
        }
    }
    if (m->dropped_calls) {
        struct finding *f = add("dropped-calls", SEV_WARNING);
        snprintf(f->where, sizeof f->where, "trace");
        snprintf(f->numbers, sizeof f->numbers, "%llu calls not recorded (the tracer's buffer was full)",
                 (unsigned long long)m->dropped_calls);
        snprintf(f->fix, sizeof f->fix, "trace again with a larger CLTRACE_BUFFER_KB or CLTRACE_WAIT_US");
    }
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

static void out_json(FILE *o, const struct rm_model *m)
{
    fprintf(o, "{\"schema\":\"cltrace-report/1\",\"truncated\":%s,\"packets\":%llu,\"api\":[",
            m->truncated || !m->has_attributes ? "true" : "false", (unsigned long long)m->packets);
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, a->name);
        fprintf(o, ",\"count\":%llu,\"errors\":%llu,\"total_ns\":%llu,\"mean_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu}",
                (unsigned long long)a->count, (unsigned long long)a->errors, (unsigned long long)a->total_ns,
                (unsigned long long)(a->count ? a->total_ns / a->count : 0), (unsigned long long)a->min_ns,
                (unsigned long long)a->max_ns);
    }
    fprintf(o, "],\"kernels\":[");
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, k->name);
        fprintf(o, ",\"launches\":%llu,\"device_ns\":%llu,\"work_group_size\":%llu,\"local_null\":%s,\"work_groups\":%llu}",
                (unsigned long long)k->launches, (unsigned long long)k->device_ns, (unsigned long long)k->wg_size,
                k->local_null ? "true" : "false", (unsigned long long)k->work_groups);
    }
    static const char *const dirs[RM_DIRS] = { "host_to_device", "device_to_host", "device_to_device", "fill" };
    fprintf(o, "],\"transfers\":{");
    for (int d = 0; d < RM_DIRS; d++) {
        uint64_t c = 0, b = 0, ns = 0;
        for (int k = 0; k < RM_BUCKETS; k++) {
            c += m->xfer.count[d][k];
            b += m->xfer.bytes[d][k];
            ns += m->xfer.ns[d][k];
        }
        fprintf(o, "%s\"%s\":{\"count\":%llu,\"bytes\":%llu,\"ns\":%llu,\"gbps\":%.3f}", d ? "," : "", dirs[d],
                (unsigned long long)c, (unsigned long long)b, (unsigned long long)ns, ns ? (double)b / (double)ns : 0.0);
    }
    fprintf(o, "},\"findings\":[");
    for (unsigned i = 0; i < n_findings; i++) {
        const struct finding *f = &findings[i];
        fprintf(o, "%s{\"rule\":\"%s\",\"severity\":\"%s\",\"where\":", i ? "," : "", f->rule, sev_name[f->sev]);
        json_str(o, f->where);
        fprintf(o, ",\"numbers\":");
        json_str(o, f->numbers);
        fprintf(o, ",\"fix\":");
        json_str(o, f->fix);
        fputc('}', o);
    }
    fprintf(o, "]}\n");
}

static void out_text(FILE *o, const struct rm_model *m)
{
    fprintf(o, "API calls%s\n  %-36s %9s %7s %12s %10s %10s %10s\n",
            m->truncated || !m->has_attributes ? " (trace cut short: the app did not exit cleanly)" : "",
            "function", "count", "errors", "total us", "mean us", "min us", "max us");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        fprintf(o, "  %-36s %9llu %7llu %12.1f %10.2f %10.2f %10.2f\n", a->name, (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0,
                a->min_ns / 1e3, a->max_ns / 1e3);
    }
    if (m->n_kernels) {
        fprintf(o, "\nKernels\n  %-48s %9s %12s\n", "kernel and launch configuration", "launches", "device us");
        for (unsigned i = 0; i < m->n_kernels; i++) {
            char cfg[160];
            kernel_config(&m->kernels[i], cfg, sizeof cfg);
            fprintf(o, "  %-48s %9llu %12.1f\n", cfg, (unsigned long long)m->kernels[i].launches,
                    m->kernels[i].device_ns / 1e3);
        }
    }
    fprintf(o, "\nFindings: %u\n", n_findings);
    for (unsigned i = 0; i < n_findings; i++) {
        const struct finding *f = &findings[i];
        fprintf(o, "  [%s] %s: %s\n      %s\n      fix: %s\n", sev_name[f->sev], f->rule, f->where, f->numbers, f->fix);
    }
}

/* Markdown: fits a CI step summary. Table cells: '|' and newlines escaped. */
static void md_cell(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", o);
        else if (*s == '\n')
            fputc(' ', o);
        else if (*s == '<')
            fputs("&lt;", o);
        else
            fputc(*s, o);
    }
}

static void out_markdown(FILE *o, const struct rm_model *m)
{
    fprintf(o, "## cltrace report\n\n");
    if (m->truncated || !m->has_attributes)
        fprintf(o, "> The trace was cut short (the app crashed or was killed): this reports what it holds.\n\n");
    fprintf(o, "**%u finding(s)**\n\n", n_findings);
    if (n_findings) {
        fprintf(o, "| severity | rule | where | numbers | fix |\n|---|---|---|---|---|\n");
        for (unsigned i = 0; i < n_findings; i++) {
            const struct finding *f = &findings[i];
            fprintf(o, "| %s | `%s` | ", sev_name[f->sev], f->rule);
            md_cell(o, f->where);
            fputs(" | ", o);
            md_cell(o, f->numbers);
            fputs(" | ", o);
            md_cell(o, f->fix);
            fputs(" |\n", o);
        }
        fputc('\n', o);
    }
    fprintf(o, "| API function | calls | errors | total µs | mean µs |\n|---|---:|---:|---:|---:|\n");
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        fprintf(o, "| `%s` | %llu | %llu | %.1f | %.2f |\n", a->name, (unsigned long long)a->count,
                (unsigned long long)a->errors, a->total_ns / 1e3, a->count ? a->total_ns / 1e3 / (double)a->count : 0);
    }
    if (m->n_kernels) {
        fprintf(o, "\n| kernel and launch configuration | launches | device µs |\n|---|---:|---:|\n");
        for (unsigned i = 0; i < m->n_kernels; i++) {
            char cfg[160];
            kernel_config(&m->kernels[i], cfg, sizeof cfg);
            fputs("| ", o);
            md_cell(o, cfg);
            fprintf(o, " | %llu | %.1f |\n", (unsigned long long)m->kernels[i].launches, m->kernels[i].device_ns / 1e3);
        }
    }
}

static void xml_text(FILE *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, o);
        }
    }
}

/* JUnit: each rule a test case; it fails when it has a finding at or over
 * `fail_at` (warning unless --fail-on says otherwise). */
static void out_junit(FILE *o, int fail_at)
{
    static const char *const all_rules[] = { "api-errors", "small-transfers", "work-group-multiple",
                                             "work-group-small", "under-filled-device", "occupancy", "dropped-calls" };
    enum { N_RULES = sizeof all_rules / sizeof all_rules[0] };
    unsigned failures = 0;
    for (unsigned r = 0; r < N_RULES; r++)
        for (unsigned i = 0; i < n_findings; i++)
            if (!strcmp(findings[i].rule, all_rules[r]) && (int)findings[i].sev >= fail_at) {
                failures++;
                break;
            }
    fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
               "<testsuite name=\"cltrace-report\" tests=\"%u\" failures=\"%u\">\n", (unsigned)N_RULES, failures);
    for (unsigned r = 0; r < N_RULES; r++) {
        fprintf(o, "  <testcase classname=\"cltrace\" name=\"%s\">\n", all_rules[r]);
        int failed = 0;
        for (unsigned i = 0; i < n_findings; i++) {
            const struct finding *f = &findings[i];
            if (strcmp(f->rule, all_rules[r]))
                continue;
            if ((int)f->sev >= fail_at && !failed++) {
                fprintf(o, "    <failure message=\"");
                xml_text(o, f->numbers);
                fprintf(o, "\" type=\"%s\">", sev_name[f->sev]);
            }
            if ((int)f->sev >= fail_at) {
                xml_text(o, f->where);
                fputs(": ", o);
                xml_text(o, f->numbers);
                fputs(" (fix: ", o);
                xml_text(o, f->fix);
                fputs(")\n", o);
            }
        }
        if (failed)
            fputs("</failure>\n", o);
        fputs("  </testcase>\n", o);
    }
    fputs("</testsuite>\n</testsuites>\n", o);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace-report [--format text|json|markdown|junit] [--fail-on info|warning|error]\n"
               "                      [--small-bytes N] [--small-count N] TRACE...\n"
               "Exit status: 0 fine, 1 a finding at or over --fail-on, 2 unusable input.\n");
}

int main(int argc, char **argv)
{
    struct thresholds th = { 32768, 10, 64, 0.5 };
    const char *format = "text";
    int fail_on = -1, n_traces = 0;
    static struct rm_model m;
    m.small_threshold = th.small_bytes;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            format = argv[++i];
        } else if (!strcmp(argv[i], "--fail-on") && i + 1 < argc) {
            const char *s = argv[++i];
            fail_on = !strcmp(s, "info") ? SEV_INFO : !strcmp(s, "warning") ? SEV_WARNING : !strcmp(s, "error") ? SEV_ERROR : -2;
            if (fail_on == -2) {
                usage(stderr);
                return 2;
            }
        } else if (!strcmp(argv[i], "--small-bytes") && i + 1 < argc) {
            th.small_bytes = m.small_threshold = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--small-count") && i + 1 < argc) {
            th.small_count = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            usage(stderr);
            return 2;
        } else {
            char err[512];
            if (rm_read(&m, argv[i], err, sizeof err) != 0) {
                fprintf(stderr, "cltrace-report: %s\n", err);
                return 2;
            }
            n_traces++;
        }
    }
    if (!n_traces || (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "markdown") &&
                      strcmp(format, "junit"))) {
        usage(stderr);
        return 2;
    }
    if (m.truncated || !m.has_attributes)
        fprintf(stderr, "cltrace-report: warning: a trace was cut short (the app crashed or was killed); "
                        "reporting what it holds\n");
    rules(&m, &th);
    if (!strcmp(format, "json"))
        out_json(stdout, &m);
    else if (!strcmp(format, "markdown"))
        out_markdown(stdout, &m);
    else if (!strcmp(format, "junit"))
        out_junit(stdout, fail_on >= 0 ? fail_on : SEV_WARNING);
    else
        out_text(stdout, &m);
    int rc = 0;
    for (unsigned i = 0; fail_on >= 0 && i < n_findings; i++)
        if ((int)findings[i].sev >= fail_on)
            rc = 1;
    rm_free(&m);
    free(findings);
    return rc;
}
