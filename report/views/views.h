/* Views: what the formats render, computed once from the model and the
 * findings: cltrace's own cost in words, the phases table, a job's ranks.
 * Data only: no view writes output. */
#ifndef CLT_REPORT_VIEWS_H
#define CLT_REPORT_VIEWS_H
#include <stddef.h>
#include "report/model/model.h"
#include "report/rules/rules.h"

/* selfcost.c: what cltrace added to the run, and sampling, in words */
/* The account: what the figure counts, what bounds it, what is said and
 * not counted; rows a format lays out as a table. */
#define COST_ROWS 10
struct cost_row { char what[320]; uint64_t ns; };
struct cost_account {
    int known;                            /* the trace states it */
    uint64_t figure_ns, upper_ns;         /* what cltrace added; at most, on this machine */
    double percent, upper_percent;        /* of the run */
    struct cost_row counted[COST_ROWS], bound[COST_ROWS], said[COST_ROWS];   /* said: ns 0 where no figure */
    unsigned n_counted, n_bound, n_said;
};
void selfcost_account(const struct rm_model *m, struct cost_account *a);
/* "cltrace added 5.2 ms (5.7 %), at most ...": the account's line (the
 * formats take the one the summary view made) */
void selfcost_line(const struct rm_model *m, const struct cost_account *a, char *buf, size_t cap);
void duration_words(uint64_t ns, char *buf, size_t cap);              /* "5.2 ms", "1.84 s" */
uint64_t selfcost_total_ns(const struct rm_model *m);   /* the whole run's, where the trace states it */
double selfcost_percent(const struct rm_model *m);
double selfcost_cpus_busy_percent(const struct rm_model *m);   /* -1: not stated */
double selfcost_app_cpus_wanted(const struct rm_model *m);     /* CPUs, on average; -1: not stated */
double selfcost_app_wait_per_cpu(const struct rm_model *m);   /* the app's wait for a CPU per CPU-ns run; -1 */
uint64_t selfcost_competing_ns(const struct rm_model *m);      /* cltrace's threads' CPU the app missed */
/* commands that paid the probe's price of profiling cltrace turned on; *ns: that price in all */
uint64_t selfcost_profiling(const struct rm_model *m, uint64_t *ns);
void selfcost_clock(const struct rm_device *d, char *buf, size_t cap);     /* "clock residual 5.2 us at most, ..." */
void selfcost_kernel_note(const struct rm_kernel *k, char *buf, size_t cap);   /* " (extrapolated from k of n launches)" */
void selfcost_api_note(const struct rm_api *a, char *buf, size_t cap);

/* memory.c: device memory the program held (model/memory.c), in words */
#define MEMORY_HELD 4                   /* buffers named at the peak, largest first */
#define MEMORY_NEAR_PERCENT 90.0        /* of the device's global memory: near its limit */
struct memory_view {
    uint64_t peak_bytes, peak_at_ns;    /* 0: no buffer; when, from the first call */
    uint64_t buffers, untracked;        /* made in all; past the model's bound */
    struct rm_buffer held[MEMORY_HELD];
    unsigned n_held;                    /* live at the peak, in all */
    uint64_t global_bytes;              /* the smallest device's global memory; 0 unknown */
    int device;                         /* its index */
    double percent;
    int near_limit;
};
void memory_view(const struct rm_model *m, struct memory_view *v);
void memory_words(const struct rm_model *m, const struct memory_view *v, int all, char *buf, size_t cap);

/* summary.c: the first screen */
#define SUMMARY_TOP 5
struct summary_view {
    const char *program;                /* the process's name */
    uint64_t wall_ns;                   /* the run, as cltrace saw it; 0: not stated */
    int device_known;                   /* a device timeline whose timing can be used */
    const char *device_unusable;        /* why the device's timing cannot be true; NULL: it can */
    uint64_t span_ns, idle_ns, kernel_ns, transfer_ns, launches, transfers;
    double busy_pct;                    /* of the span from the first command's start to the last's end */
    unsigned by_sev[3];                 /* findings by severity (enum sev) */
    unsigned top[SUMMARY_TOP], n_top;   /* indices into the findings: errors, then by estimated gain */
    struct cost_account cost;
    /* the devices, one each, where the traces used several or several
     * traces (a job's ranks) shared one: m->devs; 0 where one trace used one */
    unsigned n_devices;
    /* sampling (CLTRACE_SAMPLE): launches timed of all, over how many
     * kernel launch configurations, by what rule; timed == launches: none */
    uint64_t timed_launches;
    unsigned sampled_configs;
    uint64_t sampled_launches, sampled_timed;   /* of the configurations sampled */
    const struct rm_model *m;
    const char *sampling;
    struct memory_view memory;          /* device memory: the peak and its holders */
};
/* "sampled: 412 of 20,001 launches timed (3 kernel launch configurations;
 * RULE)": the first screen's line where launches went untimed */
