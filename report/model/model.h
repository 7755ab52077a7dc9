/* What cltrace-report learns from a trace (read as TRACE_FORMAT.md says):
 * aggregates only, so memory does not grow with the trace's length. */
#ifndef CLT_REPORT_MODEL_H
#define CLT_REPORT_MODEL_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "common/map.h"

#define RM_MAX_NAME 128
#define RM_MAX_SITE 400         /* a call stack, innermost frame first, as text */

struct rm_api {                 /* one OpenCL function */
    char name[RM_MAX_NAME];
    uint64_t count, errors;
    uint64_t total_ns, min_ns, max_ns;  /* total: extrapolated over `untimed` (rm_extrapolate) */
    uint64_t untimed;           /* calls whose duration was not measured (one-clock calls, TRACE_FORMAT.md) */
};

/* A call stack as a where (from the program's innermost frame outward) and
 * whole: frames " <- " apart, innermost first, a library frame marked "~". */
/* A physical device over every trace a report reads (devices.c): its busy
 * time is the union of its commands, whichever ranks sent them. */
struct rm_seg { uint64_t start, end; };
struct rm_devbusy {
    char key[256], name[RM_MAX_NAME], host[64], uuid[40];
    char ranks[96];             /* "0, 2, 3": the ranks (or traces) that used it */
    unsigned n_traces;
    uint64_t kernel_ns, transfer_ns, launches, transfers;
    uint64_t first, last, busy_ns;       /* the union, after each trace */
    struct rm_seg *seg;         /* busy periods, sorted, disjoint */
    unsigned n_seg, cap_seg;
};
struct rm_devtrace {            /* one trace's commands on one device object */
    uint64_t dev_obj, kernel_ns, transfer_ns, launches, transfers;
    struct rm_seg *seg, cur;
    unsigned n_seg, cap_seg;
};
struct rm_model;
struct rm_stack_text { char *where, *full; };
/* The whole stack of a where that contains it (the longest), NULL: none. */
const char *rm_stack_full(const struct rm_model *m, const char *where);
/* 1: a frame of a library (the interpreter, the standard library, installed
 * packages, system libraries, cltrace, the loader), not of the program.
 * src: its source file ("" none); binary: its mapping's path ("" none);
 * program: the process's name. */
int rm_frame_is_library(const char *src, const char *binary, const char *fn, const char *program);
/* "a/b/../c.c" -> "a/c.c", "./x" -> "x", in place */
void rm_tidy_path(char *p);

struct rm_error {               /* one (function, error) pair, by the program or by one library */
    char fn[RM_MAX_NAME], error[64];
    uint64_t count;
    char site[RM_MAX_SITE];     /* the first failing call's stack */
    int phase;                  /* and the phase it was in (-1: none) */
    char by[RM_MAX_NAME];       /* "": the program's; else the library that made it ("hwloc_opencl.so inside
                                 * MPI_Init"): a call no frame of the program made */
    uint64_t first_ts;          /* the first failing call (trace ns): where --annotate puts it */
};

/* How a leak is classed (the writer decides, from its object model:
 * writer/leaks.c); a trace of an older cltrace says nothing (unknown). */
enum rm_leak_class { RM_LEAK_UNKNOWN = -1, RM_LEAK_STILL_HELD, RM_LEAK_GROWING, RM_LEAK_DEFINITELY_LOST };

struct rm_leak {                /* objects of one type made at one call site, alive at exit */
    char type[32], created_by[RM_MAX_NAME], kernel[48], site[RM_MAX_SITE];
    uint64_t count, bytes;
    uint64_t site_made, site_released;   /* by that call site over the run (0: not stated) */
    uint64_t once;              /* objects that were the only one their own creation stack made */
    int leak_class;             /* the worst of its objects' (enum rm_leak_class) */
    char why[200];              /* why, for an object of that class */
    uint64_t first_made;        /* the earliest made of them (trace ns; 0 not stated) */
};

struct rm_site {                /* a call site (of small transfers, of launches) */
    char site[RM_MAX_SITE];
    uint64_t count, bytes;      /* small transfers made there */
    uint64_t synced;            /* kernel launches made there that a wait followed (serialization) */
};

