/* A job's traces side by side (job.c): rows per rank, imbalance. */
#ifndef CLT_REPORT_JOB_H
#define CLT_REPORT_JOB_H
#include <stddef.h>
#include <stdio.h>
#include "report.h"

int job_add(const char *path, const struct thresholds *th);   /* one rank's trace; 0 ok */
unsigned job_ranks(void);
/* Every n-th trace from `first` (an MPI rank's share; 1, 0: all), on `threads` threads. */
int job_add_all(char **paths, unsigned n, unsigned stride, unsigned first, const struct thresholds *th,
                unsigned threads);
void *job_rows(size_t *bytes);                       /* this process's rows, for MPI */
int job_take_rows(const void *data, size_t bytes);   /* rows from another process */
void job_json_only(FILE *o);
void job_text(FILE *o, int markdown);
void job_json(FILE *o);        /* ,"job":{...} inside the report's object */
void job_junit(FILE *o);       /* <property> lines of the test suite */
void job_html(FILE *o);
void job_free(void);
/* merge.c: cltrace-report merge: chosen ranks as processes of one trace */
int report_merge(int argc, char **argv, char **paths, unsigned n_paths);

#endif
