/* The records in a thread's ring: the contract between the calling thread
 * (capture/, which writes them: capture/put.h) and the writer thread
 * (writer/, which reads them). One header of 32 bytes, one 8-byte slot per
 * parameter, then copies of strings, arrays and the call stack; the slot
 * says where (offset << 32 | count) or holds the value itself. Records that
 * are not API calls (device facts, completions, the program's marks) use the
 * kinds below in `fn`. The ring is single producer, single consumer. */
#ifndef CLT_RECORD_H
#define CLT_RECORD_H
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "trace/generated/clt_gen.h"
#include "trace/clock.h"

#define CLT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CLT_LIKELY(x) __builtin_expect(!!(x), 1)
#define CLT_FN_PAD 0xFFFFu  /* ring padding up to the end of the buffer */
/* 8 bytes: the thread's records go on in the ring the writer offered it
 * (struct clt_thread's offer), at the next position (writer/grow.c) */
#define CLT_FN_GROW 0xFFFEu

struct clt_rec {
    uint16_t fn;            /* enum clt_fn, or CLT_FN_PAD */
    uint16_t size;          /* bytes including header, multiple of 8 */
    uint32_t raw_mask;      /* bit i: arg[i] is the pointer itself, contents not read */
    uint64_t t0, t1;        /* clt_now() ticks around the real call */
    uint64_t ret;           /* return value (cl_int sign-extended, or pointer) */
    uint64_t arg[];
};

/* A thread's record of the Python code objects whose names it has sent
 * (capture/python.c), by address: 64 entries. */
#define CLT_PY_SEEN 64
struct clt_py_seen { uint64_t code, file, name; };
/* and the lines of the places it stood at: (code, instruction) -> line */
#define CLT_PY_LINES 128
struct clt_py_line { uint64_t code, at, line; };

struct clt_thread {
    /* the ring the calling thread writes: set when the ring is made and
     * when the thread moves to a larger one, a cache line of their own
     * (the writer reads rbuf and rmask, on its own line) */
    uint8_t *buf;
    uint64_t mask;          /* ring size - 1; size is a power of two */
    /* producer side (the owning thread) */
    _Alignas(64) uint64_t head_local;
    uint64_t tail_cached;
    uint64_t dropped;       /* calls not recorded because the ring stayed full */
    uint32_t flow_counter;  /* flow ids of this thread's enqueues */
    uint32_t in_fn;         /* command being recorded on this thread, + 1 (0: none) */
    uint32_t in_enqueue;    /* inside an enqueue's real call (atomic stores: the collector reads it) */
    uint32_t reentered;     /* depth of that command re-entering itself (loader layers; loops) */
    int dropping;
    uint32_t cost_countdown;        /* light calls until the next measured one (capture/put.h) */
    uint32_t cost_rng;              /* xorshift state: the gaps between measured light calls */
    uint64_t wait_pending;          /* ticks waited for room inside the call being measured */
    /* cltrace's own time on this thread, in clock ticks, published to the
     * writer (which states it in the trace): calls measured whole, a sample
     * of the light calls (1 in CLT_COST_EVERY), waits for ring room. */
    _Atomic uint64_t cost_exact, cost_sampled, cost_samples, cost_waited, waits;
    /* measured light calls that took longer than a light call can (the
     * thread lost the CPU, or took an interrupt, inside the measure): how
     * many, and the ticks cut from them (rings.c clt_cost_add) */
    _Atomic uint64_t cost_cuts, cost_cut;
    /* producer side: the last launch configuration this thread's budget
     * decided on, once past its first timed ones (capture/sample.c) */
    struct clt_launch_memo {
        const void *kernel;
        uint64_t gws[3], lws[3];
        uint32_t dim;
        uint32_t past_first;    /* 0: no memo */
        /* the kernel and queue of this thread's last launch whose facts
         * were asked for (capture/hooks.c) */
        const void *seen_kernel, *seen_queue;
    } launch_memo;
    _Alignas(64) _Atomic uint64_t head;   /* published to the writer */
    _Alignas(64) _Atomic uint64_t tail;   /* consumed by the writer */
    _Atomic uint64_t dropped_pub;
    _Atomic uint32_t wake_seq;      /* futex: bumped by the writer when it frees room */
    _Atomic uint32_t waiting;       /* the producer sleeps on wake_seq */
    /* a larger ring the writer offers (writer/grow.c): the producer takes
     * it at its next slow path, leaving CLT_FN_GROW where it left the old */
    uint8_t *_Atomic offer;
    uint64_t offer_mask;
    /* writer side: the ring it reads (buf and mask until a CLT_FN_GROW),
     * and the one it offered until the thread's CLT_FN_GROW is read */
    uint8_t *rbuf;
    uint64_t rmask;
    uint8_t *offered;
    _Atomic int state;      /* enum clt_thread_state */
    int tid;
    uint32_t seq;           /* Perfetto sequence id of this thread's events */
    uint32_t generation;    /* bumped when the slot is reused by a new thread */
    struct clt_thread *next;
    void *wstate;           /* writer's per-sequence state */
    void *spill;            /* writer's records of this ring set aside (writer/spill.c) */
    uint64_t asked_head[2]; /* its head when a snapshot (0) or a flush (1) was asked for (writer/writer.c) */
    /* producer side: where the code this thread's stacks pass through keeps
     * its caller (capture/callstack.c; made at its first stack, kept with the ring) */
    void *unw_rules;
    /* producer side, only in Python programs: code objects named (capture/python.c) */
    struct clt_py_seen py_seen[CLT_PY_SEEN];
    struct clt_py_line py_lines[CLT_PY_LINES];
};

