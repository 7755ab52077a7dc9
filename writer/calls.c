/* API calls -> slices on the calling thread's track: arguments decoded
 * from the generated tables, interned per sequence (one sequence per
 * recording thread, ids >= 2), encoded by the hand encoder (fastpack.h).
 * The dispatcher (dispatch.c) calls clt_call_decode, lets the object model
 * see the call, then clt_call_write. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "device_model.h"
#include "emit.h"
#include "common/map.h"
#include "trace/cltrace.pb-c.h"
#include "lifetime.h"
#include "trace/fastpack.h"
#include "trace/tables.h"
#include "trace/generated/clt_shapes.h"

typedef Perfetto__Protos__TrackDescriptor Track;
typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent Event;

/* Recent enqueues' records and the arguments each encoded to
 * (decode_again), a slot by function and second argument (a launch's
 * kernel, a transfer's buffer): a loop that writes, launches and reads
 * keeps the three, unless two fall in one slot. clSetKernelArg is not
 * kept: its decoding (~140 instructions) cost little more than looking. */
#define MEMO_REC 256
#define MEMO_ARGS 256
#define MEMO_SLOTS 8
#define MEMO_MISSES 4      /* misses in a row before a slot rests */
#define MEMO_REST 1024     /* calls a slot then lets by */
struct call_memo {
    uint64_t objs_gen;                 /* w->objs.gen when made (0: none) */
    const char *kernel_name;
    uint32_t stack;
    uint16_t args_len, misses, rest;
    unsigned n_ann;
    _Alignas(8) uint8_t rec[MEMO_REC]; /* the record, as it was */
    uint8_t args[MEMO_ARGS];
};

struct clt_seq {
    uint32_t generation, epoch;
    uint64_t track_uuid;
    uint8_t *fn_sent, *name_sent, *str_sent;   /* interned on this sequence */
    struct clt_sym_sent sym;                   /* call stacks interned on it */
    struct call_memo memo[MEMO_SLOTS];
};

/* ---- interning tables ------------------------------------------------- */

/* A name's index, the first appearance's, through a map of the names'
 * hashes (index + 1): a linear search over ~1,300 parameters cost ~0.25 ms
 * of the app thread's first OpenCL call. A hash collision only stores the
 * second name apart, as writer/symbols.c's strings do. */
static unsigned name_index(struct clt_writer *w, struct clt_map *seen, const char *name)
{
    uint64_t h = clt_hash_bytes(name, strlen(name));
    unsigned i = (unsigned)(uintptr_t)clt_map_get(seen, h);
    if (i && strcmp(w->names[i - 1], name) == 0)
        return i - 1;
    w->names[w->n_names] = name;
    if (!i)
        clt_map_put(seen, h, (void *)(uintptr_t)(w->n_names + 1));
    return w->n_names++;
}

/* The memory of the name tables every sequence interns from (and the
 * output buffer), on the app's first call: where it fails, the app runs
 * untraced. */
int clt_calls_init(struct clt_writer *w)
{
    unsigned total = 0;
    for (unsigned f = 0; f < CLT_FN_COUNT; f++) {
        w->pname_off[f] = total;
        total += clt_fns[f].n_params;
    }
    w->pname_off[CLT_FN_COUNT] = total;
    w->pname = calloc(total + 1, sizeof *w->pname);
    w->names = calloc(total + 8, sizeof *w->names);
    w->out = calloc(1, CLT_OUT_CAP + 64);    /* gzstream compares 64 bytes at a time */
    return w->pname && w->names && w->out ? 0 : -1;
}

/* The tables themselves: parameter names, enum and error names (iids are
 * their indexes); on the writer's thread, before its first record. */