struct rm_uar {                 /* calls on a handle the app had released */
    char fn[RM_MAX_NAME], site[RM_MAX_SITE];
    uint64_t count;
};

#define RM_KERNEL_PHASES 4
struct rm_kernel {              /* one kernel name with one launch configuration */
    char name[RM_MAX_NAME];
    uint64_t launches, device_ns;   /* with CLTRACE_SAMPLE: all launches, device time extrapolated */
    uint64_t timed, untimed;        /* launches timed on the device; left untimed (sampled out) */
    uint64_t est_n, est_ns;         /* untimed ones drawn where they ran (writer/estimated.c): their time */
    uint64_t first_ns;              /* the first timed launch (one-time setup: never extrapolated) */
    unsigned work_dim;
    uint64_t gws[3], lws[3];
    int local_null;
    uint64_t work_groups, wg_size, pref_multiple, kernel_wg_size, local_bytes, regs;
    int site;                   /* m->sites index + 1 of the first launch's call site, 0 unknown */
    uint64_t nth;               /* its first timed launch's number among the kernel's timed launches */
    uint64_t span[2];           /* its first timed launch's start, its last one's end (trace ns) */
    int ph[RM_KERNEL_PHASES];   /* phases it ran in (phases.c), with their device time */
    uint64_t ph_ns[RM_KERNEL_PHASES];
};

#define RM_MAX_PHASES 256
struct rm_phase {               /* a range the program marked (cltrace.h), figures inclusive */
    char name[RM_MAX_NAME], path[256];
    int parent, depth;          /* parent index, -1 at the top */
    uint64_t entered, wall_ns;  /* times it was entered, time inside it */
    uint64_t calls, api_ns, errors, transfers, transfer_bytes, small_transfers, synced_launches;
    uint64_t device_ns, kernel_ns;   /* of the commands enqueued inside it */
};

/* What `cltrace tune` measured for a captured launch (tuned.c). */
#define RM_MAX_TUNED 32
struct rm_tune_cand { uint64_t local[3]; int null; double median_ns; };
struct rm_tuned {
    char kernel[128], device[128];
    struct rm_tune_cand captured, best;
};

struct rm_hint {                /* a kernel-source heuristic hit (source.c) */
    char rule[32], kernel[64], code[96], what[96];
    uint64_t program, count;
    unsigned line;
};

struct rm_program {
    uint64_t id;
    int uses_float;             /* float math that fast-math options speed up (source.c) */
    int builds, fast_math;      /* fast_math: a build with -cl-mad-enable or -cl-fast-relaxed-math */
    char file[96];              /* the name `cltrace --programs` gives it (FIRSTKERNEL-HASH.cl); "" unknown */
};

enum { RM_H2D, RM_D2H, RM_D2D, RM_FILL, RM_DIRS };
#define RM_BUCKETS 6            /* <4K, <32K, <256K, <2M, <16M, >=16M */

struct rm_transfers {
    uint64_t count[RM_DIRS][RM_BUCKETS], bytes[RM_DIRS][RM_BUCKETS], ns[RM_DIRS][RM_BUCKETS];
    uint64_t small_count, small_bytes, small_ns;   /* below the small-transfer threshold */
    uint64_t small_span[2];                        /* the first one's start, the last one's end */
    uint64_t large_bytes, large_ns;                /* host<->device at or above it */
    uint64_t pageable_count;
    double best_gbps[RM_DIRS];
    /* transfers of at least 64 KiB by bandwidth, log2 bins of MB/s, pageable
     * (not CL_MEM_USE/ALLOC_HOST_PTR) or pinned: the low-bandwidth rule */
    uint64_t bw_count[RM_DIRS][2][24], bw_bytes[RM_DIRS][2][24], bw_ns[RM_DIRS][2][24];
    /* transfers sampling left untimed (cltrace.sampled_out_transfer.N), by
     * direction and size: counted with the timed ones at their mean time */
    struct { int dir; uint64_t bytes, count; } untimed[64];
    unsigned n_untimed;
    uint64_t untimed_count;
};

