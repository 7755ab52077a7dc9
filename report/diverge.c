/* cltrace-report diverge A B: where two runs of the same program first
 * differ, from their fingerprints (cltrace --fingerprint).
 *
 * The alignment: each run's fingerprinted commands in the order they were
 * enqueued (#N). Queues are matched by the order they first appear in; on a
 * queue, a kernel launch is matched with the launch of the same kernel name
 * that has the same number there (the 3rd `flux` on the 1st queue with the
 * 3rd `flux` on the 1st queue), a write, copy or fill with the same kind of
 * command of the same number there. A's commands are walked in order; the
 * first that either differs from its partner or has none is the divergence
 * (then B's commands that A lacks, in B's order). Two commands differ when a
 * buffer's bytes differ (exact hash), or, with --tolerance, when a float
 * buffer's NaN or infinity counts differ or its min, max or sum differ by more
 * than the tolerance (relative, plus an absolute part). Exit 1 when the runs
 * diverge, 0 when not, 2 when a trace cannot be read or has no fingerprints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "report/escape/escape.h"
#include "report/model/describe.h"

struct run {
    const char *path;
    struct rm_model m;
    const struct rm_fpcmd **v;         /* by #N */
    unsigned *key_n;                   /* each command's number among its queue's of its name */
    unsigned *queue_ix;                /* its queue's order of first appearance */
    unsigned char *matched;
};

struct tolerance { int on; double rel, abs; };

