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
#include "common/map.h"
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

/* A packet of interned entries alone, on a sequence: before the event that
 * uses them. */
void clt_put_interned(struct clt_writer *w, uint32_t seq, Perfetto__Protos__InternedData *in)
{
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
    p.trusted_packet_sequence_id = seq;
    p.sequence_flags = F_NEEDS;
    p.interned_data = in;
    clt_put_packet(w, &p);
}

/* ---- names interned on the writer's own sequence ------------------------
 * A device command's slice named its 20 arguments inline (600 bytes a
 * command), an estimated launch's its 10 and its name and category (300
 * bytes): 10 MB of a 20,000-launch loop's trace on PoCL, most of what gzip
 * and the exit spent. Each name is sent once after each start of the
 * sequence (own_gen: every start, a fork child's too, since the counter
 * lives on in it); its iid stays the same for the whole run. */
struct own_name { uint32_t gen, iid; unsigned kind; char s[]; };
enum { OWN_STRINGS_MAX = 1024, OWN_STRING_LEN = 48 };  /* values: a few repeat (command types), most do not */
static struct clt_map own_names;
static uint32_t own_gen = 1, own_next[4];

uint32_t clt_own_gen(void)
{
    return own_gen;
}

static void send_name(struct clt_writer *w, const struct own_name *x)
{
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    Perfetto__Protos__DebugAnnotationName dn = PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
    Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventCategory ec = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
    Perfetto__Protos__DebugAnnotationName *dnp = &dn;
    Perfetto__Protos__EventName *enp = &en;
    Perfetto__Protos__EventCategory *ecp = &ec;
    Perfetto__Protos__InternedString is = PERFETTO__PROTOS__INTERNED_STRING__INIT, *isp = &is;
    is.has_iid = is.has_str = 1;
    is.iid = x->iid;
    is.str.data = (uint8_t *)x->s;
    is.str.len = strlen(x->s);
    dn.has_iid = en.has_iid = ec.has_iid = 1;
    dn.iid = en.iid = ec.iid = x->iid;
    dn.name = en.name = ec.name = (char *)x->s;
    if (x->kind == CLT_OWN_ARG)
        in.n_debug_annotation_names = 1, in.debug_annotation_names = &dnp;
    else if (x->kind == CLT_OWN_EVENT)
        in.n_event_names = 1, in.event_names = &enp;
    else if (x->kind == CLT_OWN_CATEGORY)
        in.n_event_categories = 1, in.event_categories = &ecp;
    else
        in.n_debug_annotation_string_values = 1, in.debug_annotation_string_values = &isp;
    clt_put_interned(w, CLT_OWN_SEQ, &in);
}

/* The entry of s, by its text (NULL: none, or another text has its key). */
static struct own_name *own_find(enum clt_own_kind kind, const char *s)
{
    size_t n = strlen(s);
    uint64_t key = (clt_hash_bytes(s, n) + (uint64_t)kind * 0x9E3779B97F4A7C15ull) | 1;
    struct own_name *x = clt_map_get(&own_names, key);
    if (x)
        return x->kind == kind && !strcmp(x->s, s) ? x : NULL;
    if ((kind == CLT_OWN_STRING && own_next[kind] >= OWN_STRINGS_MAX) || !(x = malloc(sizeof *x + n + 1)))
        return NULL;
    *x = (struct own_name){ 0, ++own_next[kind], kind };
    memcpy(x->s, s, n + 1);
    if (clt_map_put(&own_names, key, x) != 0) {
        free(x);
        return NULL;
    }
    return x;
}

/* Most names are the same literal each time: found by their address, the
 * text compared (an address may hold another text later: a buffer), before
 * the text is hashed (~250 instructions a name). */
static struct own_name *own_by_address(enum clt_own_kind kind, const char *s)
{
    static struct { const char *at; struct own_name *x; } seen[256];
    uintptr_t h = ((uintptr_t)s * 0x9E3779B97F4A7C15ull) >> 56;
    if (seen[h].at == s && seen[h].x->kind == kind && !strcmp(seen[h].x->s, s))
        return seen[h].x;
    struct own_name *x = own_find(kind, s);
    if (x)
        seen[h].at = s, seen[h].x = x;
    return x;
}

uint64_t clt_own_iid(struct clt_writer *w, enum clt_own_kind kind, const char *s)
{
    struct own_name *x = own_by_address(kind, s);
    if (!x)
        return 0;             /* another name with its key: this one stays inline */
    if (x->gen != own_gen) {
        send_name(w, x);
        x->gen = own_gen;
    }
    return x->iid;
}

void clt_own_intern_args(struct clt_writer *w, Perfetto__Protos__DebugAnnotation **ap, unsigned na)
{
    for (unsigned i = 0; i < na; i++) {
        Perfetto__Protos__DebugAnnotation *a = ap[i];
        uint64_t iid = a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME && a->name
                           ? clt_own_iid(w, CLT_OWN_ARG, a->name) : 0;
        if (iid) {
            a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
            a->name_iid = iid;
        }
        iid = a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE && a->string_value &&
                      strnlen(a->string_value, OWN_STRING_LEN) < OWN_STRING_LEN
                  ? clt_own_iid(w, CLT_OWN_STRING, a->string_value) : 0;
        if (iid) {
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
            a->string_value_iid = iid;
        }
    }
}

/* The first packet of a sequence: wipes its interning, sets the track its
 * events go to by default. */
