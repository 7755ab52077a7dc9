/* A job's traces side by side (job.c): rows per rank, imbalance. */
#ifndef CLT_REPORT_JOB_H
#define CLT_REPORT_JOB_H
#include <stddef.h>
#include <stdio.h>
#include "report.h"

int job_add(const char *path, const struct thresholds *th);   /* one rank's trace; 0 ok */
unsigned job_ranks(void);
void job_text(FILE *o, int markdown);
void job_json(FILE *o);        /* ,"job":{...} inside the report's object */
void job_junit(FILE *o);       /* <property> lines of the test suite */
void job_html(FILE *o);
void job_free(void);
/* merge.c: cltrace-report merge: chosen ranks as processes of one trace */
int report_merge(int argc, char **argv, char **paths, unsigned n_paths);

#endif
