/* The annotations the reader uses: from an event's debug annotations to the
 * open slice's fields (read_args), and the trace attributes (devices,
 * dropped calls). An interned name is looked up once per sequence and iid. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reader.h"

typedef Perfetto__Protos__DebugAnnotation Ann;

enum arg_code { A_OTHER, A_RESULT, A_COMMAND_TYPE, A_DURATION, A_DIRECTION, A_BYTES, A_PINNED, A_WORK_DIM,
                A_GWS, A_LWS, A_WORK_GROUPS, A_WG_SIZE, A_PREF, A_KWG, A_KLOCAL, A_LOCAL_ARG, A_REGS,
                A_UAR, A_TYPE, A_CREATED_BY, A_SIZE, A_KNAME, A_PROGRAM, A_OPTIONS, A_BLOCK_R, A_BLOCK_W,
                A_BLOCK_M, A_START, A_SITE_MADE, A_SITE_RELEASED, A_LEAK_CLASS, A_LEAK_WHY,
                A_FINGERPRINTS, A_FP_CMD, A_FP_LAUNCH, A_KARGS, A_QUEUE, A_OUTSIDE, A_END, A_QUEUED, A_INSIDE, A_DEVICE,
                A_ESTIMATED, A_MEMOBJ, A_REFS, A_CREATED_NS, A_SHORTENED };
static const char *const arg_names[] = { "", "result", "command_type", "duration_ns", "direction", "bytes",
                                         "pinned", "work_dim", "global_work_size", "local_work_size",
                                         "work_groups", "work_group_size", "preferred_work_group_size_multiple",
                                         "kernel_work_group_size", "kernel_local_mem_bytes", "local_arg_bytes",
                                         "registers_per_work_item", "use_after_release", "type", "created_by",
                                         "size", "kernel_name", "program", "options", "blocking_read",
                                         "blocking_write", "blocking_map", "start_ns", "site_made",
                                         "site_released", "leak_class", "leak_why",
                                         "fingerprints", "fingerprint_command", "fingerprint_launch",
                                         "kernel_args", "queue", "outside_window", "end_ns", "queued_ns",
                                         "called_inside", "device", "estimated", "memobj", "reference_count",
                                         "created_ns", "shortened_from_ns" };

static enum arg_code arg_code(const char *name)
{
    if (!strcmp(name, "errcode_ret"))
        return A_RESULT;
    for (unsigned i = 1; i < sizeof arg_names / sizeof arg_names[0]; i++)
        if (!strcmp(name, arg_names[i]))
            return (enum arg_code)i;
    return A_OTHER;
}

static enum arg_code seq_arg_code(struct seq *s, uint64_t iid)
{
    if (!cache_fit((void **)&s->codes, &s->n_codes, iid, 1))
        return arg_code(strtab_get(&s->anns, iid));
    if (!s->codes[iid])
        s->codes[iid] = (uint8_t)(arg_code(strtab_get(&s->anns, iid)) + 1);
    return (enum arg_code)(s->codes[iid] - 1);
}

int rm_arg_read(struct seq *s, uint64_t name_iid)
{
    return seq_arg_code(s, name_iid) != A_OTHER;
}

uint64_t rm_ann_uint(const Ann *a)
{
    switch (a->value_case) {
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE: return a->uint_value;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE: return (uint64_t)a->int_value;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE: return a->bool_value;
    default: return 0;
    }
}

const char *rm_ann_str(const struct seq *s, const Ann *a)
{
    if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE)
        return a->string_value;
    if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID && s)
        return strtab_get(&s->strs, a->string_value_iid);
    return NULL;
}

static void ann_array(const Ann *a, uint64_t out[3])
{
    for (size_t i = 0; i < a->n_array_values && i < 3; i++)
        out[i] = rm_ann_uint(a->array_values[i]);
}

/* A device command's `fingerprints` (an array of dicts, trace/TRACE_FORMAT.md). */
static void fp_field(struct rm_fp *f, const struct seq *s, const rm_ann_t *a)
{
    const char *n = a->name ? a->name : "";
    const char *str = rm_ann_str(s, a);
    uint64_t u = rm_ann_uint(a);
    double d = a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE ? a->double_value : 0;
    if (!strcmp(n, "arg"))
        f->arg = (int64_t)u;
    else if (!strcmp(n, "buffer"))
        f->buffer = u;
    else if (!strcmp(n, "bytes"))
        f->bytes = u;
    else if (!strcmp(n, "offset"))
        f->offset = u;
    else if (!strcmp(n, "type") && str)
        snprintf(f->type, sizeof f->type, "%s", str);
    else if (!strcmp(n, "hash") && str)
        f->hash = strtoull(str, NULL, 16);
    else if (!strcmp(n, "nan"))
        f->nan = u;
    else if (!strcmp(n, "pos_inf"))
        f->pos_inf = u;
    else if (!strcmp(n, "neg_inf"))
        f->neg_inf = u;
    else if (!strcmp(n, "denormal"))
        f->denormal = u;
    else if (!strcmp(n, "first_nonfinite"))
        f->first_nonfinite = u;
    else if (!strcmp(n, "min"))
        f->min = d;
    else if (!strcmp(n, "max"))
        f->max = d;
    else if (!strcmp(n, "sum"))
        f->sum = d;
    else if (!strcmp(n, "error"))
        f->error = (int64_t)u ? (int64_t)u : -1;
}

