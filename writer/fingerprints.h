/* Fingerprints (CLTRACE_FINGERPRINT): the collector writes a command's just
 * before its completion; they wait here, by flow id, until the command is
 * drawn, and go into its slice as the argument `fingerprints` (an array of
 * dicts: trace/TRACE_FORMAT.md). */
#ifndef CLT_WRITER_FINGERPRINTS_H
#define CLT_WRITER_FINGERPRINTS_H
#include <stdint.h>
#include "trace/cltrace.pb-c.h"
#include "trace/record.h"

struct clt_writer;
struct clt_flow;
#define CLT_FP_PER_COMMAND 8
/* What the annotations of one command point into: alive until its slice is written. */
struct clt_fp_anns {
    Perfetto__Protos__DebugAnnotation list, items[CLT_FP_PER_COMMAND], fields[CLT_FP_PER_COMMAND][16];
    Perfetto__Protos__DebugAnnotation *item_p[CLT_FP_PER_COMMAND], *field_p[CLT_FP_PER_COMMAND][16];
    char hash[CLT_FP_PER_COMMAND][20];
};

void clt_fp_stash(struct clt_writer *w, const struct clt_rec *rec);
/* The command's fingerprints as annotations (added to a[]/ap[]/na; room for
 * 3), taken out of the stash; 0 when it had none. */
unsigned clt_fp_annotate(struct clt_writer *w, uint64_t flow, const struct clt_flow *f,
                         Perfetto__Protos__DebugAnnotation *a, Perfetto__Protos__DebugAnnotation **ap, unsigned *na,
                         struct clt_fp_anns *s);
void clt_fp_stash_free(struct clt_writer *w);

#endif
