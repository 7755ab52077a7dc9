/* cltrace try: the program run as it is and with a change (an override, build
 * options, a local size), interleaved, and the two compared. */
#ifndef TRY_TRY_H
#define TRY_TRY_H
#include <stdint.h>

#define TRY_MAX_RUNS 20
#define TRY_MAX_KERNELS 64
enum { AS_IS, CHANGED };

struct try_run {               /* one run of the program (runs.c) */
    char dir[600];             /* its traces */
    char out[600], err[600];   /* its stdout, stderr */
    int status;                /* exit status; 128+N: signal N; -1 not run */
    uint64_t wall_ns;
};

struct try_kernel { char name[128]; uint64_t launches[2]; uint64_t ns[2][TRY_MAX_RUNS]; };

struct try_result {            /* what the traces say (compare.c) */
    unsigned runs;
    struct try_run run[2][TRY_MAX_RUNS];
    uint64_t device_ns[2][TRY_MAX_RUNS];
    struct try_kernel kernel[TRY_MAX_KERNELS];
    unsigned n_kernels;
    char overrides[16][264];   /* what the changed runs' traces say was changed */
    unsigned n_overrides, n_failed;
    enum { SAME, WITHIN, DIVERGE, NOT_COMPARED } results;
    char results_why[1024];    /* the first differing command, or why not compared */
    int stdout_same;
    enum { FASTER, SLOWER, NO_CLEAR } time;
    int exit;                  /* 0 not slower and the same answer; 1 slower or another answer; 2 could not try */
    char could_not[2048];      /* why 2 */
};

struct try_opts {
    const char *override, *local, *options;   /* as cltrace's CLTRACE_OVERRIDE* take them */
    char change[1024];         /* the flags, as the user gave them */
    unsigned runs, warmup;
    const char *tolerance;     /* REL[,ABS]; NULL: exact */
    const char *format;        /* text, json, markdown */
    char **argv;               /* the program and its arguments */
    char work[400];            /* runs' folders */
};

/* runs.c: run the program once (which: AS_IS or CHANGED) into r. 0 ran. */
int try_run_once(const struct try_opts *o, int which, unsigned i, const char *fingerprint, struct try_run *r);
/* compare.c */
void try_compare(const struct try_opts *o, struct try_result *res);
struct rm_spread;
void try_stats(const uint64_t *v, unsigned n, struct rm_spread *out);   /* median, min, max (report/model) */
void try_print(const struct try_opts *o, const struct try_result *res);

#endif