struct rm_timeline {            /* device busy and idle, serialization */
    uint64_t first_start, busy_until, idle_ns, max_gap_ns, commands;
    uint64_t max_gap_at;                           /* where the largest gap began */
    uint64_t kernel_ns, transfer_ns, overlap_ns;   /* transfer time spent while a kernel ran */
    uint64_t last_k_start, last_k_end, last_t_start, last_t_end;
    uint64_t launches, launches_synced;            /* a kernel launch followed by a finish/blocking call */
    uint64_t host_after_sync_ns;                   /* host work between such a wait and the next launch */
};

/* A rank's MPI calls against its device's time (mpi.c): figures in ns */
#define RM_MPI_FNS 16
struct rm_model;
struct rm_span { uint64_t start, end; int blocking; };
/* a rank's BOOTTIME minus rank 0's, measured at MPI_Init (0) or MPI_Finalize (1) */
struct rm_mpi_clock { int have; uint64_t at, rtt; int64_t offset; };
struct rm_mpi {
    uint64_t calls;
    struct { char name[16]; uint64_t calls, ns, bytes; } fns[RM_MPI_FNS];
    unsigned n_fns;
    uint64_t in_mpi_ns, busy_ns, idle_ns, wait_idle_ns;
    struct rm_span *call, *busy;        /* while reading */
    size_t n_call, cap_call, n_busy, cap_busy;
};

/* What the program's threads ran while the device waited: its CPU samples
 * (capture/cpusample.c) in the device's idle time (host.c). Shares are of
 * that idle time (the samples stand for a period of CPU time each). */
#define RM_HOST_TOP 6
struct rm_host_fn { char function[96], where[160]; uint64_t samples, periods; double share; };
/* Where a function ran, said without its name: "host_gap.c:22" for
 * "prepare_batch (host_gap.c:22)", else "from main (app.c:50)" (the
 * program's frame that called it) */
const char *rm_host_where(const struct rm_host_fn *t, char *buf, size_t cap);
struct rm_host {
    uint64_t period_ns;             /* CPU time a sample stands for (0: the trace has none) */
    uint64_t samples, lost;         /* in the trace; lost: the buffers had no room */
    uint64_t gap_ns;                /* the device idle between its first command and its last */
    uint64_t gap_samples;           /* samples in that idle time, every thread */
    uint32_t busiest_tid;           /* the thread with the most of them */
    uint64_t busiest_samples, busiest_periods;   /* periods: the CPU time they stand for */
    double on_cpu_share;            /* of the idle time, the busiest thread's on the CPU */
    struct rm_host_fn top[RM_HOST_TOP];   /* the functions it ran then, the most first */
    unsigned n_top;
    struct { char name[48]; double share; } blocked[3];   /* its calls it waited in, off the CPU */
    unsigned n_blocked;
    /* while reading */
    struct rm_host_sample { uint64_t ts; uint32_t tid, label, cpu_us; } *s;   /* cpu_us 0: not said */
    size_t n_s, cap_s;
    struct clt_map thread_time;     /* pid << 32 | tid: its last sample's timebase_count */
    struct rm_host_fn *labels;
    unsigned n_labels, cap_labels;
    struct rm_span *busy;
    size_t n_busy, cap_busy;
    struct rm_host_call { uint64_t start, end; uint32_t tid; char name[48]; } *calls;
    size_t n_calls, cap_calls;
};

/* The first device commands, for the HTML report's timeline (bounded). */
#define RM_MAX_CMDS 4000
#define RM_MAX_LANES 32
struct rm_cmd { uint64_t start, dur; uint8_t lane, kind; };   /* kind: 0 other, 1 kernel, 2 transfer */
struct rm_lane { uint64_t uuid; char name[64]; };