void clt_calls_name(struct clt_writer *w)
{
    struct clt_map seen = { 0 };
    for (unsigned f = 0; f < CLT_FN_COUNT; f++)
        for (unsigned i = 0; i < clt_fns[f].n_params; i++)
            w->pname[w->pname_off[f] + i] = name_index(w, &seen, clt_fns[f].params[i].name);
    w->name_result = name_index(w, &seen, "result");
    w->name_arg_object = name_index(w, &seen, "arg_object");
    w->name_refcount = name_index(w, &seen, "reference_count");
    w->name_released = name_index(w, &seen, "use_after_release");
    w->name_device_timed = name_index(w, &seen, "device_timed");
    w->name_outside = name_index(w, &seen, "outside_window");
    w->name_inside = name_index(w, &seen, "called_inside");
    w->name_kernel_name = name_index(w, &seen, "kernel_name");
    w->name_called_from = name_index(w, &seen, "called_from");
    clt_map_free(&seen);
    unsigned s = 0;
    for (unsigned d = 0; d < CLT_DEC_COUNT; d++) {
        w->str_off[d] = s;
        s += clt_decoders[d].n;
    }
    w->str_off[CLT_DEC_COUNT] = s;        /* error names follow */
    w->n_strs = s + clt_n_errors;
    for (unsigned i = 0; i < 2048; i++)
        w->err_idx[i] = -1;
    for (unsigned i = 0; i < clt_n_errors; i++)
        if (clt_errors[i].value <= 0 && clt_errors[i].value > -2048 && w->err_idx[-clt_errors[i].value] < 0)
            w->err_idx[-clt_errors[i].value] = (int16_t)i;
}

/* ---- one sequence per thread ------------------------------------------ */

struct clt_seq *clt_seq_for(struct clt_writer *w, struct clt_thread *th)
{
    struct clt_seq *ss = th->wstate;
    if (!ss) {
        ss = calloc(1, sizeof *ss);
        uint8_t *bits = ss ? calloc(CLT_FN_COUNT + w->n_names + w->n_strs, 1) : NULL;
        if (!bits) {
            free(ss);
            return NULL;
        }
        ss->fn_sent = bits;
        ss->name_sent = bits + CLT_FN_COUNT;
        ss->str_sent = ss->name_sent + w->n_names;
        th->wstate = ss;
    }
    if (ss->generation == th->generation && ss->track_uuid && ss->epoch == w->epoch)
        return ss;
    ss->epoch = w->epoch;     /* the flight recorder's new epoch: declared again, interning cleared */
    /* A new thread on this ring: its track, then a fresh sequence state. */
    int first = ss->track_uuid == 0;
    ss->generation = th->generation;
    ss->track_uuid = w->process_uuid | (uint32_t)th->tid;
    memset(ss->fn_sent, 0, CLT_FN_COUNT + w->n_names + w->n_strs);
    clt_sym_sent_reset(&ss->sym);
    memset(ss->memo, 0, sizeof ss->memo);    /* its names' interning is gone */

    char path[64], name[64], fallback[32];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", th->tid);
    snprintf(fallback, sizeof fallback, "thread %d", th->tid);
    clt_read_comm(path, name, sizeof name, fallback);
    Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    td.has_pid = td.has_tid = 1;
    td.pid = w->pid;
    td.tid = th->tid;
    td.thread_name = name;
    Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = 1;
    t.uuid = ss->track_uuid;
    t.thread = &td;
    clt_put_track(w, &t);

    clt_sequence_start(w, th->seq, first, ss->track_uuid);
    return ss;
}

/* Scratch for one call: its arguments, encoded as they are decoded (one
 * pass: the slice's BEGIN copies them), and any interning they need. */
#define MAX_ANN 40
#define ARG_BYTES (FP_MAX_PACKET - 256)    /* room for the packet's own fields */
struct call_scratch {
    uint8_t args[ARG_BYTES + 64];   /* + 64: fp_begin copies 64 bytes at a time */
    uint8_t *end;                   /* of the encoded arguments */
    unsigned n_ann;
    uint64_t elems[CLT_MAX_PROPS > CLT_MAX_ARRAY ? CLT_MAX_PROPS : CLT_MAX_ARRAY];
    char text[CLT_MAX_STR + 1];
    /* new interned entries, written (with protobuf-c) before the slice */
    Perfetto__Protos__EventName en, *enp[1];
    Perfetto__Protos__DebugAnnotationName dn[MAX_ANN], *dnp[MAX_ANN];
    Perfetto__Protos__InternedString is[MAX_ANN], *isp[MAX_ANN];
    unsigned n_en, n_dn, n_is;
    struct clt_sym_scratch sym;
    Perfetto__Protos__InternedData in;
};

