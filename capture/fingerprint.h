/* CLTRACE_FINGERPRINT (fingerprint.c): what the wrappers and the collector
 * call. Off, each costs the wrappers one load and a branch. */
#ifndef CLT_FINGERPRINT_H
#define CLT_FINGERPRINT_H
#include <stddef.h>
#include <stdint.h>

struct clt_thread;
extern int clt_fp_on;

void clt_fp_load(void);                           /* at load: CLTRACE_FINGERPRINT */
/* clSetKernelArg succeeded (clSetKernelArgSVMPointer: size 0, value NULL) */
void clt_fp_set_arg(void *kernel, uint32_t index, size_t size, const void *value);
/* A command enqueued (event: its event): read back what it may write. */
void clt_fp_command(unsigned fn, uint64_t flow, void *queue, void *obj, void *event);
/* Collector: the command of flow completed. 0: its readbacks still run (ask
 * again); 1: its fingerprints are in th's ring (or it had none). */
int clt_fp_collect(struct clt_thread *th, uint64_t flow);
/* cltrace's pre-hook of clBuildProgram: options with -cl-kernel-arg-info
 * (malloc'ed; NULL: unchanged) */
char *clt_fp_build_options(const char *options);
void clt_fp_forget(void);                         /* fork child */

#endif