void rm_fp_read(struct open_slice *o, struct seq *s, const rm_ann_t *a)
{
    if (o->fpc || !a->n_array_values || !(o->fpc = calloc(1, sizeof *o->fpc)))
        return;
    for (size_t i = 0; i < a->n_array_values && o->fpc->n < RM_FP_PER_CMD; i++) {
        const rm_ann_t *it = a->array_values[i];
        struct rm_fp *f = &o->fpc->fp[o->fpc->n++];
        f->first_nonfinite = UINT64_MAX;
        snprintf(f->type, sizeof f->type, "bytes");
        for (size_t j = 0; j < it->n_dict_entries; j++)
            fp_field(f, s, it->dict_entries[j]);
    }
}

/* "SUCCESS" and its end, a byte at a time (no byte read past a shorter
 * string's end): each call's result is one, and strcmp's call was ~30
 * instructions a packet of the report's. */
static int is_success(const char *s)
{
    return s[0] == 'S' && s[1] == 'U' && s[2] == 'C' && s[3] == 'C' && s[4] == 'E' && s[5] == 'S' && s[6] == 'S' &&
           !s[7];
}

/* A call's result: an error (its name, or a negative number), or the
 * object id of the handle it returned. */
static void result(struct open_slice *o, const Ann *a, const char *str)
{
    /* "CL_" and not CL_SUCCESS */
    if (str && str[0] == 'C' && str[1] == 'L' && str[2] == '_' && !is_success(str + 3)) {
        o->error = 1;
        snprintf(o->error_name, sizeof o->error_name, "%s", str);
    } else if (!str && a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE && a->int_value < 0) {
        o->error = 1;
        snprintf(o->error_name, sizeof o->error_name, "%lld", (long long)a->int_value);
    } else if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE) {
        o->result_id = a->uint_value;
    }
}