enum clt_thread_state { CLT_TH_FREE, CLT_TH_CLAIMED, CLT_TH_LIVE, CLT_TH_DEAD };

/* Records that are not API calls (fn field; CLT_FN_PAD is 0xFFFF). */
enum clt_rec_kind {
    CLT_REC_COMMAND = 0xFF01,  /* a command completed: flow, event, status, 4 times */
    CLT_REC_DEVICE = 0xFF02,   /* a device's limits, once per device */
    CLT_REC_CLOCK = 0xFF03,    /* clGetDeviceAndHostTimer sample */
    CLT_REC_KERNEL = 0xFF04,   /* a kernel's work-group info on a device */
    CLT_REC_KREGS = 0xFF05,    /* registers per work-item of a kernel (NVIDIA build log) */
    CLT_REC_RANGE_PUSH = 0xFF06,  /* include/cltrace.h annotations (capture/annotate.c): name */
    CLT_REC_RANGE_POP = 0xFF07,
    CLT_REC_MARK = 0xFF08,        /* name */
    CLT_REC_COUNTER = 0xFF09,     /* name, value (double bits) */
    CLT_REC_EVCOST = 0xFF0A,      /* what an event costs the calling thread on a device (markers) */
    CLT_REC_QUEUE_MODE = 0xFF0B,  /* a queue made: profiling on throughout, or switched per timed command */
    CLT_REC_FINGERPRINT = 0xFF0C, /* a buffer a command may have written, read back after it: just before its COMMAND */
    CLT_REC_WINDOW = 0xFF0D,      /* a window opened or closed (capture/window.c): why, WIN_* */
    CLT_REC_MPI = 0xFF0E,         /* an MPI call (capture/mpi.c): MPI_* slots, t0/t1 around it */
    CLT_REC_MPI_CLOCK = 0xFF0F,   /* this rank's clock against rank 0's: MCLK_* slots */
    CLT_REC_OVERRIDE = 0xFF10,    /* a program's hash, or what an override did (override/): OVR_* slots */
};
/* CLT_REC_WINDOW's second slot: bit 0 open (1) or closed (0), the window's number above it */
#define CLT_WIN_OPEN 1u

/* An enqueue record's flow slot: 0 no command (the call failed), else the
 * flow id of its CLT_REC_COMMAND, or this: not timed (CLTRACE_SAMPLE). */
#define CLT_FLOW_SAMPLED_OUT 1u

/* Slots of the records above (rec->arg[i]). */
enum { CMD_FLOW, CMD_EVENT, CMD_STATUS, CMD_QUEUED, CMD_SUBMIT, CMD_START, CMD_END, CMD_N };
enum { DEV_ID, DEV_TYPE, DEV_CU, DEV_MAX_WG, DEV_LOCAL_MEM, DEV_GLOBAL_MEM, DEV_WARP,
       DEV_REGS, DEV_CC_MAJOR, DEV_CC_MINOR, DEV_SIMD_PER_CU, DEV_NAME, DEV_VENDOR, DEV_VERSION,
       DEV_UUID_HI, DEV_UUID_LO, DEV_N };
