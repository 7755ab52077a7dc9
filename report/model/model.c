/* The trace reader: one packet at a time (input.c maps the file and
 * inflates a gzip one; fastread.c decodes the hot packets in place),
 * interning resolved per sequence, slices closed per track, aggregates kept. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "model.h"
#include "phases.h"
#include "fastread.h"
#include "input.h"
#include "reader.h"
#include "common/map.h"
#include "trace/cltrace.pb-c.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__DebugAnnotation Ann;

struct reader {
    struct rm_model *m;
    struct clt_map seqs, tracks;
    struct clt_map flow_site;   /* an enqueue's flow id -> its call site + 1, until its command */
    struct clt_map flow_phase;  /* an enqueue's flow id -> its phase + 1, until its command */
    struct clt_map flow_ts;     /* an enqueue's flow id -> its host time, until its command (devtiming.c) */
    struct clt_map buffer_site; /* a buffer's object id -> its creation call site + 1 (fingerprints) */
    struct rm_fast fast;        /* the hot packets, decoded in place (fastread.c) */
    /* the last sequence and track looked up: a thread's packets come in runs */
    uint64_t last_sid, last_tuuid;      /* last_sid: id + 1, 0 none */
    struct seq *last_seq;
    struct track *last_track;
};

static void seq_clear(struct seq *s)
{
    strtab_free(&s->names);
    strtab_free(&s->anns);
    strtab_free(&s->strs);
    strtab_free(&s->fnames);
    strtab_free(&s->srcs);
    strtab_free(&s->mpaths);
    free(s->map_path);
    for (uint64_t i = 0; i < s->n_stacks; i++)
        free(s->stacks[i].frames);
    free(s->stacks);
    free(s->frames);
    free(s->site);
    free(s->codes);
    free(s->api);
    memset(s, 0, sizeof *s);
}

static struct seq *seq_get(struct reader *r, uint32_t id, int clear)
{
    if (!clear && r->last_sid == (uint64_t)id + 1)
        return r->last_seq;
    struct seq *s = clt_map_get(&r->seqs, (uint64_t)id + 1);
    if (s && clear)
        seq_clear(s);
    if (!s && clear) {
        s = calloc(1, sizeof *s);
        if (s && clt_map_put(&r->seqs, (uint64_t)id + 1, s) != 0) {
            free(s);
            s = NULL;
        }
    }
    if (s) {                    /* a sequence is never removed while reading: the pointer holds */
        r->last_sid = (uint64_t)id + 1;
        r->last_seq = s;
    }
    return s;
}

/* Grows a per-iid cache to hold index iid; 0 on failure. */

static int seq_api_index(struct rm_model *m, struct seq *s, uint64_t iid, const char *name)
{
    if (cache_fit((void **)&s->api, &s->n_api, iid, sizeof *s->api) && s->api[iid])
        return s->api[iid] - 1;
    struct rm_api *a = rm_api_get(m, name);
    int idx = a ? (int)(a - m->api) : -1;
    if (idx >= 0 && iid < s->n_api)
        s->api[iid] = idx + 1;
    return idx;
}

/* A device queue's name, for the timeline. */
static void queue_name(struct rm_model *m, const Packet *p)
{
    const Perfetto__Protos__TrackDescriptor *td = p->track_descriptor;
    if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR && td->process &&
        td->process->process_name && !m->program[0])     /* the program, for the summary */
        snprintf(m->program, sizeof m->program, "%s", td->process->process_name);
    if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR && td->process && td->process->has_pid &&
        !m->pid)
        m->pid = td->process->pid;
    if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR || !td->name || !td->has_uuid ||
        (td->uuid & 0xF0000000u) != 0xA0000000u || m->n_names >= RM_MAX_LANES * 2)
        return;
    m->names[m->n_names].uuid = td->uuid;
    snprintf(m->names[m->n_names].name, sizeof m->names[m->n_names].name, "%s", td->name);
    m->n_names++;
}