/* A device command's own arguments (what diverge and the nan rule use). */
static void command_arg(struct open_slice *o, struct seq *s, const Ann *a, enum arg_code c, const char *str)
{
    o->k_dirty = 1;             /* queue, kargs, fp_*: cleared with k */
    switch (c) {
    case A_COMMAND_TYPE:
        o->device = 1;
        snprintf(o->type, sizeof o->type, "%s", str ? str : "");
        break;
    case A_FINGERPRINTS: rm_fp_read(o, s, a); break;
    case A_FP_CMD: o->fp_cmd = rm_ann_uint(a); break;
    case A_FP_LAUNCH: o->fp_launch = rm_ann_uint(a); break;
    case A_QUEUE: o->queue = rm_ann_uint(a); break;
    case A_DEVICE: o->dev_obj = rm_ann_uint(a); break;
    case A_START:               /* the device's own timestamps: can they be true (devtiming.c) */
        o->raw_start = rm_ann_uint(a);
        o->has_raw |= 1;
        break;
    case A_END:
        o->raw_end = rm_ann_uint(a);
        o->has_raw |= 2;
        break;
    case A_QUEUED:
        o->raw_queued = rm_ann_uint(a);
        o->has_raw |= 4;
        break;
    case A_KARGS:
        for (size_t j = 0; j < a->n_array_values && j < RM_FP_ARGS; j++)
            o->kargs[j] = rm_ann_uint(a->array_values[j]);
        o->n_kargs = a->n_array_values < RM_FP_ARGS ? (unsigned)a->n_array_values : RM_FP_ARGS;
        break;
    default: break;
    }
}

/* A kernel launch's facts (o->k: cleared only once written, slice_push). */
static void kernel_arg(struct open_slice *o, const Ann *a, enum arg_code c, const char *str)
{
    o->k_dirty = 1;
    switch (c) {
    case A_WORK_DIM: o->k.work_dim = (unsigned)rm_ann_uint(a); break;
    case A_GWS: ann_array(a, o->k.gws); break;
    case A_LWS:
        if (str)
            o->k.local_null = 1;
        else
            ann_array(a, o->k.lws);
        break;
    case A_WORK_GROUPS: o->k.work_groups = rm_ann_uint(a); break;
    case A_WG_SIZE: o->k.wg_size = rm_ann_uint(a); break;
    case A_PREF: o->k.pref_multiple = rm_ann_uint(a); break;
    case A_KWG: o->k.kernel_wg_size = rm_ann_uint(a); break;
    case A_KLOCAL:
        /* CL_KERNEL_LOCAL_MEM_SIZE already counts the __local arguments set */
        o->k.local_bytes = rm_ann_uint(a);
        break;
    case A_LOCAL_ARG:
        if (!o->k.local_bytes)
            o->k.local_bytes = rm_ann_uint(a);
        break;
    case A_REGS: o->k.regs = rm_ann_uint(a); break;
    default: break;
    }
}

