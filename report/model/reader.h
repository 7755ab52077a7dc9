/* The reader's private state, shared by model.c (packets), totals.c (aggregates),
 * args.c (annotations) and stacks.c (call stacks, call sites, leaks), and what
 * it hands the model's other parts while it reads (devices, MPI, memory,
 * sampling). The rest of the report sees model.h only. */
#ifndef CLT_REPORT_READER_H
#define CLT_REPORT_READER_H
#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "trace/cltrace.pb-c.h"

struct strtab { char **s; uint32_t *len; uint64_t n; };     /* iid -> string, its length */
struct frame { uint64_t fn, src, map; uint32_t line; };
struct stack { uint64_t *frames; uint32_t n; };

struct seq {
    struct strtab names, anns, strs;
    struct strtab fnames, srcs;         /* call stacks: function names, source paths */
    struct strtab mpaths;               /* mapping paths */
    uint64_t *map_path;                 /* mapping iid -> its path's iid */
    uint64_t n_maps;
    struct frame *frames;               /* iid -> frame */
    struct stack *stacks;               /* iid -> frame iids, outermost first */
    uint64_t n_frames, n_stacks;
    int32_t *site;                      /* callstack iid -> m->sites index + 1 */
    uint64_t n_site;
    uint64_t track;
    uint8_t *codes;             /* annotation iid -> enum arg_code + 1 (0: not yet looked up) */
    int32_t *api;               /* event-name iid -> index in m->api + 1 */
    uint64_t n_codes, n_api;
};


struct track {
    struct open_slice *stack;
    unsigned depth, cap;
    int launch_pending, launch_site, enqueued;
    uint64_t sync_end;          /* when the last wait after a launch returned (0: none since) */
};

/* What the reader hands the model's parts while it reads (the rest of the
 * report sees only model.h). devices.c: a device command of the trace being
 * read; at its end, its devices folded into m->devs */
void rm_device_command(struct rm_model *m, uint64_t dev_obj, uint64_t start, uint64_t end, int kernel, int transfer);
void rm_devices_fold(struct rm_model *m);
void rm_devices_free(struct rm_model *m);
/* mpi.c: a rank's MPI calls and device busy spans; the sweep at the end (the intervals freed) */
void rm_mpi_call(struct rm_model *m, const char *name, uint64_t start, uint64_t end, uint64_t bytes);
void rm_mpi_device(struct rm_model *m, uint64_t start, uint64_t end);
void rm_mpi_finish(struct rm_model *m);
size_t rm_spans_merge(struct rm_span *s, size_t n);   /* sorted and merged into a union: their count */
/* memory.c: buffers made and released */
struct open_slice;
/* any slice: the run's span (inline: at every slice's end) */
static inline void rm_mem_call(struct rm_model *m, uint64_t start, uint64_t end)
{
    if (!m->mem.first_ts || start < m->mem.first_ts)
        m->mem.first_ts = start;
    if (end > m->mem.last_ts)
        m->mem.last_ts = end;
}
/* an API call ended, without an error, having made a handle or let one go (the caller's filter) */
void rm_mem_buffer_call(struct rm_model *m, const struct open_slice *o, uint64_t ts);
void rm_mem_free(struct rm_model *m);
/* selfcost.c: the trace attributes of cltrace's own cost and of sampling;
 * after reading, each sampled kernel's device time extrapolated */
struct rm_kernel *rm_kernel_find(struct rm_model *m, const char *name, const struct rm_kernel *cfg);
void rm_selfcost_attr(struct rm_model *m, const char *key, int64_t v, const char *s);
void rm_extrapolate(struct rm_model *m);
void rm_untimed_transfer(struct rm_model *m, const char *s);   /* totals.c: "direction|bytes|count" */
void rm_untimed_transfers_fold(struct rm_model *m);           /* ... counted with the timed ones */
/* totals.c: a function's totals (made on first use; NULL: no memory), a
 * failing call's stack kept as its kind's, a slice's end added up */
struct rm_api *rm_api_get(struct rm_model *m, const char *name);
void rm_error_site(struct rm_model *m, const char *fn, const char *err, const char *by, const char *site,
                   int phase);
void rm_slice_end(struct rm_model *m, struct track *t, uint64_t tuuid, uint64_t ts, int untimed);

void strtab_set(struct strtab *t, uint64_t iid, const char *s, size_t len);
/* the string of an iid ("" none): inline, a few times a packet */
static inline const char *strtab_get(const struct strtab *t, uint64_t iid)
{
    return iid < t->n && t->s[iid] ? t->s[iid] : "";
}
static inline size_t strtab_len(const struct strtab *t, uint64_t iid)
{
    return iid < t->n ? t->len[iid] : 0;
}
void strtab_free(struct strtab *t);
int cache_grow(void **arr, uint64_t *n, uint64_t iid, size_t elem);   /* room for index iid; 0 failed */
/* room for index iid (grown where needed); 0 failed: inline, the arrays
 * are looked into for every annotation */
static inline int cache_fit(void **arr, uint64_t *n, uint64_t iid, size_t elem)
{
    return iid < *n || cache_grow(arr, n, iid, elem);
}

