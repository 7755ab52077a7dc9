/* Judging: the rules, each family a function of (model, thresholds) that
 * appends findings to a list it is given. The table (table.c) is the one
 * place that lists every rule: its id, default severity, where its
 * threshold comes from, and the family function that makes it. */
#ifndef CLT_REPORT_RULES_H
#define CLT_REPORT_RULES_H
#include <stddef.h>
#include <stdint.h>
#include "report/model/model.h"

enum sev { SEV_INFO, SEV_WARNING, SEV_ERROR };
extern const char *const sev_name[];

struct finding {
    const char *rule;          /* the table's id */
    enum sev sev;
    char *where, *numbers, *fix;   /* owned; each sized to what it holds */
    int phase;                 /* the phase (m->phases) it belongs to, -1: none */
    double gain_ns;            /* device time the fix would save, estimated; < 0: not estimated */
    char *gain_method;         /* how, in one line; or why there is no estimate ("" : neither) */
    const char *class_id;      /* a rule's class of this finding (leaks: definitely_lost, growing,
                                * still_held), NULL: none; JSON "class" */
    char *class_why;           /* what the trace shows for it; JSON "class_why" */
    char *stack;               /* the whole call stack of its where, library frames marked "~"
                                * (model.h rm_stack_text); NULL: none */
    uint64_t span[2];          /* the time it concerns (trace ns; span[1] 0: the whole run): --annotate's slice */
    int host;                  /* what the host ran while the device waited is said (rules/host.c) */
    int library;               /* made by a library, not by the program (hwloc's probing in MPI_Init):
                                * info, outside the error count, after every other finding */
};

struct findings {              /* a list a caller owns: findings_free() */
    struct finding *v;
    unsigned n, cap;
};

struct thresholds {
    uint64_t small_bytes;      /* a transfer below this is small (default; a probe replaces it) */
    int small_given;           /* --small-bytes was given: it stays */
    uint64_t small_count;      /* this many small transfers make a finding */
    unsigned min_wg;           /* work-items per group (seed 001: at least 64) */
    double min_occupancy;      /* seed 001: gains stop around 50 % */
};
#define THRESHOLDS_DEFAULT { .small_bytes = 32768, .small_count = 10, .min_wg = 64, .min_occupancy = 0.5 }

/* A family: appends its findings for `m` to `out`. */
typedef void rule_family_fn(const struct rm_model *m, const struct thresholds *th, struct findings *out);

struct rule {
    const char *id;
    enum sev severity;         /* its default (some rules lower or raise it, as `fires` says) */
    const char *fires;         /* when, in one line (README, man page, --rules) */
    const char *source;        /* the seed or source of its threshold; "" none */
    rule_family_fn *family;    /* the function that makes its findings */
};
extern const struct rule rule_table[];   /* every rule, ended by { NULL } */
unsigned rule_count(void);
const struct rule *rule_find(const char *id);

/* Every family in the table's order (each once), then the ranking: the
 * findings of `m` appended to `out`. */
void rules_run(const struct rm_model *m, const struct thresholds *th, struct findings *out);

/* findings.c: the list */
struct finding *finding_add(struct findings *l, const char *rule, enum sev sev, int phase);
/* Sets one of a finding's texts (printf-like), replacing what it held. */
void finding_set(char **field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void findings_free(struct findings *l);
void finding_span(struct finding *f, const uint64_t *span);   /* the time it concerns: --annotate */
/* host.c: what the program's threads ran while the device waited, said on f */
void finding_host(const struct rm_model *m, struct finding *f);
/* A finding's estimated gain as a share of the device timeline (a job's:
 * of its ranks' timelines summed); < 0: none. Its words: finding_gain_basis. */
double finding_gain_percent(const struct rm_model *m, const struct finding *f);
const char *finding_gain_basis(const struct rm_model *m);   /* "of the device timeline" */
/* Device timing unusable (m->dt): drops the findings made of device time
 * alone from l->v[start..] and every gain estimated from it. */
void findings_without_device_time(const struct rm_model *m, struct findings *l, unsigned start);
/* Ranks l->v[start..]: by severity, then estimated gain (largest first),
 * the rest in the order the rules ran; a warning worth under 1 % is info;
 * dropped-calls first. */
void findings_rank(const struct rm_model *m, struct findings *l, unsigned start);
/* Gives l->v[start..] their whole stacks (rm_stack_full). */
void findings_stacks(const struct rm_model *m, struct findings *l, unsigned start);

#endif
