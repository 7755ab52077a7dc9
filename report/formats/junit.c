/* --format junit: each rule of the table a test case, failing when it has
 * a finding at or over `fail_at` (warning unless --fail-on says otherwise);
 * cltrace's own cost, the phases and a job's figures as properties. */
#include <string.h>
#include "report/escape/escape.h"
#include "formats.h"

void junit_job(FILE *o, const struct job_view *j)
{
    fprintf(o, "    <property name=\"job.ranks\" value=\"%u\"/>\n"
               "    <property name=\"job.slowest_rank\" value=\"%d\"/>\n    <property name=\"job.kernel\" value=\"",
            j->n, j->slowest->rank);
    xml_text(o, j->kernel ? j->kernel : "");
    fputs("\"/>\n", o);
}

static void properties(FILE *o, const struct report_in *r)
{
    const struct rm_model *m = r->m;
    if (m->self.known) {
        char s[200];
        selfcost_line(m, &r->sum->cost, s, sizeof s);
        fprintf(o, "    <property name=\"cltrace.self_ns\" value=\"%llu\"/>\n", (unsigned long long)m->self.self_ns);
        if (m->self.exit_known)
            fprintf(o, "    <property name=\"cltrace.self_total_ns\" value=\"%llu\"/>\n",
                    (unsigned long long)selfcost_total_ns(m));
        fprintf(o, "    <property name=\"cltrace.self_percent\" value=\"%.2f\"/>\n", selfcost_percent(m));
        fprintf(o, "    <property name=\"cltrace.self_cost\" value=\"");
        xml_text(o, s);
        fputs("\"/>\n", o);
        for (unsigned i = 0; i < m->n_dev; i++) {
            fprintf(o, "    <property name=\"cltrace.device.%u.clock_residual_ns\" value=\"%lld\"/>\n", i,
                    (long long)m->dev[i].clock_residual_ns);
            fprintf(o, "    <property name=\"cltrace.device.%u.clock_floor_ns\" value=\"%lld\"/>\n", i,
                    (long long)m->dev[i].clock_floor_ns);
        }
    }
    for (unsigned i = 0; i < m->n_phases; i++) {
        const struct rm_phase *p = &m->phases[i];
        fputs("    <property name=\"phase.", o);
        xml_text(o, p->path);
        fprintf(o, "\" value=\"api_ms=%.3f device_ms=%.3f device_pct=%.1f transfer_bytes=%llu findings=%u\"/>\n",
                p->api_ns / 1e6, p->device_ns / 1e6, r->phases->device_pct[i], (unsigned long long)p->transfer_bytes,
                r->phases->findings[i]);
    }
    if (r->job)
        junit_job(o, r->job);
}

static void testcase(FILE *o, const struct findings *fs, const char *rule, int fail_at)
{
    fprintf(o, "  <testcase classname=\"cltrace\" name=\"%s\">\n", rule);
    int failed = 0;
    for (unsigned i = 0; i < fs->n; i++) {
        const struct finding *f = &fs->v[i];
        if (strcmp(f->rule, rule) || (int)f->sev < fail_at)
            continue;
        if (!failed++) {
            fprintf(o, "    <failure message=\"");
            xml_text(o, f->numbers);
            fprintf(o, "\" type=\"%s\">", sev_name[f->sev]);
        }
        xml_text(o, f->where);
        fputs(": ", o);
        xml_text(o, f->numbers);
        fputs(" (fix: ", o);
        xml_text(o, f->fix);
        fputs(")\n", o);
    }
    if (failed)
        fputs("</failure>\n", o);
    fputs("  </testcase>\n", o);
}

void format_junit(FILE *o, const struct report_in *r, int fail_at)
{
    const struct findings *fs = r->fs;
    unsigned failures = 0;
    for (const struct rule *t = rule_table; t->id; t++)
        for (unsigned i = 0; i < fs->n; i++)
            if (!strcmp(fs->v[i].rule, t->id) && (int)fs->v[i].sev >= fail_at) {
                failures++;
                break;
            }
    fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
               "<testsuite name=\"cltrace-report\" tests=\"%u\" failures=\"%u\">\n", rule_count(), failures);
    if (r->m->n_phases || r->job || r->m->self.known) {
        fputs("  <properties>\n", o);
        properties(o, r);
        fputs("  </properties>\n", o);
    }
    for (const struct rule *t = rule_table; t->id; t++)
        testcase(o, fs, t->id, fail_at);
    fputs("</testsuite>\n</testsuites>\n", o);
}
