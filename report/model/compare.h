/* Two runs of one program side by side (compare.c, diverge.c): the one rule
 * for faster and slower, kernels matched between the runs, and where their
 * answers part. `cltrace-report diff` and `diverge` and `cltrace try` use it. */
#ifndef REPORT_MODEL_COMPARE_H
#define REPORT_MODEL_COMPARE_H
#include "model.h"

/* Faster or slower, the one rule: a time changed when the new median differs
 * from the base median by more than `percent` of it and by RM_TREND_MIN_NS at
 * least, and, where each side ran twice or more, beyond their spread (every
 * new run past every base run). */
#define RM_TREND_MIN_NS 1000.0          /* below a microsecond: the clocks' noise */
#define RM_TREND_PERCENT_ONE_RUN 10.0   /* one trace each (diff's default threshold): no spread to judge by */
#define RM_TREND_PERCENT_RUNS 2.0       /* repeated runs (try): the spread guards against noise; try
                                           judges no time from one run each */
enum rm_trend { RM_NO_CHANGE, RM_FASTER, RM_SLOWER };
struct rm_spread { double median, min, max; unsigned n; };
/* median, least and most of v[0..n) (its first 64) */
void rm_spread_of(const double *v, unsigned n, struct rm_spread *out);
enum rm_trend rm_trend_of(const struct rm_spread *base, const struct rm_spread *now, double percent);
/* 100 * (now - base) / base; 0 without a base */
double rm_change_percent(double base, double now);

/* Kernels matched between a base run and a new one: by name and launch
 * configuration (diff: a mean per launch means the same work), or by name
 * alone, summed over configurations (try: a change of local size changes
 * the configuration). Every kernel of either side, base's first; a side
 * without it has 0 launches there. */
enum rm_match { RM_MATCH_CONFIG, RM_MATCH_NAME };
struct rm_kernel_pair {
    const struct rm_kernel *base, *now;     /* one of each side's (NULL: none there) */
    uint64_t base_ns, now_ns;               /* device time, summed */
    uint64_t base_launches, now_launches;
};
/* The pairs into out[cap]; how many. A cap of base->n_kernels + now->n_kernels always holds them. */
unsigned rm_kernel_pairs(const struct rm_model *base, const struct rm_model *now, enum rm_match how,
                         struct rm_kernel_pair *out, unsigned cap);

/* Where two runs' answers part, by their fingerprints (cltrace --fingerprint).
 * Each run's fingerprinted commands in the order they were enqueued; queues
 * matched by the order they first appear in; on a queue, a launch matched
 * with the launch of the same kernel with the same number there (the 3rd
 * `flux` on the 1st queue with the 3rd `flux` on the 1st queue), a write,
 * copy or fill likewise. A's commands walked in order: the first that
 * differs from its partner or has none is the divergence (then B's that A
 * lacks). Two commands differ when a buffer's bytes differ (exact hash),
 * or, with a tolerance, when a float buffer's NaN or infinity counts differ
 * or its min, max or sum differ by more than it (relative, plus absolute). */
struct rm_tolerance { int on; double rel, abs; };
/* "REL" or "REL,ABS" (e.g. 1e-5 or 1e-5,1e-12): 0, or -1 not one */
int rm_tolerance_parse(const char *s, struct rm_tolerance *t);
struct rm_fp_run {              /* a run's fingerprinted commands, aligned */
    const struct rm_model *m;
    const struct rm_fpcmd **v;  /* by #N */
    unsigned *key_n;            /* each command's number among its queue's of its name */
    unsigned *queue_ix;         /* its queue's order of first appearance */
    unsigned char *matched;
};
/* 0, or -1 (no memory); rm_fp_run_free in either case */
int rm_fp_run_init(struct rm_fp_run *r, const struct rm_model *m);
void rm_fp_run_free(struct rm_fp_run *r);
struct rm_divergence {
    int found;
    const struct rm_fp_run *first;  /* the run whose command parts (B where A ends first) */
    unsigned i;                     /* that command, in its run's order */
    int j;                          /* its partner in the other run; -1 none */
    unsigned fp;                    /* the buffer that differs, among the command's */
    char why[300];
    unsigned same, near;            /* commands before it: identical, within the tolerance */
};
/* (a pair may be compared again, with another tolerance) */
void rm_diverge(struct rm_fp_run *a, struct rm_fp_run *b, const struct rm_tolerance *t, struct rm_divergence *v);
/* Its first line: "diverged at CMD: WHY", or "no divergence: N commands compared, ..." */
void rm_divergence_line(const struct rm_divergence *v, char *out, size_t cap);

#endif
