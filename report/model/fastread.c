/* The packets a trace is mostly made of, decoded in place: a call's BEGIN
 * with its arguments (interned names, integers, interned strings), its END,
 * an untimed call's instant. They are what protobuf-c's reflective unpack
 * spent ~5,500 instructions a packet on, and ~2,700 more freeing and
 * allocating (1 M clSetKernelArg calls: 12.2 G instructions for the whole
 * report). Here they are read the way trace/fastpack.h writes them, into
 * structs shaped as protobuf-c's (the model reads those) that live in one
 * arena, reused packet after packet: nothing allocated or freed.
 *
 * Anything else (interned data, descriptors, attributes, a string inline,
 * an array or dict annotation, a field this reader does not know, more
 * annotations or flows than the arena holds, a malformed or truncated
 * field) returns NULL, and the caller unpacks that packet with protobuf-c
 * as before: the two agree on every packet this one takes (the test suite
 * reads every trace it writes both ways: tests/report_parts.sh). */
#include <string.h>
#include "fastread.h"

typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__DebugAnnotation Ann;

static const Perfetto__Protos__TracePacket packet_init = PERFETTO__PROTOS__TRACE_PACKET__INIT;
static const TrackEvent event_init = PERFETTO__PROTOS__TRACK_EVENT__INIT;
static const Ann ann_init = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;

struct cur { const uint8_t *p, *end; };

/* A varint; 0: malformed (past the end, or more than 10 bytes). */
static inline int varint(struct cur *c, uint64_t *v)
{
    if (c->p < c->end && *c->p < 0x80) {      /* most are one byte: keys, iids, small values */
        *v = *c->p++;
        return 1;
    }
    uint64_t r = 0;
    for (int shift = 0; shift < 70 && c->p < c->end; shift += 7) {
        uint8_t b = *c->p++;
        r |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

static inline int fixed64(struct cur *c, uint64_t *v)
{
    if (c->end - c->p < 8)
        return 0;
    memcpy(v, c->p, 8);         /* little-endian: the hosts cltrace runs on */
    c->p += 8;
    return 1;
}

/* A length-delimited field's bytes: 0 when it runs past the end. */
static inline int bytes(struct cur *c, struct cur *inner)
{
    uint64_t n;
    if (!varint(c, &n) || n > (uint64_t)(c->end - c->p))
        return 0;
    inner->p = c->p;
    inner->end = c->p + n;
    c->p += n;
    return 1;
}

static int annotation(struct cur c, Ann *a)
{
    *a = ann_init;
    while (c.p < c.end) {
        uint64_t key, v;
        if (!varint(&c, &key))
            return 0;
        unsigned field = (unsigned)(key >> 3), wire = key & 7;
        if (wire == 1 && field == 5) {
            if (!fixed64(&c, &v))
                return 0;
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
            memcpy(&a->double_value, &v, 8);
            continue;
        }
        if (wire != 0 || !varint(&c, &v))
            return 0;           /* a string, a nested value: protobuf-c's */
        switch (field) {
        case 1:
            a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
            a->name_iid = v;
            break;
        case 2:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
            a->bool_value = v != 0;
            break;
        case 3:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
            a->uint_value = v;
            break;
        case 4:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
            a->int_value = (int64_t)v;
            break;
        case 7:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE;
            a->pointer_value = v;
            break;
        case 17:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
            a->string_value_iid = v;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

/* A repeated fixed64 (flow ids), packed or not, into the arena's array. */
static int flows(struct cur *c, unsigned wire, uint64_t *arr, size_t *n)
{
    uint64_t v;
    if (wire == 1) {
        if (*n == RM_FAST_FLOWS || !fixed64(c, &v))
            return 0;
        arr[(*n)++] = v;
        return 1;
    }
    struct cur in;
    if (wire != 2 || !bytes(c, &in))
        return 0;
    while (in.p < in.end)
        if (*n == RM_FAST_FLOWS || !fixed64(&in, &arr[(*n)++]))
            return 0;
    return 1;
}

static int event(struct cur c, struct rm_fast *a)
{
    TrackEvent *e = &a->event;
    *e = event_init;
    e->debug_annotations = a->ann_ptr;
    e->flow_ids = a->flow;
    e->terminating_flow_ids = a->term;
    while (c.p < c.end) {
        uint64_t key, v;
        if (!varint(&c, &key))
            return 0;
        unsigned field = (unsigned)(key >> 3), wire = key & 7;
        if (field == 4 && wire == 2) {
            struct cur in;
            if (e->n_debug_annotations == RM_FAST_ANNS || !bytes(&c, &in) ||
                !annotation(in, &a->ann[e->n_debug_annotations]))
                return 0;
            a->ann_ptr[e->n_debug_annotations] = &a->ann[e->n_debug_annotations];
            e->n_debug_annotations++;
            continue;
        }
        if (field == 47 || field == 48) {
            if (!flows(&c, wire, field == 47 ? a->flow : a->term,
                       field == 47 ? &e->n_flow_ids : &e->n_terminating_flow_ids))
                return 0;
            continue;
        }
        if (wire != 0 || !varint(&c, &v))
            return 0;
        switch (field) {
        case 9:
            if (v > PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER)
                return 0;
            e->has_type = 1;
            e->type = (Perfetto__Protos__TrackEvent__Type)v;
            break;
        case 10:
            e->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
            e->name_iid = v;
            break;
        case 11:
            e->has_track_uuid = 1;
            e->track_uuid = v;
            break;
        case 56:
            e->callstack_field_case = PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID;
            e->callstack_iid = v;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

const Perfetto__Protos__TracePacket *rm_fast_unpack(struct rm_fast *a, const uint8_t *buf, size_t len)
{
    Perfetto__Protos__TracePacket *p = &a->packet;
    struct cur c = { buf, len ? buf + len : buf };      /* an empty packet may come with no buffer */
    int have_event = 0;
    *p = packet_init;
    while (c.p < c.end) {
        uint64_t key, v;
        if (!varint(&c, &key))
            return NULL;
        unsigned field = (unsigned)(key >> 3), wire = key & 7;
        if (field == 11 && wire == 2) {
            struct cur in;
            if (have_event++ || !bytes(&c, &in) || !event(in, a))
                return NULL;
            p->data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
            p->track_event = &a->event;
            continue;
        }
        if (wire != 0 || !varint(&c, &v))
            return NULL;
        switch (field) {
        case 8:
            p->has_timestamp = 1;
            p->timestamp = v;
            break;
        case 10:
            p->has_trusted_packet_sequence_id = 1;
            p->trusted_packet_sequence_id = (uint32_t)v;
            break;
        case 13:
            p->has_sequence_flags = 1;
            p->sequence_flags = (uint32_t)v;
            break;
        default:
            return NULL;
        }
    }
    return p;
}
