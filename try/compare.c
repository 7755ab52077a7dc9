/* The runs compared on the model (report/model/compare.h): each pair of
 * runs' traces read, their kernels matched by name (a change of local size
 * changes a launch's configuration) and summed; the answers compared by the
 * first pair's fingerprints; faster or slower by the model's one rule over
 * the runs' spread. The verdict, then the table. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/model/compare.h"
#include "try.h"

static struct try_kernel *kernel_of(struct try_result *res, const char *name)
{
    for (unsigned i = 0; i < res->n_kernels; i++)
        if (!strcmp(res->kernel[i].name, name))
            return &res->kernel[i];
    if (res->n_kernels == TRY_MAX_KERNELS)
        return NULL;
    struct try_kernel *k = &res->kernel[res->n_kernels++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    return k;
}

static void keep_override(struct try_result *res, const struct rm_override *o)
{
    char line[sizeof res->overrides[0]];
    snprintf(line, sizeof line, "%s%s", strcmp(o->what, "failed") ? "" : "failed: ", o->text);
    for (unsigned i = 0; i < res->n_overrides; i++)
        if (!strcmp(res->overrides[i], line))
            return;
    if (res->n_overrides < sizeof res->overrides / sizeof res->overrides[0])
        memcpy(res->overrides[res->n_overrides++], line, sizeof line);
    res->n_failed += !strcmp(o->what, "failed");
}

/* A run's traces (a program may start others) read into one model, its
 * device time summed (kernels, transfers); *fp the trace with the most
 * fingerprints. 0, or -1: no trace could be read. */
static int read_run(const struct try_run *r, struct rm_model *m, uint64_t *device_ns, char *fp, size_t cap)
{
    DIR *d = opendir(r->dir);
    unsigned best = 0, traces = 0;
    fp[0] = 0;
    rm_model_init(m);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, ".pftrace"))
            continue;
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/%s", r->dir, e->d_name);
        unsigned before = m->n_fpcmds;
        if (rm_read(m, path, err, sizeof err) != 0) {
            fprintf(stderr, "cltrace try: %s\n", err);
            continue;
        }
        traces++;
        if (m->n_fpcmds - before > best || !fp[0]) {
            best = m->n_fpcmds - before;
            snprintf(fp, cap, "%s", path);
        }
    }
    if (d)
        closedir(d);
    *device_ns = 0;
    for (unsigned k = 0; k < m->n_kernels; k++)
        *device_ns += m->kernels[k].device_ns;
    for (unsigned dir = 0; dir < RM_DIRS; dir++)
        for (unsigned b = 0; b < RM_BUCKETS; b++)
            *device_ns += m->xfer.ns[dir][b];
    return traces ? 0 : -1;
}

/* Run i's kernels, as it is and with the change, matched by name. */
static void add_kernels(struct try_result *res, unsigned i, const struct rm_model *as_is, const struct rm_model *changed)
{
    unsigned cap = as_is->n_kernels + changed->n_kernels;
    struct rm_kernel_pair *p = calloc(cap + 1, sizeof *p);
    unsigned n = p ? rm_kernel_pairs(as_is, changed, RM_MATCH_NAME, p, cap) : 0;
    for (unsigned k = 0; k < n; k++) {
        struct try_kernel *t = kernel_of(res, (p[k].base ? p[k].base : p[k].now)->name);
        if (!t)
            continue;
        t->ns[AS_IS][i] += p[k].base_ns;
        t->ns[CHANGED][i] += p[k].now_ns;
        if (i == 0)
            t->launches[AS_IS] += p[k].base_launches;
    }
    free(p);
}

/* A run's trace with fingerprints, read and aligned: 0, or -1 with why. */
static int fp_load(const char *path, struct rm_model *m, struct rm_fp_run *r, char *why, size_t cap)
{
    char err[512];
    rm_model_init(m);
    memset(r, 0, sizeof *r);
    if (rm_read(m, path, err, sizeof err) != 0)
        snprintf(why, cap, "%s", err);
    else if (!m->n_fpcmds)
        snprintf(why, cap, "%s has no fingerprints", path);
    else if (rm_fp_run_init(r, m) != 0)
        snprintf(why, cap, "out of memory");
    else
        return 0;
    return -1;
}

