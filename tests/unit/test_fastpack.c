/* fastpack.h against protobuf-c: every field number it uses is the one in
 * cltrace.proto's descriptors, and protobuf-c decodes what it writes to the
 * values it was given. */
#include <stdio.h>
#include <string.h>
#include "trace/fastpack.h"
#include "trace/cltrace.pb-c.h"

static int failures;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

static unsigned field(const ProtobufCMessageDescriptor *d, const char *name)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    return f ? f->id : 0;
}

int main(void)
{
    EXPECT(field(&perfetto__protos__trace__descriptor, "packet") == FP_TRACE_PACKET);
    const ProtobufCMessageDescriptor *pd = &perfetto__protos__trace_packet__descriptor;
    EXPECT(field(pd, "timestamp") == FP_PKT_TIMESTAMP);
    EXPECT(field(pd, "track_event") == FP_PKT_TRACK_EVENT);
    EXPECT(field(pd, "trusted_packet_sequence_id") == FP_PKT_SEQ_ID);
    EXPECT(field(pd, "sequence_flags") == FP_PKT_SEQ_FLAGS);
    const ProtobufCMessageDescriptor *te = &perfetto__protos__track_event__descriptor;
    EXPECT(field(te, "type") == FP_TE_TYPE);
    EXPECT(field(te, "name_iid") == FP_TE_NAME_IID);
    EXPECT(field(te, "debug_annotations") == FP_TE_DEBUG_ANNOTATIONS);
    EXPECT(field(te, "flow_ids") == FP_TE_FLOW_IDS);
    EXPECT(field(te, "track_uuid") == FP_TE_TRACK_UUID && field(te, "name") == FP_TE_NAME &&
           field(te, "counter_value") == FP_TE_COUNTER && field(te, "double_counter_value") == FP_TE_DOUBLE_COUNTER &&
           field(te, "callstack_iid") == FP_TE_CALLSTACK_IID);
    EXPECT(field(te, "terminating_flow_ids") == FP_TE_TERMINATING_FLOW_IDS);
    const ProtobufCMessageDescriptor *da = &perfetto__protos__debug_annotation__descriptor;
    EXPECT(field(da, "name_iid") == FP_DA_NAME_IID);
    EXPECT(field(da, "bool_value") == FP_DA_BOOL);
    EXPECT(field(da, "uint_value") == FP_DA_UINT);
    EXPECT(field(da, "int_value") == FP_DA_INT);
    EXPECT(field(da, "pointer_value") == FP_DA_POINTER);
    EXPECT(field(da, "string_value") == FP_DA_STRING);
    EXPECT(field(da, "string_value_iid") == FP_DA_STRING_IID);
    EXPECT(field(da, "array_values") == FP_DA_ARRAY_VALUES);
    EXPECT(field(da, "name") == FP_DA_NAME && field(da, "double_value") == FP_DA_DOUBLE);
    EXPECT(protobuf_c_message_descriptor_get_field_by_name(te, "flow_ids")->type == PROTOBUF_C_TYPE_FIXED64);

    /* A BEGIN with every value kind (a long one: 2-byte frame) and an END. */
    uint64_t arr[3] = { 1, 300, 1ull << 40 }, flows[1] = { 0x0123456789abcdefull };
    char longstr[300];
    memset(longstr, 'x', sizeof longstr - 1);
    longstr[sizeof longstr - 1] = 0;
    struct fp_ann ann[] = {
        { 1, FP_V_UINT, 12345, 0, 0, 0 },
        { 2, FP_V_INT, (uint64_t)(int64_t)-59, 0, 0, 0 },
        { 3, FP_V_BOOL, 1, 0, 0, 0 },
        { 4, FP_V_PTR, 0x7fff00001234ull, 0, 0, 0 },
        { 5, FP_V_STR, 0, longstr, 0, 0 },
        { 6, FP_V_STR_IID, 77, 0, 0, 0 },
        { 7, FP_V_ARRAY, 0, 0, arr, 3 },
    };
    uint8_t buf[2 * FP_MAX_PACKET];
    uint8_t *end = fp_slice(buf, 1234567890123ull, 9, 1, 42, ann, 7, flows, 1, flows, 1, 300);
    end = fp_slice(end, 1234567890999ull, 9, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0);
    Perfetto__Protos__Trace *t = perfetto__protos__trace__unpack(NULL, (size_t)(end - buf), buf);
    EXPECT(t && t->n_packet == 2);
    if (t && t->n_packet == 2) {
        Perfetto__Protos__TracePacket *b = t->packet[0], *e = t->packet[1];
        EXPECT(b->timestamp == 1234567890123ull && b->trusted_packet_sequence_id == 9 && b->sequence_flags == 2);
        EXPECT(b->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT);
        Perfetto__Protos__TrackEvent *ev = b->track_event;
        EXPECT(ev->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN && ev->name_iid == 42);
        EXPECT(ev->n_flow_ids == 1 && ev->flow_ids[0] == flows[0]);
        EXPECT(ev->callstack_field_case == PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID &&
               ev->callstack_iid == 300);
        EXPECT(ev->n_terminating_flow_ids == 1 && ev->terminating_flow_ids[0] == flows[0]);
        EXPECT(ev->n_debug_annotations == 7);
        Perfetto__Protos__DebugAnnotation **a = ev->debug_annotations;
        EXPECT(a[0]->name_iid == 1 && a[0]->uint_value == 12345);
        EXPECT(a[1]->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE && a[1]->int_value == -59);
        EXPECT(a[2]->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE && a[2]->bool_value);
        EXPECT(a[3]->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE &&
               a[3]->pointer_value == 0x7fff00001234ull);
        EXPECT(a[4]->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE &&
               strcmp(a[4]->string_value, longstr) == 0);
        EXPECT(a[5]->string_value_iid == 77);
        EXPECT(a[6]->n_array_values == 3 && a[6]->array_values[1]->uint_value == 300 &&
               a[6]->array_values[2]->uint_value == (1ull << 40));
        EXPECT(e->timestamp == 1234567890999ull && e->track_event->type ==
               PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END && e->track_event->n_debug_annotations == 0);
        EXPECT(e->track_event->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD__NOT_SET);
        EXPECT(e->track_event->callstack_field_case == PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD__NOT_SET);
    }
    /* The frame length is a 2-byte varint (redundant below 128, as every
     * nested length here: no move to shrink it); a scalar argument's is one byte. */
    uint8_t small[64];
    uint8_t *se = fp_slice(small, 5, 2, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0);
    /* fp_end writes the same bytes as fp_slice's END, for any timestamp and sequence */
    static const uint64_t tss[] = { 0, 5, 127, 128, 1234567890999ull, 1ull << 62 };
    static const uint32_t seqs[] = { 1, 2, 127, 128, 70000 };
    for (unsigned i = 0; i < sizeof tss / sizeof tss[0]; i++)
        for (unsigned j = 0; j < sizeof seqs / sizeof seqs[0]; j++) {
            uint8_t a[64], b[64];
            uint8_t *ae = fp_slice(a, tss[i], seqs[j], 0, 0, NULL, 0, NULL, 0, NULL, 0, 0);
            uint8_t *be = fp_end(b, tss[i], seqs[j]);
            EXPECT(ae - a == be - b && memcmp(a, b, (size_t)(ae - a)) == 0);
        }
    /* fp_begin, its arguments encoded one by one, writes what fp_slice does */
    uint8_t args[2048], *ap = args;
    for (unsigned i = 0; i < 7; i++)
        ap = fp_ann(ap, &ann[i]);
    static const uint64_t bts[] = { 0, 127, 128, 1234567890123ull, 1ull << 62 };
    static const uint64_t stacks[] = { 0, 1, 300 };
    for (unsigned i = 0; i < sizeof bts / sizeof bts[0]; i++)
        for (unsigned j = 0; j < sizeof stacks / sizeof stacks[0]; j++)
            for (unsigned f = 0; f < 2; f++)
                for (unsigned na = 0; na <= 7; na += 7) {
                    static uint8_t a[2 * FP_MAX_PACKET], b[2 * FP_MAX_PACKET];
                    uint8_t *ae = fp_slice(a, bts[i], seqs[j + 2], 1, 42 + bts[i] % 1000, ann, na, flows, f,
                                           NULL, 0, stacks[j]);
                    uint8_t *be = fp_begin(b, bts[i], seqs[j + 2], 42 + bts[i] % 1000, args,
                                           na ? (size_t)(ap - args) : 0, f ? flows[0] : 0, stacks[j]);
                    EXPECT(ae - a == be - b && memcmp(a, b, (size_t)(ae - a)) == 0);
                }
    /* fp_instant: the BEGIN's bytes but for the type (an untimed call) */
    {
        static uint8_t a[2 * FP_MAX_PACKET], b[2 * FP_MAX_PACKET];
        uint8_t *ae = fp_begin(a, 1234567890123ull, 9, 42, args, (size_t)(ap - args), flows[0], 300);
        uint8_t *be = fp_instant(b, 1234567890123ull, 9, 42, args, (size_t)(ap - args), flows[0], 300);
        size_t diff = 0, at = 0;
        for (size_t k = 0; ae - a == be - b && k < (size_t)(ae - a); k++)
            if (a[k] != b[k]) {
                diff++;
                at = k;
            }
        EXPECT(ae - a == be - b && diff == 1 && a[at] == 1 && b[at] == 3);
        Perfetto__Protos__Trace *ti = perfetto__protos__trace__unpack(NULL, (size_t)(be - b), b);
        EXPECT(ti && ti->n_packet == 1 && ti->packet[0]->track_event->type ==
               PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT && ti->packet[0]->track_event->name_iid == 42 &&
               ti->packet[0]->track_event->n_debug_annotations == 7);
        if (ti)
            perfetto__protos__trace__free_unpacked(ti, NULL);
    }
    size_t body = (size_t)(se - small - 3);
    EXPECT(small[0] == 0x0A && small[1] == (uint8_t)(0x80 | (body & 0x7F)) && small[2] == (uint8_t)(body >> 7));
    struct fp_ann one = { 3, FP_V_UINT, 300, NULL, NULL, 0 };
    uint8_t ab[32];
    uint8_t *ae = fp_ann(ab, &one);
    EXPECT(ab[0] == (FP_TE_DEBUG_ANNOTATIONS << 3 | FP_WT_LEN) && ab[1] == (uint8_t)(ae - ab - 2) && ab[1] == 5);
    perfetto__protos__trace__free_unpacked(t, NULL);
    printf("fastpack: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
