/* cltrace-report TRACE...: what is wrong, with numbers, for people and CI.
 * Exit status: 0 fine, 1 findings at or over --fail-on, 2 unusable input. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CLT_MPI
#include <mpi.h>
#endif
#include "common/map.h"
#include "job.h"
#include "model.h"
#include "report.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace-report [--format text|json|markdown|junit|html] [-o FILE]\n"
               "                      [--fail-on info|warning|error] [--small-bytes N] [--small-count N]\n"
               "                      [--min-wg N] [--min-occupancy PERCENT] TRACE...\n"
               "       cltrace-report diff [--threshold PERCENT] [--format text|json] BASE NEW\n"
               "       cltrace-report merge [--ranks R,R...] -o OUT.pftrace[.gz] TRACE...|FOLDER\n"
               "       cltrace-report [--ranks-only] [--jobs N] JOB_FOLDER   (mpirun -n K cltrace-report-mpi JOB_FOLDER)\n"
               "Exit status: 0 fine, 1 a finding at or over --fail-on, 2 unusable input.\n");
}

/* The traces to read: files, and the traces in a folder (a job's). */
static struct rm_paths traces;

/* --ranks-only (and every MPI run): the job section alone, each trace read
 * once, on `threads` threads; under MPI each rank reads every size-th trace
 * and rank 0 gathers the rows. */
static int ranks_report(const char *format, const char *out_path, const struct thresholds *th, unsigned threads,
                        int mpi_rank, int mpi_size)
{
    int rc = job_add_all(traces.p, traces.n, (unsigned)mpi_size, (unsigned)mpi_rank, th, threads) != 0 ? 2 : 0;
#ifdef CLT_MPI
    size_t bytes;
    void *mine = job_rows(&bytes);
    int n = (int)bytes, *counts = NULL, *offs = NULL;
    char *all = NULL;
    if (mpi_rank == 0)
        counts = calloc((size_t)mpi_size, sizeof *counts), offs = calloc((size_t)mpi_size, sizeof *offs);
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; mpi_rank == 0 && r < mpi_size; r++) {
        offs[r] = total;
        total += counts[r];
    }
    if (mpi_rank == 0)
        all = malloc(total ? (size_t)total : 1);
    MPI_Gatherv(mine, n, MPI_BYTE, all, counts, offs, MPI_BYTE, 0, MPI_COMM_WORLD);
    int worst = rc;
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
#endif
    if (rc == 0 && !job_ranks())
        rc = 2;
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (rc == 0 && out) {
        if (!strcmp(format, "json"))
            job_json_only(out);
        else if (!strcmp(format, "markdown"))
            job_text(out, 1);
        else if (!strcmp(format, "html"))
            job_html(out);
        else if (!strcmp(format, "junit")) {
            fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"cltrace-report\" tests=\"0\" "
                  "failures=\"0\">\n  <properties>\n", out);
            job_junit(out);
            fputs("  </properties>\n</testsuite>\n</testsuites>\n", out);
        } else
            job_text(out, 0);
    }
    if (out && out != stdout)
        fclose(out);
    job_free();
#ifdef CLT_MPI
    MPI_Finalize();
#endif
    return out ? rc : 2;
}

int main(int argc, char **argv)
{
    struct thresholds th = { .small_bytes = 32768, .small_count = 10, .min_wg = 64, .min_occupancy = 0.5 };
    const char *format = "text", *out_path = NULL;
    int fail_on = -1, n_traces = 0, ranks_only = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cpus < 1 ? 1 : (unsigned)cpus;
    int mpi_rank = 0, mpi_size = 1;
#ifdef CLT_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    ranks_only = 1;             /* each rank reads its share: the job section, reduced to rank 0 */
#endif
    static struct rm_model m;
    m.small_threshold = th.small_bytes;
    if (argc > 1 && !strcmp(argv[1], "diff"))
        return report_diff(argc - 2, argv + 2, &th);
    if (argc > 1 && !strcmp(argv[1], "merge")) {
        for (int i = 2; i < argc; i++) {
            if ((!strcmp(argv[i], "--ranks") || !strcmp(argv[i], "-o")) && i + 1 < argc)
                i++;
            else if (rm_paths_add(&traces, argv[i]) != 0)
                return 2;
        }
        int rc = report_merge(argc - 2, argv + 2, traces.p, traces.n);
        rm_paths_free(&traces);
        return rc;
    }
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
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            threads = (unsigned)strtoul(argv[++i], NULL, 0);
            threads = threads ? threads : 1;
        } else if (!strcmp(argv[i], "--ranks-only")) {
            ranks_only = 1;
        } else if (!strcmp(argv[i], "--small-bytes") && i + 1 < argc) {
            th.small_bytes = m.small_threshold = strtoull(argv[++i], NULL, 0);
            th.small_given = m.small_given = 1;
        } else if (!strcmp(argv[i], "--small-count") && i + 1 < argc) {
            th.small_count = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--min-wg") && i + 1 < argc) {
            th.min_wg = (unsigned)strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--min-occupancy") && i + 1 < argc) {
            th.min_occupancy = strtod(argv[++i], NULL) / 100.0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            usage(stderr);
            return 2;
        } else {
            if (rm_paths_add(&traces, argv[i]) != 0)
                return 2;
        }
    }
    if (ranks_only)
        return ranks_report(format, out_path, &th, threads, mpi_rank, mpi_size);
    for (unsigned i = 0; i < traces.n; i++) {
        char err[512];
        if (rm_read(&m, traces.p[i], err, sizeof err) != 0) {
            fprintf(stderr, "cltrace-report: %s\n", err);
            return 2;
        }
        n_traces++;
    }
    /* several traces: a job, each rank read on its own as well (on every core) */
    if (traces.n > 1 && job_add_all(traces.p, traces.n, 1, 0, &th, threads) != 0)
        return 2;
    if (!n_traces || (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "markdown") &&
                      strcmp(format, "junit") && strcmp(format, "html"))) {
        usage(stderr);
        return 2;
    }
    if (m.truncated || !m.has_attributes)
        fprintf(stderr, "cltrace-report: warning: a trace was cut short (the app crashed or was killed); "
                        "reporting what it holds\n");
    rules(&m, &th);
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", out_path);
        return 2;
    }
    if (!strcmp(format, "json"))
        out_json(out, &m);
    else if (!strcmp(format, "markdown"))
        out_markdown(out, &m);
    else if (!strcmp(format, "junit"))
        out_junit(out, &m, fail_on >= 0 ? fail_on : SEV_WARNING);
    else if (!strcmp(format, "html"))
        out_html(out, &m, &th);
    else {
        if (job_ranks() > 1)
            job_text(out, 0);
        out_text(out, &m);
    }
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", out_path);
        return 2;
    }
    int rc = 0;
    for (unsigned i = 0; fail_on >= 0 && i < n_findings; i++)
        if ((int)findings[i].sev >= fail_on)
            rc = 1;
    rm_free(&m);
    free(findings);
    job_free();
    rm_paths_free(&traces);
    return rc;
}
