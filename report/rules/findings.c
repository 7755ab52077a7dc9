/* The findings list: adding, the texts, and the ranking. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "rules.h"

const char *const sev_name[] = { "info", "warning", "error" };

static void out_of_memory(void)
{
    fprintf(stderr, "cltrace-report: out of memory\n");
    exit(2);
}

static char *empty_text(void)
{
    char *s = strdup("");
    if (!s)
        out_of_memory();
    return s;
}

void finding_span(struct finding *f, const uint64_t *span)
{
    if (span[1] && span[1] >= span[0]) {
        f->span[0] = span[0];
        f->span[1] = span[1];
    }
}

struct finding *finding_add(struct findings *l, const char *rule, enum sev sev, int phase)
{
    if (clt_grow(&l->v, l->n, &l->cap, sizeof *l->v, 32) != 0)
        out_of_memory();
    struct finding *f = &l->v[l->n++];
    *f = (struct finding){ .rule = rule, .sev = sev, .phase = phase, .gain_ns = -1 };
    f->where = empty_text();
    f->numbers = empty_text();
    f->fix = empty_text();
    f->gain_method = empty_text();
    f->class_why = empty_text();
    return f;
}

void finding_set(char **field, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory();
    free(*field);
    *field = s;
}

static void finding_free(struct finding *f);

void findings_free(struct findings *l)
{
    for (unsigned i = 0; i < l->n; i++)
        finding_free(&l->v[i]);
    free(l->v);
    *l = (struct findings){ 0 };
}

/* Several traces (a job's ranks): a gain summed over them is a share of
 * their device timelines summed, not of one timeline (4 ranks' waits on one
 * GPU read 143 % of it). */
double finding_gain_percent(const struct rm_model *m, const struct finding *f)
{
    uint64_t span = m->traces_read > 1 && m->trace_spans_ns ? m->trace_spans_ns : rm_timeline_span(&m->tl);
    return f->gain_ns >= 0 && span ? 100.0 * f->gain_ns / (double)span : -1;
}

const char *finding_gain_basis(const struct rm_model *m)
{
    return m->traces_read > 1 && m->trace_spans_ns ? "of the ranks' device timelines, summed" : "of the device timeline";
}

static void finding_free(struct finding *f)
{
    free(f->where);
    free(f->numbers);
    free(f->fix);
    free(f->gain_method);
    free(f->class_why);
    free(f->stack);
}

/* A platform whose device timestamps cannot be true (devtiming.c): the
 * findings made of device time alone go (device-idle, low-bandwidth), and
 * no gain is estimated from it; what the host side shows stays. */
void findings_without_device_time(const struct rm_model *m, struct findings *l, unsigned start)
{
    if (!m->dt.unusable)
        return;
    unsigned k = start;
    for (unsigned i = start; i < l->n; i++) {
        struct finding *f = &l->v[i];
        if (!strcmp(f->rule, "device-idle") || !strcmp(f->rule, "low-bandwidth")) {
            finding_free(f);
            continue;
        }
        if (f->gain_ns >= 0 || f->gain_method[0]) {
            f->gain_ns = -1;
            finding_set(&f->gain_method, "not estimated: device timing unusable on this platform");
        }
        l->v[k++] = *f;
    }
    l->n = k;
}

/* Each finding's whole stack, where its where holds one. */
void findings_stacks(const struct rm_model *m, struct findings *l, unsigned start)
{
    for (unsigned i = start; i < l->n; i++) {
        const char *full = rm_stack_full(m, l->v[i].where);
        if (full && !l->v[i].stack && !(l->v[i].stack = strdup(full)))
            out_of_memory();
    }
}

/* Within a severity, findings with an estimated gain come first, largest
 * first, the others after in the order the rules ran (insertion sort:
 * stable, and the list is short). */
static int before(const struct finding *a, const struct finding *b)
{
    if (a->library != b->library)
        return b->library;      /* a library's own calls: after every finding of the program */
    if (a->sev != b->sev)
        return a->sev > b->sev;
    return a->gain_ns >= 0 && (b->gain_ns < 0 || a->gain_ns > b->gain_ns);
}

void findings_rank(const struct rm_model *m, struct findings *l, unsigned start)
{
    /* dropped-calls stays first: every count below is short by it */
    unsigned first = start + (l->n > start && !strcmp(l->v[start].rule, "dropped-calls"));
    for (unsigned i = first; i < l->n; i++) {
        double pct = finding_gain_percent(m, &l->v[i]);
        if (l->v[i].sev == SEV_WARNING && pct >= 0 && pct < 1.0)
            l->v[i].sev = SEV_INFO;
    }
    for (unsigned i = first + 1; i < l->n; i++) {
        struct finding f = l->v[i];
        unsigned j = i;
        for (; j > first && before(&f, &l->v[j - 1]); j--)
            l->v[j] = l->v[j - 1];
        l->v[j] = f;
    }
}