static void interned(struct seq *s, const Perfetto__Protos__InternedData *in)
{
    for (size_t i = 0; i < in->n_event_names; i++)
        if (in->event_names[i]->name)
            strtab_set(&s->names, in->event_names[i]->iid, in->event_names[i]->name, strlen(in->event_names[i]->name));
    for (size_t i = 0; i < in->n_debug_annotation_names; i++)
        if (in->debug_annotation_names[i]->name)
            strtab_set(&s->anns, in->debug_annotation_names[i]->iid, in->debug_annotation_names[i]->name,
                       strlen(in->debug_annotation_names[i]->name));
    for (size_t i = 0; i < in->n_debug_annotation_string_values; i++)
        strtab_set(&s->strs, in->debug_annotation_string_values[i]->iid,
                   (const char *)in->debug_annotation_string_values[i]->str.data,
                   in->debug_annotation_string_values[i]->str.len);
    if (in->n_callstacks || in->n_frames)
        rm_intern_stacks(s, in);
}

static struct track *track_of(struct reader *r, uint64_t tuuid)
{
    if (r->last_track && r->last_tuuid == tuuid)
        return r->last_track;
    struct track *t = clt_map_get(&r->tracks, tuuid);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t || clt_map_put(&r->tracks, tuuid, t) != 0) {
            free(t);
            return NULL;
        }
    }
    r->last_tuuid = tuuid;      /* never removed while reading */
    r->last_track = t;
    return t;
}

/* A new open slice on the track's stack (NULL: past TP's nesting limit, or no memory). */
static struct open_slice *slice_push(struct track *t)
{
    if (t->depth == t->cap) {
        unsigned n = t->cap ? 2 * t->cap : 8;
        if (n > 512)
            return NULL;         /* TP's nesting limit */
        struct open_slice *g = realloc(t->stack, n * sizeof *g);
        if (!g)
            return NULL;
        memset(g + t->cap, 0, (n - t->cap) * sizeof *g);    /* k clean, k_dirty 0 */
        t->stack = g;
        t->cap = n;
    }
    struct open_slice *o = &t->stack[t->depth++];
    memset(o, 0, offsetof(struct open_slice, k_dirty));   /* the rest: below */
    if (o->k_dirty) {
        memset(&o->k, 0, offsetof(struct open_slice, name) - offsetof(struct open_slice, k));
        o->k_dirty = 0;
    }
    o->name[0] = o->error_name[0] = o->direction[0] = o->type[0] = o->created_by[0] = o->kname[0] = 0;
    o->leak_why[0] = o->inside[0] = o->by[0] = 0;
    return o;
}

static uint64_t callstack_of(const Perfetto__Protos__TrackEvent *e)
{
    return e->callstack_field_case == PERFETTO__PROTOS__TRACK_EVENT__CALLSTACK_FIELD_CALLSTACK_IID ? e->callstack_iid
                                                                                                     : 0;
}

static void build_seen(struct rm_model *m, const struct open_slice *o)
{
    struct rm_program *pg = rm_program(m, o->program);
    const char *opt = o->options ? o->options : "";
    if (pg) {
        pg->builds++;
        pg->fast_math |= strstr(opt, "-cl-mad-enable") || strstr(opt, "-cl-fast-relaxed-math") ||
                         strstr(opt, "-cl-unsafe-math-optimizations");
    }
}

