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
#endif