void rm_read_args(struct open_slice *o, struct seq *s, const Perfetto__Protos__TrackEvent *e)
{
    for (size_t i = 0; i < e->n_debug_annotations; i++) {
        const Ann *a = e->debug_annotations[i];
        enum arg_code c = a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME
                          ? arg_code(a->name ? a->name : "") : seq_arg_code(s, a->name_iid);
        if (c == A_OTHER)
            continue;
        const char *str = rm_ann_str(s, a);
        switch (c) {
        case A_RESULT: result(o, a, str); break;
        case A_COMMAND_TYPE:
        case A_FINGERPRINTS:
        case A_FP_CMD:
        case A_FP_LAUNCH:
        case A_QUEUE:
        case A_DEVICE:
        case A_KARGS:
        case A_START:
        case A_END:
        case A_QUEUED: command_arg(o, s, a, c, str); break;
        case A_DURATION: o->dur_ns = rm_ann_uint(a); break;
        case A_DIRECTION:
            if (str)
                snprintf(o->direction, sizeof o->direction, "%s", str);
            break;
        case A_BYTES: o->bytes = rm_ann_uint(a); break;
        case A_PINNED: o->pinned = (int)rm_ann_uint(a); break;
        case A_WORK_DIM:
        case A_GWS:
        case A_LWS:
        case A_WORK_GROUPS:
        case A_WG_SIZE:
        case A_PREF:
        case A_KWG:
        case A_KLOCAL:
        case A_LOCAL_ARG:
        case A_REGS: kernel_arg(o, a, c, str); break;
        case A_UAR: o->uar = rm_ann_uint(a); break;
        case A_ESTIMATED: o->estimated = 1; break;
        case A_SHORTENED: o->sized_ns = rm_ann_uint(a); break;
        case A_OUTSIDE: o->outside = rm_ann_uint(a) != 0; break;
        case A_PROGRAM: o->program = rm_ann_uint(a); break;
        case A_BLOCK_R:
        case A_BLOCK_W:
        case A_BLOCK_M: o->blocking |= rm_ann_uint(a) != 0; break;
        case A_OPTIONS: o->options = str; break;
        case A_SIZE: o->size = rm_ann_uint(a); break;
        case A_MEMOBJ: o->memobj = rm_ann_uint(a); break;
        case A_CREATED_NS: o->created_ns = rm_ann_uint(a); break;
        case A_REFS: o->refs_after = rm_ann_uint(a) + 1; break;
        case A_SITE_MADE: o->site_made = rm_ann_uint(a); break;
        case A_SITE_RELEASED: o->site_released = rm_ann_uint(a); break;
        case A_TYPE:
            snprintf(o->type, sizeof o->type, "%s", str ? str : "");
            break;
        case A_CREATED_BY:
            snprintf(o->created_by, sizeof o->created_by, "%s", str ? str : "");
            break;
        case A_KNAME:
            snprintf(o->kname, sizeof o->kname, "%s", str ? str : "");
            break;
        case A_LEAK_CLASS:
            o->leak_class = !str ? RM_LEAK_UNKNOWN : !strcmp(str, "definitely_lost") ? RM_LEAK_DEFINITELY_LOST
                          : !strcmp(str, "growing") ? RM_LEAK_GROWING : RM_LEAK_STILL_HELD;
            break;
        case A_LEAK_WHY:
            snprintf(o->leak_why, sizeof o->leak_why, "%s", str ? str : "");
            break;
        case A_INSIDE:
            snprintf(o->inside, sizeof o->inside, "%s", str ? str : "");
            break;
        case A_OTHER: break;
        }
    }
}

/* ---- packets ---------------------------------------------------------------- */

/* cltrace.probe.N.<key>: a device's `cltrace probe` results (written when
 * the device is first seen, before its transfers). The first probed
 * device's threshold is what "small" means, unless --small-bytes said. */
/* cltrace.program.ID "HASH FILE KERNELS" and cltrace.override.N "WHAT TEXT"
 * (writer/overrides.c). */
static void override_attr(struct rm_model *m, const char *key, const char *s)
{
    unsigned long long id;
    char hash[24], file[96];
    if (!s)
        return;
    if (sscanf(key, "cltrace.program.%llu", &id) == 1 && sscanf(s, "%23s %95s", hash, file) == 2) {
        struct rm_program *p = rm_program(m, id);
        if (p)
            snprintf(p->file, sizeof p->file, "%s", file);
    } else if (!strncmp(key, "cltrace.override.", 17) && m->n_overrides < RM_MAX_OVERRIDES) {
        struct rm_override *o = &m->overrides[m->n_overrides++];
        size_t w = strcspn(s, " ");
        snprintf(o->what, sizeof o->what, "%.*s", (int)(w < sizeof o->what ? w : sizeof o->what - 1), s);
        snprintf(o->text, sizeof o->text, "%s", s[w] ? s + w + 1 : "");
    }
}

static void probe_attr(struct rm_model *m, unsigned d, const char *field, const char *s)
{
    struct rm_device *x = &m->dev[d];
    if (!strcmp(field, "date"))
        snprintf(x->probe_date, sizeof x->probe_date, "%s", s);
    else if (!strcmp(field, "h2d_pageable_gbps") || !strcmp(field, "h2d_pinned_gbps")) {
        double g = strtod(s, NULL);
        if (g > x->probe_gbps)
            x->probe_gbps = g;
        if (!strcmp(field, "h2d_pinned_gbps"))
            x->probe_pinned[0] = g;
    } else if (!strcmp(field, "d2h_pinned_gbps"))
        x->probe_pinned[1] = strtod(s, NULL);
    else if (!strcmp(field, "small_transfer_bytes")) {
        x->probe_small = strtoull(s, NULL, 10);
        int first = 1;
        for (unsigned i = 0; i < d; i++)
            first &= !m->dev[i].probe_small;
        if (x->probe_small && first && !m->small_given) {
            m->small_threshold = x->probe_small;
            snprintf(m->small_source, sizeof m->small_source, "measured on this device by cltrace probe (%.10s)",
                     x->probe_date[0] ? x->probe_date : "undated");
        }
    }
}

