/* Every option cltrace reads, in one table: the shim parses it, `cltrace
 * --help` prints it. All are environment variables named CLTRACE_<NAME>. */
#ifndef CLT_CONFIG_H
#define CLT_CONFIG_H

#define CLT_ENV_PREFIX "CLTRACE_"

/*  X(NAME,      type, default,                  help) */
#define CLT_OPTIONS(X) \
    X(OUTPUT,    str,  "cltrace-%e-%p.pftrace",  "trace file; %p = pid, %e = program name, %r = MPI/Slurm rank, %h = host. A directory (or a name ending in /) gets the default name inside it; a name without %p gets .<pid> added; under an MPI or Slurm launcher the default is the folder cltrace-job-<id>/ with the rank and host in each name") \
    X(DISABLE,   bool, "0",                      "1: forward every call, record nothing") \
    X(LIBRARY,   str,  "",                       "path of the real OpenCL library (default: the libOpenCL.so.1 the app loaded, else the system one)") \
    X(BUFFER_KB, int,  "0",                      "per-thread record buffer in KiB (rounded up to a power of two, 64 at least); 0: 256, and a thread that records faster than the writer encodes moves to one of 4096 in huge pages (8 threads at most, where the kernel gives them), else of 1024") \
    X(SPILL_MB,  int,  "1024",                   "a thread that records faster than the writer encodes does not wait: the writer sets its records aside, raw, in an unlinked file beside the trace (at most this many MiB at a time) and encodes them when it has caught up or at exit; 0: the thread waits") \
    X(WAIT_US,   int,  "2000",                   "with CLTRACE_DROP=1: how long a calling thread waits for buffer space before a call is dropped (and counted)") \
    X(DROP,      bool, "0",                      "0: a thread whose buffer is full waits for the writer, nothing is lost (at most 10 s, so an app never hangs); 1: it drops the call after CLTRACE_WAIT_US (counted)") \
    X(COMPRESS,  bool, "1",                      "1: gzip the trace as it is written (.pftrace.gz, whole after every flush, a crash included); 0: raw .pftrace") \
    X(COMPRESS_THREAD, int, "-1",                "with CLTRACE_COMPRESS=1: gzip on a second thread while the writer encodes (1), in the writer (0), or the first when the process may run on 4 CPUs or more (-1)") \
    X(QUIET,     bool, "0",                      "1: no messages on stderr") \
    X(CHILDREN,  bool, "1",                      "0: trace this process only, not the programs it runs (cltrace --no-children)") \
    X(BREAK,     str,  "",                       "stop in the debugger (SIGTRAP, only when one is attached) on: error (a call fails), leak (objects definitely lost or growing at exit), nan (a fingerprinted command left a NaN or infinity in a buffer it may write: CLTRACE_FINGERPRINT), all; several with commas") \
    X(SAMPLE,    str,  "",                       "which device commands the app asks no event for are timed: by default every one until timing them would cost more than CLTRACE_BUDGET of the run since its first command (or 3 ms, where that is more), then the first 16 of each kernel launch configuration and transfer size and as many more as the budget allows (transfers of 1 MiB and more always); all: every one; 1: the first 16 of each, then 1 in 256; FIRST,EVERY[,BYTES]; every host call is still recorded (cltrace --sample)") \
    X(BUDGET,    str,  "5",                      "with the default sampling: what timing device commands may cost, in percent of the run since its first command, 3 ms at least (each timed command's price: what an event costs on its device, measured at its first queue, and collecting its completion)") \
    X(FINGERPRINT, str, "",                     "after each chosen command, a fingerprint of every buffer it may have written (a hash; NaN, infinities, denormals, min, max, sum of float data), read back behind it: 1 or all (every kernel launch, buffer write, copy, fill), else a comma list of KERNEL-GLOB (or a command's name: clEnqueueReadBuffer fingerprints what the app reads back), KERNEL-GLOB@N (its N-th launch), #N (the N-th such command), count=N (at most N); builds get -cl-kernel-arg-info, sampling is off (cltrace --fingerprint)") \
    X(CAPTURE,   str,  "",                       "capture the chosen kernel launches, each into a folder that `cltrace replay` runs again (its program, arguments, buffers before and after): KERNEL-GLOB, KERNEL-GLOB@N (its N-th launch), #N (the N-th kernel launch), count=N, comma-separated; builds get -cl-kernel-arg-info; each chosen launch waits for its queue and copies its buffers twice (cltrace --capture)") \
    X(CAPTURE_DIR, str, "cltrace-capture",       "where CLTRACE_CAPTURE writes: one folder KERNEL@N per captured launch") \
    X(PROGRAMS,  str,  "",                       "write each program the app builds to this folder: its source (IL, binary) as NAME-HASH.cl (.spv, .bin; NAME its first kernel, HASH what the trace records), its build options as NAME-HASH.options, a line in programs.txt (cltrace --programs)") \
    X(OVERRIDE,  str,  "",                       "build the app's programs from these files instead: a folder of NAME-HASH.cl (.spv, .bin) files, each replacing the program of that hash, or one file, replacing the program of the hash in its name, else the one defining the same kernels; a NAME-HASH.options beside it replaces the build options (cltrace --override)") \
    X(OVERRIDE_OPTIONS, str, "",                 "KEY=OPTIONS, one per line: build options for the programs defining kernel KEY (a glob), of hash KEY, or all (*); +OPTIONS adds to the app's (cltrace --options)") \
    X(OVERRIDE_LOCAL, str, "",                   "KERNEL=X[,Y[,Z]], ';'-separated: the local size of every launch of the kernels matching KERNEL (a glob), the app's NULL included; a size the launch cannot take is not used and is reported (cltrace --local)") \
    X(WINDOW,    str,  "",                       "record only in windows: START[+LENGTH],... START: a time since the program started (60s, 250ms, 2m), Ncalls (after N OpenCL calls), kernel:GLOB (its first launch), manual (cltrace_start() or `cltrace ctl PID start`); LENGTH: a time or Ncalls (none: until stopped). Outside a window only calls that make, build or release objects are recorded (marked outside_window), nothing is timed on the device; `cltrace ctl PID` reaches the program (cltrace --window)") \
    X(RING_MB,   str,  "",                       "flight recorder: keep only the last MB (a number, 0.5 and up) of the trace in memory, written at exit, on a fatal signal or _exit, and as a snapshot file beside it on `cltrace ctl PID snapshot` and CLTRACE_SNAPSHOT_ON (cltrace --ring MB)") \
    X(SNAPSHOT_ON, str, "",                      "with CLTRACE_RING_MB: also write a snapshot at the program's first failing call (error) and at the first launch of a kernel (kernel:GLOB); comma-separated (cltrace --snapshot-on)") \
    X(WINDOW_EVERY, str, "",                     "repeat CLTRACE_WINDOW's timed windows that often: 60s+10s every 600s (cltrace --every)") \
    X(CPU_SAMPLES, str, "100",                   "the program's threads sampled on their own CPU time, this many times a second of it (1 to 1000), or off: their C and Python frames in the trace beside the device's timeline, and in the report what the host ran while the device waited (cltrace --cpu-samples)") \
    X(NOTIFY_FD, int,  "-1",                     "set by the cltrace launcher: where to announce the trace path")