static int load(struct run *r, const char *path)
{
    char err[512];
    r->path = path;
    r->m.rank = -1;
    if (rm_read(&r->m, path, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace-report diverge: %s\n", err);
        return -1;
    }
    if (!r->m.n_fpcmds) {
        fprintf(stderr, "cltrace-report diverge: %s has no fingerprints%s: trace both runs with "
                "`cltrace --fingerprint -- PROGRAM`\n", path, r->m.fingerprint[0] ? " (none of its commands was chosen)" : "");
        return -1;
    }
    unsigned n = r->m.n_fpcmds;
    r->v = rm_fp_order(&r->m);
    r->key_n = calloc(n, sizeof *r->key_n);
    r->queue_ix = calloc(n, sizeof *r->queue_ix);
    r->matched = calloc(n, 1);
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

static void unload(struct run *r)
{
    free(r->v);
    free(r->key_n);
    free(r->queue_ix);
    free(r->matched);
    rm_free(&r->m);
}

static int partner(const struct run *a, unsigned i, const struct run *b)
{
    for (unsigned j = 0; j < b->m.n_fpcmds; j++)
        if (!b->matched[j] && b->queue_ix[j] == a->queue_ix[i] && b->key_n[j] == a->key_n[i] &&
            !strcmp(b->v[j]->name, a->v[i]->name))
            return (int)j;
    return -1;
}

static int near(double x, double y, const struct tolerance *t)
{
    return fabs(x - y) <= t->rel * fmax(fabs(x), fabs(y)) + t->abs;
}

/* 0 same; 1 same within the tolerance; 2 differ (why in buf). */
static int compare_fp(const struct rm_fp *x, const struct rm_fp *y, const struct tolerance *t, char *why, size_t cap)
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

static void side(FILE *out, const char *label, const struct run *r, const struct rm_fpcmd *c, const struct rm_fp *f,
                 int json)
{
    char buf[RM_MAX_SITE + 128], cmd[256], args[RM_FP_ARGS * 24] = "";
    rm_fpcmd_describe(c, cmd, sizeof cmd);
    for (unsigned i = 0, n = 0; i < c->n_args && n < sizeof args; i++)
        n += (size_t)snprintf(args + n, sizeof args - n, "%s%llu", i ? ", " : "", (unsigned long long)c->args[i]);
    const char *site = rm_fpcmd_site(&r->m, c);
    if (f)
        rm_fp_buffer_describe(&r->m, f, buf, sizeof buf);
    if (json) {
        fprintf(out, "  \"%s\": {\"trace\": ", label);
        json_str(out, r->path);
        fprintf(out, ", \"command\": ");
        json_str(out, cmd);
        fprintf(out, ", \"number\": %llu, \"kernel_args\": [%s], \"enqueued_at\": ", (unsigned long long)c->cmd_n, args);
        json_str(out, site);
        if (f) {
            fprintf(out, ", \"buffer\": ");
            json_str(out, buf);
            fprintf(out, ", \"hash\": \"%016llx\", \"nan\": %llu, \"pos_inf\": %llu, \"neg_inf\": %llu, "
                    "\"min\": %.17g, \"max\": %.17g, \"sum\": %.17g", (unsigned long long)f->hash,
                    (unsigned long long)f->nan, (unsigned long long)f->pos_inf, (unsigned long long)f->neg_inf,
                    f->min, f->max, f->sum);
        }
        fprintf(out, "}");
        return;
    }
    fprintf(out, "  %s (%s): %s\n", label, r->path, cmd);
    if (c->n_args)
        fprintf(out, "      arguments: %s (buffers as object ids)\n", args);
    if (site[0])
        fprintf(out, "      enqueued at %s\n", site);
    if (f) {
        fprintf(out, "      %s: hash %016llx", buf, (unsigned long long)f->hash);
        if (strcmp(f->type, "bytes"))
            fprintf(out, ", NaN %llu, +Inf %llu, -Inf %llu, min %.9g, max %.9g, sum %.9g", (unsigned long long)f->nan,
                    (unsigned long long)f->pos_inf, (unsigned long long)f->neg_inf, f->min, f->max, f->sum);
        fprintf(out, "\n");
    }
}

struct verdict { int found; const struct run *first; unsigned i; int j; unsigned fp; char why[300]; unsigned same, near; };

static void walk(struct run *a, struct run *b, const struct tolerance *t, struct verdict *v)
{
    for (unsigned i = 0; i < a->m.n_fpcmds && !v->found; i++) {
        int j = partner(a, i, b);
        if (j < 0) {
            *v = (struct verdict){ 1, a, i, -1, 0, "", v->same, v->near };
            snprintf(v->why, sizeof v->why, "the other run has no such command (the command streams part here)");
            return;
        }
        b->matched[j] = 1;
        int worst = 0;
        const struct rm_fpcmd *x = a->v[i], *y = b->v[j];
        if (x->work_dim != y->work_dim || memcmp(x->gws, y->gws, sizeof x->gws) ||
            (!x->local_null && !y->local_null && memcmp(x->lws, y->lws, sizeof x->lws))) {
            *v = (struct verdict){ 1, a, i, j, 0, "", v->same, v->near };
            snprintf(v->why, sizeof v->why, "launch configurations differ (the program chose them: by device?); "
                     "outputs not compared");
            return;
        }
        for (unsigned k = 0; k < x->n && k < y->n; k++) {
            char why[300];
            int d = compare_fp(&x->fp[k], &y->fp[k], t, why, sizeof why);
            if (d == 2) {
                *v = (struct verdict){ 1, a, i, j, k, "", v->same, v->near };
                snprintf(v->why, sizeof v->why, "%s", why);
                return;
            }
            worst = d > worst ? d : worst;
        }
        if (x->n != y->n) {
            *v = (struct verdict){ 1, a, i, j, 0, "", v->same, v->near };
            snprintf(v->why, sizeof v->why, "%u buffers fingerprinted against %u", x->n, y->n);
            return;
        }
        worst ? v->near++ : v->same++;
    }
    for (unsigned j = 0; j < b->m.n_fpcmds && !v->found; j++)
        if (!b->matched[j]) {
            *v = (struct verdict){ 1, b, j, -1, 0, "", v->same, v->near };
            snprintf(v->why, sizeof v->why, "the other run has no such command (it ends before)");
        }
}

static int parse_tolerance(const char *s, struct tolerance *t)
{
    char *end;
    t->rel = strtod(s, &end);
    t->abs = 0;
    if (*end == ',')
        t->abs = strtod(end + 1, &end);
    t->on = 1;
    return *end || t->rel < 0 || t->abs < 0 ? -1 : 0;
}

int report_diverge(int argc, char **argv)
{
    struct tolerance t = { 0, 0, 0 };
    const char *paths[2] = { NULL, NULL }, *format = "text";
    unsigned np = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--tolerance") && i + 1 < argc) {
            if (parse_tolerance(argv[++i], &t) != 0) {
                fprintf(stderr, "cltrace-report diverge: --tolerance REL[,ABS] (e.g. 1e-5 or 1e-5,1e-12)\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc &&
                   (!strcmp(argv[i + 1], "text") || !strcmp(argv[i + 1], "json"))) {
            format = argv[++i];
        } else if (argv[i][0] != '-' && np < 2) {
            paths[np++] = argv[i];
        } else {
            np = 3;
            break;
        }
    }
    if (np != 2) {
        fprintf(stderr, "usage: cltrace-report diverge [--tolerance REL[,ABS]] [--format text|json] A B\n");
        return 2;
    }
    struct run a = { 0 }, b = { 0 };
    if (load(&a, paths[0]) != 0 || load(&b, paths[1]) != 0) {
        unload(&a);
        unload(&b);
        return 2;
    }
    struct verdict v = { 0 };
    walk(&a, &b, &t, &v);
    int json = !strcmp(format, "json");
    const struct run *other = v.first == &a ? &b : &a;
    if (json) {
        printf("{\n  \"diverged\": %s,\n  \"compared\": %u,\n  \"identical\": %u,\n  \"within_tolerance\": %u,\n",
               v.found ? "true" : "false", v.same + v.near, v.same, v.near);
        if (t.on)
            printf("  \"tolerance\": {\"relative\": %g, \"absolute\": %g},\n", t.rel, t.abs);
        if (v.found) {
            printf("  \"why\": ");
            json_str(stdout, v.why);
            printf(",\n");
            const struct rm_fpcmd *c = v.first->v[v.i];
            side(stdout, v.first == &a ? "a" : "b", v.first, c, &c->fp[v.fp < c->n ? v.fp : 0], 1);
            if (v.j >= 0) {
                printf(",\n");
                const struct rm_fpcmd *d = other->v[v.j];
                side(stdout, "b", other, d, &d->fp[v.fp < d->n ? v.fp : 0], 1);
            }
            printf("\n");
        } else {
            printf("  \"commands_a\": %u, \"commands_b\": %u\n", a.m.n_fpcmds, b.m.n_fpcmds);
        }
        printf("}\n");
    } else if (!v.found) {
        printf("no divergence: %u commands compared, %u identical, %u within the tolerance\n", v.same + v.near,
               v.same, v.near);
    } else {
        char cmd[256];
        rm_fpcmd_describe(v.first->v[v.i], cmd, sizeof cmd);
        printf("diverged at %s: %s\n", cmd, v.why);
        printf("  the %u commands before it: %u identical, %u within the tolerance\n", v.same + v.near, v.same, v.near);
        const struct rm_fpcmd *c = v.first->v[v.i];
        side(stdout, v.first == &a ? "A" : "B", v.first, c, c->n ? &c->fp[v.fp < c->n ? v.fp : 0] : NULL, 0);
        if (v.j >= 0) {
            const struct rm_fpcmd *d = other->v[v.j];
            side(stdout, "B", other, d, d->n ? &d->fp[v.fp < d->n ? v.fp : 0] : NULL, 0);
        }
    }
    unload(&a);
    unload(&b);
    return v.found ? 1 : 0;
}