void clt_sequence_start(struct clt_writer *w, uint32_t seq, int first, uint64_t track)
{
    if (seq == CLT_OWN_SEQ)
        own_gen++;
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
 * such slice has) were packed once (clt_ownpack_fields); ann: its own
 * arguments, their names interned. -1: it does not fit (nothing written). */
int clt_put_own_slice_with(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const uint8_t *fields,
                           size_t n_fields, const struct fp_ann *ann, unsigned n_ann, const uint64_t *ends_flow)
{
    if (w->len + FP_MAX_PACKET + 16 > w->out_cap)
        clt_writer_flush(w);
    size_t n = w->len + FP_MAX_PACKET + 16 <= CLT_OUT_CAP
                   ? clt_ownpack_slice(w->out + w->len, CLT_OWN_SEQ, start, end, track, fields, n_fields, ann, n_ann,
                                       ends_flow) : 0;
    if (!n)
        return -1;
    w->len += n;
    return 0;
}

/* Arguments as fastpack's (names interned, values a number, a string, an
 * interned string or an array of numbers): their count, or -1 where one is
 * of another kind (a double, a dict) or a name is inline. */
static int as_fast_args(Perfetto__Protos__DebugAnnotation **ap, unsigned na, struct fp_ann *fa, uint64_t *arr,
                        unsigned arr_cap)
{
    unsigned used = 0;
    for (unsigned i = 0; i < na; i++) {
        const Perfetto__Protos__DebugAnnotation *a = ap[i];
        if (a->name_field_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID || a->name_iid > UINT32_MAX ||
            a->n_dict_entries || (a->n_array_values && a->value_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE__NOT_SET))
            return -1;
        fa[i] = (struct fp_ann){ .name_iid = (uint32_t)a->name_iid };
        switch (a->value_case) {
        case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE: fa[i].type = FP_V_UINT, fa[i].v = a->uint_value; break;
        case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE: fa[i].type = FP_V_INT, fa[i].v = (uint64_t)a->int_value; break;
        case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE: fa[i].type = FP_V_BOOL, fa[i].v = a->bool_value; break;
        case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID:
            fa[i].type = FP_V_STR_IID, fa[i].v = a->string_value_iid;
            break;
        case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
            if (!a->string_value || strlen(a->string_value) > 4096)
                return -1;
            fa[i].type = FP_V_STR, fa[i].s = a->string_value;
            break;
        case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE__NOT_SET:
            if (!a->n_array_values || used + a->n_array_values > arr_cap)
                return -1;
            fa[i].type = FP_V_ARRAY, fa[i].arr = arr + used, fa[i].n = (uint32_t)a->n_array_values;
            for (size_t k = 0; k < a->n_array_values; k++) {
                const Perfetto__Protos__DebugAnnotation *x = a->array_values[k];
                if (x->value_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE || x->n_array_values ||
                    x->n_dict_entries || x->name_field_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD__NOT_SET)
                    return -1;
                arr[used++] = x->uint_value;
            }
            break;
        default:
            return -1;
        }
    }
    return (int)na;
}

/* A slice whose name and arguments' names are interned (a device command's),
 * packed by hand: event_bound and put_fields walked its ~25 arguments, a
 * fifth of a launch loop's exit on PoCL. -1: not in that shape (nothing
 * written): clt_put_own_slice. */
int clt_put_own_slice_fast(struct clt_writer *w, uint64_t track, uint64_t start, uint64_t end, const char *name,
                           Perfetto__Protos__DebugAnnotation **ap, unsigned na, const uint64_t *ends_flow)
{
    struct fp_ann fa[64];
    uint64_t arr[96];
    uint64_t name_iid = na <= 64 ? clt_own_iid(w, CLT_OWN_EVENT, name) : 0;
    if (!name_iid || as_fast_args(ap, na, fa, arr, 96) < 0)
        return -1;
    uint8_t fields[16];
    size_t n = (size_t)(fp_field_varint(fields, FP_TE_NAME_IID, name_iid) - fields);
    return clt_put_own_slice_with(w, track, start, end, fields, n, fa, na, ends_flow);
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

/* Packed by hand, not through an Event: a queue's counter moves at each
 * enqueue, and the Event's init and walk were ~290 instructions of a
 * launch loop's ~4,400 a launch in the writer (PoCL, callgrind). */
void clt_counter(struct clt_writer *w, uint64_t track, uint64_t ts, int64_t value)
{
    if (w->len + 64 > w->out_cap)
        clt_writer_flush(w);
    if (w->len + 64 > CLT_OUT_CAP)
        return;             /* cannot happen: a flush empties it */
    uint8_t *plen, *elen, *p = fp_event_head(w->out + w->len, ts, CLT_OWN_SEQ, 4, &plen, &elen);   /* TYPE_COUNTER */
    p = fp_field_varint(p, FP_TE_TRACK_UUID, track);
    p = fp_field_varint(p, FP_TE_COUNTER, (uint64_t)value);
    fp_close(elen, p);
    fp_close(plen, p);
    w->len = (size_t)(p - w->out);
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

int clt_utf8_text(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        unsigned more = *c < 0x80 ? 0 : *c >= 0xC2 && *c <= 0xDF ? 1 : *c >= 0xE0 && *c <= 0xEF ? 2
                      : *c >= 0xF0 && *c <= 0xF4 ? 3 : 4;
        if (more == 4 || *c < 0x20)
            return 0;
        for (c++; more; more--, c++)
            if ((*c & 0xC0) != 0x80)
                return 0;
    }
    return 1;
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
