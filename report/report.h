/* cltrace-report internals: findings, thresholds, and the output formats. */
#ifndef CLT_REPORT_H
#define CLT_REPORT_H
#include <stdio.h>
#include "model.h"

enum sev { SEV_INFO, SEV_WARNING, SEV_ERROR };
extern const char *const sev_name[];

struct finding {
    const char *rule;
    enum sev sev;
    char where[480], numbers[320], fix[320];
    int phase;                 /* the phase (m->phases) it belongs to, -1: none */
    double gain_ns;            /* device time the fix would save, estimated; < 0: not estimated */
    char gain_method[200];     /* how, in one line */
};
/* rules.c: a finding's estimated gain as a share of the device timeline */
double finding_gain_percent(const struct rm_model *m, const struct finding *f);
extern struct finding *findings;
extern unsigned n_findings;
extern const char *const all_rules[];   /* every rule id, NULL-terminated */

struct thresholds {
    uint64_t small_bytes;      /* a transfer below this is small (default; a probe replaces it) */
    int small_given;           /* --small-bytes was given: it stays */
    uint64_t small_count;      /* this many small transfers make a finding */
    unsigned min_wg;           /* work-items per group (seed 001: at least 64) */
    double min_occupancy;      /* seed 001: gains stop around 50 % */
};

void rules(const struct rm_model *m, const struct thresholds *th);
void kernel_config(const struct rm_kernel *k, char *buf, size_t cap);
/* rules.c: the occupancy model of the trace's device (NULL: none); a line saying which */
struct occ_model;
const struct occ_model *kernel_occ(const struct rm_model *m, const struct rm_kernel *k, struct occ_model *buf);
void occ_model_note(const struct rm_model *m, char *buf, size_t cap);
/* rules.c: where the small-transfer threshold came from (probe, option, default) */
const char *small_source(const struct rm_model *m);

void out_text(FILE *o, const struct rm_model *m);
void out_json(FILE *o, const struct rm_model *m);
void out_markdown(FILE *o, const struct rm_model *m);
void out_junit(FILE *o, const struct rm_model *m, int fail_at);
void out_html(FILE *o, const struct rm_model *m, const struct thresholds *th);
void json_str(FILE *o, const char *s);
int report_diff(int argc, char **argv, const struct thresholds *th);   /* diff.c: exit status */
void xml_text(FILE *o, const char *s);
/* selfcost.c: what cltrace added to the run; sampled kernels */
void selfcost_text(FILE *o, const struct rm_model *m, int markdown);
void selfcost_json(FILE *o, const struct rm_model *m);
void selfcost_junit(FILE *o, const struct rm_model *m);
void selfcost_html(FILE *o, const struct rm_model *m);
void selfcost_kernel_note(const struct rm_kernel *k, char *buf, size_t cap);
void selfcost_clock(const struct rm_device *d, char *buf, size_t cap);
void selfcost_api_note(const struct rm_api *a, char *buf, size_t cap);
/* paths.c: a file, or a folder's traces (a job's), appended in name order */
struct rm_paths { char **p; unsigned n, cap; };
int rm_paths_add(struct rm_paths *ps, const char *path);   /* 0 ok; an empty folder adds nothing */
void rm_paths_free(struct rm_paths *ps);
/* phases_out.c: the figures per phase the program marked (nothing without) */
void phases_text(FILE *o, const struct rm_model *m, int markdown);
void phases_json(FILE *o, const struct rm_model *m);
void phases_junit(FILE *o, const struct rm_model *m);
void phases_html(FILE *o, const struct rm_model *m);

#endif
