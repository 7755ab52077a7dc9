/* Where two runs' answers part, by their fingerprints: the alignment and
 * the comparison that compare.h describes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "describe.h"

int rm_fp_run_init(struct rm_fp_run *r, const struct rm_model *m)
{
    unsigned n = m->n_fpcmds;
    memset(r, 0, sizeof *r);
    r->m = m;
    r->v = rm_fp_order(m);
    r->key_n = calloc(n + 1, sizeof *r->key_n);
    r->queue_ix = calloc(n + 1, sizeof *r->queue_ix);
    r->matched = calloc(n + 1, 1);
    if (!r->v || !r->key_n || !r->queue_ix || !r->matched)
        return -1;
    uint64_t queues[64];
    unsigned nq = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned q = 0;
        while (q < nq && queues[q] != r->v[i]->queue)
            q++;
        if (q == nq && nq < 64)
            queues[nq++] = r->v[i]->queue;
        r->queue_ix[i] = q;
        unsigned k = 1;
        for (unsigned j = 0; j < i; j++)
            k += r->queue_ix[j] == q && !strcmp(r->v[j]->name, r->v[i]->name);
        r->key_n[i] = k;
    }
    return 0;
}

void rm_fp_run_free(struct rm_fp_run *r)
{
    free(r->v);
    free(r->key_n);
    free(r->queue_ix);
    free(r->matched);
    memset(r, 0, sizeof *r);
}

int rm_tolerance_parse(const char *s, struct rm_tolerance *t)
{
    char *end;
    t->rel = strtod(s, &end);
    t->abs = 0;
    if (*end == ',')
        t->abs = strtod(end + 1, &end);
    t->on = 1;
    return *end || end == s || t->rel < 0 || t->abs < 0 ? -1 : 0;
}

static int partner(const struct rm_fp_run *a, unsigned i, const struct rm_fp_run *b)
{
    for (unsigned j = 0; j < b->m->n_fpcmds; j++)
        if (!b->matched[j] && b->queue_ix[j] == a->queue_ix[i] && b->key_n[j] == a->key_n[i] &&
            !strcmp(b->v[j]->name, a->v[i]->name))
            return (int)j;
    return -1;
}

static int near(double x, double y, const struct rm_tolerance *t)
{
    return fabs(x - y) <= t->rel * fmax(fabs(x), fabs(y)) + t->abs;
}

/* 0 same; 1 same within the tolerance; 2 differ (why in buf). */
static int compare_fp(const struct rm_fp *x, const struct rm_fp *y, const struct rm_tolerance *t, char *why,
                      size_t cap)
{
    if (x->error || y->error) {
        snprintf(why, cap, "a readback failed (%lld, %lld): not compared", (long long)x->error, (long long)y->error);
        return x->error && y->error ? 0 : 2;
    }
    if (x->bytes != y->bytes) {
        snprintf(why, cap, "sizes differ: %llu and %llu bytes", (unsigned long long)x->bytes,
                 (unsigned long long)y->bytes);
        return 2;
    }
    if (x->hash == y->hash)
        return 0;
    int fl = strcmp(x->type, "bytes") != 0;
    if (!t->on || !fl) {
        snprintf(why, cap, "contents differ (hash %016llx against %016llx)%s", (unsigned long long)x->hash,
                 (unsigned long long)y->hash, fl ? "" : "; not float data: no tolerance applies");
        return 2;
    }
    if (x->nan != y->nan || x->pos_inf != y->pos_inf || x->neg_inf != y->neg_inf) {
        snprintf(why, cap, "NaN/+Inf/-Inf counts differ: %llu/%llu/%llu against %llu/%llu/%llu",
                 (unsigned long long)x->nan, (unsigned long long)x->pos_inf, (unsigned long long)x->neg_inf,
                 (unsigned long long)y->nan, (unsigned long long)y->pos_inf, (unsigned long long)y->neg_inf);
        return 2;
    }
    const char *f = !near(x->min, y->min, t) ? "min" : !near(x->max, y->max, t) ? "max"
                  : !near(x->sum, y->sum, t) ? "sum" : NULL;
    double a = f == NULL ? 0 : f[1] == 'i' ? x->min : f[1] == 'a' ? x->max : x->sum;
    double b = f == NULL ? 0 : f[1] == 'i' ? y->min : f[1] == 'a' ? y->max : y->sum;
    if (f) {
        snprintf(why, cap, "%s differs beyond the tolerance: %.9g against %.9g (relative %.3g)", f, a, b,
                 fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-300));
        return 2;
    }
    snprintf(why, cap, "contents differ, min, max and sum within the tolerance");
    return 1;
}

static void parted(struct rm_divergence *v, const struct rm_fp_run *first, unsigned i, int j, unsigned fp,
                   const char *why)
{
    v->found = 1;
    v->first = first;
    v->i = i;
    v->j = j;
    v->fp = fp;
    snprintf(v->why, sizeof v->why, "%s", why);
}

/* Command i of a against its partner j of b: 0 the same, 1 within the tolerance, 2 parted (v says). */
static int compare_cmd(const struct rm_fp_run *a, unsigned i, const struct rm_fp_run *b, int j,
                       const struct rm_tolerance *t, struct rm_divergence *v)
{
    const struct rm_fpcmd *x = a->v[i], *y = b->v[j];
    if (x->work_dim != y->work_dim || memcmp(x->gws, y->gws, sizeof x->gws) ||
        (!x->local_null && !y->local_null && memcmp(x->lws, y->lws, sizeof x->lws))) {
        parted(v, a, i, j, 0, "launch configurations differ (the program chose them: by device?); outputs not "
               "compared");
        return 2;
    }
    int worst = 0;
    for (unsigned k = 0; k < x->n && k < y->n; k++) {
        char why[300];
        int d = compare_fp(&x->fp[k], &y->fp[k], t, why, sizeof why);
        if (d == 2) {
            parted(v, a, i, j, k, why);
            return 2;
        }
        worst = d > worst ? d : worst;
    }
    if (x->n != y->n) {
        char why[80];
        snprintf(why, sizeof why, "%u buffers fingerprinted against %u", x->n, y->n);
        parted(v, a, i, j, 0, why);
        return 2;
    }
    return worst;
}

void rm_diverge(struct rm_fp_run *a, struct rm_fp_run *b, const struct rm_tolerance *t, struct rm_divergence *v)
{
    memset(v, 0, sizeof *v);
    memset(b->matched, 0, b->m->n_fpcmds);      /* the same pair compared again (another tolerance) */
    for (unsigned i = 0; i < a->m->n_fpcmds; i++) {
        int j = partner(a, i, b);
        if (j < 0) {
            parted(v, a, i, -1, 0, "the other run has no such command (the command streams part here)");
            return;
        }
        b->matched[j] = 1;
        int d = compare_cmd(a, i, b, j, t, v);
        if (d == 2)
            return;
        d ? v->near++ : v->same++;
    }
    for (unsigned j = 0; j < b->m->n_fpcmds; j++)
        if (!b->matched[j]) {
            parted(v, b, j, -1, 0, "the other run has no such command (it ends before)");
            return;
        }
}

void rm_divergence_line(const struct rm_divergence *v, char *out, size_t cap)
{
    if (!v->found) {
        snprintf(out, cap, "no divergence: %u commands compared, %u identical, %u within the tolerance",
                 v->same + v->near, v->same, v->near);
        return;
    }
    char cmd[256];
    rm_fpcmd_describe(v->first->v[v->i], cmd, sizeof cmd);
    snprintf(out, cap, "diverged at %s: %s", cmd, v->why);
}
