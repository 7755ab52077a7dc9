/* Phases: figures per range the program marked (include/cltrace.h). */
#ifndef CLT_REPORT_PHASES_H
#define CLT_REPORT_PHASES_H
#include "model.h"

int rm_phase_enter(struct rm_model *m, int parent, const char *name);  /* index of parent/name */
void rm_phase_range(struct rm_model *m, int idx, uint64_t dur);         /* one pass through it */
void rm_phase_call(struct rm_model *m, int idx, uint64_t dur, int error, uint64_t transfer_bytes, int small,
                   int synced);
void rm_phase_command(struct rm_model *m, int idx, uint64_t dur, int kernel);
void rm_kernel_phase(struct rm_kernel *k, int idx, uint64_t dur);
int rm_kernel_main_phase(const struct rm_kernel *k);                   /* -1: none */
enum rm_phase_tally { RM_TALLY_SMALL, RM_TALLY_SYNCED, RM_TALLY_ERRORS };
int rm_phase_most(const struct rm_model *m, enum rm_phase_tally what);  /* -1: none */
int rm_phase_within(const struct rm_model *m, int phase, int idx);

#endif
