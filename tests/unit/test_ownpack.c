/* writer/ownpack.c against protobuf-c: each event the writer packs by hand,
 * decoded by protobuf-c and packed again, is byte for byte what protobuf-c
 * packs from the same structs (the field numbers it uses: test_fastpack.c);
 * what it does not cover it leaves to protobuf-c. An estimated launch's
 * slice (clt_ownpack_slice: its shared fields packed once, two arguments of
 * its own, BEGIN and END) decodes to the event protobuf-c packs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/fastpack.h"
#include "writer/ownpack.h"

typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__DebugAnnotation Ann;
typedef Perfetto__Protos__TracePacket Packet;

static int failures, cases;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

/* The packet framed at *at (Trace.packet, a 2-byte length), decoded; *at
 * moves past it. */
static Packet *next_packet(const uint8_t **at, const uint8_t *end)
{
    const uint8_t *p = *at;
    if (end - p < 3 || p[0] != 0x0A || !(p[1] & 0x80) || p[2] >= 0x80)
        return NULL;
    size_t body = (size_t)(p[1] & 0x7F) | (size_t)p[2] << 7;
    if ((size_t)(end - p) < 3 + body)
        return NULL;
    *at = p + 3 + body;
    return perfetto__protos__trace_packet__unpack(NULL, body, p + 3);
}

/* A packet, as protobuf-c packs it again, against what it packs of the
 * wanted event at ts on sequence 1 with NEEDS. */
static void same_packet(Packet *got, uint64_t ts, Event *want, const char *what)
{
    static uint8_t a[20000], b[20000];
    cases++;
    if (!got) {
        failures++;
        fprintf(stderr, "%s: protobuf-c cannot decode it\n", what);
        return;
    }
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_timestamp = p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
    p.timestamp = ts;
    p.trusted_packet_sequence_id = 1;
    p.sequence_flags = 2;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
    p.track_event = want;
    size_t n = protobuf_c_message_pack(&p.base, a), m = protobuf_c_message_pack(&got->base, b);
    if (n != m || memcmp(a, b, n)) {
        failures++;
        fprintf(stderr, "%s: decodes to something else (%zu bytes against %zu)\n", what, m, n);
    }
    perfetto__protos__trace_packet__free_unpacked(got, NULL);
}

/* The hand-packed event, unpacked and packed again by protobuf-c, against
 * protobuf-c's packing of the packet it was given; one packet, framed with
 * a 2-byte length. */
static void same_as_protobuf_c(uint64_t ts, Event *e, const char *what)
{
    static uint8_t fast[20000];
    size_t n = clt_ownpack_event(fast, sizeof fast, ts, 1, 2, e);
    if (!n) {
        cases++, failures++;
        fprintf(stderr, "%s: not packed by hand\n", what);
        return;
    }
    const uint8_t *at = fast;
    same_packet(next_packet(&at, fast + n), ts, e, what);
    EXPECT(at == fast + n);
}

static Event event(Perfetto__Protos__TrackEvent__Type type, uint64_t track)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.type = type;
    e.track_uuid = track;
    return e;
}

static Ann *ann(Ann *a, const char *name)
{
    perfetto__protos__debug_annotation__init(a);
    a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
    a->name = (char *)name;
    return a;
}

/* An estimated launch's slice: interned names (its category, its name, its
 * arguments'), shared fields packed once, two numbers of its own. */