static struct call_scratch s;   /* one call at a time: between decode and write */

/* A name new on this sequence: interned in the packet before the slice. */
static __attribute__((noinline)) void intern_name(struct clt_writer *w, struct clt_seq *ss,
                                                  struct call_scratch *s, unsigned name)
{
    ss->name_sent[name] = 1;
    Perfetto__Protos__DebugAnnotationName *d = &s->dn[s->n_dn];
    perfetto__protos__debug_annotation_name__init(d);
    d->has_iid = 1;
    d->iid = name + 1;
    d->name = (char *)w->names[name];
    s->dnp[s->n_dn++] = d;
}

/* The iid of an argument name, interned on this sequence if new. */
static inline __attribute__((always_inline)) uint32_t name_iid(struct clt_writer *w, struct clt_seq *ss,
                                                              struct call_scratch *s, unsigned name)
{
    if (__builtin_expect(!ss->name_sent[name], 0))
        intern_name(w, ss, s, name);
    return name + 1;
}

/* A call's arguments while they are encoded: the cursor into s.args and
 * what decoding gathers besides. Decoders keep it in a local (in registers:
 * the bytes they store cannot alias it, as they could a global's fields). */
struct args {
    uint8_t *end;               /* of the encoded arguments */
    unsigned n;                 /* annotations so far */
    uint64_t t0;
    uint64_t released;          /* a handle the app had already released */
    const uint8_t *src;         /* clCreateProgramWithSource: the program's source */
    uint64_t src_len;
};

/* One scalar argument, encoded at once. */
static inline __attribute__((always_inline)) void ann(struct clt_writer *w, struct clt_seq *ss, struct args *a,
                                                     unsigned name, enum fp_val type, uint64_t v)
{
    struct fp_ann x = { name_iid(w, ss, &s, name), (uint8_t)type, v, NULL, NULL, 0 };
    a->end = fp_ann(a->end, &x);
    a->n++;
}

/* Room kept for the scalar arguments that may follow a long one: at most
 * 17 bytes each, fewer than MAX_ANN + 8 of them (the decode loop's bound,
 * the extra annotations). */
#define SCALAR_ROOM (17u * (MAX_ANN + 8))

/* A string or an array argument (bounded: CLT_MAX_STR, CLT_MAX_PROPS); one
 * that would not fit the packet is left out. */
static void ann_long(struct clt_writer *w, struct clt_seq *ss, struct args *a, unsigned name, const char *str,
                     const uint64_t *arr, unsigned n)
{
    if ((size_t)(s.args + ARG_BYTES - a->end) < SCALAR_ROOM + 16 + (str ? strlen(str) : 14u * n))
        return;
    struct fp_ann x = { name_iid(w, ss, &s, name), str ? FP_V_STR : FP_V_ARRAY, 0, str, arr, n };
    a->end = fp_ann_long(a->end, &x);
    a->n++;
}

static __attribute__((noinline)) void intern_str(struct clt_seq *ss, struct call_scratch *s, unsigned idx,
                                                 const char *str)
{
    ss->str_sent[idx] = 1;
    Perfetto__Protos__InternedString *is = &s->is[s->n_is];
    perfetto__protos__interned_string__init(is);
    is->has_iid = is->has_str = 1;
    is->iid = idx + 1;
    is->str.data = (uint8_t *)str;
    is->str.len = strlen(str);
    s->isp[s->n_is++] = is;
}

/* An interned string value (enum and error names): its iid, sent once. */
static inline __attribute__((always_inline)) uint64_t str_iid(struct clt_seq *ss, unsigned idx, const char *str)
{
    if (__builtin_expect(!ss->str_sent[idx], 0))
        intern_str(ss, &s, idx, str);
    return idx + 1;
}

