/* fastread.c: the hot packets decoded in place into an arena shaped as
 * protobuf-c's structs; NULL for any other (the caller unpacks it with
 * protobuf-c). */
#ifndef CLT_REPORT_FASTREAD_H
#define CLT_REPORT_FASTREAD_H
#include <stddef.h>
#include <stdint.h>
#include "trace/cltrace.pb-c.h"

#define RM_FAST_ANNS 24         /* a call's arguments and result (the most a wrapper writes: ~20) */
#define RM_FAST_FLOWS 8
struct rm_fast {                /* reused for every packet: valid until the next */
    Perfetto__Protos__TracePacket packet;
    Perfetto__Protos__TrackEvent event;
    Perfetto__Protos__DebugAnnotation ann[RM_FAST_ANNS];
    Perfetto__Protos__DebugAnnotation *ann_ptr[RM_FAST_ANNS];
    uint64_t flow[RM_FAST_FLOWS], term[RM_FAST_FLOWS];
    int event_ready, packet_ready;      /* they hold protobuf-c's defaults for the fields never set here */
    /* which annotations the caller reads, by name (NULL: all): the others
     * are stepped over, not decoded. table: where a sequence's table lives
     * (0: no such sequence yet), name iid -> 0 not known yet, 1 not read,
     * more read (it may move after a keep call, so it is read through
     * these); keep: for a name not known yet */
    int (*table)(void *ctx, uint32_t seq, uint8_t *const **codes, const uint64_t **n);
    int (*keep)(void *ctx, uint32_t seq, uint64_t name_iid);
    void *keep_ctx;
    uint64_t t_seq;             /* the sequence (+ 1) whose table t_codes, t_n point at; 0 none */
    uint8_t *const *t_codes;
    const uint64_t *t_n;
};
const Perfetto__Protos__TracePacket *rm_fast_unpack(struct rm_fast *a, const uint8_t *buf, size_t len);

#endif
