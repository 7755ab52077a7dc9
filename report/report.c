/* cltrace-report TRACE...: what is wrong, with numbers, for people and CI.
 * Read (model/) -> judge (rules/) -> the views (views/) -> present
 * (formats/). Exit status: 0 fine, 1 findings at or over --fail-on, 2
 * unusable input. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CLT_MPI
#include <mpi.h>
#endif
#include "commands.h"
#include "report/formats/formats.h"
#include "report/model/describe.h"
#include "report/model/paths.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace-report [--format text|json|markdown|junit|html|sarif|github] [-o FILE]\n"
               "                      [--fail-on info|warning|error] [--small-bytes N] [--small-count N]\n"
               "                      [--min-wg N] [--min-occupancy PERCENT] [--tuned CAPTURE_DIR]... TRACE...\n"
               "       cltrace-report diff [--threshold PERCENT] [--format text|json] BASE NEW\n"
               "       cltrace-report diverge [--tolerance REL[,ABS]] [--format text|json] A B   (runs traced with --fingerprint)\n"
               "       cltrace-report merge [--ranks R,R...] -o OUT.pftrace[.gz] TRACE...|FOLDER\n"
               "       cltrace-report [--ranks-only] [--jobs N] JOB_FOLDER   (mpirun -n K cltrace-report-mpi JOB_FOLDER)\n"
               "       cltrace-report --rules [--format text|markdown|json]   (every rule, its severity and source)\n"
               "       cltrace-report --annotate OUT.pftrace[.gz] TRACE   (the trace with its findings on the timeline)\n"
               "       cltrace-report --explain cost TRACE...   (what cltrace's own cost figure counts, and its bound)\n"
               "Exit status: 0 fine, 1 a finding at or over --fail-on, 2 unusable input.\n");
}

struct options {
    const char *format, *out_path;
    int fail_on, ranks_only, list_rules;
    const char *explain;         /* --explain cost */
    const char *annotate;        /* --annotate OUT: the trace with its findings on the timeline */
    unsigned threads;
    struct thresholds th;
    struct rm_paths traces;
    const char *tuned[32];       /* --tuned DIR: cltrace tune's results */
    unsigned n_tuned;
};

static int known_format(const char *f)
{
    return !strcmp(f, "text") || !strcmp(f, "json") || !strcmp(f, "markdown") || !strcmp(f, "junit") ||
           !strcmp(f, "html") || !strcmp(f, "sarif") || !strcmp(f, "github");
}

/* 0: go on; -1: done (help printed); 2: bad usage. */
static int parse(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--format") && v)
            o->format = argv[++i];
        else if (!strcmp(a, "--fail-on") && v) {
            i++;
            o->fail_on = !strcmp(v, "info") ? SEV_INFO : !strcmp(v, "warning") ? SEV_WARNING
                       : !strcmp(v, "error") ? SEV_ERROR : -2;
            if (o->fail_on == -2)
                return 2;
        } else if (!strcmp(a, "-o") && v)
            o->out_path = argv[++i];
        else if (!strcmp(a, "--jobs") && v) {
            o->threads = (unsigned)strtoul(argv[++i], NULL, 0);
            o->threads = o->threads ? o->threads : 1;
        } else if (!strcmp(a, "--ranks-only"))
            o->ranks_only = 1;
        else if (!strcmp(a, "--tuned") && v) {
            if (o->n_tuned == 32)
                return 2;
            o->tuned[o->n_tuned++] = argv[++i];
        } else if (!strcmp(a, "--annotate") && v)
            o->annotate = argv[++i];
        else if (!strcmp(a, "--rules"))
            o->list_rules = 1;
        else if (!strcmp(a, "--explain") && v) {
            o->explain = argv[++i];
            if (strcmp(o->explain, "cost"))
                return 2;
        }
        else if (!strcmp(a, "--small-bytes") && v) {
            o->th.small_bytes = strtoull(argv[++i], NULL, 0);
            o->th.small_given = 1;
        } else if (!strcmp(a, "--small-count") && v)
            o->th.small_count = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--min-wg") && v)
            o->th.min_wg = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(a, "--min-occupancy") && v)
            o->th.min_occupancy = strtod(argv[++i], NULL) / 100.0;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (a[0] == '-')
            return 2;
        else if (rm_paths_add(&o->traces, a) != 0)
            return 2;
    }
    return known_format(o->format) ? 0 : 2;
}