/* DEV_UUID_*: which physical device, across processes (a job's ranks): its
 * cl_khr_device_uuid, else its PCI place (NVIDIA's, cl_khr_pci_bus_info),
 * tagged in the top byte of _HI; 0 0: not known */
#define CLT_DEV_UUID_PCI (0x50ull << 56)
enum { CLK_DEVICE, CLK_HOST_BEFORE, CLK_DEVICE_TS, CLK_HOST_AFTER, CLK_STATUS, CLK_KIND, CLK_N };
/* clGetDeviceAndHostTimer bracketed by ticks; a calibration marker's QUEUED
 * time bracketed by ticks; its END, seen over at host tick CLK_HOST_AFTER
 * (an upper bound); CLOCK_MONOTONIC_RAW bracketed by ticks, on a device
 * whose profiling clock is that clock (capture/queues.c checked it) */
enum { CLT_CLK_TIMER, CLT_CLK_MARKER, CLT_CLK_UPPER, CLT_CLK_HOST_RAW };
/* ticks: a fill without and with an event (medians); how much longer a
 * 4-byte write + clFinish takes on the profiling queue than on a plain one
 * (0: not measured, or not consistently longer) */
enum { EVC_DEVICE, EVC_WITHOUT, EVC_WITH, EVC_SAMPLES, EVC_WRITE_PENALTY, EVC_WRITE_EVENT, EVC_N };
/* a queue handle and how cltrace times its commands, where the app did not
 * ask for profiling: profiling on throughout, on only around timed commands
 * (CLTRACE_SAMPLE, capture/queues.c), or plain, timed by callbacks
 * (capture/cbtime.c) */
enum { QM_QUEUE, QM_SWITCHED, QM_N };
enum { CLT_QUEUE_PROFILED, CLT_QUEUE_SWITCHED, CLT_QUEUE_BY_CALLBACKS };
/* KI_PROGRAM, KI_NAME: the kernel's, as cltrace saw it made (a kernel of
 * clCreateKernelsInProgram or clCloneKernel has no name in its call) */
enum { KI_KERNEL, KI_DEVICE, KI_WG_SIZE, KI_PREF_MULTIPLE, KI_LOCAL_MEM, KI_PRIVATE_MEM, KI_PROGRAM, KI_NAME, KI_N };
/* a kernel's register count (NVIDIA, capture/nvbuild.c); KR_REGS also says
 * of a program that its counts are coming (a private build started beside
 * the app) or are all in (that build is done) */
enum { KR_PROGRAM, KR_REGS, KR_NAME, KR_N };
#define CLT_KREGS_COMING 0xFFFFFFFFu
#define CLT_KREGS_DONE 0xFFFFFFFEu
/* the program (0: none), its hash, enum ov_what (override/override.h), a file, the sentence */
enum { OVR_PROGRAM, OVR_HASH, OVR_WHAT, OVR_FILE, OVR_TEXT, OVR_N };
/* an MPI call: enum clt_mpi_fn; its peer (rank in the communicator; the
 * root of a rooted collective; -1 none or any); tag (-1 none or any);
 * bytes (sent, or received where the status tells, else posted); the
 * communicator's size */
enum { MPI_FN, MPI_PEER, MPI_TAG, MPI_BYTES, MPI_COMM_SIZE, MPI_N };
enum clt_mpi_fn { CLT_MPI_SEND, CLT_MPI_SSEND, CLT_MPI_ISEND, CLT_MPI_RECV, CLT_MPI_IRECV, CLT_MPI_SENDRECV,
                  CLT_MPI_WAIT, CLT_MPI_WAITALL, CLT_MPI_BARRIER, CLT_MPI_BCAST, CLT_MPI_REDUCE,
                  CLT_MPI_ALLREDUCE, CLT_MPI_ALLGATHER, CLT_MPI_ALLTOALL, CLT_MPI_GATHER, CLT_MPI_SCATTER,
                  CLT_MPI_COUNT };
/* this rank's clock (BOOTTIME ns) minus rank 0's, measured by ping-pong with
 * rank 0 (the round trip of the quickest of several kept: the offset is
 * within half of it): at MPI_Init (0) or MPI_Finalize (1); when (this
 * rank's BOOTTIME ns); offset (signed); round trip; rank; the job's size */
