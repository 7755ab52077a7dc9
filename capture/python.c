/* Python frames in the call stacks of programs CPython runs (pyopencl,
 * ctypes, cffi, any extension): each frame's code object and line, read on
 * the calling thread from the interpreter's own frame chain, as py-spy and
 * austin read it from outside. No Python code runs, no GIL is taken, no
 * reference is counted: the thread reads its own frames, which nothing else
 * changes while it is inside an OpenCL call, whether it holds the GIL or
 * released it around a blocking call (pyopencl does).
 *
 * The layouts are CPython's private ones, so each supported version has its
 * table (x86-64 and arm64 share them: LP64); any other version gets one line
 * and C frames as before. Every pointer read is checked first: a frame's code
 * object must be a code object (its type is PyCode_Type).
 *
 * In the record (trace/record.h CLT_PY_TAG): a frame is its code object and
 * line; the first time this thread names a code object its file and function
 * name follow, and the writer keeps them by code object for the process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "python.h"
#include "common/loaded.h"
#include "common/peek.h"
#include "shim.h"

int clt_py_on;

struct py_layout {
    unsigned minor;
    unsigned ts_cframe, cframe_current;          /* PyThreadState.cframe, _PyCFrame.current_frame */
    unsigned ts_datastack_chunk;                 /* PyThreadState.datastack_chunk (datastack_top follows) */
    unsigned fr_code, fr_previous, fr_prev_instr, fr_owner, fr_is_entry;   /* _PyInterpreterFrame */
    unsigned co_filename, co_qualname, co_firsttraceable;   /* PyCodeObject */
    unsigned co_firstlineno, co_linetable;
    unsigned str_ascii_data, str_compact_utf8;   /* sizeof(PyASCIIObject), PyCompactUnicodeObject.utf8 */
    int owner_cstack;                            /* 3.12's entry frames (-1: none) */
};

/* Include/cpython/pystate.h, Include/internal/pycore_frame.h, Include/cpython/code.h,
 * Include/cpython/unicodeobject.h of each version, x86-64 and arm64 (LP64). Proven
 * by every finding landing at its line: 3.11 with pyopencl and ctypes (tests/python.sh),
 * 3.12 with ctypes on a GPU host (scripts/gpu-python.sh, 2026-11-28). */
static const struct py_layout layouts[] = {
    { 11, 56, 8, 296, 32, 48, 56, 69, 68, 112, 128, 168, 72, 136, 48, 56, -1 },
    { 12, 56, 0, 232, 0, 8, 56, 70, 0, 112, 128, 176, 68, 136, 40, 48, 3 },
};

static const struct py_layout *L;
struct clt_py_code_layout clt_py_code_layout;
static int unlinks_first;                        /* 3.11.1 on: a frame leaves the chain before it is cleared */
static void *(*gil_tstate)(void);                /* PyGILState_GetThisThreadState */
static int (*addr2line)(const void *, int);      /* PyCode_Addr2Line */
static int (*is_finalizing)(void), (*is_initialized)(void);
static uintptr_t code_type;                      /* &PyCode_Type */
static size_t code_header;                       /* PyCode_Type.tp_basicsize: where the bytecode starts */
static uintptr_t eval_lo, eval_hi;               /* _PyEval_EvalFrameDefault */
static uintptr_t interp_lo, interp_hi;           /* the binary that holds it: python3 or libpython */

#define RD(p, off, T) (*(const T *)((const char *)(p) + (off)))
#define PTR_OK(p) ((uintptr_t)(p) >= 4096 && ((uintptr_t)(p) & 7) == 0 && (uintptr_t)(p) < CLT_PY_CODE_MASK)

static int data_stack_as_laid_out(void);