/* MPI: every rank's rows to rank 0 (rows are plain structs); ranks other
 * than 0 finalize and exit here. */
static int gather_rows(int rc, int mpi_rank, int mpi_size)
{
#ifdef CLT_MPI
    size_t bytes;
    void *mine = job_rows(&bytes);
    int n = (int)bytes, *counts = NULL, *offs = NULL, total = 0, worst = rc;
    char *all = NULL;
    if (mpi_rank == 0)
        counts = calloc((size_t)mpi_size, sizeof *counts), offs = calloc((size_t)mpi_size, sizeof *offs);
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; mpi_rank == 0 && r < mpi_size; r++) {
        offs[r] = total;
        total += counts[r];
    }
    if (mpi_rank == 0)
        all = malloc(total ? (size_t)total : 1);
    MPI_Gatherv(mine, n, MPI_BYTE, all, counts, offs, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rc, &worst, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (mpi_rank != 0) {
        MPI_Finalize();
        exit(0);
    }
    job_free();                       /* rank 0's own rows come back with the others */
    rc = worst || job_take_rows(all, (size_t)total) != 0 ? 2 : 0;
    free(all);
    free(counts);
    free(offs);
#else
    (void)mpi_rank;
    (void)mpi_size;
#endif
    return rc;
}

/* --ranks-only (and every MPI run): the job section alone, each trace read
 * once; under MPI each rank reads every size-th trace, rank 0 prints. */
static int ranks_report(const struct options *o, int mpi_rank, int mpi_size)
{
    int rc = job_add_all(o->traces.p, o->traces.n, (unsigned)mpi_size, (unsigned)mpi_rank, &o->th, o->threads);
    rc = gather_rows(rc ? 2 : 0, mpi_rank, mpi_size);
    const struct job_view *j = rc == 0 ? job_view() : NULL;
    if (rc == 0 && !job_ranks())
        rc = 2;
    FILE *out = o->out_path ? fopen(o->out_path, "w") : stdout;
    if (rc == 0 && out && j) {
        if (!strcmp(o->format, "json")) {
            fputs("{\"schema\":\"cltrace-report/1\"", out);
            json_job(out, j);
            fputs("}\n", out);
        } else if (!strcmp(o->format, "markdown"))
            text_job(out, j, 1);
        else if (!strcmp(o->format, "html"))
            html_job(out, j);
        else if (!strcmp(o->format, "junit")) {
            fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"cltrace-report\" "
                  "tests=\"0\" failures=\"0\">\n  <properties>\n", out);
            junit_job(out, j);
            fputs("  </properties>\n</testsuite>\n</testsuites>\n", out);
        } else
            text_job(out, j, 0);
    }
    if (out && out != stdout)
        fclose(out);
    job_free();
#ifdef CLT_MPI
    MPI_Finalize();
#endif
    return out ? rc : 2;
}

static int write_report(const struct options *o, const struct report_in *r)
{
    FILE *out = o->out_path ? fopen(o->out_path, "w") : stdout;
    if (!out) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", o->out_path);
        return 2;
    }
    if (o->explain)
        text_cost_account(out, r->m, &r->sum->cost, !strcmp(o->format, "markdown"));
    else if (!strcmp(o->format, "json"))
        format_json(out, r);
    else if (!strcmp(o->format, "sarif"))
        format_sarif(out, r);
    else if (!strcmp(o->format, "github"))
        format_github(out, r);
    else if (!strcmp(o->format, "markdown"))
        format_markdown(out, r);
    else if (!strcmp(o->format, "junit"))
        format_junit(out, r, o->fail_on >= 0 ? o->fail_on : SEV_WARNING);
    else if (!strcmp(o->format, "html"))
        format_html(out, r);
    else
        format_text(out, r);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", o->out_path);
        return 2;
    }
    return 0;
}