struct rm_device {
    char name[RM_MAX_NAME], vendor[RM_MAX_NAME], clock_method[64];
    char uuid[40];              /* which physical device ("" not known: a name on a host stands for it) */
    uint64_t id;                /* its object id in this trace */
    int64_t compute_units, warp, cc, max_wg, local_mem, regs_per_block, type;   /* type: CL_DEVICE_TYPE_* */
    int64_t global_mem;         /* bytes */
    int64_t clock_residual_ns, clock_residual_median_ns, clock_floor_ns, clock_markers, clock_contradictions, event_cost_ns, own_events, sampled_out;
    uint64_t probe_small;       /* `cltrace probe`: where transfers stop being small (0: no probe) */
    double probe_gbps;          /* its host-to-device bandwidth, pageable and pinned, the larger */
    double probe_pinned[2];     /* its pinned bandwidth host-to-device, device-to-host */
    char probe_date[32];
    /* commands that found their queue idle: their count, the time the
     * device took to start them in all, the quickest tenth's, the median's,
     * and what they took beyond the quickest tenth (writer/device_commands.c) */
    int64_t idle_starts, idle_start_ns, idle_start_quick_ns, idle_start_median_ns, idle_start_excess_ns;
    int64_t profiling_price_ns, profiled;   /* a profiling queue's price a command (probe); commands that paid it */
};

/* A command's fingerprints (CLTRACE_FINGERPRINT): each buffer it may have
 * written, read back after it (fingerprints.c). */
#define RM_FP_PER_CMD 8
#define RM_FP_ARGS 16
struct rm_fp {
    int64_t arg;                /* kernel argument; -1: a transfer's destination */
    uint64_t buffer, offset, bytes;   /* the region read: a transfer's written one, else the whole buffer */
    uint64_t hash, nan, pos_inf, neg_inf, denormal, first_nonfinite;   /* first: UINT64_MAX none */
    double min, max, sum;
    char type[8];               /* "float", "double", "half", "bytes" */
    int64_t error;              /* the readback failed (nothing else known) */
    int site;                   /* the buffer's creation call site (m->sites + 1), 0 */
};
struct rm_fpcmd {
    char name[RM_MAX_NAME];     /* the kernel, or the command (WriteBuffer) */
    char command_type[40];
    uint64_t ts, cmd_n, launch_n;   /* #N, NAME@N */
    uint64_t queue;
    unsigned work_dim;
    uint64_t gws[3], lws[3];
    int local_null;
    unsigned n_args;
    uint64_t args[RM_FP_ARGS];  /* as the slice gives them: values, buffers as object ids */
    int site;                   /* the enqueue's call site (m->sites + 1), 0 */
    unsigned n;
    struct rm_fp fp[RM_FP_PER_CMD];
};

/* Device timestamps a platform made up (devtiming.c): some answer every
 * profiling query with 0, 1, 2, 3 ns. A trace whose commands all took the
 * same few ns, whose device clock stood still while the host's ran, or
 * whose ENDs precede their STARTs has no device time to give: the report
 * names it and derives nothing from it (no bandwidth, idle, kernel time
 * or gain); the host side stands. */
struct rm_devtiming {
    uint64_t commands, backwards;         /* commands with both timestamps; those whose END < START */
    uint64_t dur_first, dur_differ;       /* the first one's END - START; 1: another's differs */
    uint64_t raw_min, raw_max;            /* the device clock's span: the first QUEUED to the last END */
    uint64_t enq_first, enq_last, enqueues;   /* the host clock's span over the enqueues */
    int unusable;                         /* judged after reading */
    char why[240];                        /* "every command took 1 ns, ..." */
};
void rm_devtiming_command(struct rm_devtiming *t, uint64_t queued, uint64_t start, uint64_t end);
void rm_devtiming_enqueue(struct rm_devtiming *t, uint64_t host_ts);
void rm_devtiming_judge(struct rm_devtiming *t);

