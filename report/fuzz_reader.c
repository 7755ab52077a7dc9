/* libFuzzer target for the trace reader: any bytes, raw or gzip, must give a
 * model or a clean error — no crash, no hang, no unbounded allocation. The
 * same bytes are also one packet for both decoders: where the in-place one
 * (model/fastread.c) takes it, protobuf-c must take it too and agree on
 * every field the model reads (abort otherwise: the fuzzer reports it).
 *   make fuzz   (a bounded run; FUZZ_SECONDS=N for longer) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "report/model/fastread.h"
#include "report/model/model.h"

typedef Perfetto__Protos__DebugAnnotation Ann;

static int same_ann(const Ann *a, const Ann *b)
{
    return a->name_field_case == b->name_field_case && a->name_iid == b->name_iid &&
           a->value_case == b->value_case && a->uint_value == b->uint_value &&      /* the union's bits */
           a->n_array_values == 0 && b->n_array_values == 0 && a->n_dict_entries == 0 && b->n_dict_entries == 0;
}

static int same_event(const Perfetto__Protos__TrackEvent *a, const Perfetto__Protos__TrackEvent *b)
{
    if (a->has_type != b->has_type || a->type != b->type || a->has_track_uuid != b->has_track_uuid ||
        a->track_uuid != b->track_uuid || a->name_field_case != b->name_field_case || a->name_iid != b->name_iid ||
        a->callstack_field_case != b->callstack_field_case || a->callstack_iid != b->callstack_iid ||
        a->n_debug_annotations != b->n_debug_annotations || a->n_flow_ids != b->n_flow_ids ||
        a->n_terminating_flow_ids != b->n_terminating_flow_ids || b->n_categories || b->n_category_iids)
        return 0;
    for (size_t i = 0; i < a->n_debug_annotations; i++)
        if (!same_ann(a->debug_annotations[i], b->debug_annotations[i]))
            return 0;
    for (size_t i = 0; i < a->n_flow_ids; i++)
        if (a->flow_ids[i] != b->flow_ids[i])
            return 0;
    for (size_t i = 0; i < a->n_terminating_flow_ids; i++)
        if (a->terminating_flow_ids[i] != b->terminating_flow_ids[i])
            return 0;
    return 1;
}

static void both_decoders(const uint8_t *data, size_t size)
{
    static struct rm_fast arena;
    const Perfetto__Protos__TracePacket *f = rm_fast_unpack(&arena, data, size);
    if (!f)
        return;
    Perfetto__Protos__TracePacket *p = perfetto__protos__trace_packet__unpack(NULL, size, data);
    int same = p && f->has_timestamp == p->has_timestamp && f->timestamp == p->timestamp &&
               f->has_trusted_packet_sequence_id == p->has_trusted_packet_sequence_id &&
               f->trusted_packet_sequence_id == p->trusted_packet_sequence_id &&
               f->has_sequence_flags == p->has_sequence_flags && f->sequence_flags == p->sequence_flags &&
               f->data_case == p->data_case && !p->interned_data && !p->trace_packet_defaults &&
               (f->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT ||
                same_event(f->track_event, p->track_event));
    if (p)
        perfetto__protos__trace_packet__free_unpacked(p, NULL);
    if (!same)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    both_decoders(data, size);
    int fd = memfd_create("trace", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return 0;
    }
    static struct rm_model m;
    char err[256];
    rm_model_init(&m);
    m.small_threshold = 32768;
    rm_read_fd(&m, fd, "fuzz", err, sizeof err);
    rm_free(&m);
    return 0;
}