/* An error code: its name (interned), or the number if it has none. */
static inline __attribute__((always_inline)) void ann_err(struct clt_writer *w, struct clt_seq *ss, struct args *a,
                                                         unsigned name, int32_t code)
{
    int i = code <= 0 && code > -2048 ? w->err_idx[-code] : -1;
    if (i >= 0)
        ann(w, ss, a, name, FP_V_STR_IID, str_iid(ss, w->str_off[CLT_DEC_COUNT] + (unsigned)i, clt_errors[i].name));
    else
        ann(w, ss, a, name, FP_V_INT, (uint64_t)(int64_t)code);
}

/* Strings from the app may be anything: keep printable ASCII (valid UTF-8). */
static void ann_text(struct clt_writer *w, struct clt_seq *ss, struct args *a, unsigned name, const uint8_t *p,
                     size_t n)
{
    ann_long(w, ss, a, name, clt_text(s.text, p, n, 1, '?'), NULL, 0);
}

static uint64_t handle_id(struct clt_writer *w, uint64_t h, int fresh)
{
    return fresh ? clt_objects_new(&w->objs, h) : clt_objects_get(&w->objs, h);
}

static void ann_array(struct clt_writer *w, struct clt_seq *ss, struct args *a, unsigned name, const uint64_t *v,
                      unsigned n, int handles, int fresh)
{
    for (unsigned k = 0; k < n; k++)
        s.elems[k] = handles ? handle_id(w, v[k], fresh) : v[k];
    ann_long(w, ss, a, name, NULL, s.elems, n);
}

static void put_interned(struct clt_writer *w, struct call_scratch *s, uint32_t seq)
{
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    if (s->in.n_callstacks)
        in = s->in;       /* with the entries of a call stack */
    in.n_event_names = s->n_en;
    in.event_names = s->enp;
    in.n_debug_annotation_names = s->n_dn;
    in.debug_annotation_names = s->dnp;
    in.n_debug_annotation_string_values = s->n_is;
    in.debug_annotation_string_values = s->isp;
    clt_put_interned(w, seq, &in);
}

/* A program's source, as an instant on the thread's track after the call:
 * the reporter's kernel-source hints read it. */
static void emit_source(struct clt_writer *w, uint64_t track, uint64_t ts, uint64_t program, const uint8_t *src,
                        uint64_t len)
{
    static char text[CLT_MAX_SRC + 1];
    Perfetto__Protos__DebugAnnotation a[3], *ap[3];
    unsigned na = 0;
    A_UINT("program", program);
    A_STR("source", clt_text(text, src, len < CLT_MAX_SRC ? (size_t)len : CLT_MAX_SRC, 1, ' '));
    A_UINT("source_bytes", len);     /* more than the source's length: it was cut at CLT_MAX_SRC */
    clt_put_instant(w, track, ts, "program source", ap, na, 0);
}



/* An argument of a kind that is neither a number nor a handle: strings,
 * arrays, enums, bitfields (out of line: rarely in a hot loop). */
