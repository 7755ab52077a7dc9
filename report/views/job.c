/* A job: the traces of its ranks side by side. Each trace is read on its
 * own (its aggregates, its findings), then: a row per rank, the imbalance
 * of each figure (max, mean, max/mean, which rank), the slowest rank and the
 * kernels and transfers that make the difference, and every rule's findings
 * grouped across ranks. The summed report of all traces follows as usual. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "views.h"

static struct rank_row *rows;
static unsigned n_rows, cap_rows;

static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;

/* One rank's trace into its row (any thread). */
static int job_row(const char *path, const struct thresholds *th, struct rank_row *r, int index)
{
    struct rm_model m;
    rm_model_init(&m);
    m.small_threshold = th->small_bytes;
    m.small_given = th->small_given;
    char err[512];
    if (rm_read(&m, path, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace-report: %s\n", err);
        return -1;
    }
    memset(r, 0, sizeof *r);
    r->rank = m.rank >= 0 ? m.rank : index;
    snprintf(r->host, sizeof r->host, "%s", m.host[0] ? m.host : "?");
    snprintf(r->file, sizeof r->file, "%s", path);
    for (unsigned i = 0; i < m.n_api; i++)
        r->api_ms += m.api[i].total_ns / 1e6;
    r->kernel_ms = m.tl.kernel_ns / 1e6;
    r->device_ms = (m.tl.kernel_ns + m.tl.transfer_ns - m.tl.overlap_ns) / 1e6;
    r->device_idle_ms = m.tl.idle_ns / 1e6;
    for (int d = 0; d < RM_DIRS; d++)
        for (int b = 0; b < RM_BUCKETS; b++)
            r->transfer_mb += m.xfer.bytes[d][b] / 1e6;
    for (unsigned i = 0; i < m.n_kernels; i++) {      /* by name, configurations summed */
        unsigned j = 0;
        while (j < r->n_k && strcmp(r->k[j].name, m.kernels[i].name))
            j++;
        if (j == r->n_k && r->n_k < JOB_MAX_KERNELS)
            snprintf(r->k[r->n_k++].name, RM_MAX_NAME, "%s", m.kernels[i].name);
        if (j < r->n_k)
            r->k[j].ms += m.kernels[i].device_ns / 1e6;
    }
    r->mpi_calls = m.mpi.calls;
    r->mpi_ms = m.mpi.in_mpi_ns / 1e6;
    r->mpi_busy_ms = m.mpi.busy_ns / 1e6;
    r->mpi_idle_ms = m.mpi.idle_ns / 1e6;
    r->mpi_wait_idle_ms = m.mpi.wait_idle_ns / 1e6;
    for (unsigned i = 0; i < m.mpi.n_fns; i++) {
        snprintf(r->mpi_fn[i].name, sizeof r->mpi_fn[i].name, "%s", m.mpi.fns[i].name);
        r->mpi_fn[i].calls = m.mpi.fns[i].calls;
        r->mpi_fn[i].ms = m.mpi.fns[i].ns / 1e6;
    }
    r->n_mpi_fn = m.mpi.n_fns;
    for (int w = 0; w < 2; w++) {
        r->clock_have[w] = m.mpi_clock[w].have;
        r->clock_offset_ns[w] = m.mpi_clock[w].offset;
        r->clock_rtt_ns[w] = (long long)m.mpi_clock[w].rtt;
    }
    /* this rank's findings (the summed report runs the rules again) */
    struct findings fs = { 0 };
    rules_run(&m, th, &fs);
    for (unsigned i = 0; i < fs.n; i++)
        if (fs.v[i].sev >= SEV_WARNING) {
            r->findings++;
            if (!strstr(r->rules, fs.v[i].rule) && strlen(r->rules) + strlen(fs.v[i].rule) + 2 < sizeof r->rules)
                strcat(strcat(r->rules, r->rules[0] ? " " : ""), fs.v[i].rule);
        }
    findings_free(&fs);
    rm_free(&m);
    return 0;
}

static int push_row(const struct rank_row *r)
{
    pthread_mutex_lock(&rows_lock);
    int rc = clt_grow(&rows, n_rows, &cap_rows, sizeof *rows, 16);
    if (rc == 0)
        rows[n_rows++] = *r;
    pthread_mutex_unlock(&rows_lock);
    return rc;
}

/* Every trace of a job, `threads` at a time: the analysis uses every core. */
struct pool { char **paths; unsigned n, next; const struct thresholds *th; int failed; pthread_mutex_t lock; };

static void *pool_worker(void *arg)
{
    struct pool *p = arg;
    struct rank_row *r = malloc(sizeof *r);
    for (;;) {
        pthread_mutex_lock(&p->lock);
        unsigned i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n || !r)
            break;
        if (job_row(p->paths[i], p->th, r, (int)i) != 0 || push_row(r) != 0)
            p->failed = 1;
    }
    free(r);
    return NULL;
}

