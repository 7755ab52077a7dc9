/* The packets a trace is mostly made of, decoded in place: a call's BEGIN
 * with its arguments (interned names, integers, interned strings), its END,
 * an untimed call's instant. They are what protobuf-c's reflective unpack
 * spent ~5,500 instructions a packet on, and ~2,700 more freeing and
 * allocating (1 M clSetKernelArg calls: 12.2 G instructions for the whole
 * report). Here they are read the way trace/fastpack.h writes them, into
 * structs shaped as protobuf-c's (the model reads those) that live in one
 * arena, reused packet after packet: nothing allocated or freed. The cursor
 * is a local pointer (a struct in memory made every byte a load and a
 * store), and a one-byte varint, most of them, is one compare.
 *
 * The arguments the model does not read (the caller says which, by name:
 * rm_fast.keep) are stepped over, not decoded.
 *
 * Anything else (interned data, descriptors, attributes, a string inline,
 * an array or dict annotation, a field this reader does not know, more
 * annotations or flows than the arena holds, a malformed or truncated
 * field) returns NULL, and the caller unpacks that packet with protobuf-c
 * as before: the two agree on every packet this one takes (the test suite
 * reads every trace it writes both ways, tests/report_parts.sh; the
 * fuzzer compares them packet by packet, report/fuzz_reader.c). */
#include <string.h>
#include "fastread.h"

typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__DebugAnnotation Ann;

static const Perfetto__Protos__TracePacket packet_init = PERFETTO__PROTOS__TRACE_PACKET__INIT;
static const TrackEvent event_init = PERFETTO__PROTOS__TRACK_EVENT__INIT;
static const Ann ann_init = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;

/* A varint's bytes after its first (b, >= 0x80), `bytes` at most in all:
 * NULL when malformed or longer. */