struct clt_config {
#define CLT_FIELD_str(n) const char *n;
#define CLT_FIELD_bool(n) int n;
#define CLT_FIELD_int(n) long n;
#define CLT_FIELD(n, t, d, h) CLT_FIELD_##t(n)
    CLT_OPTIONS(CLT_FIELD)
#undef CLT_FIELD
};

struct clt_option_desc { const char *name, *type, *def, *help; };
extern const struct clt_option_desc clt_options[];
extern const unsigned clt_n_options;

void clt_config_load(struct clt_config *c);   /* from the environment */

/* CLTRACE_SAMPLE, read: "" the budget (CLTRACE_BUDGET, percent), "all" or
 * "0" every command timed, "1" the fixed defaults, "FIRST,EVERY[,BYTES]". */
enum clt_sample_mode { CLT_SAMPLE_ALL, CLT_SAMPLE_FIXED, CLT_SAMPLE_BUDGET };
struct clt_sample { int on; unsigned long long first, every, bytes; enum clt_sample_mode mode; double budget; };
int clt_sample_parse(const char *spec, const char *budget, struct clt_sample *s);   /* -1: cannot read it (then all) */
void clt_sample_describe(const struct clt_sample *s, char *buf, unsigned long cap);

extern struct clt_config clt_cfg;             /* the process's, loaded by the shim */
/* "cltrace: <message>" on stderr (never stdout: it is the app's), unless QUIET. */
void clt_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