struct open_slice {             /* a BEGIN waiting for its END */
    uint64_t ts;
    int device, error;          /* a device command; an API call that failed */
    int estimated;              /* a launch sampling left untimed, drawn where it ran (writer/estimated.c) */
    uint64_t sized_ns;          /* such a launch shortened to fit between timed ones: as it was sized */
    uint64_t bytes, dur_ns;
    uint64_t raw_queued, raw_start, raw_end;   /* a device command's own timestamps (devtiming.c) */
    int has_raw;                /* 1 start, 2 end, 4 queued */
    int pinned;
    int api;                    /* index in m->api of an API call, -1 */
    uint64_t uar;               /* use_after_release: the object id */
    int outside;                /* made outside every window (CLTRACE_WINDOW): not in the API figures */
    uint64_t size;              /* leak facts */
    uint64_t site_made, site_released;   /* a leak: what its creation site made and released */
    int leak_class;             /* enum rm_leak_class (cltrace 0.3: the writer classes each leak) */
    uint64_t program;
    const char *options;        /* valid while the packet is */
    int site;                   /* a kernel command: its enqueue's call site (m->sites + 1) */
    int blocking;               /* an enqueue that waits for its command */
    int range;                  /* a range the program marked (cltrace.h) */
    int mpi;                    /* an MPI call (capture/mpi.c) */
    int phase;                  /* its phase (phases.c); an API call's or command's innermost one; -1 */
    uint64_t result_id;         /* a call that returned a handle: its object id */
    uint64_t memobj;            /* clReleaseMemObject: its object */
    uint64_t created_ns;        /* a leak: when its object was made */
    uint64_t refs_after;        /* a retain or release: the app's references after it + 1 (0: not said) */
    struct rm_fpcmd *fpc;       /* its fingerprints (malloc'ed; the model takes them: fingerprints.c) */
    /* kernel facts and a command's fingerprinted arguments: cleared where
     * the slot's last slice wrote them (k_dirty), not for every API call
     * (~500 bytes) */
    int k_dirty;
    struct rm_kernel k;
    uint64_t queue, kargs[RM_FP_ARGS];   /* a device command's queue and kernel arguments */
    uint64_t dev_obj;                    /* and its device (object id) */
    unsigned n_kargs;
    uint64_t fp_cmd, fp_launch;
    /* its strings, last: a new slice clears what comes before them and
     * their first bytes (slice_push), not their ~600 bytes */
    char name[RM_MAX_NAME];
    char error_name[64];
    char direction[24];
    char type[32], created_by[RM_MAX_NAME], kname[48];
    char leak_why[200];
    char inside[24];            /* called_inside: made by a library inside this call (MPI_Init) */
    char by[RM_MAX_NAME];       /* a failing call no frame of the program made: the library's ("" the program's) */
};

/* args.c: an event's annotations into an open slice; the trace attributes */
typedef Perfetto__Protos__DebugAnnotation rm_ann_t;
void rm_read_args(struct open_slice *o, struct seq *s, const Perfetto__Protos__TrackEvent *e);
int rm_arg_read(struct seq *s, uint64_t name_iid);   /* 0: rm_read_args skips annotations of this name */
void rm_read_attributes(struct rm_model *m, const Perfetto__Protos__TraceAttributes *ta);
uint64_t rm_ann_uint(const rm_ann_t *a);
const char *rm_ann_str(const struct seq *s, const rm_ann_t *a);

/* fingerprints.c */
void rm_fp_read(struct open_slice *o, struct seq *s, const rm_ann_t *a);
void rm_fp_keep(struct rm_model *m, struct open_slice *o);   /* o->fpc into m, completed from o */

/* stacks.c */
void rm_intern_stacks(struct seq *s, const Perfetto__Protos__InternedData *in);
/* A stack's where ("" if none), its whole text kept in m (rm_stack_full).
 * Returns 1 where a frame of the program is in it. */
int rm_site_of(struct rm_model *m, const struct seq *s, uint64_t callstack_iid, char *buf, size_t cap);
void rm_sample_label(const struct rm_model *m, const struct seq *s, uint64_t iid, char *fn, size_t fn_cap,
                     char *where, size_t where_cap);
/* host.c: CPU samples, the device's busy spans and the program's calls, swept at the end */
void rm_host_sample(struct rm_model *m, const struct seq *s, uint64_t ts, const Perfetto__Protos__PerfSample *ps,
                    uint64_t stack_iid);
void rm_host_device(struct rm_model *m, uint64_t start, uint64_t end);
#define RM_HOST_CALL_MIN_NS 20000    /* shorter calls are not where a thread waits: the caller keeps them out */
void rm_host_call(struct rm_model *m, const char *name, uint32_t tid, uint64_t start, uint64_t end);
void rm_host_finish(struct rm_model *m);
void rm_host_free(struct rm_model *m);
/* The binary of a stack's innermost frame ("hwloc_opencl.so"; its function where it has none) */
void rm_site_caller(const struct seq *s, uint64_t callstack_iid, char *buf, size_t cap);
int rm_site_index(struct rm_model *m, struct seq *s, uint64_t callstack_iid);        /* m->sites + 1 */
void rm_small_site_add(struct rm_model *m, struct seq *s, uint64_t callstack_iid, uint64_t bytes);
void rm_leak_add(struct rm_model *m, const struct open_slice *o, const char *site);
void rm_uar_add(struct rm_model *m, const char *fn, const char *site);

#endif