/* What covers part of a run: windows (CLTRACE_WINDOW), the flight recorder
 * (CLTRACE_RING_MB). */
static void part_attr(struct rm_model *m, const char *key, int64_t v, const char *s)
{
    if (!strcmp(key, "cltrace.ring_bytes"))
        m->ring_bytes = (uint64_t)v;
    if (!strcmp(key, "cltrace.ring_dropped_bytes"))
        m->ring_dropped_bytes = (uint64_t)v;
    if (!strcmp(key, "cltrace.window_count"))
        m->n_windows = v > 0 ? (unsigned)v : 0;
    if (strcmp(key, "cltrace.windows") || !s)
        return;
    snprintf(m->windows, sizeof m->windows, "%s", s);
    m->window_ns = 0;
    for (const char *p = s; *p;) {
        unsigned long long a0, a1;
        if (sscanf(p, "%llu-%llu", &a0, &a1) == 2 && a1 > a0)
            m->window_ns += a1 - a0;
        p += strcspn(p, ";");
        p += *p == ';';
    }
}

/* cltrace.mpi.* (writer/mpi.c) */
static void mpi_attr(struct rm_model *m, const char *k, int64_t v)
{
    int when = !strncmp(k, "init_", 5) ? 0 : !strncmp(k, "final_", 6) ? 1 : -1;
    const char *f = when == 0 ? k + 5 : when == 1 ? k + 6 : k;
    if (!strcmp(k, "calls"))
        m->mpi_calls = (uint64_t)v;
    else if (!strcmp(k, "rank"))
        m->mpi_rank = (int)v;
    else if (when >= 0 && !strcmp(f, "at_ns"))
        m->mpi_clock[when].at = (uint64_t)v, m->mpi_clock[when].have = 1;
    else if (when >= 0 && !strcmp(f, "offset_ns"))
        m->mpi_clock[when].offset = v;
    else if (when >= 0 && !strcmp(f, "rtt_ns"))
        m->mpi_clock[when].rtt = (uint64_t)v;
}

/* One device's attribute (cltrace.device.N.FIELD). */
static void device_attr(struct rm_device *x, const char *field, int64_t v, const char *s)
{
    static const struct { const char *field; size_t off; } ints[] = {
        { "compute_units", offsetof(struct rm_device, compute_units) },
        { "warp_size", offsetof(struct rm_device, warp) },
        { "compute_capability", offsetof(struct rm_device, cc) },
        { "max_work_group_size", offsetof(struct rm_device, max_wg) },
        { "local_mem_bytes", offsetof(struct rm_device, local_mem) },
        { "global_mem_bytes", offsetof(struct rm_device, global_mem) },
        { "registers_per_block", offsetof(struct rm_device, regs_per_block) },
        { "device_type", offsetof(struct rm_device, type) },
        { "clock_residual_ns", offsetof(struct rm_device, clock_residual_ns) },
        { "clock_residual_median_ns", offsetof(struct rm_device, clock_residual_median_ns) },
        { "clock_floor_ns", offsetof(struct rm_device, clock_floor_ns) },
        { "clock_markers", offsetof(struct rm_device, clock_markers) },
        { "clock_contradictions", offsetof(struct rm_device, clock_contradictions) },
        { "event_cost_ns", offsetof(struct rm_device, event_cost_ns) },
        { "own_events", offsetof(struct rm_device, own_events) },
        { "commands_sampled_out", offsetof(struct rm_device, sampled_out) },
        { "idle_starts", offsetof(struct rm_device, idle_starts) },
        { "idle_start_ns", offsetof(struct rm_device, idle_start_ns) },
        { "idle_start_quick_ns", offsetof(struct rm_device, idle_start_quick_ns) },
        { "idle_start_median_ns", offsetof(struct rm_device, idle_start_median_ns) },
        { "idle_start_excess_ns", offsetof(struct rm_device, idle_start_excess_ns) },
        { "profiling_price_ns", offsetof(struct rm_device, profiling_price_ns) },
        { "commands_profiled_for_cltrace", offsetof(struct rm_device, profiled) },
    };
    if (!strcmp(field, "name") && s)
        snprintf(x->name, sizeof x->name, "%s", s);
    else if (!strcmp(field, "vendor") && s)
        snprintf(x->vendor, sizeof x->vendor, "%s", s);
    else if (!strcmp(field, "uuid") && s)
        snprintf(x->uuid, sizeof x->uuid, "%s", s);
    else if (!strcmp(field, "id"))
        x->id = (uint64_t)v;
    else if (!strcmp(field, "clock_method") && s)
        snprintf(x->clock_method, sizeof x->clock_method, "%s", s);
    for (unsigned k = 0; k < sizeof ints / sizeof ints[0]; k++)
        if (!strcmp(field, ints[k].field))
            *(int64_t *)((char *)x + ints[k].off) = v;
}