void summary_sampling_words(const struct summary_view *v, char *buf, size_t cap);
/* One device's line: its name, who used it, its span, busy (the union of
 * the commands of every rank on it) and its kernels and transfers summed */
void summary_device_words(const struct rm_model *m, unsigned i, char *buf, size_t cap);
void summary_view(const struct rm_model *m, const struct findings *fs, struct summary_view *v);

/* phase_rows.c: the phases the program marked, with their shares and findings */
struct phase_view {
    unsigned n, order[RM_MAX_PHASES];     /* indices in tree order: each phase, then its children */
    unsigned findings[RM_MAX_PHASES];     /* by index: findings placed in it or nested in it */
    double api_pct[RM_MAX_PHASES], device_pct[RM_MAX_PHASES];   /* by index */
    int top;                              /* the top-level phase with the most device time; -1 none */
};
void phase_view(const struct rm_model *m, const struct findings *fs, struct phase_view *v);

/* job.c: a job's traces, a row per rank */
#define JOB_MAX_KERNELS 16      /* per rank: the kernels with the most device time */
struct rank_row {
    int rank;
    char host[64], file[256];
    double api_ms, device_ms, kernel_ms, transfer_mb;
    double device_idle_ms;      /* its device idle between its first command and its last */
    unsigned findings;          /* warnings and errors */
    char rules[512];            /* the rules it found, space separated, in the rule table's order */
    struct { char name[RM_MAX_NAME]; double ms; } k[JOB_MAX_KERNELS];
    unsigned n_k;
    /* MPI (model/mpi.c): calls; ms inside them, and of those with the
     * device busy, idle, idle in waits for a message */
    unsigned long long mpi_calls;
    double mpi_ms, mpi_busy_ms, mpi_idle_ms, mpi_wait_idle_ms;
    /* its clock minus rank 0's at MPI_Init and MPI_Finalize, ns, within rtt / 2 */
    int clock_have[2];
    long long clock_offset_ns[2], clock_rtt_ns[2];
    /* its time in each MPI call it made (a collective's wait among them) */
    struct { char name[16]; unsigned long long calls; double ms; } mpi_fn[RM_MPI_FNS];
    unsigned n_mpi_fn;
};
/* Every n-th trace from `first` (an MPI rank's share; 1, 0: all), on `threads` threads: 0 ok. */
int job_add_all(char **paths, unsigned n, unsigned stride, unsigned first, const struct thresholds *th,
                unsigned threads);
void *job_rows(size_t *bytes);                       /* this process's rows, for MPI */
int job_take_rows(const void *data, size_t bytes);   /* rows from another process */
unsigned job_ranks(void);
void job_free(void);

#define JOB_METRICS 4
struct job_stat { const char *name; double max, mean, ratio; int rank; };
struct job_by_rule { const char *rule; unsigned n; char ranks[256]; };
struct job_view {
    const struct rank_row *rows;      /* by rank */
    unsigned n;
    struct job_stat imbalance[JOB_METRICS];   /* api_ms, device_ms, kernel_ms, transfer_mb */
    const struct rank_row *slowest;   /* the most device time, else the most API time */
    const char *kernel;               /* its kernel most over the mean; NULL none */
    double kernel_extra_ms;
    double transfer_mean_mb;
    struct job_by_rule by_rule[32];   /* rules found on some rank, in table order */
    unsigned n_by_rule;
};
/* The job's view (its rows sorted by rank); NULL: fewer than two ranks. */
const struct job_view *job_view(void);

#endif
