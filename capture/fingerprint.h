/* CLTRACE_FINGERPRINT (fingerprint.c): what the lookups of real entry
 * points and the collector call; off, nothing. */
#ifndef CLT_FINGERPRINT_H
#define CLT_FINGERPRINT_H
#include <stddef.h>
#include <stdint.h>

struct clt_thread;
extern int clt_fp_on;

void clt_fp_load(void);                           /* at load: CLTRACE_FINGERPRINT */
/* A real entry point about to be set for command fn: with fingerprints on,
 * cltrace's own for the commands it looks at (which then call real);
 * otherwise real. Every place that sets one calls it. */
void *clt_fp_interpose(unsigned fn, void *real);
/* Collector: the command whose event it is (flow: its flow id) completed.
 * 0: its readbacks still run (ask again); 1: its fingerprints are in th's
 * ring (or it had none). */
int clt_fp_collect(struct clt_thread *th, void *event, uint64_t flow);
/* cltrace's pre-hook of clBuildProgram: options with -cl-kernel-arg-info
 * (malloc'ed; NULL: unchanged) */
char *clt_fp_build_options(const char *options);
void clt_fp_forget(void);                         /* fork child */

#endif