static __attribute__((noinline)) void decode_other(struct clt_writer *w, struct clt_seq *ss,
                                                   const struct clt_rec *rec, unsigned i, unsigned kind,
                                                   unsigned dec, unsigned name, int fresh, struct args *a)
{
    uint64_t v = rec->arg[i];
    const uint8_t *data = (const uint8_t *)rec + (v >> 32);
    unsigned cnt = (unsigned)(v & 0xFFFFFFFFu);
    switch (kind) {
    case CLT_K_ENUM: {
        int k = clt_enum_index(dec, v);
        if (k >= 0)
            ann(w, ss, a, name, FP_V_STR_IID,
                str_iid(ss, w->str_off[dec] + (unsigned)k, clt_decoders[dec].vals[k].name));
        else
            ann(w, ss, a, name, FP_V_UINT, v);
        break;
    }
    case CLT_K_BITFIELD:
        ann_long(w, ss, a, name, clt_bitfield_str(dec, v, s.text, CLT_MAX_STR + 1), NULL, 0);
        break;
    case CLT_K_STR:
        ann_text(w, ss, a, name, data, cnt > CLT_MAX_STR ? CLT_MAX_STR : cnt);
        break;
    case CLT_K_SRCS:         /* the slice shows the start; the whole source follows it */
        ann_text(w, ss, a, name, data, cnt > CLT_MAX_STR ? CLT_MAX_STR : cnt);
        a->src = data;
        a->src_len = cnt;
        break;
    case CLT_K_ARR:
    case CLT_K_HARR:
    case CLT_K_OUT_HARR:
        ann_array(w, ss, a, name, (const uint64_t *)data, cnt < CLT_MAX_ARRAY ? cnt : CLT_MAX_ARRAY,
                  kind != CLT_K_ARR, kind == CLT_K_OUT_HARR && fresh);
        break;
    case CLT_K_WORDS:
        ann_array(w, ss, a, name, (const uint64_t *)data, cnt < 8 ? cnt : 8, 0, 0);
        break;
    case CLT_K_PROPS:
        ann_array(w, ss, a, name, (const uint64_t *)data, cnt < CLT_MAX_PROPS ? cnt : CLT_MAX_PROPS, 0, 0);
        break;
    default: ann(w, ss, a, name, FP_V_UINT, v); break;
    }
}

/* Argument i of kind `kind` (inline: with a constant kind, one case). */
static inline __attribute__((always_inline)) void decode_param(struct clt_writer *w, struct clt_seq *ss,
                                                              const struct clt_rec *rec, unsigned i,
                                                              unsigned kind, unsigned dec, unsigned name,
                                                              int fresh, struct args *a)
{
    uint64_t v = rec->arg[i];
    if (rec->raw_mask & (1u << i)) {
        ann(w, ss, a, name, FP_V_PTR, v);
        return;
    }
    switch (kind) {
    case CLT_K_VAL:
    case CLT_K_OUT_VAL: ann(w, ss, a, name, FP_V_UINT, v); break;
    case CLT_K_SVAL: ann(w, ss, a, name, FP_V_INT, v); break;
    case CLT_K_HANDLE: {
        struct clt_obj *o = clt_objects_obj(&w->objs, v);
        ann(w, ss, a, name, FP_V_UINT, o ? o->id : handle_id(w, v, 0));
        if (o && !a->released && clt_obj_released(o, a->t0))
            a->released = o->id;
        break;
    }
    case CLT_K_OUT_HANDLE: ann(w, ss, a, name, FP_V_UINT, handle_id(w, v, fresh)); break;
    case CLT_K_BOOL: ann(w, ss, a, name, FP_V_BOOL, v); break;
    case CLT_K_PTR:
    case CLT_K_FUNC: ann(w, ss, a, name, FP_V_PTR, v); break;
    case CLT_K_ERRCODE: ann_err(w, ss, a, name, (int32_t)v); break;
    case CLT_K_BYTES8: {
        ann(w, ss, a, name, FP_V_UINT, v);
        /* A kernel argument that is a live object (cl_mem, sampler...). */
        uint64_t id = clt_objects_find(&w->objs, v);
        if (id)
            ann(w, ss, a, w->name_arg_object, FP_V_UINT, id);
        break;
    }
    default: {
        struct args t = *a;      /* a copy escapes, not *a */
        decode_other(w, ss, rec, i, kind, dec, name, fresh, &t);
        *a = t;
        break;
    }
    }
}