int job_add_all(char **paths, unsigned n, unsigned stride, unsigned first, const struct thresholds *th,
                unsigned threads)
{
    /* this process's share: paths first, first + stride, ... (MPI ranks) */
    char **mine = malloc((n ? n : 1) * sizeof *mine);
    unsigned k = 0;
    for (unsigned i = first; mine && i < n; i += stride)
        mine[k++] = paths[i];
    struct pool p = { mine, k, 0, th, !mine, PTHREAD_MUTEX_INITIALIZER };
    pthread_t t[64];
    unsigned nt = 0;
    while (mine && nt < threads && nt < 64 && nt < k && pthread_create(&t[nt], NULL, pool_worker, &p) == 0)
        nt++;
    if (!nt)
        pool_worker(&p);
    for (unsigned i = 0; i < nt; i++)
        pthread_join(t[i], NULL);
    free(mine);
    return p.failed ? -1 : 0;
}

/* MPI: every rank's rows to rank 0, as bytes (rows are plain structs). */
void *job_rows(size_t *bytes)
{
    *bytes = n_rows * sizeof *rows;
    return rows;
}

int job_take_rows(const void *data, size_t bytes)
{
    const struct rank_row *r = data;
    for (size_t i = 0; i < bytes / sizeof *r; i++)
        if (push_row(&r[i]) != 0)
            return -1;
    return 0;
}

unsigned job_ranks(void)
{
    return n_rows;
}

static int by_rank(const void *a, const void *b)
{
    return ((const struct rank_row *)a)->rank - ((const struct rank_row *)b)->rank;
}

struct stat_ { double max, mean; unsigned at; };

static struct stat_ stat_of(size_t field)
{
    struct stat_ s = { 0, 0, 0 };
    for (unsigned i = 0; i < n_rows; i++) {
        double v = *(const double *)((const char *)&rows[i] + field);
        s.mean += v / n_rows;
        if (v > s.max) {
            s.max = v;
            s.at = i;
        }
    }
    return s;
}

static double kernel_ms(const struct rank_row *r, const char *name)
{
    for (unsigned j = 0; j < r->n_k; j++)
        if (!strcmp(r->k[j].name, name))
            return r->k[j].ms;
    return 0;
}

/* The slowest rank: the most device time, else the most API time. */
static unsigned slowest(void)
{
    struct stat_ d = stat_of(offsetof(struct rank_row, device_ms)), a = stat_of(offsetof(struct rank_row, api_ms));
    return d.max > 0 ? d.at : a.at;
}

/* The kernel whose time on the slowest rank exceeds its mean the most. */
static const char *culprit(double *extra)
{
    const struct rank_row *s = &rows[slowest()];
    const char *best = NULL;
    *extra = 0;
    for (unsigned j = 0; j < s->n_k; j++) {
        double mean = 0;
        for (unsigned i = 0; i < n_rows; i++)
            mean += kernel_ms(&rows[i], s->k[j].name) / n_rows;
        if (s->k[j].ms - mean > *extra) {
            *extra = s->k[j].ms - mean;
            best = s->k[j].name;
        }
    }
    return best;
}

static const struct { const char *name; size_t off; } metrics[JOB_METRICS] = {
    { "api_ms", offsetof(struct rank_row, api_ms) }, { "device_ms", offsetof(struct rank_row, device_ms) },
    { "kernel_ms", offsetof(struct rank_row, kernel_ms) }, { "transfer_mb", offsetof(struct rank_row, transfer_mb) },
};

/* Does the space-separated list hold this rule (a whole word)? */
static int has_rule(const char *list, const char *rule)
{
    size_t len = strlen(rule);
    for (const char *p = list; (p = strstr(p, rule)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (!p[len] || p[len] == ' '))
            return 1;
    return 0;
}

static struct job_view view;

const struct job_view *job_view(void)
{
    if (n_rows < 2)
        return NULL;
    qsort(rows, n_rows, sizeof *rows, by_rank);
    view = (struct job_view){ .rows = rows, .n = n_rows };
    for (unsigned k = 0; k < JOB_METRICS; k++) {
        struct stat_ s = stat_of(metrics[k].off);
        view.imbalance[k] = (struct job_stat){ metrics[k].name, s.max, s.mean, s.mean > 0 ? s.max / s.mean : 0,
                                               rows[s.at].rank };
    }
    view.slowest = &rows[slowest()];
    view.kernel = culprit(&view.kernel_extra_ms);
    view.transfer_mean_mb = stat_of(offsetof(struct rank_row, transfer_mb)).mean;
    for (const struct rule *r = rule_table; r->id && view.n_by_rule < 32; r++) {
        struct job_by_rule *g = &view.by_rule[view.n_by_rule];
        *g = (struct job_by_rule){ .rule = r->id };
        for (unsigned j = 0; j < n_rows; j++) {
            if (!has_rule(rows[j].rules, r->id))
                continue;
            size_t len = strlen(g->ranks);
            if (len < sizeof g->ranks - 12)
                snprintf(g->ranks + len, sizeof g->ranks - len, "%s%d", g->n ? ", " : "", rows[j].rank);
            g->n++;
        }
        view.n_by_rule += g->n > 0;
    }
    return &view;
}

void job_free(void)
{
    free(rows);
    rows = NULL;
    n_rows = cap_rows = 0;
}
