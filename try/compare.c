/* The runs compared: each run's traces read (report/model), its kernels'
 * device time summed by name; the answers compared by `cltrace-report
 * diverge` on the first pair's fingerprints; the verdict, then the table. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/beside.h"
#include "report/model/model.h"
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

/* A run's traces (a program may start others): kernels summed by name, the
 * device time, what was overridden; *fp the trace with most fingerprints. */
static int read_run(struct try_result *res, int which, unsigned i, char *fp, size_t cap)
{
    const struct try_run *r = &res->run[which][i];
    DIR *d = opendir(r->dir);
    unsigned best = 0, traces = 0;
    fp[0] = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, ".pftrace"))
            continue;
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/%s", r->dir, e->d_name);
        struct rm_model m;
        memset(&m, 0, sizeof m);
        m.rank = -1;
        if (rm_read(&m, path, err, sizeof err) != 0) {
            fprintf(stderr, "cltrace try: %s\n", err);
            continue;
        }
        traces++;
        for (unsigned k = 0; k < m.n_kernels; k++) {
            struct try_kernel *t = kernel_of(res, m.kernels[k].name);
            if (t) {
                t->ns[which][i] += m.kernels[k].device_ns;
                if (i == 0)
                    t->launches[which] += m.kernels[k].launches;
            }
            res->device_ns[which][i] += m.kernels[k].device_ns;
        }
        for (unsigned dir = 0; dir < RM_DIRS; dir++)
            for (unsigned b = 0; b < RM_BUCKETS; b++)
                res->device_ns[which][i] += m.xfer.ns[dir][b];
        for (unsigned k = 0; which == CHANGED && k < m.n_overrides; k++)
            keep_override(res, &m.overrides[k]);
        if (m.n_fpcmds > best || !fp[0]) {
            best = m.n_fpcmds;
            snprintf(fp, cap, "%s", path);
        }
        rm_free(&m);
    }
    if (d)
        closedir(d);
    return traces ? 0 : -1;
}

/* `cltrace-report diverge [--tolerance T] A B`: its exit status, its first lines in why. */
static int diverge(const char *a, const char *b, const char *tolerance, char *why, size_t cap)
{
    char report[1024];
    why[0] = 0;
    if (clt_find_beside("cltrace-report", report, sizeof report) != 0) {
        snprintf(why, cap, "cltrace-report is not beside cltrace-try");
        return 2;
    }
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return 2;
    pid_t pid = fork();
    if (pid < 0) {              /* no child to wait for: never a verdict from another's status */
        snprintf(why, cap, "cannot run cltrace-report: %s", strerror(errno));
        close(pipefd[0]);
        close(pipefd[1]);
        return 2;
    }
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        if (tolerance)
            execl(report, report, "diverge", "--tolerance", tolerance, a, b, (char *)NULL);
        else
            execl(report, report, "diverge", a, b, (char *)NULL);
        _exit(2);
    }
    close(pipefd[1]);
    FILE *f = fdopen(pipefd[0], "r");
    char line[512];
    size_t n = 0;
    for (unsigned k = 0; f && fgets(line, sizeof line, f);)
        if (k++ < 4 && n + 1 < cap) {
            n += (size_t)snprintf(why + n, cap - n, "%s", line);
            n = n < cap ? n : cap - 1;      /* cut: snprintf says what it would have written */
        }
    if (f)
        fclose(f);
    int st = 0;
    waitpid(pid, &st, 0);
    while (n && why[n - 1] == '\n')
        why[--n] = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* median, min, max of v[0..n) */
void try_stats(const uint64_t *v, unsigned n, uint64_t out[3])
{
    uint64_t s[TRY_MAX_RUNS];
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_u64);
    out[0] = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    out[1] = s[0];
    out[2] = s[n - 1];
}

void try_compare(const struct try_opts *o, struct try_result *res)
{
    char fp[2][TRY_MAX_RUNS][1024];
    for (int w = AS_IS; w <= CHANGED; w++)
        for (unsigned i = 0; i < res->runs; i++) {
            const struct try_run *r = &res->run[w][i];
            char tail[1200];
            if (r->status != 0 && w == AS_IS) {
                tail_of(r->err, tail, sizeof tail);
                snprintf(res->could_not, sizeof res->could_not, "the program as it is failed (exit %d, run %u); its "
                         "stderr ends:\n%s", r->status, i + 1, tail);
                res->exit = 2;
                return;
            }
            if (read_run(res, w, i, fp[w][i], sizeof fp[w][i]) != 0) {
                snprintf(res->could_not, sizeof res->could_not, "run %u %s left no trace in %s (did it call OpenCL?)",
                         i + 1, w == AS_IS ? "as it is" : "with the change", r->dir);
                res->exit = 2;
                return;
            }
        }
    if (res->n_failed || !res->n_overrides) {      /* the change was not made as asked: nothing to compare */
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
        res->exit = 2;
        return;
    }
    /* the answers: the first pair, exactly, then within the tolerance */
    int d = diverge(fp[AS_IS][0], fp[CHANGED][0], NULL, res->results_why, sizeof res->results_why);
    if (d == 0) {
        res->results = SAME;
    } else if (d == 1 && o->tolerance &&
               diverge(fp[AS_IS][0], fp[CHANGED][0], o->tolerance, res->results_why, sizeof res->results_why) == 0) {
        res->results = WITHIN;
    } else {
        res->results = d == 1 ? DIVERGE : NOT_COMPARED;
        char own[1024];
        if (d == 1 && res->runs > 1 && diverge(fp[AS_IS][0], fp[AS_IS][1], o->tolerance, own, sizeof own) == 1) {
            size_t n = strlen(res->results_why);
            snprintf(res->results_why + n, sizeof res->results_why - n, "\n(the program's own runs differ too: "
                     "its answer is not the same from run to run)");
        }
    }
    res->stdout_same = same_file(res->run[AS_IS][0].out, res->run[CHANGED][0].out);
    uint64_t a[3], b[3];
    try_stats(res->device_ns[AS_IS], res->runs, a);
    try_stats(res->device_ns[CHANGED], res->runs, b);
    /* beyond the runs' spread, and by 2 % at least (one run each: no spread known) */
    res->time = res->runs < 2 ? NO_CLEAR : b[2] < a[1] && b[0] < a[0] * 0.98 ? FASTER
                : b[1] > a[2] && b[0] > a[0] * 1.02 ? SLOWER : NO_CLEAR;
    int differs = res->results == DIVERGE || res->run[CHANGED][0].status != res->run[AS_IS][0].status;
    res->exit = res->time == SLOWER || differs ? 1 : res->results == NOT_COMPARED ? 2 : 0;
    if (res->exit == 2)
        snprintf(res->could_not, sizeof res->could_not, "the answers could not be compared: %s", res->results_why);
}