void rm_read_attributes(struct rm_model *m, const Perfetto__Protos__TraceAttributes *ta)
{
    for (size_t i = 0; i < ta->n_attribute; i++) {
        const Perfetto__Protos__TraceAttributes__Attribute *a = ta->attribute[i];
        unsigned d;
        char field[64];
        int64_t v = a->value_case == PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_LONG_VALUE ? a->long_value : 0;
        const char *s = a->value_case == PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE
                        ? a->string_value : NULL;
        if (!a->key)
            continue;
        if (!strcmp(a->key, "cltrace.calls"))        /* the footer: the app exited cleanly */
            m->has_attributes = 1;
        if (!strcmp(a->key, "cltrace.disk_full"))    /* the trace's end, written when the disk filled */
            snprintf(m->disk_full, sizeof m->disk_full, "%s", s ? s : "the disk filled");
        if (!strcmp(a->key, "cltrace.fingerprint") && s)
            snprintf(m->fingerprint, sizeof m->fingerprint, "%s", s);
        if (!strcmp(a->key, "cltrace.bytes_kept"))
            m->disk_full_bytes = (uint64_t)v;
        if (s && sscanf(a->key, "cltrace.probe.%u.%63s", &d, field) == 2 && d < 8) {
            if (d >= m->n_dev)
                m->n_dev = d + 1;
            probe_attr(m, d, field, s);
            continue;
        }
        if (!strcmp(a->key, "cltrace.dropped_calls"))
            m->dropped_calls = (uint64_t)v;
        if (!strcmp(a->key, "cltrace.cpu_sample_period_ns"))
            m->hostcpu.period_ns = (uint64_t)v;
        if (!strcmp(a->key, "cltrace.cpu_samples_lost"))
            m->hostcpu.lost = (uint64_t)v;
        part_attr(m, a->key, v, s);
        if (!strcmp(a->key, "cltrace.rank"))
            m->rank = (int)v;
        if (!strcmp(a->key, "cltrace.host") && s)
            snprintf(m->host, sizeof m->host, "%s", s);
        if (!strncmp(a->key, "cltrace.mpi.", 12))
            mpi_attr(m, a->key + 12, v);
        rm_selfcost_attr(m, a->key, v, s);
        override_attr(m, a->key, s);
        if (!strcmp(a->key, "cltrace.cmdline") && s && !m->cmdline[0])
            snprintf(m->cmdline, sizeof m->cmdline, "%s", s);
        if (sscanf(a->key, "cltrace.device.%u.%63s", &d, field) != 2 || d >= 8)
            continue;
        if (d >= m->n_dev)
            m->n_dev = d + 1;
        device_attr(&m->dev[d], field, v, s);
    }
}