/* The report of every trace summed (a job's ranks on their own too). */
static int report(const struct options *o)
{
    static struct rm_model m;
    rm_model_init(&m);
    m.small_threshold = o->th.small_bytes;
    m.small_given = o->th.small_given;
    char err[512];
    if (rm_read_job(&m, o->traces.p, o->traces.n, err, sizeof err) != 0) {   /* ranks on other hosts aligned */
        fprintf(stderr, "cltrace-report: %s\n", err);
        return 2;
    }
    for (unsigned i = 0; i < o->n_tuned; i++) {
        char err[1400];
        if (rm_tuned_read(&m, o->tuned[i], err, sizeof err) != 0) {
            fprintf(stderr, "cltrace-report: --tuned %s\n", err);
            return 2;
        }
    }
    if (o->traces.n > 1 && job_add_all(o->traces.p, o->traces.n, 1, 0, &o->th, o->threads) != 0)
        return 2;
    if (rm_cut_short(&m))
        fprintf(stderr, "cltrace-report: warning: a trace was cut short (%s); reporting what it holds\n",
                rm_cut_short(&m));
    struct findings fs = { 0 };
    rules_run(&m, &o->th, &fs);
    static struct phase_view pv;
    phase_view(&m, &fs, &pv);
    static struct summary_view sv;
    summary_view(&m, &fs, &sv);
    struct report_in in = { &m, &fs, &o->th, &pv, job_view(), &sv };
    int rc = o->annotate ? report_annotate(o->annotate, o->traces.p[0], &m, &fs) : 0;
    rc = rc ? rc : write_report(o, &in);
    for (unsigned i = 0; rc == 0 && o->fail_on >= 0 && i < fs.n; i++)
        rc = (int)fs.v[i].sev >= o->fail_on;
    rm_free(&m);
    findings_free(&fs);
    job_free();
    return rc;
}

int main(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct options o = { .format = "text", .fail_on = -1, .threads = cpus < 1 ? 1 : (unsigned)cpus,
                         .th = THRESHOLDS_DEFAULT };
    int mpi_rank = 0, mpi_size = 1;
#ifdef CLT_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    o.ranks_only = 1;           /* each rank reads its share: the job section, reduced to rank 0 */
#endif
    if (argc > 1 && !strcmp(argv[1], "diff"))
        return report_diff(argc - 2, argv + 2, &o.th);
    if (argc > 1 && !strcmp(argv[1], "diverge"))
        return report_diverge(argc - 2, argv + 2);
    if (argc > 1 && !strcmp(argv[1], "merge")) {
        for (int i = 2; i < argc; i++) {
            if ((!strcmp(argv[i], "--ranks") || !strcmp(argv[i], "-o")) && i + 1 < argc)
                i++;
            else if (rm_paths_add(&o.traces, argv[i]) != 0)
                return 2;
        }
        int rc = report_merge(argc - 2, argv + 2, o.traces.p, o.traces.n);
        rm_paths_free(&o.traces);
        return rc;
    }
    int rc = parse(argc, argv, &o);
    if (rc == 0 && !o.list_rules && (!o.traces.n || (o.annotate && o.traces.n != 1)))
        rc = 2;                 /* --annotate: one trace */
    if (rc == 2)
        usage(stderr);
    else if (rc == 0 && o.list_rules)
        format_rules(stdout, o.format);
    else if (rc == 0 && o.ranks_only)
        rc = ranks_report(&o, mpi_rank, mpi_size);
    else if (rc == 0)
        rc = report(&o);
    rm_paths_free(&o.traces);
    return rc < 0 ? 0 : rc;
}
