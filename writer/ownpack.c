/* The writer's own events (device commands' slices, counters, instants) by
 * hand (an estimated launch's slice too: its category; 19,000 of them at
 * the exit of a launch loop on PoCL took 55 ms through protobuf-c).
 * protobuf-c's reflective packing cost ~8,000 instructions a packet:
 * 64 % of the exit's work behind 300 device-timed commands (callgrind in
 * clt_writer_stop), where the completions held back during the run are
 * written. Covered: the fields those events set (below); an event or an
 * annotation with any other goes through protobuf-c, as does one that might
 * not fit FP_MAX_PACKET. Lengths are 2-byte varints patched afterwards
 * (trace/fastpack.h). tests/unit/test_ownpack.c decodes what this writes
 * with protobuf-c and packs it again against protobuf-c's own packing. */
#include <string.h>
#include "ownpack.h"
#include "trace/fastpack.h"

typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__DebugAnnotation Ann;

enum { MAX_DEPTH = 3 };               /* annotations in arrays in arrays */

static size_t str_bound(const char *s)
{
    return 4 + (s ? strlen(s) : 0);
}

/* An upper bound of an annotation's bytes; SIZE_MAX: a kind not covered. */
static size_t ann_bound(const Ann *a, int depth)
{
    if (depth > MAX_DEPTH || a->n_dict_entries)
        return SIZE_MAX;
    size_t n = 3;
    switch (a->name_field_case) {
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD__NOT_SET: break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID: n += 11; break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME: n += str_bound(a->name); break;
    default: return SIZE_MAX;
    }
    switch (a->value_case) {
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE__NOT_SET: break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE:
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE:
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE:
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE:
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE:
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID: n += 12; break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE: n += str_bound(a->string_value); break;
    default: return SIZE_MAX;
    }
    for (size_t i = 0; i < a->n_array_values; i++) {
        size_t e = ann_bound(a->array_values[i], depth + 1);
        if (e == SIZE_MAX)
            return SIZE_MAX;
        n += e;
    }
    return n;
}

/* A string of a oneof (every string here is one): NULL is left out, as
 * protobuf-c leaves it out. */
static uint8_t *put_str(uint8_t *p, unsigned field, const char *s)
{
    if (!s)
        return p;
    size_t n = strlen(s);
    p = fp_varint(fp_tag(p, field, FP_WT_LEN), n);
    memcpy(p, s, n);
    return p + n;
}

