/* Encoding primitives of the writer: packets into the output buffer,
 * tracks, the writer's own events (sequence 1), counters, instants, trace
 * attributes, printable text. Every module of the writer uses these; they
 * use nothing of the writer above them. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "emit.h"
#include "ownpack.h"
#include "trace/cltrace.pb-c.h"
#include "trace/fastpack.h"

enum { F_CLEARED = 1, F_NEEDS = 2 };
typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__TrackDescriptor Track;

/* ---- output ------------------------------------------------------------ */

/* The packet framed at w->out + the returned offset (SIZE_MAX: not put). */
static size_t put_packet(struct clt_writer *w, Packet *p)
{
    size_t n = protobuf_c_message_get_packed_size(&p->base);
    if (w->len + n + 16 > w->out_cap)
        clt_writer_flush(w);
    if (w->len + n + 16 > CLT_OUT_CAP)
        return SIZE_MAX;   /* cannot happen: records are bounded well below CLT_OUT_CAP - CLT_GZ_WINDOW */
    size_t at = w->len;
    uint8_t *o = w->out + w->len;
    *o++ = 0x0A;  /* Trace.packet, length-delimited */
    size_t v = n;
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    protobuf_c_message_pack(&p->base, o);
    w->len = (size_t)(o - w->out) + n;
    return at;
}

void clt_put_packet(struct clt_writer *w, Packet *p)
{
    put_packet(w, p);
}

/* A packet the flight recorder keeps apart (a track, attributes): written
 * first when it writes, whatever it let go of since. */
static void put_lasting(struct clt_writer *w, Packet *p, uint64_t uuid)
{
    size_t at = put_packet(w, p);
    if (at != SIZE_MAX && clt_rec_on() && !w->rec_dumping)
        clt_rec_keep(w->out + at, w->len - at, uuid);
}

/* ---- fixed packets ---------------------------------------------------- */

void clt_put_track(struct clt_writer *w, Track *t)
{
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
    p.track_descriptor = t;
    put_lasting(w, &p, t->uuid);
}

void clt_read_comm(const char *path, char *buf, size_t cap, const char *fallback)
{
    FILE *f = fopen(path, "re");
    buf[0] = 0;
    if (f) {
        if (fgets(buf, (int)cap, f))
            buf[strcspn(buf, "\n")] = 0;
        fclose(f);
    }
    if (!buf[0])
        snprintf(buf, cap, "%s", fallback);
}

/* The first packet of a sequence: wipes its interning, sets the track its
 * events go to by default. */
void clt_sequence_start(struct clt_writer *w, uint32_t seq, int first, uint64_t track)
{
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
    p.trusted_packet_sequence_id = seq;
    p.sequence_flags = F_CLEARED | F_NEEDS;
    p.has_first_packet_on_sequence = first;
    p.first_packet_on_sequence = first;
    Perfetto__Protos__TracePacketDefaults def = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
    Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
    ted.has_track_uuid = 1;
    ted.track_uuid = track;
    def.track_event_defaults = &ted;
    p.trace_packet_defaults = &def;
    clt_put_packet(w, &p);
}

void clt_counter_track(struct clt_writer *w, uint64_t id, uint64_t parent, const char *name, int bytes)
{
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    cd.has_unit = 1;
    cd.unit = bytes ? PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES
                    : PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT;
    Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = t.has_parent_uuid = 1;
    t.uuid = id;
    t.parent_uuid = parent;
    t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    t.name = (char *)name;
    t.counter = &cd;
    clt_put_track(w, &t);
}

/* An event on the writer's own sequence (it names its track): packed by
 * hand where ownpack.c covers it (device commands, counters, instants). */
void clt_put_own_event(struct clt_writer *w, uint64_t ts, Event *e)
{
    if (w->len + FP_MAX_PACKET + 16 > w->out_cap)
        clt_writer_flush(w);
    size_t n = w->len + FP_MAX_PACKET + 16 <= CLT_OUT_CAP
                   ? clt_ownpack_event(w->out + w->len, FP_MAX_PACKET, ts, CLT_OWN_SEQ, F_NEEDS, e) : 0;
    if (n) {
        w->len += n;
        return;
    }
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_timestamp = p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
    p.timestamp = ts;
    p.trusted_packet_sequence_id = CLT_OWN_SEQ;
    p.sequence_flags = F_NEEDS;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
    p.track_event = e;
    clt_put_packet(w, &p);
}

/* A slice's begin on its track, with its arguments and the flow it ends */
static Event slice_begin(uint64_t track, Perfetto__Protos__DebugAnnotation **ap, unsigned na, const uint64_t *ends_flow)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    e.track_uuid = track;
    e.n_debug_annotations = na;
    e.debug_annotations = ap;
    if (ends_flow) {
        e.n_terminating_flow_ids = 1;
        e.terminating_flow_ids = (uint64_t *)ends_flow;
    }
    return e;
}