/* The return value (inline: with a constant kind, one case). */
static inline __attribute__((always_inline)) void decode_ret(struct clt_writer *w, struct clt_seq *ss,
                                                            const struct clt_rec *rec, unsigned kind, int fresh,
                                                            struct args *a)
{
    switch (kind) {
    case CLT_R_VOID: break;
    case CLT_R_ERR: ann_err(w, ss, a, w->name_result, (int32_t)rec->ret); break;
    case CLT_R_HANDLE: ann(w, ss, a, w->name_result, FP_V_UINT, handle_id(w, rec->ret, fresh)); break;
    case CLT_R_PTR: ann(w, ss, a, w->name_result, FP_V_PTR, rec->ret); break;
    default: ann(w, ss, a, w->name_result, FP_V_UINT, rec->ret); break;
    }
}

/* One decoder per core command, its parameter kinds constants (from the
 * generated shapes): no loop, no switch on a kind, the argument's encoding
 * inline -- the writer's hottest path, as the wrappers are the app's. */
typedef void decoder_fn(struct clt_writer *w, struct clt_seq *ss, const struct clt_rec *rec, const unsigned *pname,
                        struct args *a);
#define SHAPE_PARAM(i, kind, dec) decode_param(w, ss, rec, i, kind, dec, pname[i], fresh, &a);
#define SHAPE_RET(kind, creates) decode_ret(w, ss, rec, kind, fresh, &a);
#define SHAPE_NO_PARAM(i, kind, dec)
#define SHAPE_CREATES(kind, creates) creates
#define SHAPE_DECODER(fn) \
    static void decode_##fn(struct clt_writer *w, struct clt_seq *ss, const struct clt_rec *rec, \
                            const unsigned *pname, struct args *io) \
    { \
        const int fresh = CLT_SHAPE_##fn(SHAPE_NO_PARAM, SHAPE_CREATES); \
        struct args a = *io; \
        (void)pname; (void)fresh; \
        CLT_SHAPE_##fn(SHAPE_PARAM, SHAPE_RET) \
        *io = a; \
    }
CLT_SHAPES(SHAPE_DECODER)
#define SHAPE_ENTRY(fn) [CLT_FN_##fn] = decode_##fn,
static decoder_fn *const decoders[CLT_FN_COUNT] = { CLT_SHAPES(SHAPE_ENTRY) };

/* Two records the same but for their times and, for an enqueue, its flow id
 * (they differ from call to call and decode to nothing). */
static int same_record(const struct clt_rec *a, const struct clt_rec *b)
{
    const struct clt_fn_desc *fd = &clt_fns[a->fn];
    size_t ret = offsetof(struct clt_rec, ret), flow = offsetof(struct clt_rec, arg) + 8 * (size_t)fd->n_params;
    size_t after = fd->flags & CLT_F_ENQUEUE ? flow + 8 : flow;
    return !memcmp(a, b, offsetof(struct clt_rec, t0)) && !memcmp((const uint8_t *)a + ret, (const uint8_t *)b + ret,
                                                                  flow - ret) &&
           !memcmp((const uint8_t *)a + after, (const uint8_t *)b + after, a->size - after);
}

/* A launch loop's records repeat but for their times and flows: the same
 * record, decoded on this sequence while no object was made or let go and
 * no name was interned, encodes to the same bytes. Decoding them again was
 * ~1,000 of the writer's ~5,000 instructions a launch (callgrind, PoCL). A
 * slot whose records keep differing (a loop setting an argument to a new
 * value each time) is left alone for a while: looked at and kept at every
 * call, it made 3M such calls 30 % dearer to the writer. */
static struct call_memo *memo_slot(struct clt_seq *ss, const struct clt_rec *rec)
{
    uint64_t second = clt_fns[rec->fn].n_params > 1 ? rec->arg[1] : 0;
    uint32_t h = (uint32_t)(rec->fn ^ second >> 4 ^ second >> 12 ^ second) * 0x9E3779B1u;
    return &ss->memo[h >> 29];
}

/* 1: the memo's bytes are this call's; *keep: the slot to keep them in
 * after decoding (NULL: none) */