/* Launch sites and phases follow a call to its device command by flow id. */
static void flows(struct reader *r, struct seq *s, const Perfetto__Protos__TrackEvent *e, struct open_slice *o)
{
    struct rm_model *m = r->m;
    uint64_t cs = callstack_of(e);
    if (!o->device && cs && !strncmp(o->name, "clEnqueue", 9)) {
        int si = rm_site_index(m, s, cs);
        if (!strcmp(o->name, "clEnqueueNDRangeKernel"))
            o->site = si;       /* the launch's call site, for serialization */
        if (si && e->n_flow_ids && r->flow_site.used < 65536)
            clt_map_put(&r->flow_site, e->flow_ids[0], (void *)(uintptr_t)si);
    }
    if (o->device && e->n_terminating_flow_ids && r->flow_site.used) {
        int si = (int)(uintptr_t)clt_map_del(&r->flow_site, e->terminating_flow_ids[0]);
        if (o->k.work_dim || o->fpc)
            o->site = si;
    }
    if (!o->device && cs && o->result_id && r->buffer_site.used < 65536 &&
        (!strncmp(o->name, "clCreateBuffer", 14) || !strcmp(o->name, "clCreateSubBuffer")))
        clt_map_put(&r->buffer_site, o->result_id, (void *)(uintptr_t)(o->site = rm_site_index(m, s, cs)));
    if (o->fpc) {               /* a fingerprinted command: its buffers' creation sites */
        for (unsigned i = 0; i < o->fpc->n; i++)
            o->fpc->fp[i].site = (int)(uintptr_t)clt_map_get(&r->buffer_site, o->fpc->fp[i].buffer);
        rm_fp_keep(m, o);
    }
    if (!o->device && e->n_flow_ids && o->phase >= 0 && r->flow_phase.used < 65536)
        clt_map_put(&r->flow_phase, e->flow_ids[0], (void *)(uintptr_t)(o->phase + 1));
    /* each timed command's enqueue time: where the host's clock was when the
     * device's commands were made (a device clock that stands still) */
    if (!o->device && e->n_flow_ids && o->ts && r->flow_ts.used < 65536)
        clt_map_put(&r->flow_ts, e->flow_ids[0], (void *)(uintptr_t)o->ts);
    if (o->device && e->n_terminating_flow_ids && r->flow_ts.used) {
        uint64_t ts = (uint64_t)(uintptr_t)clt_map_del(&r->flow_ts, e->terminating_flow_ids[0]);
        if (ts)
            rm_devtiming_enqueue(&m->dt, ts);
    }
    if (o->device)
        o->phase = e->n_terminating_flow_ids && r->flow_phase.used
                   ? (int)(uintptr_t)clt_map_del(&r->flow_phase, e->terminating_flow_ids[0]) - 1 : -1;
}

/* A slice begins (or an untimed call, an instant, is read as one). */
static void slice_begin(struct reader *r, struct seq *s, struct track *t, const Packet *p)
{
    struct rm_model *m = r->m;
    const Perfetto__Protos__TrackEvent *e = p->track_event;
    struct open_slice *o = slice_push(t);
    if (!o)
        return;
    int interned = e->name_field_case != PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    const char *name = interned ? strtab_get(&s->names, e->name_iid) : e->name;
    size_t nl = interned ? strtab_len(&s->names, e->name_iid) : name ? strlen(name) : 0;   /* no snprintf */
    if (nl > sizeof o->name - 1)
        nl = sizeof o->name - 1;
    memcpy(o->name, name ? name : "", nl);
    o->name[nl] = 0;
    o->ts = p->timestamp;
    o->phase = -1;
    for (int d = (int)t->depth - 2; d >= 0 && o->phase < 0; d--)
        if (t->stack[d].range)
            o->phase = t->stack[d].phase;        /* the innermost range around it */
    for (size_t i = 0; i < e->n_categories; i++)
        if (e->categories[i] && !strcmp(e->categories[i], "cltrace.range")) {
            o->range = 1;
            o->phase = rm_phase_enter(m, o->phase, o->name);
        } else if (e->categories[i] && !strcmp(e->categories[i], "mpi")) {
            o->mpi = 1;
        }
    if (o->range || o->mpi) {
        o->api = -1;
        if (o->mpi)
            rm_read_args(o, s, e);      /* its bytes */
        return;
    }
    rm_read_args(o, s, e);
    if (o->program && !strcmp(o->name, "clBuildProgram"))
        build_seen(m, o);
    flows(r, s, e, o);
    if (!o->device && !o->error && o->size && o->size < m->small_threshold &&
        (!strcmp(o->name, "clEnqueueWriteBuffer") || !strcmp(o->name, "clEnqueueReadBuffer")))
        rm_small_site_add(m, s, callstack_of(e), o->size);
    if ((o->error || o->uar) && !o->device) {
        char site[RM_MAX_SITE];
        int mine = rm_site_of(m, s, callstack_of(e), site, sizeof site);
        /* made by a library, not by the program: inside a call the shim
         * wraps (hwloc's device probing in MPI_Init), or with no frame of
         * the program in its stack */
        if (o->inside[0] || (!mine && site[0])) {
            char lib[RM_MAX_NAME / 2];
            rm_site_caller(s, callstack_of(e), lib, sizeof lib);
            snprintf(o->by, sizeof o->by, "%s%s%s", lib[0] ? lib : "a library", o->inside[0] ? " inside " : "",
                     o->inside);
        }
        if (o->error)
            rm_error_site(m, o->name, o->error_name, o->by, site, o->phase);
        if (o->uar)
            rm_uar_add(m, o->name, site);
    }
    /* API calls carry interned names: their summary row is found once per name */
    o->api = !o->device && interned ? seq_api_index(m, s, e->name_iid, o->name) : -1;
}