static const uint8_t *varint_rest(const uint8_t *p, const uint8_t *end, uint64_t b, uint64_t *v, int bytes)
{
    uint64_t r = b & 0x7F;
    for (int shift = 7; shift < 7 * bytes && p < end; shift += 7) {
        b = *p++;
        r |= (b & 0x7F) << shift;
        if (b < 0x80) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* A varint of three to eight bytes at p (the packet holds eight from p),
 * its 7-bit groups packed together with no loop: a timestamp's seven.
 * The cursor after it; NULL when it is longer (the caller's loop reads it). */
static inline const uint8_t *varint_word(const uint8_t *p, uint64_t *v)
{
    uint64_t w;
    memcpy(&w, p, 8);                           /* little-endian: the hosts cltrace runs on */
    uint64_t stop = ~w & 0x8080808080808080ull;
    if (!stop)
        return NULL;
    unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;        /* through its last byte's top bit */
    if (bits < 64)
        w &= (1ull << bits) - 1;
    w &= 0x7f7f7f7f7f7f7f7full;
    w = (w & 0x007f007f007f007full) | (w & 0x7f007f007f007f00ull) >> 1;
    w = (w & 0x00003fff00003fffull) | (w & 0x3fff00003fff0000ull) >> 2;
    w = (w & 0x000000000fffffffull) | (w & 0x0fffffff00000000ull) >> 4;
    *v = w;
    return p + bits / 8;
}

/* v = the next varint at p of `bytes` at most, or return `fail` */
#define VARINT_OF(v, bytes, fail)                                 \
    do {                                                          \
        if (p >= end)                                             \
            return fail;                                          \
        uint64_t b_ = *p++;                                       \
        if (b_ < 0x80)                                            \
            (v) = b_;                                             \
        else if (!(p = varint_rest(p, end, b_, &(v), (bytes))))   \
            return fail;                                          \
    } while (0)
#define VARINT(v, fail) VARINT_OF(v, 10, fail)
/* A field's key or a length: protobuf-c refuses one longer than five bytes
 * (a padded one too), so this reader does, lest the two read a packet apart. */
#define KEY(v, fail) VARINT_OF(v, 5, fail)
#define LENGTH(v, fail) VARINT_OF(v, 5, fail)

/* The fields the model reads of an annotation, reset: a struct's whole
 * copy (88 bytes) cost more than the rest of a small one's decoding. */
static inline void ann_reset(Ann *a)
{
    a->base = ann_init.base;
    a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD__NOT_SET;
    a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE__NOT_SET;
    a->name_iid = 0;
    a->uint_value = 0;
    a->n_array_values = a->n_dict_entries = 0;
    a->array_values = a->dict_entries = NULL;
}

static int annotation_loop(const uint8_t *p, const uint8_t *end, Ann *a)
{
    while (p < end) {
        uint64_t key, v;
        KEY(key, 0);
        unsigned field = (unsigned)(key >> 3), wire = key & 7;
        if (wire == 1 && field == 5) {
            if (end - p < 8)
                return 0;
            memcpy(&a->double_value, p, 8);     /* little-endian: the hosts cltrace runs on */
            p += 8;
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
            continue;
        }
        if (wire != 0)
            return 0;           /* a string, a nested value: protobuf-c's */
        VARINT(v, 0);
        switch (field) {
        case 1:
            a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
            a->name_iid = v;
            break;
        case 3:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
            a->uint_value = v;
            break;
        case 17:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
            a->string_value_iid = v;
            break;
        case 4:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
            a->int_value = (int64_t)v;
            break;
        case 2:         /* true where any group is set, as protobuf-c has it: a tenth
                         * byte's bits past the 64th count too */
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
            a->bool_value = v != 0 || (p[-1] & 0x7E);
            break;
        case 7:
            a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE;
            a->pointer_value = v;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

/* A varint that must end exactly at end; 0: it does not */
static inline int varint_to_end(const uint8_t *q, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; q < end && shift < 64; shift += 7) {
        r |= (uint64_t)(*q & 0x7F) << shift;
        if (*q++ < 0x80) {
            *v = r;
            return q == end;
        }
    }
    return 0;
}

/* An annotation: the shape a call's argument has (its name's iid in one or
 * two bytes, then one integer or interned string) without the loop, any
 * other through it. */
static int annotation(const uint8_t *p, const uint8_t *end, Ann *a)
{
    ann_reset(a);
    if (end - p >= 4 && p[0] == 0x08) {
        uint64_t name = p[1], v;
        const uint8_t *q = p + 2;
        if (name >= 0x80) {         /* a two-byte iid */
            if (q[0] >= 0x80)
                return annotation_loop(p, end, a);
            name = (name & 0x7F) | (uint64_t)q[0] << 7;
            q++;
        }
        int iid = end - q >= 3 && q[0] == 0x88 && q[1] == 0x01;
        if ((q < end && q[0] == 0x18) || iid) {
            if (varint_to_end(q + (iid ? 2 : 1), end, &v)) {
                a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
                a->name_iid = name;
                a->value_case = iid ? PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID
                                    : PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
                a->uint_value = v;      /* string_value_iid shares the union */
                return 1;
            }
        }
    }
    return annotation_loop(p, end, a);
}

/* A repeated fixed64 (flow ids), packed (wire 2) or one (wire 1), appended
 * to arr; the cursor after it, NULL when malformed or past the arena. */
static const uint8_t *flows(const uint8_t *p, const uint8_t *end, unsigned wire, uint64_t *arr, size_t *n)
{
    const uint8_t *stop = p + 8;
    if (wire == 2) {
        uint64_t len;
        LENGTH(len, NULL);
        if (len > (uint64_t)(end - p) || len % 8)
            return NULL;
        stop = p + len;
    } else if (wire != 1 || end - p < 8) {
        return NULL;
    }
    for (; p < stop; p += 8) {
        if (*n == RM_FAST_FLOWS)
            return NULL;
        memcpy(&arr[(*n)++], p, 8);
    }
    return p;
}

/* The packet's sequence, for the caller's table of what it reads. */
struct want { int known; uint32_t seq; const uint8_t *codes; uint64_t n; };

/* The sequence's table: where it lives asked once a run of the sequence's
 * packets (a thread's come in runs), read through that each packet. */
static void want_table_find(struct rm_fast *a, struct want *w)
{
    a->t_seq = 0;
    w->codes = NULL;                    /* not yet known; keep() says */
    w->n = 0;
    if (a->table(a->keep_ctx, w->seq, &a->t_codes, &a->t_n)) {
        a->t_seq = (uint64_t)w->seq + 1;
        w->codes = *a->t_codes;
        w->n = *a->t_n;
    }
}

static inline void want_table(struct rm_fast *a, struct want *w)
{
    if (a->t_seq != (uint64_t)w->seq + 1) {
        want_table_find(a, w);
        return;
    }
    w->codes = *a->t_codes;
    w->n = *a->t_n;
}

/* Whether the caller reads an annotation (its name, where it comes first
 * as the writer puts it); 1 where that cannot be told. */
static inline int wanted(struct rm_fast *a, struct want *w, const uint8_t *p, const uint8_t *end)
{
    if (!w->known || end - p < 2 || p[0] != 0x08)
        return 1;
    uint64_t name = p[1];
    if (name >= 0x80) {
        if (end - p < 3 || p[2] >= 0x80)
            return 1;
        name = (name & 0x7F) | (uint64_t)p[2] << 7;
    }
    if (name < w->n && w->codes[name])
        return w->codes[name] != 1;
    int keep = a->keep(a->keep_ctx, w->seq, name);
    want_table(a, w);                   /* the table may have moved */
    return keep;
}

/* An argument the model does not read, as the writer puts it (a short
 * annotation, its name's iid first, known to the table): the cursor after
 * it, stepped over with no varint decoded; NULL for any other field. */
static inline const uint8_t *unread(const struct want *w, const uint8_t *p, const uint8_t *end)
{
    if (p[0] != 0x22 || end - p < 4 || p[1] >= 0x80 || p[2] != 0x08 || p[1] > end - p - 2)
        return NULL;
    uint64_t name = p[3];
    if (name >= 0x80)                   /* a two-byte iid, or none here */
        name = p[1] >= 3 && p[4] < 0x80 ? (name & 0x7F) | (uint64_t)p[4] << 7 : UINT64_MAX;
    return name < w->n && w->codes[name] == 1 ? p + 2 + p[1] : NULL;
}

/* The event, the fields this reader sets (and the model reads) reset */
static inline TrackEvent *event_reset(struct rm_fast *a)
{
    TrackEvent *e = &a->event;
    if (!a->event_ready) {      /* once: what no packet of this reader's sets stays as protobuf-c has it */
        *e = event_init;
        a->event_ready = 1;
    }
    e->has_type = e->has_track_uuid = 0;
    e->type = 0;
    e->track_uuid = 0;
    e->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD__NOT_SET;
    e->name_iid = 0;
    e->callstack_field_case = PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD__NOT_SET;
    e->callstack_iid = 0;
    e->n_debug_annotations = e->n_flow_ids = e->n_terminating_flow_ids = 0;
    e->debug_annotations = a->ann_ptr;
    e->flow_ids = a->flow;
    e->terminating_flow_ids = a->term;
    return e;
}

static int event(const uint8_t *p, const uint8_t *end, struct rm_fast *a, int seq_known, uint32_t seq)
{
    struct want w = { a->keep && seq_known, seq, NULL, 0 };
    if (w.known)
        want_table(a, &w);
    TrackEvent *e = event_reset(a);
    while (p < end) {
        uint64_t key, v;
        const uint8_t *next = unread(&w, p, end);
        if (next) {
            p = next;
            continue;
        }
        KEY(key, 0);
        unsigned field = (unsigned)(key >> 3), wire = key & 7;
        if (field == 4 && wire == 2) {
            uint64_t len;
            LENGTH(len, 0);
            size_t i = e->n_debug_annotations;
            if (len > (uint64_t)(end - p))
                return 0;
            if (!wanted(a, &w, p, p + len)) {   /* an argument the model does not read */
                p += len;
                continue;
            }
            if (i == RM_FAST_ANNS || !annotation(p, p + len, &a->ann[i]))
                return 0;
            p += len;
            a->ann_ptr[i] = &a->ann[i];
            e->n_debug_annotations = i + 1;
            continue;
        }
        if (field == 47 || field == 48) {
            if (!(p = flows(p, end, wire, field == 47 ? a->flow : a->term,
                            field == 47 ? &e->n_flow_ids : &e->n_terminating_flow_ids)))
                return 0;
            continue;
        }
        if (wire != 0)
            return 0;
        VARINT(v, 0);
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
    Perfetto__Protos__TracePacket *pk = &a->packet;
    const uint8_t *p = buf, *end = len ? buf + len : buf;      /* an empty packet may come with no buffer */
    int have_event = 0;
    if (!a->packet_ready) {     /* as for the event: the fields never set here stay protobuf-c's */
        *pk = packet_init;
        a->packet_ready = 1;
    }
    pk->has_timestamp = pk->has_trusted_packet_sequence_id = pk->has_sequence_flags = 0;
    pk->timestamp = 0;
    pk->trusted_packet_sequence_id = pk->sequence_flags = 0;
    pk->data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA__NOT_SET;
    pk->track_event = NULL;
    while (p < end) {
        uint64_t key, v;
        KEY(key, NULL);
        unsigned field = (unsigned)(key >> 3), wire = key & 7;
        if (field == 11 && wire == 2) {
            uint64_t n;
            LENGTH(n, NULL);
            if (have_event++ || n > (uint64_t)(end - p) ||
                !event(p, p + n, a, pk->has_trusted_packet_sequence_id, pk->trusted_packet_sequence_id))
                return NULL;
            p += n;
            pk->data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
            pk->track_event = &a->event;
            continue;
        }
        if (wire != 0)
            return NULL;
        const uint8_t *q;
        if (end - p >= 8 && p[1] >= 0x80 && (q = varint_word(p, &v)))
            p = q;              /* a timestamp */
        else
            VARINT(v, NULL);
        switch (field) {
        case 8:
            pk->has_timestamp = 1;
            pk->timestamp = v;
            break;
        case 10:
            pk->has_trusted_packet_sequence_id = 1;
            pk->trusted_packet_sequence_id = (uint32_t)v;
            break;
        case 13:
            pk->has_sequence_flags = 1;
            pk->sequence_flags = (uint32_t)v;
            break;
        default:
            return NULL;
        }
    }
    return pk;
}