enum { MCLK_WHEN, MCLK_AT, MCLK_OFFSET, MCLK_RTT, MCLK_RANK, MCLK_SIZE, MCLK_N };
/* the command's flow; the buffer; the kernel argument (UINT64_MAX: a
 * transfer's destination); the region read (a transfer: the one it wrote;
 * a kernel: the whole buffer): offset, bytes; enum clt_elem (common/digest.h); 0 or
 * the readback's OpenCL error; struct clt_digest (min, max, sum: double
 * bits); the command's number among those fingerprinted and its launch's
 * among its kernel's (common/select.h's #N and NAME@N) */
enum { FP_FLOW, FP_MEM, FP_ARG, FP_OFFSET, FP_BYTES, FP_ELEM, FP_STATUS, FP_HASH, FP_NAN, FP_POS_INF, FP_NEG_INF,
       FP_DENORMAL, FP_FIRST_NONFINITE, FP_MIN, FP_MAX, FP_SUM, FP_CMD_N, FP_LAUNCH_N, FP_N };



struct clt_extra { uint8_t *base, *p; uint32_t raw; };

static inline struct clt_extra clt_extra_init(struct clt_rec *rec, unsigned nargs)
{
    struct clt_extra x = { (uint8_t *)rec, (uint8_t *)&rec->arg[nargs], 0 };
    return x;
}

static inline uint64_t clt_raw(struct clt_extra *x, unsigned i, const void *p)
{
    x->raw |= 1u << i;
    return (uint64_t)(uintptr_t)p;
}

static inline uint64_t clt_slot(struct clt_extra *x, uint64_t count, size_t bytes)
{
    uint64_t off = (uint64_t)(x->p - x->base);
    x->p += (bytes + 7) & ~(size_t)7;
    return off << 32 | (count & 0xFFFFFFFFu);
}

/* Errors after which the driver has read the string argument. */
static inline int clt_str_was_read(int32_t err)
{
    return err == -46 /* INVALID_KERNEL_NAME */ || err == -11 /* BUILD_PROGRAM_FAILURE */ ||
           err == -43 /* INVALID_BUILD_OPTIONS */ || err == -66 /* INVALID_COMPILER_OPTIONS */ ||
           err == -67 /* INVALID_LINKER_OPTIONS */;
}

static inline uint64_t clt_put_str(struct clt_extra *x, unsigned i, int ok, const char *s)
{
    if (!s || !ok)
        return clt_raw(x, i, s);
    size_t n = strnlen(s, CLT_MAX_STR);
    memcpy(x->p, s, n);
    return clt_slot(x, n, n);
}

static inline uint64_t clt_load_n(const void *p, size_t esz)
{
    switch (esz) {
    case 1: return *(const uint8_t *)p;
    case 2: return *(const uint16_t *)p;
    case 4: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p;
    }
}

static inline uint64_t clt_put_arr(struct clt_extra *x, unsigned i, int ok, const void *p,
                                   uint64_t n, size_t esz)
{
    if (!p || !ok)
        return clt_raw(x, i, p);
    uint64_t m = n < CLT_MAX_ARRAY ? n : CLT_MAX_ARRAY;
    uint64_t *dst = (uint64_t *)x->p;
    for (uint64_t k = 0; k < m; k++)
        dst[k] = clt_load_n((const uint8_t *)p + k * esz, esz);
    return clt_slot(x, n, m * 8);
}

static inline uint64_t clt_put_out_harr(struct clt_extra *x, unsigned i, int ok, void *p, uint64_t n)
{
    return clt_put_arr(x, i, ok, p, n, sizeof(void *));
}

/* The handles a call wrote, of the room the app gave: what it says it wrote
 * (clGetPlatformIDs' num_platforms), where it says. The rest of the room is
 * the app's memory as it was: read as handles, it made objects that never
 * were, numbered differently from run to run. */
static inline uint64_t clt_out_count(uint64_t room, const void *said)
{
    uint32_t n = said ? *(const uint32_t *)said : UINT32_MAX;
    return n < room ? n : room;
}

static inline uint64_t clt_put_props(struct clt_extra *x, unsigned i, int ok, const void *p, size_t esz)
{
    if (!p || !ok)
        return clt_raw(x, i, p);
    uint64_t *dst = (uint64_t *)x->p;
    unsigned m = 0;
    while (m + 2 <= CLT_MAX_PROPS) {
        uint64_t key = clt_load_n((const uint8_t *)p + m * esz, esz);
        if (!key)
            break;
        dst[m] = key;
        dst[m + 1] = clt_load_n((const uint8_t *)p + (m + 1) * esz, esz);
        m += 2;
    }
    return clt_slot(x, m, (size_t)m * 8);
}

