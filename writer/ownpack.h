/* The writer's own events packed by hand (ownpack.c). */
#ifndef CLT_OWNPACK_H
#define CLT_OWNPACK_H
#include <stddef.h>
#include <stdint.h>
#include "trace/cltrace.pb-c.h"

/* Trace.packet { timestamp ts, sequence seq, flags, track_event e } framed
 * at out, at most cap bytes: its length; 0 when e sets a field this does
 * not cover or might not fit (then pack it with protobuf-c). */
size_t clt_ownpack_event(uint8_t *out, size_t cap, uint64_t ts, uint32_t seq, uint32_t flags,
                         const Perfetto__Protos__TrackEvent *e);
/* e's fields alone, without the packet around them: their length; 0 as above */
size_t clt_ownpack_fields(uint8_t *out, size_t cap, const Perfetto__Protos__TrackEvent *e);
/* A slice's BEGIN and END on the writer's sequence, by hand: its fields
 * packed once (clt_ownpack_fields), its own arguments (interned names), its
 * track, the flow it ends (NULL: none). Their length; 0: they might not
 * fit FP_MAX_PACKET (nothing written). */
struct fp_ann;
size_t clt_ownpack_slice(uint8_t *out, uint32_t seq, uint64_t start, uint64_t end, uint64_t track,
                         const uint8_t *fields, size_t n_fields, const struct fp_ann *ann, unsigned n_ann,
                         const uint64_t *ends_flow);
#endif