static int decode_again(struct clt_writer *w, struct clt_seq *ss, const struct clt_rec *rec,
                        const struct clt_call *c, struct call_memo **keep)
{
    *keep = NULL;
    if (!(clt_fns[rec->fn].flags & CLT_F_ENQUEUE) || rec->size > MEMO_REC)
        return 0;
    struct call_memo *m = memo_slot(ss, rec);
    if (m->rest) {
        m->rest--;
        return 0;
    }
    *keep = m;
    if (m->objs_gen != w->objs.gen || !m->objs_gen || m->stack != c->stack || m->kernel_name != c->kernel_name ||
        ((const struct clt_rec *)m->rec)->size != rec->size || !same_record((const struct clt_rec *)m->rec, rec)) {
        m->rest = ++m->misses >= MEMO_MISSES ? MEMO_REST : 0;
        m->misses = m->rest ? 0 : m->misses;
        return 0;
    }
    m->misses = 0;
    memcpy(s.args, m->args, m->args_len);
    s.end = s.args + m->args_len;
    s.n_ann = m->n_ann;
    return 1;
}

static void memo_keep(struct clt_writer *w, struct call_memo *m, const struct clt_rec *rec, const struct clt_call *c,
                      uint64_t released)
{
    size_t n = (size_t)(s.end - s.args);
    m->objs_gen = 0;
    if (released || s.n_en || s.n_dn || s.n_is || n > MEMO_ARGS || !w->objs.gen)
        return;
    memcpy(m->rec, rec, rec->size);
    memcpy(m->args, s.args, n);
    m->args_len = (uint16_t)n, m->n_ann = s.n_ann;
    m->stack = c->stack, m->kernel_name = c->kernel_name;
    m->objs_gen = w->objs.gen;
}

/* The call's arguments as annotations; handles get their object ids (new
 * objects for what the call created). */
void clt_call_decode(struct clt_writer *w, struct clt_seq *ss, const struct clt_rec *rec, struct clt_call *c)
{
    s.n_en = s.n_dn = s.n_is = 0;
    struct call_memo *keep;
    c->src = NULL;
    c->src_len = 0;
    if (decode_again(w, ss, rec, c, &keep))
        return;
    struct args a = { s.args, 0, c->t0, 0, NULL, 0 };
    const unsigned *pname = &w->pname[w->pname_off[rec->fn]];
    /* first, where the UI's arguments begin: the kernel launched, and the
     * program's own frame (the stack below starts at _start) */
    if (c->kernel_name)
        ann_long(w, ss, &a, w->name_kernel_name, c->kernel_name, NULL, 0);
    char where[CLT_MAX_STR + 64];
    if (c->stack && clt_sym_program_frame(&w->syms, c->stack, where, sizeof where)[0])
        ann_long(w, ss, &a, w->name_called_from, where, NULL, 0);
    if (decoders[rec->fn]) {
        decoders[rec->fn](w, ss, rec, pname, &a);
    } else {                    /* an extension's: its kinds from the table */
        const struct clt_fn_desc *fd = &clt_fns[rec->fn];
        int fresh = (fd->flags & CLT_F_CREATES) != 0;
        for (unsigned i = 0; i < fd->n_params && i < MAX_ANN - 4; i++)
            decode_param(w, ss, rec, i, fd->params[i].kind, fd->params[i].dec, pname[i], fresh, &a);
        decode_ret(w, ss, rec, fd->ret, fresh, &a);
    }
    if (a.released && a.n < MAX_ANN)
        ann(w, ss, &a, w->name_released, FP_V_UINT, a.released);
    s.end = a.end;
    s.n_ann = a.n;
    c->src = a.src;
    c->src_len = a.src_len;
    if (keep)
        memo_keep(w, keep, rec, c, a.released);
}

/* An untimed launch's arrow: a flow id in the writer's own space (sequence
 * 1, which no calling thread has), kept in w->est_flow for device.c to hand
 * to its estimated slice (estimated.c ends it). */
static uint64_t est_flow_new(struct clt_writer *w)
{
    w->est_flow = (uint64_t)(w->pid & 0x3FFFFF) << 42 | 1ull << 32 | ++w->est_flows;
    return w->est_flow;
}