void clt_py_load(void)
{
    void *(*ver_str)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (!ver_str)
        return;                              /* no Python in this process */
    const unsigned long *hexver = dlsym(RTLD_DEFAULT, "Py_Version");   /* 3.11 and later */
    unsigned major = 0, minor = 0;
    if (hexver) {
        major = (unsigned)(*hexver >> 24);
        minor = (unsigned)(*hexver >> 16) & 0xff;
        unlinks_first = *hexver >= 0x030B01F0;   /* GH-99729, fixed in 3.11.1 */
    } else if (sscanf((const char *)ver_str(), "%u.%u", &major, &minor) != 2) {
        major = minor = 0;
    }
    for (unsigned i = 0; major == 3 && i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor)
            L = &layouts[i];
    gil_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    addr2line = (int (*)(const void *, int))dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    is_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
    void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    if (!L || !gil_tstate || !addr2line || !is_finalizing || !is_initialized || !code_type) {
        clt_msg("no Python frames: CPython %u.%u not supported (3.11, 3.12 are)", major, minor);
        L = NULL;
        return;
    }
    code_header = (size_t)RD(code_type, 32, int64_t);     /* PyTypeObject.tp_basicsize */
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (eval && dladdr1(eval, &di, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
        eval_lo = (uintptr_t)eval;
        eval_hi = eval_lo + sym->st_size;
        uint64_t lo, hi;
        if (clt_loaded_range(eval_lo, &lo, &hi)) {
            interp_lo = (uintptr_t)lo;
            interp_hi = (uintptr_t)hi;
        }
    }
    unlinks_first = unlinks_first && data_stack_as_laid_out();
    clt_py_code_layout = (struct clt_py_code_layout){ code_type, L->co_firstlineno, L->co_linetable };
    __atomic_store_n(&clt_py_on, 1, __ATOMIC_RELEASE);
}

/* A str object's text, UTF-8: compact ASCII as it is, other compact strings
 * through their cached UTF-8 (set for every name the compiler made), else
 * "?". At most cap bytes: a path keeps its end (the file name). */
static size_t py_text(uintptr_t s, char *dst, size_t cap, int keep_end)
{
    const char *src = NULL;
    size_t n = 0;
    if (PTR_OK(s)) {
        uint32_t state = RD(s, 32, uint32_t);
        size_t len = (size_t)RD(s, 16, int64_t);
        int compact = state >> 5 & 1, ascii = state >> 6 & 1;
        if (compact && ascii) {
            src = (const char *)s + L->str_ascii_data;
            n = len;
        } else if (compact && PTR_OK(RD(s, L->str_compact_utf8, uintptr_t) & ~(uintptr_t)7)) {
            src = RD(s, L->str_compact_utf8, const char *);
            n = (size_t)RD(s, L->str_compact_utf8 - 8, int64_t);
        }
    }
    if (!src || n > (1u << 20)) {
        src = "?";
        n = 1;
    }
    if (n > cap) {
        if (keep_end)
            src += n - cap;
        n = cap;
    }
    memcpy(dst, src, n);
    return n;
}

struct py_out {
    uint64_t *d;
    unsigned n, room;        /* words */
    size_t strings_left;     /* bytes of names this record may still carry */
    struct clt_py_seen *seen;
    struct clt_py_line *lines;
    int sampled;             /* a signal handler's: the line left to the writer */
};

/* The line of an instruction: PyCode_Addr2Line walks the code's line table
 * (~600 instructions a frame), so the calling thread keeps the lines of the
 * places its frames stood at: a loop's calls come from the same ones. A
 * sample's handler calls nothing of the interpreter's: the instruction's
 * offset goes to the writer instead (CLT_PY_AT, writer/pylines.c). */
static int line_of(struct py_out *o, uintptr_t code, uintptr_t at, uintptr_t start)
{
    if (o->sampled)
        return (int)(CLT_PY_AT | (uint32_t)(at - start));
    struct clt_py_line *e = &o->lines[((code >> 4) ^ (at >> 1)) & (CLT_PY_LINES - 1)];
    if (e->code == code && e->at == at)
        return (int)e->line;
    int line = addr2line((const void *)code, (int)(at - start));
    e->code = code;
    e->at = at;
    e->line = (uint64_t)(uint32_t)line;
    return line;
}

/* One frame: its code object and line; its names where this thread has not
 * sent them yet (a code object freed and another made at its address has
 * other name objects, so it is sent again). */
static int put_frame(struct py_out *o, uintptr_t code, int line)
{
    if (o->n + 2 > o->room)
        return 0;
    uintptr_t file = RD(code, L->co_filename, uintptr_t), name = RD(code, L->co_qualname, uintptr_t);
    struct clt_py_seen *e = &o->seen[(code >> 4) & (CLT_PY_SEEN - 1)];
    uint64_t *w = &o->d[o->n];
    w[0] = CLT_PY_TAG | code;
    w[1] = (uint32_t)line;
    o->n += 2;
    if (e->code == code && e->file == file && e->name == name)
        return 1;
    size_t words_left = (size_t)(o->room - o->n) * 8, room = o->strings_left < words_left ? o->strings_left : words_left;
    if (room < 16)
        return 1;       /* no room for the names: the writer shows the code object's address */
    char *p = (char *)&o->d[o->n];
    size_t fl = py_text(file, p, room / 2 < CLT_PY_FILE_MAX ? room / 2 : CLT_PY_FILE_MAX, 1);
    size_t nl = py_text(name, p + fl, room - fl < CLT_PY_NAME_MAX ? room - fl : CLT_PY_NAME_MAX, 0);
    size_t used = (fl + nl + 7) & ~(size_t)7;
    memset(p + fl + nl, 0, used - fl - nl);
    w[0] |= CLT_PY_NAMES;
    w[1] |= (uint64_t)fl << 32 | (uint64_t)nl << 48;
    o->n += (unsigned)(used / 8);
    o->strings_left -= used;
    e->code = code;
    e->file = file;
    e->name = name;
    return 1;
}

/* The frames of one run of the eval loop from `*fr` outward (3.11: up to its
 * entry frame; 3.12: up to the loop's own frame on the C stack); all of
 * them when `all`. Leaves *fr at the next run's first frame. */
static void put_run(struct py_out *o, uintptr_t *fr, int all, unsigned *budget)
{
    while (PTR_OK(*fr) && *budget) {
        uintptr_t f = *fr, code = RD(f, L->fr_code, uintptr_t);
        char owner = RD(f, L->fr_owner, char);
        *fr = RD(f, L->fr_previous, uintptr_t);
        (*budget)--;
        if (L->owner_cstack >= 0 && owner == L->owner_cstack) {
            if (!all)
                return;
            continue;
        }
        if (!PTR_OK(code) || RD(code, 8, uintptr_t) != code_type)
            return;                          /* not a frame we can read: stop here */
        uintptr_t at = RD(f, L->fr_prev_instr, uintptr_t), start = code + code_header;
        int first = RD(code, L->co_firsttraceable, int);
        /* a frame the interpreter has not started (its prologue): not shown, as in a traceback */
        if (owner != 1 && at < start + 2 * (uintptr_t)first)
            goto next;
        if (at >= start && at - start < (1u << 30) && !put_frame(o, code, line_of(o, code, at, start)))
            return;
    next:
        if (L->fr_is_entry && RD(f, L->fr_is_entry, char) && !all)
            return;
    }
}

static int in_interp(uint64_t pc)
{
    return pc >= interp_lo && pc < interp_hi;
}

/* Whether n bytes at p can be read, asked of the kernel (it copies them or
 * says they are not there): a sample may stop the thread as it pushes a
 * frame, the frame's memory not yet what the chain says. */
static int readable(uintptr_t p, size_t n)
{
    char tmp[128];
    return clt_peek(clt_pid, (const void *)p, tmp, n < sizeof tmp ? n : sizeof tmp);
}

/* Whether n bytes at fr lie in the thread's live data stack: its current
 * chunk, below the top. The interpreter pops a chunk (and unmaps it) only
 * after it has moved datastack_chunk to the one before. */
static int in_data_stack(uintptr_t ts, uintptr_t fr, size_t n)
{
    uintptr_t chunk = RD(ts, L->ts_datastack_chunk, uintptr_t), top = RD(ts, L->ts_datastack_chunk + 8, uintptr_t);
    return PTR_OK(chunk) && fr >= chunk + 24 && fr + n <= top && top - chunk <= RD(chunk, 8, uint64_t);
}

/* This thread's data stack where the layout says, asked of the kernel
 * first: its current chunk readable, of a chunk's size, the top within it.
 * Else a sample checks every innermost frame through the kernel. */
static int data_stack_as_laid_out(void)
{
    uintptr_t ts = (uintptr_t)gil_tstate(), chunk;
    if (!PTR_OK(ts) || !readable(ts + L->ts_datastack_chunk, 16))
        return 0;
    chunk = RD(ts, L->ts_datastack_chunk, uintptr_t);
    return PTR_OK(chunk) && readable(chunk, 24) && RD(chunk, 8, uint64_t) >= 4096 &&
           RD(chunk, 8, uint64_t) <= (1u << 30) && in_data_stack(ts, chunk + 24, 0);   /* the top within it */
}

/* The innermost frame, readable with its code object where `checked` (a
 * signal handler's sample: it may stop the thread as it pushes or pops a
 * frame); 0: none to read. A frame in the live data stack is as the chain
 * says, and its code object alive: since 3.11.1 the interpreter unlinks a
 * frame before it clears it (GH-99729), and links one after it is made.
 * Any other (a generator's, a version before) is asked of the kernel. */
static uintptr_t innermost_frame(int checked)
{
    if (!L || !is_initialized() || is_finalizing())
        return 0;
    uintptr_t ts = (uintptr_t)gil_tstate();
    uintptr_t cf = PTR_OK(ts) ? RD(ts, L->ts_cframe, uintptr_t) : 0;
    uintptr_t fr = PTR_OK(cf) ? RD(cf, L->cframe_current, uintptr_t) : 0;
    if (checked && PTR_OK(fr)) {
        unsigned frame_bytes = (L->fr_owner > L->fr_is_entry ? L->fr_owner : L->fr_is_entry) + 1;
        if (unlinks_first && in_data_stack(ts, fr, frame_bytes))
            return PTR_OK(RD(fr, L->fr_code, uintptr_t)) ? fr : 0;
        uintptr_t code;
        if (!readable(fr, frame_bytes) || !PTR_OK(code = RD(fr, L->fr_code, uintptr_t)) || !readable(code, 16))
            return 0;
    }
    return fr;
}

static unsigned py_stack(struct clt_py_seen *seen, struct clt_py_line *lines, uint64_t *dst, unsigned room,
                         const uint64_t *pcs, unsigned n_pcs, int checked)
{
    struct py_out o = { dst, 0, room, CLT_PY_STRINGS, seen, lines, checked };
    uintptr_t fr = innermost_frame(checked);
    unsigned budget = CLT_PY_DEPTH;
    /* Each run of the eval loop the unwinder saw stands for its Python
     * frames. Where it saw none (a stack of one call site; the loop's
     * split-off cold part), they all go before the interpreter's innermost
     * frame: above the extension's frames, as they were called. */
    int eval_seen = 0;
    for (unsigned i = 0; i < n_pcs; i++)
        eval_seen |= pcs[i] >= eval_lo && pcs[i] < eval_hi;
    for (unsigned i = 0; i < n_pcs && o.n < o.room; i++) {
        if (eval_seen && pcs[i] >= eval_lo && pcs[i] < eval_hi && PTR_OK(fr)) {
            put_run(&o, &fr, 0, &budget);
            continue;
        }
        if (!eval_seen && PTR_OK(fr) && in_interp(pcs[i]))
            put_run(&o, &fr, 1, &budget);
        if (o.n < o.room)
            o.d[o.n++] = pcs[i] & ~CLT_PY_TAG;
    }
    if (PTR_OK(fr))
        put_run(&o, &fr, 1, &budget);        /* the rest: outer frames past the C stack's depth */
    return o.n;
}

unsigned clt_py_stack(struct clt_py_seen *seen, struct clt_py_line *lines, uint64_t *dst, unsigned room,
                      const uint64_t *pcs, unsigned n_pcs)
{
    return py_stack(seen, lines, dst, room, pcs, n_pcs, 0);
}

unsigned clt_py_stack_sampled(struct clt_py_seen *seen, uint64_t *dst, unsigned room, const uint64_t *pcs,
                              unsigned n_pcs)
{
    return py_stack(seen, NULL, dst, room, pcs, n_pcs, 1);
}

unsigned clt_py_restack(struct clt_thread *th, uint64_t *d, unsigned n, size_t room)
{
    uint64_t pcs[CLT_STACK_DEPTH];
    n = n < CLT_STACK_DEPTH ? n : CLT_STACK_DEPTH;
    memcpy(pcs, d, 8 * (size_t)n);
    return clt_py_stack(th->py_seen, th->py_lines, d, (unsigned)(room / 8) - 1, pcs, n);
}
