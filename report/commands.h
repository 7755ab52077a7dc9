/* cltrace-report's commands besides the report itself (report.c). */
#ifndef CLT_REPORT_COMMANDS_H
#define CLT_REPORT_COMMANDS_H
#include "report/rules/rules.h"

int report_diff(int argc, char **argv, const struct thresholds *th);   /* diff.c: the exit status */
/* diverge.c: where two fingerprinted runs first differ */
int report_diverge(int argc, char **argv);
/* merge.c: chosen ranks of a job as processes of one trace */
int report_merge(int argc, char **argv, char **paths, unsigned n_paths);

/* annotate.c: TRACE again, with a track of the findings over the times they concern */
struct rm_model;
int report_annotate(const char *out_path, const char *trace, const struct rm_model *m, const struct findings *fs);

#endif
