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
#include "job.h"

#define MAX_KERNELS 16          /* per rank: the kernels with the most device time */

struct rank_row {
    int rank;
    char host[64], file[256];
    double api_ms, device_ms, kernel_ms, transfer_mb;
    unsigned findings;          /* warnings and errors */
    char rules[512];            /* the rules it found, space separated */
    struct { char name[RM_MAX_NAME]; double ms; } k[MAX_KERNELS];
    unsigned n_k;
};

static struct rank_row *rows;
static unsigned n_rows, cap_rows;

static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;   /* rules() fills one global list */

/* One rank's trace into its row (any thread). */
static int job_row(const char *path, const struct thresholds *th, struct rank_row *r, int index)
{
    static struct rm_model empty;
    struct rm_model m = empty;
    m.small_threshold = th->small_bytes;
    m.small_given = th->small_given;
    m.rank = -1;
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
    for (int d = 0; d < RM_DIRS; d++)
        for (int b = 0; b < RM_BUCKETS; b++)
            r->transfer_mb += m.xfer.bytes[d][b] / 1e6;
    for (unsigned i = 0; i < m.n_kernels; i++) {      /* by name, configurations summed */
        unsigned j = 0;
        while (j < r->n_k && strcmp(r->k[j].name, m.kernels[i].name))
            j++;
        if (j == r->n_k && r->n_k < MAX_KERNELS)
            snprintf(r->k[r->n_k++].name, RM_MAX_NAME, "%s", m.kernels[i].name);
        if (j < r->n_k)
            r->k[j].ms += m.kernels[i].device_ns / 1e6;
    }
    /* this rank's findings, then forget them: the summed report runs the rules again */
    pthread_mutex_lock(&rules_lock);
    unsigned before = n_findings;
    rules(&m, th);
    for (unsigned i = before; i < n_findings; i++)
        if (findings[i].sev >= SEV_WARNING) {
            r->findings++;
            if (!strstr(r->rules, findings[i].rule) && strlen(r->rules) + strlen(findings[i].rule) + 2 < sizeof r->rules)
                strcat(strcat(r->rules, r->rules[0] ? " " : ""), findings[i].rule);
        }
    n_findings = before;
    pthread_mutex_unlock(&rules_lock);
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

int job_add(const char *path, const struct thresholds *th)
{
    struct rank_row *r = malloc(sizeof *r);
    int rc = r ? job_row(path, th, r, (int)n_rows) : -1;
    if (rc == 0)
        rc = push_row(r);
    free(r);
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

static const struct { const char *name; size_t off; } metrics[] = {
    { "api_ms", offsetof(struct rank_row, api_ms) }, { "device_ms", offsetof(struct rank_row, device_ms) },
    { "kernel_ms", offsetof(struct rank_row, kernel_ms) }, { "transfer_mb", offsetof(struct rank_row, transfer_mb) },
};
#define N_METRICS (sizeof metrics / sizeof metrics[0])

void job_text(FILE *o, int markdown)
{
    qsort(rows, n_rows, sizeof *rows, by_rank);
    fprintf(o, markdown ? "## Job: %u ranks\n\n| rank | host | API ms | device busy ms | kernel ms | transfers MB | findings |\n"
                          "|---:|---|---:|---:|---:|---:|---:|\n"
                        : "Job: %u ranks\n  %5s %-16s %10s %14s %10s %13s %9s\n",
            n_rows, "rank", "host", "API ms", "device busy ms", "kernel ms", "transfers MB", "findings");
    for (unsigned i = 0; i < n_rows; i++) {
        const struct rank_row *r = &rows[i];
        fprintf(o, markdown ? "| %d | %s | %.3f | %.3f | %.3f | %.3f | %u |\n" : "  %5d %-16s %10.3f %14.3f %10.3f %13.3f %9u\n",
                r->rank, r->host, r->api_ms, r->device_ms, r->kernel_ms, r->transfer_mb, r->findings);
    }
    fprintf(o, markdown ? "\n**Imbalance** (max / mean)\n\n" : "\nImbalance (max / mean)\n");
    for (unsigned k = 0; k < N_METRICS; k++) {
        struct stat_ s = stat_of(metrics[k].off);
        fprintf(o, markdown ? "- %s: max %.3f (rank %d), mean %.3f, **%.2fx**\n" : "  %-12s max %.3f (rank %d), mean %.3f, %.2fx\n",
                metrics[k].name, s.max, rows[s.at].rank, s.mean, s.mean > 0 ? s.max / s.mean : 0);
    }
    const struct rank_row *sl = &rows[slowest()];
    double extra;
    const char *k = culprit(&extra);
    fprintf(o, markdown ? "\nslowest rank: **%d** (%s)" : "  slowest rank: %d (%s)", sl->rank, sl->host);
    if (k)
        fprintf(o, "; kernel %s: %.3f ms more than its mean over the ranks", k, extra);
    struct stat_ t = stat_of(offsetof(struct rank_row, transfer_mb));
    if (t.mean > 0 && sl->transfer_mb > 1.2 * t.mean)
        fprintf(o, "; transfers %.3f MB against a mean of %.3f", sl->transfer_mb, t.mean);
    fputc('\n', o);
    /* findings grouped across ranks */
    fprintf(o, markdown ? "\n**Findings by rule, across ranks**\n\n" : "\nFindings by rule, across ranks\n");
    for (unsigned i = 0; all_rules[i]; i++) {
        char ranks[256] = "";
        unsigned n = 0;
        for (unsigned j = 0; j < n_rows; j++) {
            const char *p = strstr(rows[j].rules, all_rules[i]);
            size_t len = strlen(all_rules[i]);
            if (!p || (p[len] && p[len] != ' ') || (p != rows[j].rules && p[-1] != ' '))
                continue;
            if (strlen(ranks) < sizeof ranks - 12)
                snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), "%s%d", n ? ", " : "", rows[j].rank);
            n++;
        }
        if (n)
            fprintf(o, markdown ? "- `%s`: rank%s %s\n" : "  %-24s rank%s %s\n", all_rules[i], n > 1 ? "s" : "", ranks);
    }
    fputc('\n', o);
}