static inline uint64_t clt_put_out_ptr(struct clt_extra *x, unsigned i, int ok, void *p)
{
    if (!p || !ok)
        return clt_raw(x, i, p);
    return (uint64_t)(uintptr_t)*(void **)p;
}

static inline uint64_t clt_put_out_val(struct clt_extra *x, unsigned i, int ok, void *p, size_t esz)
{
    if (!p || !ok)
        return clt_raw(x, i, p);
    return clt_load_n(p, esz);
}

/* Program source: the pieces concatenated, CLT_MAX_SRC bytes at most; the
 * slot's count is the whole length (so the writer knows what was cut). */
#define CLT_MAX_SRC 16384
static inline uint64_t clt_put_srcs(struct clt_extra *x, unsigned i, int ok, const void *strings, uint32_t count,
                                    const void *lengths)
{
    if (!strings || !ok)
        return clt_raw(x, i, strings);
    const char *const *s = (const char *const *)strings;
    const size_t *len = (const size_t *)lengths;
    size_t n = 0, total = 0;
    for (uint32_t k = 0; k < count; k++) {
        if (!s[k])
            continue;
        size_t l = len && len[k] ? len[k] : strlen(s[k]);
        total += l;
        size_t c = l < CLT_MAX_SRC - n ? l : CLT_MAX_SRC - n;
        memcpy(x->p + n, s[k], c);
        n += c;
    }
    return clt_slot(x, total, n);
}

static inline uint64_t clt_put_words(struct clt_extra *x, unsigned i, int ok, const void *p, unsigned n)
{
    if (!p || !ok)
        return clt_raw(x, i, p);
    memcpy(x->p, p, 8 * (size_t)n);
    return clt_slot(x, n, 8 * (size_t)n);
}

static inline uint64_t clt_put_bytes8(struct clt_extra *x, unsigned i, int ok, const void *p, size_t size)
{
    if (!p || !ok || size > 8)
        return clt_raw(x, i, p);
    uint64_t v = 0;
    switch (size) {             /* one compare for the common handle or 8-byte value */
    case 8: memcpy(&v, p, 8); break;
    case 4: v = clt_load_n(p, 4); break;
    default: memcpy(&v, p, size); break;
    }
    return v;
}

/* Call stacks: return addresses (innermost first) after the slots, then
 * their count in words in the record's last word; bit 31 of raw_mask says a
 * stack is there. libunwind is loaded privately (RTLD_LOCAL: its _Unwind_*
 * and backtrace symbols must not replace the app's), so this is a pointer.
 *
 * A Python frame (capture/python.c) takes the place of the eval loop's
 * return address: CLT_PY_TAG | its code object, then its line in the low 32
 * bits of the next word; with CLT_PY_NAMES, that word's bits 32-47 and 48-63
 * are the lengths of its file and function names, which follow (padded to 8
 * bytes). A code object's names come once per thread; the writer keeps them.
 * With CLT_PY_AT in that word (a CPU sample's frame: its signal handler
 * calls nothing of the interpreter's), its low 31 bits are the instruction's
 * byte offset in the code instead, and the writer finds the line
 * (writer/pylines.c) from the code object as clt_py_code_layout says. */
#define CLT_STACK_DEPTH 32
#define CLT_STACK_BYTES (8 * (CLT_STACK_DEPTH + 1))
#define CLT_PY_TAG (1ull << 63)
#define CLT_PY_NAMES (1ull << 62)
#define CLT_PY_CODE_MASK ((1ull << 48) - 1)
#define CLT_PY_AT (1u << 31)
/* Where a code object keeps what its lines are made from, for the running
 * CPython (capture/python.c sets it, at load): its type, its first line and
 * its location table (a bytes object: size at 16, bytes at 32) */
struct clt_py_code_layout { uint64_t code_type; uint32_t firstlineno, linetable; };
extern struct clt_py_code_layout clt_py_code_layout;
#define CLT_PY_DEPTH 48              /* Python frames a stack keeps */
#define CLT_PY_FILE_MAX 240          /* a file name's last bytes kept */
#define CLT_PY_NAME_MAX 120
#define CLT_PY_STRINGS 4096          /* names one record may carry */
#define CLT_PY_BYTES (16 * CLT_PY_DEPTH + CLT_PY_STRINGS)
/* What a record reserves for its stack: a constant, so that the light
 * calls' path (a stack only when they fail) stays as short as it was */
