/* A ring the writer cannot keep up with, set aside raw (spill.c). */
#ifndef CLT_SPILL_H
#define CLT_SPILL_H
#include <stdint.h>
#include <sys/uio.h>
#include "trace/record.h"

struct clt_writer;

/* Records in a ring's layout: [tail, head) of buf, offsets & mask. */
struct clt_span {
    const uint8_t *buf;
    uint64_t mask, tail, head;
};

/* One write into the spill file: writer.c does it, where a disk that
 * stops answering cannot hold the writer. */
struct clt_spill_write {
    int fd, n;
    struct iovec iov[2];
    uint64_t at;
    int ok;                     /* 1 if all of it was written */
};
/* If th's ring is filling faster than it is encoded, move its committed
 * records to the spill file (by write) and give the ring back, while the
 * spill holds at most `limit` bytes (and CLTRACE_SPILL_MB); 1 if it did. */
int clt_spill_maybe(struct clt_writer *w, struct clt_thread *th, int (*write)(struct clt_spill_write *),
                    uint64_t limit);
/* th's oldest records are spilled: 1, with them loaded in *s; -1: they
 * cannot be loaded now (no memory), nothing of th's may be encoded yet. */
int clt_spill_span(struct clt_thread *th, struct clt_span *s);
void clt_spill_consumed(struct clt_thread *th, uint64_t tail);   /* encoded up to tail */
/* 1 if th has spilled records, *t0 the start of the oldest. */
/* where th's encoding stands (a ring position) while it has records set aside: 1 */
int clt_spill_encoded_to(const struct clt_thread *th, uint64_t *pos);
int clt_spill_next_t0(const struct clt_thread *th, uint64_t *t0);
uint64_t clt_spill_total(void);   /* bytes spilled in this run */
uint64_t clt_spill_outstanding(void);   /* bytes set aside not yet encoded (any thread) */
void clt_spill_close(void);       /* at exit, once drained */
void clt_spill_forget(void);      /* fork child: the parent's file is not ours */

#endif
