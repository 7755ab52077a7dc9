/* Every thread's calls, all of them, in order: reads a trace (as Perfetto
 * would: packets, sequences, interning) and checks that each recording
 * thread's clSetKernelArg calls (slices; instants where the duration was
 * not measured: TRACE_FORMAT.md) carry arg_value 0, 1, 2, ... N-1.
 *   trace_order TRACE THREADS N   -> "threads=T calls=N each, in order"; exit 1 otherwise
 * A C reader because the 8 x 1,000,000-call traces are too big for Python. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "trace/cltrace.pb-c.h"

#define MAX_SEQ 4096
#define MAX_IID 4096
struct seq {
    char *ann[MAX_IID];     /* debug annotation name iid -> name */
    char *ev[MAX_IID];      /* event name iid -> name */
    long next, count;       /* the next arg_value expected; clSetKernelArg calls seen */
    int bad;
};
static struct seq *seqs[MAX_SEQ];

static void clear(struct seq *s)
{
    for (int i = 0; i < MAX_IID; i++) {
        free(s->ann[i]);
        free(s->ev[i]);
        s->ann[i] = s->ev[i] = NULL;
    }
}

static void packet(const Perfetto__Protos__TracePacket *p)
{
    uint32_t id = p->has_trusted_packet_sequence_id ? p->trusted_packet_sequence_id : 0;
    if (id >= MAX_SEQ)
        return;
    struct seq *s = seqs[id];
    if (!s && !(s = seqs[id] = calloc(1, sizeof *s)))
        exit(2);
    if (p->has_sequence_flags && (p->sequence_flags & 1))
        clear(s);
    const Perfetto__Protos__InternedData *in = p->interned_data;
    for (size_t i = 0; in && i < in->n_debug_annotation_names; i++)
        if (in->debug_annotation_names[i]->iid < MAX_IID && in->debug_annotation_names[i]->name)
            s->ann[in->debug_annotation_names[i]->iid] = strdup(in->debug_annotation_names[i]->name);
    for (size_t i = 0; in && i < in->n_event_names; i++)
        if (in->event_names[i]->iid < MAX_IID && in->event_names[i]->name)
            s->ev[in->event_names[i]->iid] = strdup(in->event_names[i]->name);
    const Perfetto__Protos__TrackEvent *e = p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT
                                            ? p->track_event : NULL;
    /* a call is a BEGIN, or an INSTANT where its duration was not measured */
    if (!e || (e->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN &&
               e->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT) ||
        e->name_field_case != PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID || e->name_iid >= MAX_IID ||
        !s->ev[e->name_iid] || strcmp(s->ev[e->name_iid], "clSetKernelArg"))
        return;
    for (size_t i = 0; i < e->n_debug_annotations; i++) {
        const Perfetto__Protos__DebugAnnotation *a = e->debug_annotations[i];
        const char *name = a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID &&
                           a->name_iid < MAX_IID ? s->ann[a->name_iid] : a->name;
        if (!name || strcmp(name, "arg_value"))
            continue;
        long v = a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE ? (long)a->uint_value : -1;
        if (v != s->next && !s->bad++)
            fprintf(stderr, "sequence %u: arg_value %ld where %ld was next\n", id, v, s->next);
        s->next = v + 1;
        s->count++;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: trace_order TRACE THREADS N\n");
        return 2;
    }
    gzFile f = gzopen(argv[1], "rb");
    if (!f)
        return 2;
    gzbuffer(f, 1 << 17);
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (;;) {
        int tag = gzgetc(f);
        if (tag != 0x0A)
            break;
        uint64_t len = 0;
        for (int shift = 0, c; shift < 64 && (c = gzgetc(f)) >= 0; shift += 7) {
            len |= (uint64_t)(c & 0x7F) << shift;
            if (c < 0x80)
                break;
        }
        if (len > cap && !(buf = realloc(buf, cap = len)))
            return 2;
        if (gzread(f, buf, (unsigned)len) != (int)len)
            break;
        Perfetto__Protos__TracePacket *p = perfetto__protos__trace_packet__unpack(NULL, len, buf);
        if (p) {
            packet(p);
            perfetto__protos__trace_packet__free_unpacked(p, NULL);
        }
    }
    gzclose(f);
    long want_threads = atol(argv[2]), want = atol(argv[3]), threads = 0, bad = 0;
    for (int i = 0; i < MAX_SEQ; i++)
        if (seqs[i] && seqs[i]->count) {
            threads++;
            if (seqs[i]->count != want || seqs[i]->bad) {
                fprintf(stderr, "sequence %d: %ld calls (%d out of order), want %ld in order\n", i, seqs[i]->count,
                        seqs[i]->bad, want);
                bad = 1;
            }
        }
    printf("threads=%ld calls=%ld each%s\n", threads, want, bad || threads != want_threads ? ": NOT in order" : ", in order");
    return bad || threads != want_threads;
}