static uint8_t *put_ann(uint8_t *p, unsigned field, const Ann *a)
{
    uint8_t *len;
    p = fp_open(p, field, &len);
    if (a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID)
        p = fp_field_varint(p, FP_DA_NAME_IID, a->name_iid);
    else if (a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME)
        p = put_str(p, FP_DA_NAME, a->name);
    switch (a->value_case) {
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE:
        p = fp_field_varint(p, FP_DA_BOOL, a->bool_value != 0);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE:
        p = fp_field_varint(p, FP_DA_UINT, a->uint_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE:
        p = fp_field_varint(p, FP_DA_INT, (uint64_t)a->int_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE:
        p = fp_fixed64(p, FP_DA_DOUBLE, &a->double_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE:
        p = fp_field_varint(p, FP_DA_POINTER, a->pointer_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
        p = put_str(p, FP_DA_STRING, a->string_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID:
        p = fp_field_varint(p, FP_DA_STRING_IID, a->string_value_iid);
        break;
    default:
        break;
    }
    for (size_t i = 0; i < a->n_array_values; i++)
        p = put_ann(p, FP_DA_ARRAY_VALUES, a->array_values[i]);
    fp_close(len, p);
    return p;
}

/* An upper bound of the packet's bytes; SIZE_MAX: a field not covered. */
static size_t event_bound(const Event *e)
{
    if (e->n_extra_counter_track_uuids || e->n_extra_counter_values ||
        e->n_extra_double_counter_track_uuids || e->n_extra_double_counter_values || e->log_message ||
        e->correlation_id_field_case != PERFETTO__PROTOS__TRACK_EVENT__CORRELATION_ID_FIELD__NOT_SET ||
        e->source_location_field_case != PERFETTO__PROTOS__TRACK_EVENT__SOURCE_LOCATION_FIELD__NOT_SET ||
        (e->callstack_field_case != PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD__NOT_SET &&
         e->callstack_field_case != PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID))
        return SIZE_MAX;
    /* the packet's frame, timestamp, sequence, flags; the event's frame,
     * type, name iid, track, counter, call stack; each flow id */
    size_t n = 3 + 11 + 6 + 3 + 3 + 3 + 11 + 11 + 12 + 13 + 10 * (e->n_flow_ids + e->n_terminating_flow_ids) +
               11 * e->n_category_iids;
    for (size_t i = 0; i < e->n_categories; i++)
        n += str_bound(e->categories[i]);
    if (e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME)
        n += str_bound(e->name);
    else if (e->name_field_case != PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD__NOT_SET &&
             e->name_field_case != PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID)
        return SIZE_MAX;
    if (e->counter_value_field_case != PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD__NOT_SET &&
        e->counter_value_field_case != PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE &&
        e->counter_value_field_case != PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE)
        return SIZE_MAX;
    for (size_t i = 0; i < e->n_debug_annotations; i++) {
        size_t a = ann_bound(e->debug_annotations[i], 1);
        if (a == SIZE_MAX)
            return SIZE_MAX;
        n += a;
    }
    return n;
}

/* The event's fields, in field order, from p */
static uint8_t *put_fields(uint8_t *p, const Event *e)
{
    for (size_t i = 0; i < e->n_category_iids; i++)
        p = fp_field_varint(p, FP_TE_CATEGORY_IIDS, e->category_iids[i]);
    for (size_t i = 0; i < e->n_debug_annotations; i++)
        p = put_ann(p, FP_TE_DEBUG_ANNOTATIONS, e->debug_annotations[i]);
    if (e->has_type)
        p = fp_field_varint(p, FP_TE_TYPE, (uint64_t)e->type);
    if (e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID)
        p = fp_field_varint(p, FP_TE_NAME_IID, e->name_iid);
    if (e->has_track_uuid)
        p = fp_field_varint(p, FP_TE_TRACK_UUID, e->track_uuid);
    for (size_t i = 0; i < e->n_categories; i++)     /* 22, before the name's 23 */
        p = put_str(p, FP_TE_CATEGORIES, e->categories[i]);
    if (e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME)
        p = put_str(p, FP_TE_NAME, e->name);
    if (e->counter_value_field_case == PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE)
        p = fp_field_varint(p, FP_TE_COUNTER, (uint64_t)e->counter_value);
    else if (e->counter_value_field_case == PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE)
        p = fp_fixed64(p, FP_TE_DOUBLE_COUNTER, &e->double_counter_value);
    for (size_t i = 0; i < e->n_flow_ids; i++)
        p = fp_fixed64(p, FP_TE_FLOW_IDS, &e->flow_ids[i]);
    for (size_t i = 0; i < e->n_terminating_flow_ids; i++)
        p = fp_fixed64(p, FP_TE_TERMINATING_FLOW_IDS, &e->terminating_flow_ids[i]);
    if (e->callstack_field_case == PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID)
        p = fp_field_varint(p, FP_TE_CALLSTACK_IID, e->callstack_iid);
    return p;
}

size_t clt_ownpack_fields(uint8_t *out, size_t cap, const Event *e)
{
    size_t bound = event_bound(e);
    if (bound == SIZE_MAX || bound > cap || cap > FP_MAX_PACKET)
        return 0;
    return (size_t)(put_fields(out, e) - out);
}

size_t clt_ownpack_event(uint8_t *out, size_t cap, uint64_t ts, uint32_t seq, uint32_t flags, const Event *e)
{
    if (cap > FP_MAX_PACKET)
        cap = FP_MAX_PACKET;          /* every length must fit two varint bytes */
    size_t bound = event_bound(e);
    if (bound == SIZE_MAX || bound > cap)
        return 0;
    uint8_t *packet_len, *te, *p = fp_open(out, FP_TRACE_PACKET, &packet_len);
    p = fp_field_varint(p, FP_PKT_TIMESTAMP, ts);
    p = fp_field_varint(p, FP_PKT_SEQ_ID, seq);
    p = fp_open(p, FP_PKT_TRACK_EVENT, &te);
    p = put_fields(p, e);
    fp_close(te, p);
    p = fp_field_varint(p, FP_PKT_SEQ_FLAGS, flags);
    fp_close(packet_len, p);
    return (size_t)(p - out);
}

size_t clt_ownpack_slice(uint8_t *out, uint32_t seq, uint64_t start, uint64_t end, uint64_t track,
                         const uint8_t *fields, size_t n_fields, const struct fp_ann *ann, unsigned n_ann,
                         const uint64_t *ends_flow)
{
    size_t bound = n_fields + 80;     /* the two packets' frames, times, track, flow */
    for (unsigned i = 0; i < n_ann; i++)   /* a number 24 bytes at most; a string, an array: theirs */
        bound += 24 + (ann[i].type == FP_V_STR ? strlen(ann[i].s) : ann[i].type == FP_V_ARRAY ? 16 * ann[i].n : 0);
    if (bound > FP_MAX_PACKET)
        return 0;
    uint8_t *plen, *elen, *p = fp_event_head(out, start, seq, 1, &plen, &elen);   /* TYPE_SLICE_BEGIN */
    memcpy(p, fields, n_fields);
    p += n_fields;
    for (unsigned i = 0; i < n_ann; i++)
        p = fp_ann(p, &ann[i]);
    p = fp_field_varint(p, FP_TE_TRACK_UUID, track);
    if (ends_flow)
        p = fp_fixed64(p, FP_TE_TERMINATING_FLOW_IDS, ends_flow);
    fp_close(elen, p);
    fp_close(plen, p);
    p = fp_event_head(p, end, seq, 2, &plen, &elen);                              /* TYPE_SLICE_END */
    p = fp_field_varint(p, FP_TE_TRACK_UUID, track);
    fp_close(elen, p);
    fp_close(plen, p);
    return (size_t)(p - out);
}