static void leak_seen(struct rm_model *m, struct seq *s, const Perfetto__Protos__TrackEvent *e)
{
    struct open_slice o;    /* on the stack: threads read traces at once (views/job.c) */
    memset(&o, 0, sizeof o);
    o.leak_class = RM_LEAK_UNKNOWN;
    rm_read_args(&o, s, e);
    char site[RM_MAX_SITE];
    rm_site_of(m, s, callstack_of(e), site, sizeof site);
    rm_leak_add(m, &o, site);
}

static void source_seen(struct rm_model *m, struct seq *s, const Perfetto__Protos__TrackEvent *e)
{
    uint64_t program = 0;
    const char *src = NULL;
    for (size_t i = 0; i < e->n_debug_annotations; i++) {
        const Ann *a = e->debug_annotations[i];
        if (a->name_field_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME || !a->name)
            continue;
        if (!strcmp(a->name, "program"))
            program = rm_ann_uint(a);
        else if (!strcmp(a->name, "source"))
            src = rm_ann_str(s, a);
    }
    if (program && src)
        rm_scan_source(m, program, src);
}

static void packet(struct reader *r, const Packet *p)
{
    struct rm_model *m = r->m;
    m->packets++;
    if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES)
        rm_read_attributes(m, p->trace_attributes);
    queue_name(m, p);
    uint32_t sid = p->has_trusted_packet_sequence_id ? p->trusted_packet_sequence_id : 0;
    struct seq *s = seq_get(r, sid, p->has_sequence_flags && (p->sequence_flags & 1));
    if (s && p->trace_packet_defaults && p->trace_packet_defaults->track_event_defaults &&
        p->trace_packet_defaults->track_event_defaults->has_track_uuid)
        s->track = p->trace_packet_defaults->track_event_defaults->track_uuid;
    if (s && p->interned_data)
        interned(s, p->interned_data);
    if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE && s) {
        rm_host_sample(m, s, p->timestamp, p->perf_sample, p->perf_sample->callstack_iid);
        return;
    }
    if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT || !s)
        return;
    const Perfetto__Protos__TrackEvent *e = p->track_event;
    uint64_t tuuid = e->has_track_uuid ? e->track_uuid : s->track;
    struct track *t = track_of(r, tuuid);
    if (!t)
        return;
    /* an API call (interned name) as an instant: its duration was not measured */
    int untimed = e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT &&
                  e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
    int named_instant = e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT && e->name &&
                        e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
    if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN || untimed) {
        unsigned depth = t->depth;
        slice_begin(r, s, t, p);
        if (t->depth == depth || t->stack[t->depth - 1].range)
            return;             /* not pushed (a range, or past the limit): as before, no untimed close */
    } else if (named_instant && !strncmp(e->name, "leaked ", 7)) {
        leak_seen(m, s, e);
    } else if (named_instant && !strcmp(e->name, "program source")) {
        source_seen(m, s, e);
    } else if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END && t->depth) {
        rm_slice_end(m, t, tuuid, p->timestamp, 0);
    }
    if (untimed && t->depth)
        rm_slice_end(m, t, tuuid, p->timestamp, 1);
}

