/* cltrace-report --annotate OUT TRACE: the trace again, with the report's
 * findings on its timeline. Every packet of TRACE is copied as it is; then a
 * group "cltrace findings" (its rows of the same name where findings
 * overlap: the UI shows them as one) holds one slice per finding over the
 * time it concerns (finding.span: the small transfers, a configuration's
 * launches, the largest idle gap, a leaked object's life; the whole run
 * where a rule names no time), named by its rule and where, with its
 * severity, numbers, fix and estimated gain as arguments. On a sequence of
 * its own, names not interned: it needs nothing of the trace's state. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "pbout.h"
#include "report/model/input.h"
#include "report/model/model.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__DebugAnnotation Ann;

#define ANNOTATE_SEQ 0x7FFF0001u               /* a sequence no trace of cltrace's uses */
#define ANNOTATE_UUID 0x0C17F1D500000000ull    /* "cltrace findings", + its lane */
#define ANNOTATE_LANES 16

static int copy_packets(const char *path, struct pb_out *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct rm_in in;
    if (fd < 0)
        return -1;
    int rc = rm_in_open(&in, fd);
    close(fd);
    if (rc != 0) {
        rm_in_close(&in);
        return -1;
    }
    uint64_t len;
    const uint8_t *buf;
    int tag;
    while (rm_next_packet(&in, &buf, &len, &tag) == RM_FRAME_OK)   /* a cut trace: what it holds */
        pb_out_bytes(out, buf, len);
    rm_in_close(&in);
    return 0;
}

/* lane 0: the group "cltrace findings" (a group sits at the top of the UI,
 * not folded among global tracks); lanes 1..: its rows, of the same name */
static void lane_track(struct pb_out *out, unsigned lane)
{
    Perfetto__Protos__TrackDescriptor t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = 1;
    t.uuid = ANNOTATE_UUID + lane;
    t.has_parent_uuid = lane > 0;
    t.parent_uuid = ANNOTATE_UUID;
    t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    t.name = "cltrace findings";
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
    p.track_descriptor = &t;
    pb_out_packet(out, &p);
}

static Ann *ann(Ann *a, Ann **ap, unsigned *n, const char *name)
{
    Ann *x = &a[*n];
    perfetto__protos__debug_annotation__init(x);
    x->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
    x->name = (char *)name;
    ap[*n] = x;
    ++*n;
    return x;
}

static void ann_str(Ann *a, Ann **ap, unsigned *n, const char *name, const char *v)
{
    if (!v || !v[0])
        return;
    Ann *x = ann(a, ap, n, name);
    x->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
    x->string_value = (char *)v;
}

static void event(struct pb_out *out, unsigned lane, uint64_t ts, const struct finding *f, int first)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.track_uuid = ANNOTATE_UUID + lane;
    e.type = f ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    char name[160], gain[64], *cat = "cltrace.finding";
    Ann a[8], *ap[8];
    unsigned na = 0;
    if (f) {
        snprintf(name, sizeof name, "%s: %.*s", f->rule, 120, f->where);
        e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
        e.name = name;
        e.n_categories = 1;
        e.categories = &cat;
        ann_str(a, ap, &na, "rule", f->rule);
        ann_str(a, ap, &na, "severity", sev_name[f->sev]);
        ann_str(a, ap, &na, "where", f->where);
        ann_str(a, ap, &na, "numbers", f->numbers);
        ann_str(a, ap, &na, "fix", f->fix);
        if (f->gain_ns >= 0) {
            snprintf(gain, sizeof gain, "%.3f ms", f->gain_ns / 1e6);
            ann_str(a, ap, &na, "estimated_gain", gain);
        }
        ann_str(a, ap, &na, "gain_method", f->gain_method);
        e.n_debug_annotations = na;
        e.debug_annotations = ap;
    }
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_timestamp = p.has_trusted_packet_sequence_id = 1;
    p.timestamp = ts;
    p.trusted_packet_sequence_id = ANNOTATE_SEQ;
    if (first) {              /* the sequence starts here: nothing of it before to depend on */
        p.has_sequence_flags = 1;
        p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    }
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
    p.track_event = &e;
    pb_out_packet(out, &p);
}

struct placed { uint64_t start, end; unsigned i, lane; };

static int by_start(const void *a, const void *b)
{
    const struct placed *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : x->end > y->end ? -1 : x->end < y->end;
}

/* Each finding in the first lane free at its start (findings sorted by start). */
static unsigned place(const struct rm_model *m, const struct findings *fs, struct placed *v)
{
    uint64_t lane_end[ANNOTATE_LANES] = { 0 };
    unsigned lanes = 0;
    for (unsigned i = 0; i < fs->n; i++) {
        const struct finding *f = &fs->v[i];
        int whole = !f->span[1];
        v[i] = (struct placed){ whole ? m->mem.first_ts : f->span[0], whole ? m->mem.last_ts : f->span[1], i, 0 };
        if (v[i].end <= v[i].start)
            v[i].end = v[i].start + 1;
    }
    qsort(v, fs->n, sizeof *v, by_start);
    for (unsigned i = 0; i < fs->n; i++) {
        unsigned l = 0;
        while (l < ANNOTATE_LANES - 1 && lane_end[l] && lane_end[l] >= v[i].start)
            l++;
        if (lane_end[l] >= v[i].start && lane_end[l]) {    /* every lane busy: after the last lane's */
            v[i].start = lane_end[l] + 1;
            v[i].end = v[i].end > v[i].start ? v[i].end : v[i].start + 1;
        }
        v[i].lane = l;
        lane_end[l] = v[i].end;
        lanes = l + 1 > lanes ? l + 1 : lanes;
    }
    return lanes;
}

static int by_end(const void *a, const void *b)
{
    const struct placed *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

int report_annotate(const char *out_path, const char *trace, const struct rm_model *m, const struct findings *fs)
{
    struct pb_out out;
    if (pb_out_open(&out, out_path) != 0) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", out_path);
        return 2;
    }
    if (copy_packets(trace, &out) != 0) {
        pb_out_close(&out);
        fprintf(stderr, "cltrace-report: %s: cannot read\n", trace);
        return 2;
    }
    struct placed *v = calloc(fs->n ? 2 * fs->n : 1, sizeof *v), *ends = v + fs->n;
    if (!v) {
        pb_out_close(&out);
        return 2;
    }
    unsigned lanes = place(m, fs, v);
    for (unsigned l = 0; l <= lanes; l++)
        lane_track(&out, l);
    memcpy(ends, v, fs->n * sizeof *v);
    qsort(ends, fs->n, sizeof *ends, by_end);
    /* BEGINs and ENDs in time order: a lane's END before the BEGIN that follows it */
    unsigned b = 0, e = 0;
    while (b < fs->n || e < fs->n) {
        if (b < fs->n && (e == fs->n || v[b].start < ends[e].end))
            event(&out, v[b].lane + 1, v[b].start, &fs->v[v[b].i], b == 0), b++;
        else
            event(&out, ends[e].lane + 1, ends[e].end, NULL, 0), e++;
    }
    free(v);
    if (pb_out_close(&out) != 0) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", out_path);
        return 2;
    }
    fprintf(stderr, "cltrace-report: %u finding(s) on the timeline of %s\n", fs->n, out_path);
    return 0;
}