static void estimated_slice(Ann **ap, unsigned na)
{
    uint64_t cat = 2, flow = 0xfedcba9876543210ull, track = 0x4000000300000001ull;
    for (unsigned i = 0; i < na; i++) {
        if (ap[i]->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE && ap[i]->string_value) {
            ap[i]->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
            ap[i]->string_value_iid = 40 + i;
        }
        ap[i]->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
        ap[i]->name_iid = 1 + i * 60;        /* one byte, two bytes */
    }
    Event shared = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    shared.n_category_iids = 1;
    shared.category_iids = &cat;
    shared.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
    shared.name_iid = 129;
    shared.n_debug_annotations = na;
    shared.debug_annotations = ap;
    static uint8_t fields[4096], out[20000];
    size_t nf = clt_ownpack_fields(fields, sizeof fields, &shared);
    EXPECT(nf > 0);
    const struct fp_ann own[2] = { { .name_iid = 7, .type = FP_V_UINT, .v = 1234567 },
                                   { .name_iid = 200, .type = FP_V_UINT, .v = 0 } };
    size_t n = clt_ownpack_slice(out, 1, 1764130000000000000ull, 1764130000001234567ull, track, fields, nf, own, 2,
                                 &flow);
    EXPECT(n > 0);
    Ann mine[2], *all[42];
    for (unsigned i = 0; i < 2; i++) {
        perfetto__protos__debug_annotation__init(&mine[i]);
        mine[i].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
        mine[i].name_iid = own[i].name_iid;
        mine[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
        mine[i].uint_value = own[i].v;
    }
    memcpy(all, ap, na * sizeof *ap);
    all[na] = &mine[0];
    all[na + 1] = &mine[1];
    Event begin = event(PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, track);
    begin.n_category_iids = 1;
    begin.category_iids = &cat;
    begin.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
    begin.name_iid = 129;
    begin.n_debug_annotations = na + 2;
    begin.debug_annotations = all;
    begin.n_terminating_flow_ids = 1;
    begin.terminating_flow_ids = &flow;
    Event end = event(PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, track);
    const uint8_t *at = out;
    same_packet(next_packet(&at, out + n), 1764130000000000000ull, &begin, "an estimated slice's begin");
    same_packet(next_packet(&at, out + n), 1764130000001234567ull, &end, "an estimated slice's end");
    EXPECT(at == out + n);
    same_as_protobuf_c(6, &begin, "a slice with interned names and category");
    EXPECT(clt_ownpack_slice(out, 1, 1, 2, track, fields, FP_MAX_PACKET, own, 2, NULL) == 0);   /* too long */
    static char text[FP_MAX_PACKET];           /* an argument too long for a packet: nothing written */
    memset(text, 's', sizeof text - 1);
    const struct fp_ann longer = { .name_iid = 9, .type = FP_V_STR, .s = text };
    EXPECT(clt_ownpack_slice(out, 1, 1, 2, track, fields, nf, &longer, 1, NULL) == 0);
}

int main(void)
{
    /* a device command's slice: every kind of annotation emit_command and
     * the fingerprints set, arrays of work sizes and kernel arguments */
    static Ann a[40], elems[16], *ap[40], *ep[16];
    unsigned na = 0;
    ap[na] = ann(&a[na], "command_type"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE,
    a[na++].string_value = "CL_COMMAND_NDRANGE_KERNEL";
    ap[na] = ann(&a[na], "queue"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE,
    a[na++].uint_value = 3;
    ap[na] = ann(&a[na], "end_ns"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE,
    a[na++].uint_value = 1764130000123456789ull;
    ap[na] = ann(&a[na], "status"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE,
    a[na++].int_value = -5;
    ap[na] = ann(&a[na], "bandwidth_gbps"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE,
    a[na++].double_value = 12.625;
    ap[na] = ann(&a[na], "pinned"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE,
    a[na++].bool_value = 1;
    ap[na] = ann(&a[na], "nothing"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE,
    a[na++].string_value = NULL;
    ap[na] = ann(&a[na], "pointer"), a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE,
    a[na++].pointer_value = 0x7fff12345678ull;
    Ann *g = ann(&a[na], "global_work_size");
    ap[na++] = g;
    g->array_values = ep;
    for (unsigned i = 0; i < 3; i++) {
        perfetto__protos__debug_annotation__init(&elems[i]);
        elems[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
        elems[i].uint_value = 1u << (10 + 7 * i);
        ep[i] = &elems[i];
    }
    g->n_array_values = 3;
    Ann *s = ann(&a[na], "strings");
    ap[na++] = s;
    s->array_values = ep + 3;
    perfetto__protos__debug_annotation__init(&elems[3]);
    elems[3].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
    elems[3].string_value = "a string in an array";
    ep[3] = &elems[3];
    s->n_array_values = 1;
    uint64_t flow = 0x123456789abcdef0ull;
    Event e = event(PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, 0x4000000100000002ull);
    e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    e.name = "vector_add";
    e.n_debug_annotations = na;
    e.debug_annotations = ap;
    e.n_terminating_flow_ids = 1;
    e.terminating_flow_ids = &flow;
    same_as_protobuf_c(1764130000000000000ull, &e, "a command's slice");

    /* a long string: lengths past one varint byte */
    static char text[3000];
    memset(text, 'x', sizeof text - 1);
    a[0].string_value = text;
    same_as_protobuf_c(1, &e, "a slice with a 3,000-byte argument");

    char *cat = "cltrace.estimated";    /* an estimated launch's slice: its category */
    e.n_categories = 1;
    e.categories = &cat;
    same_as_protobuf_c(1, &e, "a slice with a category");
    e.n_categories = 0;

    Event end = event(PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, 7);
    same_as_protobuf_c(2, &end, "its end");

    Event c = event(PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER, 9);
    c.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
    c.counter_value = -3;
    same_as_protobuf_c(3, &c, "a counter");
    c.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
    c.double_counter_value = 0.25;
    same_as_protobuf_c(3, &c, "a double counter");

    Event in = event(PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, 11);
    in.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
    in.name_iid = 300;
    in.callstack_field_case = PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID;
    in.callstack_iid = 70000;
    in.n_flow_ids = 1;
    in.flow_ids = &flow;
    in.n_debug_annotations = 2;
    in.debug_annotations = ap + 1;
    same_as_protobuf_c(4, &in, "an instant with a call stack and a flow");

    /* not covered: left to protobuf-c */
    uint8_t out[20000];
    Ann d, *dp = &d;
    ann(&d, "dict");
    d.n_dict_entries = 1;
    d.dict_entries = ap;
    in.n_debug_annotations = 1;
    in.debug_annotations = &dp;
    EXPECT(clt_ownpack_event(out, sizeof out, 5, 1, 2, &in) == 0);
    a[0].string_value = malloc(20000);      /* past a packet's 16,000 bytes */
    memset(a[0].string_value, 'y', 19999);
    a[0].string_value[19999] = 0;
    EXPECT(clt_ownpack_event(out, sizeof out, 5, 1, 2, &e) == 0);
    free(a[0].string_value);
    a[0].string_value = "CL_COMMAND_NDRANGE_KERNEL";
    estimated_slice(ap, na);          /* (it interns their names: last) */

    printf("%d of %d cases packed as protobuf-c packs them; %d failures\n", cases - failures, cases, failures);
    return failures != 0;
}