static void slice_end(struct clt_writer *w, uint64_t track, uint64_t end)
{
    Event x = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    x.has_type = x.has_track_uuid = 1;
    x.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    x.track_uuid = track;
    clt_put_own_event(w, end, &x);
}

/* A slice whose shared fields (its name, category, the arguments every
 * such slice has) were packed once (clt_ownpack_fields); ap: its own
 * arguments. -1: it does not fit (nothing written). */
int clt_put_own_slice_with(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const uint8_t *fields,
                           size_t n_fields, Perfetto__Protos__DebugAnnotation **ap, unsigned na, const uint64_t *ends_flow)
{
    Event e = slice_begin(track, ap, na, ends_flow);
    if (w->len + FP_MAX_PACKET + 16 > w->out_cap)
        clt_writer_flush(w);
    size_t n = w->len + FP_MAX_PACKET + 16 <= CLT_OUT_CAP
                   ? clt_ownpack_event_with(w->out + w->len, FP_MAX_PACKET, start, CLT_OWN_SEQ, F_NEEDS, &e, fields,
                                            n_fields) : 0;
    if (!n)
        return -1;
    w->len += n;
    slice_end(w, track, end);
    return 0;
}

void clt_put_own_slice(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const char *name,
                       const char *category, Perfetto__Protos__DebugAnnotation **ap, unsigned na,
                       const uint64_t *ends_flow)
{
    char *cat = (char *)category;
    Event e = slice_begin(track, ap, na, ends_flow);
    if (cat) {
        e.n_categories = 1;
        e.categories = &cat;
    }
    e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    e.name = (char *)name;
    clt_put_own_event(w, start, &e);
    slice_end(w, track, end);
}

void clt_counter(struct clt_writer *w, uint64_t track, uint64_t ts, int64_t value)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
    e.track_uuid = track;
    e.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
    e.counter_value = value;
    clt_put_own_event(w, ts, &e);
}

Perfetto__Protos__DebugAnnotation *clt_ann_new(Perfetto__Protos__DebugAnnotation *a,
                                               Perfetto__Protos__DebugAnnotation **ap, unsigned *n, const char *name)
{
    Perfetto__Protos__DebugAnnotation *x = &a[*n];
    perfetto__protos__debug_annotation__init(x);
    x->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
    x->name = (char *)name;
    ap[*n] = x;
    (*n)++;
    return x;
}

Perfetto__Protos__DebugAnnotation *clt_ann_uints(Perfetto__Protos__DebugAnnotation *a,
                                                 Perfetto__Protos__DebugAnnotation **ap, unsigned *n, const char *name,
                                                 Perfetto__Protos__DebugAnnotation *elems,
                                                 Perfetto__Protos__DebugAnnotation **ep, unsigned *ne,
                                                 const uint64_t *v, unsigned count)
{
    Perfetto__Protos__DebugAnnotation *x = clt_ann_new(a, ap, n, name);
    x->array_values = &ep[*ne];
    x->n_array_values = count;
    for (unsigned i = 0; i < count; i++, (*ne)++) {
        perfetto__protos__debug_annotation__init(&elems[*ne]);
        elems[*ne].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
        elems[*ne].uint_value = v[i];
        ep[*ne] = &elems[*ne];
    }
    return x;
}

void clt_put_instant(struct clt_writer *w, uint64_t track, uint64_t ts, const char *name,
                     Perfetto__Protos__DebugAnnotation **ap, unsigned na, uint32_t callstack_iid)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
    e.track_uuid = track;
    e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    e.name = (char *)name;
    e.n_debug_annotations = na;
    e.debug_annotations = ap;
    if (callstack_iid) {
        e.callstack_field_case = PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID;
        e.callstack_iid = callstack_iid;
    }
    clt_put_own_event(w, ts, &e);
}

char *clt_text(char *dst, const uint8_t *src, size_t n, int lines, char bad)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (src[i] >= 0x20 && src[i] < 0x7F) || (lines && (src[i] == '\n' || src[i] == '\t')) ? (char)src[i]
                                                                                                 : bad;
    dst[n] = 0;
    return dst;
}

/* ---- trace attributes --------------------------------------------------- */

void clt_attrs_put(struct clt_writer *w, struct clt_attrs *a)
{
    Perfetto__Protos__TraceAttributes ta = PERFETTO__PROTOS__TRACE_ATTRIBUTES__INIT;
    ta.n_attribute = a->n;
    ta.attribute = a->ptr;
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES;
    p.trace_attributes = &ta;
    put_lasting(w, &p, 0);
}