int rm_read(struct rm_model *m, const char *path, char *err, unsigned errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    return rm_read_fd(m, fd, path, err, errlen);
}

/* The next TracePacket (field 1 of Trace: tag 0x0A, length, bytes), in
 * place (input.c). */
int rm_next_packet(struct rm_in *in, const uint8_t **buf, uint64_t *len, int *tag)
{
    /* most: the tag and a length of one or two bytes, the packet whole in
     * the window -- read there, not a byte a call */
    size_t avail = in->out_len - in->out_pos;
    const uint8_t *p = avail ? in->out + in->out_pos : NULL;       /* an empty trace has no bytes */
    if (avail >= 3 && p[0] == 0x0A && (p[1] < 0x80 || p[2] < 0x80)) {
        size_t head = p[1] < 0x80 ? 2 : 3;
        uint64_t n = head == 2 ? p[1] : (p[1] & 0x7Fu) | (uint64_t)p[2] << 7;
        if (avail - head >= n) {
            *tag = 0x0A;
            *buf = p + head;
            *len = n;
            in->out_pos += head + n;
            return RM_FRAME_OK;
        }
    }
    *tag = rm_in_byte(in);
    if (*tag < 0)
        return RM_FRAME_END;
    uint64_t n = 0;
    int shift = 0, c = 0;
    while (shift < 64 && (c = rm_in_byte(in)) >= 0) {
        n |= (uint64_t)(c & 0x7F) << shift;
        shift += 7;
        if (c < 0x80)
            break;
    }
    if (*tag != 0x0A || n > (64u << 20))
        return RM_FRAME_BAD;
    if (c < 0)
        return RM_FRAME_CUT;
    static const uint8_t none[1];
    *buf = n ? rm_in_take(in, (size_t)n) : none;
    if (!*buf)
        return RM_FRAME_CUT;        /* the app died mid-packet */
    *len = n;
    return RM_FRAME_OK;
}

/* fastread.c's question: does the model read annotations of this name on
 * this sequence (an unknown sequence: yes) */
static int keep_arg(void *ctx, uint32_t sid, uint64_t name_iid)
{
    struct seq *s = seq_get(ctx, sid, 0);
    return !s || rm_arg_read(s, name_iid);
}

static int arg_table(void *ctx, uint32_t sid, uint8_t *const **codes, const uint64_t **n)
{
    struct seq *s = seq_get(ctx, sid, 0);       /* a sequence's struct stays where it is until the end */
    if (!s)
        return 0;
    *codes = &s->codes;
    *n = &s->n_codes;
    return 1;
}

/* One packet into the model: in place where fastread.c takes it, else
 * through protobuf-c (slow: always). -1: it does not decode. */
static int decode(struct reader *r, int slow, const uint8_t *buf, uint64_t len)
{
    const struct rm_mpi_clock *fix = r->m->clock_fix;
    const Packet *fast = slow ? NULL : rm_fast_unpack(&r->fast, buf, (size_t)len);
    if (fast) {
        if (fix && r->fast.packet.has_timestamp)        /* a rank on another host, onto rank 0's clock */
            r->fast.packet.timestamp -= (uint64_t)rm_mpi_offset(fix, r->fast.packet.timestamp);
        packet(r, fast);
        return 0;
    }
    Packet *p = perfetto__protos__trace_packet__unpack(NULL, len, buf);
    if (!p)
        return -1;
    if (fix && p->has_timestamp)
        p->timestamp -= (uint64_t)rm_mpi_offset(fix, p->timestamp);
    packet(r, p);
    perfetto__protos__trace_packet__free_unpacked(p, NULL);
    return 0;
}

