/* A pending command's completion (capture/complete.c). */
#ifndef CLT_COMPLETE_H
#define CLT_COMPLETE_H
#include <stddef.h>
#include <stdint.h>
#include "capture/pending.h"

struct clt_thread;
/* What must be recorded before a command's completion (fingerprint.c's
 * digests, set at load where fingerprints are on): 0 while it is not ready. */
void clt_complete_set_before(int (*fn)(struct clt_thread *th, void *event, uint64_t flow));
/* One command asked about (its callbacks' times, else the driver's), recorded into th's ring
 * as CLT_REC_COMMAND where complete or failed, its event released: 1; 0: still running. */
typedef int32_t (*clt_info_fn)(void *, uint32_t, size_t, void *, size_t *);
int clt_complete_try(struct clt_thread *th, const struct clt_pending *p, clt_info_fn prof, clt_info_fn ev_info);

#endif