#define CLT_STACK_RESERVE (CLT_STACK_BYTES + CLT_PY_BYTES)
#define CLT_STACK_WORDS_MAX (CLT_STACK_RESERVE / 8)
#define CLT_RAW_STACK (1u << 31)
/* The count word's bits 32-39: the call was made inside one of these calls
 * the shim wraps, by the library, not by the program (capture/mpi.c). */
enum clt_inside { CLT_INSIDE_NONE, CLT_INSIDE_MPI_INIT, CLT_INSIDE_MPI_INIT_THREAD, CLT_INSIDE_MPI_FINALIZE };
#define CLT_INSIDE_NAMES { NULL, "MPI_Init", "MPI_Init_thread", "MPI_Finalize" }
/* A one-clock call (clSetKernelArg, clRetain...: gen/gen.py ONE_CLOCK) whose
 * duration was not measured: t1 == t0, and the trace shows an instant. */
#define CLT_RAW_UNTIMED (1u << 30)
/* A call made outside every window (CLTRACE_WINDOW): one that makes or lets
 * go of an object, kept so that the objects a window shows are known. */
#define CLT_RAW_OUTSIDE (1u << 29)


/* The stack block of a record: its words (innermost first), their count. */
static inline const uint64_t *clt_rec_stack(const struct clt_rec *rec, unsigned *n)
{
    *n = 0;
    if (!(rec->raw_mask & CLT_RAW_STACK))
        return NULL;
    const uint64_t *end = (const uint64_t *)((const uint8_t *)rec + rec->size) - 1;
    uint64_t k = *end & 0xffffffffu;
    if (k > CLT_STACK_WORDS_MAX || (const uint8_t *)(end - k) < (const uint8_t *)rec->arg)
        return NULL;
    *n = (unsigned)k;
    return end - k;
}

/* enum clt_inside of a record with a stack */
static inline unsigned clt_rec_inside(const struct clt_rec *rec)
{
    if (!(rec->raw_mask & CLT_RAW_STACK))
        return 0;
    return (unsigned)(((const uint64_t *)((const uint8_t *)rec + rec->size))[-1] >> 32) & 0xff;
}

/* The start (t0) of the first record in [tail, head) of a ring's layout
 * (buf, mask), the padding at the ring's end skipped; UINT64_MAX: none. */
static inline uint64_t clt_span_first_t0(const uint8_t *buf, uint64_t mask, uint64_t tail, uint64_t head)
{
    while (tail != head) {
        uint64_t off = tail & mask;
        const struct clt_rec *rec = (const struct clt_rec *)(buf + off);
        if (rec->fn == CLT_FN_GROW)
            return 0;       /* the records go on in another ring: the writer takes it first */
        if (rec->fn != CLT_FN_PAD)
            return rec->t0;
        tail += mask + 1 - off;
    }
    return UINT64_MAX;
}

static inline void clt_rec_commit(struct clt_thread *th, struct clt_rec *rec, struct clt_extra *x,
                                  unsigned fn, uint64_t t0, uint64_t t1, uint64_t ret)
{
    uint64_t size = (uint64_t)(x->p - x->base);
    rec->fn = (uint16_t)fn;
    rec->size = (uint16_t)size;
    rec->raw_mask = x->raw;
    rec->t0 = t0;
    rec->t1 = t1;
    rec->ret = ret;
    th->head_local += size;
    __atomic_store_n(&th->head, th->head_local, __ATOMIC_RELEASE);
    /* The line a few records on was last read by the writer's core: ask
     * for it now, so that the store does not wait for it (on a mesh of
     * many cores that wait is ~100 ns). One instruction; a prefetch past
     * the ring's end never faults. */
    __builtin_prefetch((const uint8_t *)rec + 512, 1);
}

/* An enqueue's record (120 bytes and more; a launch's 136) spans two or
 * three lines: the two after the one clt_rec_commit asked for, asked for
 * too. One line a record left every other line of a launch loop's ring for
 * the store to wait on (H200, 20,000 launches, 4 sets of 15 rounds: minima
 * 1.06-1.16x untraced against 1.09-1.17x). Light calls' records
 * (clSetKernelArg: 72 bytes) do without: make bench holds them to +140
 * instructions. */
static inline void clt_rec_ask_ahead(const struct clt_rec *rec)
{
    __builtin_prefetch((const uint8_t *)rec + 576, 1);
    __builtin_prefetch((const uint8_t *)rec + 640, 1);
}

#endif