static void fp_unload(struct rm_model *m, struct rm_fp_run *r)
{
    rm_fp_run_free(r);
    rm_free(m);
}

/* The answers of two runs read: 0 the same (within t), 1 they part (why says where). */
static int answers(struct rm_fp_run *a, struct rm_fp_run *b, const struct rm_tolerance *t, char *why, size_t cap)
{
    struct rm_divergence v;
    rm_diverge(a, b, t, &v);
    rm_divergence_line(&v, why, cap);
    size_t n = strlen(why);
    if (v.found && n < cap)
        snprintf(why + n, cap - n, "\n  the %u commands before it: %u identical, %u within the tolerance",
                 v.same + v.near, v.same, v.near);
    return v.found;
}

static int same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y;
    while (same) {
        int c = fgetc(x), d = fgetc(y);
        same = c == d;
        if (c == EOF || d == EOF)
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

static void tail_of(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    out[0] = 0;
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    fseek(f, end > (long)cap - 1 ? end - (long)cap + 1 : 0, SEEK_SET);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    fclose(f);
}

/* median, least and most of v[0..n) */
void try_stats(const uint64_t *v, unsigned n, struct rm_spread *out)
{
    double x[TRY_MAX_RUNS];
    for (unsigned i = 0; i < n && i < TRY_MAX_RUNS; i++)
        x[i] = (double)v[i];
    rm_spread_of(x, n < TRY_MAX_RUNS ? n : TRY_MAX_RUNS, out);
}

/* Each pair of runs read in turn (two models at a time): the device times,
 * the kernels, what the change did; fp: the traces with the most
 * fingerprints of the first pair, and of the second run as it is. 0, or 2
 * with could_not said. */
static int read_runs(struct try_result *res, char fp[3][1024])
{
    static struct rm_model m[2];
    for (unsigned i = 0; i < res->runs; i++) {
        for (int w = AS_IS; w <= CHANGED; w++) {
            const struct try_run *r = &res->run[w][i];
            char tail[1200], path[1024];
            if (r->status != 0 && w == AS_IS) {
                tail_of(r->err, tail, sizeof tail);
                snprintf(res->could_not, sizeof res->could_not, "the program as it is failed (exit %d, run %u); its "
                         "stderr ends:\n%s", r->status, i + 1, tail);
                return 2;
            }
            if (read_run(r, &m[w], &res->device_ns[w][i], path, sizeof path) != 0) {
                snprintf(res->could_not, sizeof res->could_not, "run %u %s left no trace in %s (did it call OpenCL?)",
                         i + 1, w == AS_IS ? "as it is" : "with the change", r->dir);
                rm_free(&m[AS_IS]);
                rm_free(&m[w]);
                return 2;
            }
            if (i == 0 || (i == 1 && w == AS_IS))
                snprintf(fp[i == 0 ? w : 2], sizeof fp[0], "%s", path);
        }
        add_kernels(res, i, &m[AS_IS], &m[CHANGED]);
        for (unsigned k = 0; k < m[CHANGED].n_overrides; k++)
            keep_override(res, &m[CHANGED].overrides[k]);
        rm_free(&m[AS_IS]);
        rm_free(&m[CHANGED]);
    }
    return 0;
}

/* The change was not made as asked (an override failed, or matched nothing): why, with the build log. */
static void not_made(struct try_result *res)
{
    char tail[1200] = "";
    tail_of(res->run[CHANGED][0].err, tail, sizeof tail);
    size_t n = (size_t)snprintf(res->could_not, sizeof res->could_not, "%s",
                                res->n_overrides > res->n_failed ? "the change was not made as asked:"
                                : "the change matched nothing in this program (no program, build or launch "
                                "was changed)");
    for (unsigned i = 0; i < res->n_overrides && n < sizeof res->could_not; i++)
        if (!strncmp(res->overrides[i], "failed: ", 8))
            n += (size_t)snprintf(res->could_not + n, sizeof res->could_not - n, "\n  %s", res->overrides[i] + 8);
    if (strstr(tail, "build log") && n < sizeof res->could_not)
        snprintf(res->could_not + n, sizeof res->could_not - n, "\nits run's stderr ends:\n%s", tail);
}

/* The answers: the first pair (each trace read once), exactly, then within
 * the tolerance; where they part, whether the program's own runs part too. */
static void compare_answers(const struct rm_tolerance *tol, char fp[3][1024], struct try_result *res)
{
    static struct rm_model m[3];
    struct rm_fp_run r[3] = { { 0 }, { 0 }, { 0 } };
    const struct rm_tolerance exact = { 0, 0, 0 };
    char *why = res->results_why;
    size_t cap = sizeof res->results_why;
    int d = 2;
    if (fp_load(fp[AS_IS], &m[0], &r[0], why, cap) == 0 && fp_load(fp[CHANGED], &m[1], &r[1], why, cap) == 0)
        d = answers(&r[0], &r[1], &exact, why, cap);
    if (d == 0) {
        res->results = SAME;
    } else if (d == 1 && tol->on && answers(&r[0], &r[1], tol, why, cap) == 0) {
        res->results = WITHIN;
    } else {
        res->results = d == 1 ? DIVERGE : NOT_COMPARED;
        char own[1024];
        if (d == 1 && res->runs > 1 && fp_load(fp[2], &m[2], &r[2], own, sizeof own) == 0 &&
            answers(&r[0], &r[2], tol, own, sizeof own) == 1) {
            size_t n = strlen(why);
            snprintf(why + n, cap - n, "\n(the program's own runs differ too: its answer is not the same from run "
                     "to run)");
        }
        fp_unload(&m[2], &r[2]);
    }
    fp_unload(&m[0], &r[0]);
    fp_unload(&m[1], &r[1]);
}

void try_compare(const struct try_opts *o, struct try_result *res)
{
    char fp[3][1024];
    struct rm_tolerance tol = { 0, 0, 0 };
    if (o->tolerance && rm_tolerance_parse(o->tolerance, &tol) != 0) {
        snprintf(res->could_not, sizeof res->could_not, "--tolerance %s: REL[,ABS] (e.g. 1e-5 or 1e-5,1e-12)",
                 o->tolerance);
        res->exit = 2;
        return;
    }
    if (read_runs(res, fp) != 0) {
        res->exit = 2;
        return;
    }
    if (res->n_failed || !res->n_overrides) {      /* the change was not made as asked: nothing to compare */
        not_made(res);
        res->exit = 2;
        return;
    }
    compare_answers(&tol, fp, res);
    res->stdout_same = same_file(res->run[AS_IS][0].out, res->run[CHANGED][0].out);
    /* the model's one rule, beyond the runs' spread; one run each knows no
     * spread, and a kernel of microseconds varies by more than 10 % from run
     * to run (PoCL: 1.22x between two runs of one program): no verdict */
    struct rm_spread a, b;
    try_stats(res->device_ns[AS_IS], res->runs, &a);
    try_stats(res->device_ns[CHANGED], res->runs, &b);
    enum rm_trend t = res->runs < 2 ? RM_NO_CHANGE : rm_trend_of(&a, &b, RM_TREND_PERCENT_RUNS);
    res->time = t == RM_FASTER ? FASTER : t == RM_SLOWER ? SLOWER : NO_CLEAR;
    int differs = res->results == DIVERGE || res->run[CHANGED][0].status != res->run[AS_IS][0].status;
    res->exit = res->time == SLOWER || differs ? 1 : res->results == NOT_COMPARED ? 2 : 0;
    if (res->exit == 2)
        snprintf(res->could_not, sizeof res->could_not, "the answers could not be compared: %s", res->results_why);
}