struct rm_selfcost {            /* what cltrace added to the run (selfcost.c) */
    int known;                  /* the trace states it (cltrace 0.2 and later) */
    uint64_t self_ns, hot_ns, device_timing_ns, waited_ns, calls_waited, run_ns;
    uint64_t cpu_samples_ns;     /* the CPU samples' handlers on the app's threads (in self_ns) */
    uint64_t cpu_samples_off_ns; /* the thread off the CPU inside them: said, not counted */
    /* light calls measured (each stands for 64) and their time as counted;
     * those cut short, the thread off the CPU inside them, and what was cut */
    uint64_t light_measured, light_measured_ns, light_cut, light_cut_ns;
    uint64_t self_trace_ns;      /* cltrace.self_ns: calls, waits, device timing (self_ns less the samples) */
    uint64_t paced_wait_ns;     /* held at the limit of commands in flight, the device setting the pace: not counted */
    uint64_t writer_cpu_ns, collector_cpu_ns;
    uint64_t exit_wait_ns;      /* after the app's last call: waiting for device times */
    uint64_t exit_regs_wait_ns; /* of it: for NVIDIA register counts still compiling (a program's first run) */
    uint64_t exit_regs_not_in;  /* programs whose counts had not come when the exit stopped waiting */
    /* the whole run's part (traces from 2026-11-25 on; exit_known): the
     * shim's constructor, the exit up to the trace's end, the CPUs it
     * could use and its CPU time (every thread) */
    int exit_known;
    uint64_t load_ns, exit_ns, cpus, process_cpu_ns;
    /* as the exit began (traces from the evening of 2026-11-25 on; sched_known): the span,
     * cltrace's threads' CPU, the app's threads' CPU and their wait for one */
    int sched_known;
    uint64_t sched_span_ns, sched_own_cpu_ns, sched_app_cpu_ns, sched_app_wait_ns;
    /* times on a CPU, cltrace's threads and the app's (traces from 2026-11-26 on: runs_known) */
    int runs_known;
    uint64_t sched_own_runs, sched_app_runs;
    /* of cltrace's, the wake-ups (traces from 2026-11-27 on: wakeups_known) */
    int wakeups_known;
    int samples_cpu_known;       /* the handlers' time on the CPU (traces from 2026-12-02 on) */
    uint64_t sched_own_wakeups;
    /* how the machine's idle CPUs wait: a virtual machine (0: not, or not
     * stated), the cpuidle driver ("" not stated), the guest's halt-polling
     * window (where halt_poll_known) */
    int hypervisor, halt_poll_known;
    char cpuidle_driver[32];
    uint64_t guest_halt_poll_ns;
    /* the priority cltrace's threads ran at ("idle", "normal"; "" not
     * stated: traces before 2026-11-27), why normal, why and when (ns into
     * the run) they were first put back at normal priority ("" never) and
     * how many times */
    char own_priority[8], own_normal_why[160], own_lifted[80];
    uint64_t own_lifted_at_ns, own_lifts;
    char sampling[320];         /* "off" or the sampling rule */
    char sampling_mode[8];      /* "budget", "fixed", "all"; "" not stated (an older trace) */
    double budget_percent;      /* the budget's: its percentage, what timing cost, a command's price, */
    uint64_t budget_spent_ns, budget_price_ns, budget_first;   /* the first of each always timed */
    uint64_t timing_measured_ns;   /* what timing the commands timed cost, measured at the end (0: not stated) */
    uint64_t queues_by_callbacks;  /* a CPU device's queues whose timed commands callbacks timed (capture/cbtime.c) */
    char exit_by[16];           /* "_exit", "_Exit", "quick_exit": no atexit handler ran; "" exit() */
    int exit_status;            /* its status + 1; 0: not stated */
};

/* A buffer the program made (memory.c): its object id, bytes, when it was
 * made and released (UINT64_MAX: held to the end), its call site (m->sites
 * + 1; 0 none). */
struct rm_buffer { uint64_t id, bytes, made, freed; int site; };
struct rm_memory {
    struct rm_buffer *v;
    unsigned n, cap;
    struct clt_map live;        /* object id -> index in v + 1, while held */
    uint64_t bytes, peak, peak_at, buffers, untracked;
    uint64_t first_ts;          /* the first call: "when" is said from there */
    uint64_t last_ts;           /* the last slice's end: the run's, as the trace holds it */
};