/* The call's slice (begin and end; an instant where its duration was not
 * measured) after the object model saw it: `refs`,
 * the app's reference count after a retain or release (-1: none). */
void clt_call_write(struct clt_writer *w, struct clt_thread *th, struct clt_seq *ss, const struct clt_rec *rec,
                    const struct clt_call *c, int64_t refs)
{
    const struct clt_fn_desc *fd = &clt_fns[rec->fn];
    uint64_t t0 = c->t0, t1 = c->t1;
    uint32_t stack = c->stack;
    struct args a = { s.end, s.n_ann, t0, 0, NULL, 0 };
    if (refs >= 0 && a.n < MAX_ANN)
        ann(w, ss, &a, w->name_refcount, FP_V_UINT, (uint64_t)refs);
    /* An enqueue's flow id (slot after its parameters) ties it to its command. */
    uint64_t flow = fd->flags & CLT_F_ENQUEUE ? rec->arg[fd->n_params] : 0;
    if (flow == CLT_FLOW_SAMPLED_OUT) {     /* CLTRACE_SAMPLE left it untimed: say so */
        /* a launch or a transfer gets an arrow of the writer's own to its
         * estimated slice (device.c keeps the id with it; estimated.c ends it) */
        const char *dir;
        flow = rec->fn == CLT_FN_clEnqueueNDRangeKernel || clt_dm_transfer_dir(rec->fn, &dir) ? est_flow_new(w) : 0;
        if (a.n < MAX_ANN)
            ann(w, ss, &a, w->name_device_timed, FP_V_BOOL, 0);
    }
    if ((rec->raw_mask & CLT_RAW_OUTSIDE) && a.n < MAX_ANN)   /* kept outside every window (CLTRACE_WINDOW) */
        ann(w, ss, &a, w->name_outside, FP_V_BOOL, 1);
    static const char *const inside[] = CLT_INSIDE_NAMES;
    if (c->inside && c->inside < sizeof inside / sizeof inside[0] && a.n < MAX_ANN)   /* the library's call */
        ann_long(w, ss, &a, w->name_inside, inside[c->inside], NULL, 0);
    s.in.n_callstacks = 0;
    if (stack) {
        perfetto__protos__interned_data__init(&s.in);
        clt_sym_add_interned(&w->syms, &ss->sym, stack, &s.sym, &s.in);
    }
    if (!ss->fn_sent[rec->fn]) {
        ss->fn_sent[rec->fn] = 1;
        perfetto__protos__event_name__init(&s.en);
        s.en.has_iid = 1;
        s.en.iid = rec->fn + 1u;
        s.en.name = (char *)fd->name;
        s.enp[0] = &s.en;
        s.n_en = 1;
    }
    if (s.n_en || s.n_dn || s.n_is || s.in.n_callstacks)
        put_interned(w, &s, th->seq);
    if (w->len + 2 * FP_MAX_PACKET > w->out_cap)
        clt_writer_flush(w);
    uint8_t *o = w->out + w->len;
    if (rec->raw_mask & CLT_RAW_UNTIMED) {     /* a one-clock call between its measured ones */
        o = fp_instant(o, t0, th->seq, rec->fn + 1u, s.args, (size_t)(a.end - s.args), flow, stack);
    } else {
        o = fp_begin(o, t0, th->seq, rec->fn + 1u, s.args, (size_t)(a.end - s.args), flow, stack);
        o = fp_end(o, t1, th->seq);
    }
    w->len = (size_t)(o - w->out);
    w->calls++;
    if (c->src && rec->ret)
        emit_source(w, ss->track_uuid, t1, handle_id(w, rec->ret, 0), c->src, c->src_len);
}

uint64_t clt_seq_track(const struct clt_seq *ss)
{
    return ss->track_uuid;
}

/* The track of the thread now on this ring, once declared (0: not yet). */
uint64_t clt_thread_track(const struct clt_thread *th)
{
    const struct clt_seq *ss = th->wstate;
    return ss && ss->generation == th->generation ? ss->track_uuid : 0;
}