int rm_read_fd(struct rm_model *m, int fd, const char *path, char *err, unsigned errlen)
{
    struct reader r = { .m = m };
    /* CLTRACE_REPORT_DECODER=protobuf-c: every packet through protobuf-c
     * (the tests compare the two readers' reports) */
    const char *dec = getenv("CLTRACE_REPORT_DECODER");
    int slow = dec && !strcmp(dec, "protobuf-c");
    r.fast.keep = keep_arg;
    r.fast.table = arg_table;
    r.fast.keep_ctx = &r;
    struct rm_in in;
    if (rm_in_open(&in, fd) != 0) {
        rm_in_close(&in);
        close(fd);
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    close(fd);                  /* mapped */
    int rc = 0;
    for (;;) {
        uint64_t len = 0;
        const uint8_t *buf = NULL;
        int tag, fr = rm_next_packet(&in, &buf, &len, &tag);
        if (fr == RM_FRAME_END)
            break;
        if (fr == RM_FRAME_BAD && m->packets == 0) {
            snprintf(err, errlen, "%s: not a Perfetto trace (byte 0x%02x at the start)", path, tag);
            rc = -1;
            break;
        }
        if (fr != RM_FRAME_OK) {    /* garbage or a cut after good packets: keep what was read */
            m->truncated = 1;
            break;
        }
        if (decode(&r, slow, buf, len) != 0) {
            if (m->packets == 0) {
                snprintf(err, errlen, "%s: not a Perfetto trace (first packet does not decode)", path);
                rc = -1;
            } else {
                m->truncated = 1;
            }
            break;
        }
    }
    if (rc == 0 && m->packets == 0) {
        snprintf(err, errlen, "%s: empty trace", path);
        rc = -1;
    }
    if (in.salvaged && m->packets)
        m->truncated = 1;       /* the gzip stream cut short: what it held before the cut was read */
    if (rc == 0) {
        rm_untimed_transfers_fold(m);
        rm_extrapolate(m);
        rm_devtiming_judge(&m->dt);
    }
    rm_mpi_finish(m);
    rm_host_finish(m);
    rm_devices_fold(m);
    rm_in_close(&in);
    for (uint64_t i = 0; i < r.seqs.cap; i++)
        if (r.seqs.keys[i]) {
            seq_clear(r.seqs.vals[i]);
            free(r.seqs.vals[i]);
        }
    for (uint64_t i = 0; i < r.tracks.cap; i++)
        if (r.tracks.keys[i]) {
            struct track *t = r.tracks.vals[i];
            free(t->stack);
            free(t);
        }
    clt_map_free(&r.seqs);
    clt_map_free(&r.flow_site);
    clt_map_free(&r.flow_phase);
    clt_map_free(&r.flow_ts);
    clt_map_free(&r.buffer_site);
    clt_map_free(&r.tracks);
    return rc;
}

void rm_model_init(struct rm_model *m)
{
    memset(m, 0, sizeof *m);
    m->rank = -1;
}

void rm_free(struct rm_model *m)
{
    free(m->mpi.call);
    free(m->mpi.busy);
    free(m->api);
    free(m->errors);
    free(m->kernels);
    free(m->leaks);
    free(m->uars);
    rm_mem_free(m);
    rm_host_free(m);
    free(m->hints);
    free(m->sites);
    rm_devices_free(m);
    for (unsigned i = 0; i < m->n_stack_texts; i++) {
        free(m->stack_texts[i].where);
        free(m->stack_texts[i].full);
    }
    free(m->stack_texts);
    free(m->programs);
    free(m->cmds);
    free(m->phases);
    free(m->fpcmds);
    rm_model_init(m);
}