struct rm_model {
    struct rm_api *api;
    unsigned n_api, cap_api;
    struct rm_error *errors;
    unsigned n_errors, cap_errors;
    struct rm_kernel *kernels;
    unsigned n_kernels, cap_kernels;
    struct rm_leak *leaks;
    unsigned n_leaks, cap_leaks;
    struct rm_uar *uars;
    unsigned n_uars, cap_uars;
    struct rm_site *sites;
    unsigned n_sites, cap_sites;
    struct rm_memory mem;               /* device memory the program held (memory.c) */
    struct rm_devbusy *devs;            /* each physical device over every trace read (devices.c) */
    unsigned n_devs, cap_devs;
    struct rm_devtrace *dtr;            /* the trace being read: its commands by device object */
    unsigned n_dtr, cap_dtr, traces_read;
    uint64_t trace_spans_ns;            /* each trace's device span (first command's start to last's end), summed */
    struct rm_stack_text *stack_texts;   /* each where's whole stack (stacks.c) */
    unsigned n_stack_texts, cap_stack_texts;
    struct rm_hint *hints;
    unsigned n_hints, cap_hints;
    struct rm_program *programs;
    unsigned n_programs, cap_programs;
    struct rm_phase *phases;
    unsigned n_phases, cap_phases;
    uint64_t phase_device_ns, unphased_device_ns;   /* all device time; outside every phase */
    struct rm_transfers xfer;
    struct rm_timeline tl;
    struct rm_cmd *cmds;
    unsigned n_cmds;
    struct rm_lane lanes[RM_MAX_LANES];
    unsigned n_lanes;
    struct rm_lane names[RM_MAX_LANES * 2];   /* track uuid -> name, device queue tracks */
    unsigned n_names;
    struct rm_device dev[8];
    unsigned n_dev;
    uint64_t packets, slices, device_commands, dropped_calls;
    uint64_t estimated_commands, estimated_ns;   /* untimed launches drawn where they ran (writer/estimated.c) */
    uint64_t shortened_commands, shortened_ns;   /* of their launches, drawn shorter than sized to fit between timed ones */
    unsigned n_windows;                 /* CLTRACE_WINDOW: the windows the trace holds (0: the whole run) */
    uint64_t window_ns;                 /* their total length */
    char windows[512];                  /* "START-END;..." as the trace says (trace ns) */
    uint64_t ring_bytes, ring_dropped_bytes;   /* CLTRACE_RING_MB: what the trace holds, what went before */
    int has_attributes;          /* 0: the trace was cut short (crash, kill) */
    int truncated;               /* the file ends inside a packet */
    char disk_full[96];          /* the disk filled while tracing (why; "" not): the trace ends there */
    uint64_t disk_full_bytes;    /* what the trace kept */
    uint64_t small_threshold;    /* bytes */
    int small_given;             /* --small-bytes: the probe does not change it */
    char small_source[200];      /* where small_threshold came from */
    struct rm_selfcost self;
    struct rm_fpcmd *fpcmds;     /* in the order the trace has them (rm_fp_sorted: by #N) */
    unsigned n_fpcmds, cap_fpcmds;
    char fingerprint[128];       /* the trace's CLTRACE_FINGERPRINT; "": none taken */
    /* What overrides changed in this run (override/: cltrace --override, --options, --local), as the
     * trace says: what ("source", "options", "local", "failed") and the sentence, each once */
#define RM_MAX_OVERRIDES 32
    struct rm_override { char what[12], text[264]; } overrides[RM_MAX_OVERRIDES];
    unsigned n_overrides;
    struct rm_tuned tuned[RM_MAX_TUNED];   /* --tuned */
    unsigned n_tuned;
    char program[64];            /* the traced process's name (its first process descriptor) */
    int pid;                     /* and its id (0: not known) */
    char cmdline[1024];          /* its command line, shell-quoted ("" not in the trace) */
    struct rm_devtiming dt;      /* whether the device's timestamps can be true (devtiming.c) */
    int rank;                    /* cltrace.rank of a job's trace; -1: none (rm_model_init) */
    char host[64];
    /* MPI (capture/mpi.c): calls recorded; this rank's BOOTTIME minus rank
     * 0's at MPI_Init (0) and MPI_Finalize (1), within rtt / 2 */
    uint64_t mpi_calls;
    int mpi_rank;                /* where a clock was measured (mpi_clock[].have) */
    struct rm_mpi_clock mpi_clock[2];
    struct rm_mpi mpi;           /* its MPI calls against its device's time (mpi.c) */
    struct rm_host hostcpu;      /* what its threads ran while the device waited (host.c) */
    unsigned mpi_traces;         /* traces read with MPI calls (a job's ranks summed: more than one) */
    /* set by the caller before a read (NULL: none): every timestamp read
     * is moved onto rank 0's clock by these offsets (a rank on another
     * host: rm_read_job) */
    const struct rm_mpi_clock *clock_fix;
};
/* A rank's clock minus rank 0's at its own time ts: linear between the
 * two measurements, the nearer one's outside them, 0 without any. */
