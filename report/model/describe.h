/* The model described in words and looked up: a kernel's launch
 * configuration, the occupancy model of the trace's device, where the
 * small-transfer threshold came from. Shared by the rules and the formats. */
#ifndef CLT_REPORT_DESCRIBE_H
#define CLT_REPORT_DESCRIBE_H
#include <stddef.h>
#include "model.h"

struct occ_model;
/* "name global=1024x8 local=64x1" (or " local=NULL") */
void kernel_config(const struct rm_kernel *k, char *buf, size_t cap);
/* The same, then ", launched from SITE" where the first launch's site is known. */
#define KERNEL_CONFIG_SITE_MAX (RM_MAX_SITE + 200)
void kernel_config_site(const struct rm_model *m, const struct rm_kernel *k, char *buf, size_t cap);
/* The occupancy model of the device a kernel ran on (the trace's first), or NULL: none. */
const struct occ_model *kernel_occ(const struct rm_model *m, const struct rm_kernel *k, struct occ_model *buf);
/* "occupancy model: ..." or why there is none */
void occ_model_note(const struct rm_model *m, char *buf, size_t cap);
/* Where the small-transfer threshold came from (probe, option, default). */
const char *small_source(const struct rm_model *m);
/* Why the trace is not whole, in words ("the disk filled ...", "the app
 * crashed or was killed"); NULL: it is whole. */
const char *rm_cut_short(const struct rm_model *m);
/* A fingerprinted command: "kernel `update` launch 5 (#20, global 4096, local
 * 64)" or "clEnqueueFillBuffer 2 (#6)"; its enqueue's site; a buffer: "buffer
 * 9 (arg 0, float, created at SITE)". */
void rm_fpcmd_describe(const struct rm_fpcmd *c, char *buf, size_t cap);
const char *rm_fpcmd_site(const struct rm_model *m, const struct rm_fpcmd *c);   /* "" unknown */
void rm_fp_buffer_describe(const struct rm_model *m, const struct rm_fp *f, char *buf, size_t cap);
/* The model's fingerprinted commands in enqueue order (#N): malloc'ed, n_fpcmds long. */
const struct rm_fpcmd **rm_fp_order(const struct rm_model *m);
/* Sampling left commands untimed that the trace does not draw where they ran
 * (estimated slices): their time is unknown, and so is the device's idle time. */
int rm_sampled_timeline(const struct rm_model *m);

#endif
