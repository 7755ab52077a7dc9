/* A thread that records faster than the writer encodes moves to a larger
 * ring, its pages touched and offered by the writer (grow.c). */
#ifndef CLT_GROW_H
#define CLT_GROW_H
#include <stddef.h>
#include <stdint.h>
#include "trace/record.h"

/* 1: th has a larger ring offered, not yet taken (its records stay in its
 * ring meanwhile: not spilled); offers one where th outruns the writer */
int clt_grow_pending(struct clt_thread *th);
/* the writer read th's CLT_FN_GROW at pos: it reads the offered ring now */
void clt_grow_adopt(struct clt_thread *th, uint64_t pos);
void clt_grow_cancel(struct clt_thread *th);   /* th's thread ended without taking it */
unsigned clt_grow_count(void);                 /* rings grown in this run */
void clt_grow_forget(void);                    /* a fork child */

#endif
