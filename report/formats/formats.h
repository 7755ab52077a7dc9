/* Presenting: one file per format, each rendering the same inputs (the
 * model, the ranked findings, the views) and nothing else. */
#ifndef CLT_REPORT_FORMATS_H
#define CLT_REPORT_FORMATS_H
#include <stdio.h>
#include "report/model/model.h"
#include "report/rules/rules.h"
#include "report/views/views.h"

struct report_in {
    const struct rm_model *m;
    const struct findings *fs;        /* ranked */
    const struct thresholds *th;
    const struct phase_view *phases;
    const struct job_view *job;       /* NULL: not a job */
    const struct summary_view *sum;   /* the first screen */
};

void format_text(FILE *o, const struct report_in *r);
void format_markdown(FILE *o, const struct report_in *r);
void format_json(FILE *o, const struct report_in *r);
void format_junit(FILE *o, const struct report_in *r, int fail_at);
void format_html(FILE *o, const struct report_in *r);
/* html_charts.c */
void html_charts(FILE *o, const struct rm_model *m, const struct thresholds *th);

/* A job's section in each format (--ranks-only prints it alone); text and
 * Markdown share theirs (md: Markdown), and the self-cost lines. */
void text_job(FILE *o, const struct job_view *j, int md);
void text_job_mpi(FILE *o, const struct job_view *j, int md);   /* its MPI table (text_job calls it) */
void text_job_mpi_calls(FILE *o, const struct job_view *j, int md);   /* each rank's time per MPI call */
unsigned job_mpi_names(const struct job_view *j, const char *names[RM_MPI_FNS]);   /* the calls any rank made */
double job_mpi_ms(const struct rank_row *r, const char *name);  /* a rank's ms in that call */
/* summary.c: the first screen (md: Markdown), and cltrace's cost account
 * (--explain cost; Markdown's <details>) */
void text_summary(FILE *o, const struct report_in *r, int md);
void text_cost_account(FILE *o, const struct rm_model *m, const struct cost_account *a, int md);
void format_sarif(FILE *o, const struct report_in *r);
void format_github(FILE *o, const struct report_in *r);
void json_job(FILE *o, const struct job_view *j);        /* ,"job":{...} inside an object */
void junit_job(FILE *o, const struct job_view *j);       /* <property> lines */
void html_job(FILE *o, const struct job_view *j);
/* The transfer-size buckets' names (JSON, text and Markdown alike). */
extern const char *const bucket_name[RM_BUCKETS];

/* The rule table (--rules), as text, Markdown (README) or JSON. */
void format_rules(FILE *o, const char *format);

/* stack.c: a finding's whole stack (rules.h finding.stack) frame by frame */
struct stack_frame { char fn[512], file[1024]; unsigned line; int library; };
int stack_next(const char **p, struct stack_frame *fr);     /* 0 at the end */
void stack_json(FILE *o, const char *full);                 /* ,"stack":[{function, file, line, library}] */

#endif