void job_json(FILE *o)
{
    qsort(rows, n_rows, sizeof *rows, by_rank);
    fputs(",\"job\":{\"ranks\":[", o);
    for (unsigned i = 0; i < n_rows; i++) {
        const struct rank_row *r = &rows[i];
        fprintf(o, "%s{\"rank\":%d,\"host\":", i ? "," : "", r->rank);
        json_str(o, r->host);
        fputs(",\"file\":", o);
        json_str(o, r->file);
        fprintf(o, ",\"api_ms\":%.3f,\"device_ms\":%.3f,\"kernel_ms\":%.3f,\"transfer_mb\":%.3f,\"findings\":%u,\"rules\":",
                r->api_ms, r->device_ms, r->kernel_ms, r->transfer_mb, r->findings);
        json_str(o, r->rules);
        fputc('}', o);
    }
    fputs("],\"imbalance\":{", o);
    for (unsigned k = 0; k < N_METRICS; k++) {
        struct stat_ s = stat_of(metrics[k].off);
        fprintf(o, "%s\"%s\":{\"max\":%.3f,\"mean\":%.3f,\"ratio\":%.3f,\"rank\":%d}", k ? "," : "", metrics[k].name,
                s.max, s.mean, s.mean > 0 ? s.max / s.mean : 0, rows[s.at].rank);
    }
    double extra;
    const char *k = culprit(&extra);
    fprintf(o, "},\"slowest_rank\":%d,\"kernel\":", rows[slowest()].rank);
    json_str(o, k ? k : "");
    fprintf(o, ",\"kernel_extra_ms\":%.3f}", extra);
}

/* The job alone (--ranks-only): a JSON object of its own. */
void job_json_only(FILE *o)
{
    fputs("{\"schema\":\"cltrace-report/1\"", o);
    job_json(o);
    fputs("}\n", o);
}

void job_junit(FILE *o)
{
    double extra;
    const char *k = culprit(&extra);
    fprintf(o, "    <property name=\"job.ranks\" value=\"%u\"/>\n"
               "    <property name=\"job.slowest_rank\" value=\"%d\"/>\n    <property name=\"job.kernel\" value=\"",
            n_rows, rows[slowest()].rank);
    xml_text(o, k ? k : "");
    fputs("\"/>\n", o);
}

/* HTML: the same table, as text in a <pre> (escaped). */
void job_html(FILE *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    job_text(m, 0);
    fclose(m);
    fputs("<h2>Job</h2>\n<pre>", o);
    xml_text(o, buf);
    fputs("</pre>\n", o);
    free(buf);
}

void job_free(void)
{
    free(rows);
    rows = NULL;
    n_rows = cap_rows = 0;
}