int64_t rm_mpi_offset(const struct rm_mpi_clock clock[2], uint64_t ts);
/* Traces of a job into one model (the summed report): each read as
 * rm_read does, a rank on another host than rank 0's moved onto its clock
 * by the offsets it measured (its attributes read first). 0 ok; -1 with
 * err. */
int rm_read_job(struct rm_model *m, char **paths, unsigned n, char *err, unsigned errlen);
/* Only a trace's attributes (rank, host, clocks...) into m: a pass that
 * decodes nothing else. 0 ok; -1 with err. */
int rm_read_attributes_only(struct rm_model *m, const char *path, char *err, unsigned errlen);

/* A model ready to read into: empty, its rank not yet known. Every model
 * starts here; rm_free leaves one here again. */
void rm_model_init(struct rm_model *m);
/* Reads TRACE (.pftrace or .pftrace.gz) into m (another trace read into the
 * same model adds to it: a job summed). 0 ok; -1 not a trace or unreadable
 * (message in err). */
int rm_read(struct rm_model *m, const char *path, char *err, unsigned errlen);
/* The same from an open file descriptor (closed on return); name is for messages. */
int rm_read_fd(struct rm_model *m, int fd, const char *name, char *err, unsigned errlen);
void rm_free(struct rm_model *m);
/* A `cltrace tune` result (DIR/tune.json, or the file) into m->tuned. 0 ok;
 * -1 with err. */
int rm_tuned_read(struct rm_model *m, const char *path, char *err, unsigned errlen);
/* memory.c: the peak's holders, largest first */
unsigned rm_mem_at_peak(const struct rm_model *m, struct rm_buffer *out, unsigned cap);

/* Widen [s[0], s[1]] to hold [a, b] (s[1] 0: empty). */
static inline void rm_span_add(uint64_t *s, uint64_t a, uint64_t b)
{
    if (!s[1] || a < s[0])
        s[0] = a;
    if (b > s[1])
        s[1] = b;
}

/* The device timeline's span: its first command's start to its last end. */
static inline uint64_t rm_timeline_span(const struct rm_timeline *tl)
{
    return tl->busy_until > tl->first_start ? tl->busy_until - tl->first_start : 0;
}
/* The bandwidth bin of a transfer (rm_transfers.bw_*): log2 of MB/s, 0..23. */
int rm_bw_bin(double gbps);
/* How the traced machine's idle CPUs wait: 1 they halt at once (a cpuidle
 * driver other than haltpoll, whose halt-polling it is: none means HLT; or
 * its guest_halt_poll_ns 0), 0 they poll first, -1 the trace cannot tell.
 * The self-cost sentence and the halting-idle-cpus rule both ask. */
static inline int rm_idle_halts(const struct rm_selfcost *c)
{
    if (strcmp(c->cpuidle_driver, "haltpoll"))
        return 1;
    return c->halt_poll_known ? c->guest_halt_poll_ns == 0 : -1;
}
/* The next packet of a trace opened with rm_in_open (input.h): RM_FRAME_OK
 * with its bytes in place in *buf (*len of them; valid until the next
 * call), or why there is none. */
enum { RM_FRAME_OK, RM_FRAME_END, RM_FRAME_BAD, RM_FRAME_CUT };
struct rm_in;
int rm_next_packet(struct rm_in *in, const uint8_t **buf, uint64_t *len, int *tag);
/* source.c: kernel-source hints for one program's source */
void rm_scan_source(struct rm_model *m, uint64_t program, const char *source);
struct rm_program *rm_program(struct rm_model *m, uint64_t id);   /* found or added; NULL: full */

#endif
