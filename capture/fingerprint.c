/* CLTRACE_FINGERPRINT: after each chosen command (a kernel launch, a buffer
 * write, copy or fill), a fingerprint of every buffer it may have written,
 * to find the first command that wrote a NaN and the first where two runs
 * part (cltrace-report: the nan rule, `diverge`).
 *
 * Nothing of it is in the wrappers: with fingerprints on, the real entry
 * points of clSetKernelArg(SVMPointer) and of the commands above are this
 * file's (clt_fp_interpose, wherever a real entry point is set: the
 * library, dlsym, an extension lookup, the loader's layer), which call the
 * driver's and then look. Off, nothing changes.
 *
 * On the calling thread, right after the enqueue: the buffers the command
 * may write (a kernel: its global, non-const pointer arguments as last set,
 * their element type from the kernel's argument info; a transfer: its
 * destination), each read back whole into host memory of cltrace's own by
 * a non-blocking read enqueued behind the command (its event in the wait
 * list), so what is read is what the command left, before any later command
 * of an in-order queue touches it. The app's thread does not wait (except
 * with CLTRACE_BREAK=nan, or past FP_MAX_BYTES in flight). A buffer the
 * host may not read (CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY) is
 * copied into a buffer of cltrace's first.
 *
 * On the collector thread, once the command completed (its event is the
 * key): the readbacks are waited for, each digested (common/digest.h) and
 * written to the collector's ring as a CLT_REC_FINGERPRINT just before the
 * command's own record, so the writer draws them as arguments of the
 * command's slice. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "capture/generated/clt_hooks.h"
#include "common/digest.h"
#include "common/map.h"
#include "capture/complete.h"
#include "common/select.h"
#include "trace/tables.h"
#include "callstack.h"
#include "fingerprint.h"
#include "hooks.h"
#include "shim.h"

enum { K_FUNCTION_NAME = 0x1190, K_NUM_ARGS = 0x1191, K_PROGRAM = 0x1194, KA_ADDRESS = 0x1196,
       KA_TYPE_NAME = 0x1198, KA_TYPE_QUAL = 0x1199, ADDRESS_GLOBAL = 0x119B, M_TYPE = 0x1100,
       M_FLAGS = 0x1101, M_SIZE = 0x1102, M_CONTEXT = 0x1106, MEM_BUFFER = 0x10F0, E_STATUS = 0x11D3 };
#define MEM_READ_ONLY (1u << 2)
#define MEM_HOST_WRITE_ONLY (1u << 7)
#define MEM_HOST_NO_ACCESS (1u << 9)
#define FP_MAX_ARGS 64
#define FP_MAX_OUT 8                       /* buffers per command */
#define FP_MAX_BYTES (512ull << 20)        /* read back and not yet digested: past it the app waits */
#define FP_COLLECT_BYTES (32ull << 20)     /* past it the collector digests while the app enqueues */

typedef int32_t (*info_t)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*arg_info_t)(void *, uint32_t, uint32_t, size_t, void *, size_t *);
typedef int32_t (*read_t)(void *, void *, uint32_t, size_t, size_t, void *, uint32_t, const void *, void **);
typedef int32_t (*copy_t)(void *, void *, void *, size_t, size_t, size_t, uint32_t, const void *, void **);
typedef void *(*create_t)(void *, uint64_t, size_t, void *, int32_t *);
typedef int32_t (*release_t)(void *);
typedef int32_t (*wait_t)(uint32_t, void *const *);

int clt_fp_on;
static struct clt_select sel;
static int break_nan;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t n_commands;                /* fingerprintable commands enqueued (#N) */
static _Atomic uint64_t bytes_in_flight;

struct kargs { void *val[FP_MAX_ARGS]; };
struct kinfo {                             /* a kernel's arguments, asked once */
    void *program;
    char name[96];
    unsigned nargs;
    uint64_t writes;                       /* bit i: a global, non-const pointer */
    uint8_t elem[FP_MAX_ARGS];
};
struct out {                               /* a buffer (its region off..off+bytes; bytes 0: all) read back */
    void *mem, *ev, *host;
    size_t off, bytes;
    int64_t arg;
    int elem, done;
    int32_t status;
    struct clt_digest d;
};
struct job { uint64_t cmd_n, launch_n; unsigned n; struct out o[FP_MAX_OUT]; };

static struct clt_map kargs_of, kinfo_of, elem_of, jobs;   /* kernel, kernel, mem, command event */

/* Host memory for readbacks: mapped with its pages populated at once (each
 * page faulted in on first touch by the driver's copy cost ~2.7 us on a
 * cloud VM, 0.6 ms a MiB on PoCL: more than the copy itself), and kept for
 * the next readbacks once digested. */
#define POOL_MAX 32
static struct { void *p; size_t cap; } pool[POOL_MAX];
static unsigned n_pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void *host_get(size_t bytes)
{
    void *p = NULL;
    pthread_mutex_lock(&pool_lock);
    for (unsigned i = 0; i < n_pool && !p; i++)
        if (pool[i].cap >= bytes && pool[i].cap <= 2 * bytes) {
            p = pool[i].p;
            pool[i] = pool[--n_pool];
        }
    pthread_mutex_unlock(&pool_lock);
    if (!p) {
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        p = p == MAP_FAILED ? NULL : p;
    }
    return p;
}

static void host_put(void *p, size_t bytes)
{
    pthread_mutex_lock(&pool_lock);
    if (n_pool == POOL_MAX) {       /* the oldest goes */
        munmap(pool[0].p, pool[0].cap);
        memmove(pool, pool + 1, (POOL_MAX - 1) * sizeof pool[0]);
        n_pool--;
    }
    pool[n_pool].p = p;
    pool[n_pool++].cap = bytes;
    pthread_mutex_unlock(&pool_lock);
}
static struct clt_name_counts launches_of;     /* by kernel (or command) name */

void clt_fp_load(void)
{
    const char *spec = clt_cfg.FINGERPRINT;
    if (!spec[0] || !strcmp(spec, "0"))
        return;
    char err[160];
    if (clt_select_parse(spec, &sel, err, sizeof err) != 0) {
        clt_msg("CLTRACE_FINGERPRINT=%s: %s; no fingerprints", spec, err);
        return;
    }
    break_nan = strstr(clt_cfg.BREAK, "nan") || !strcmp(clt_cfg.BREAK, "all");
    clt_fp_on = 1;
    clt_complete_set_before(clt_fp_collect);     /* a command's digests before its completion */
}

static void set_arg(void *kernel, uint32_t index, size_t size, const void *value)
{
    if (index >= FP_MAX_ARGS || !kernel)
        return;
    void *v = size == sizeof(void *) && value ? *(void *const *)value : NULL;
    pthread_mutex_lock(&lock);
    struct kargs *k = clt_map_get(&kargs_of, (uint64_t)(uintptr_t)kernel);
    if (!k && (k = calloc(1, sizeof *k)) && clt_map_put(&kargs_of, (uint64_t)(uintptr_t)kernel, k) != 0) {
        free(k);
        k = NULL;
    }
    if (k)
        k->val[index] = v;
    pthread_mutex_unlock(&lock);
}

/* The kernel's facts, asked again when the handle now names another kernel. */
static struct kinfo *kernel_info(void *kernel)
{
    info_t ki = REAL(clGetKernelInfo);
    arg_info_t ai = REAL(clGetKernelArgInfo);
    void *program = NULL;
    char name[96] = "";
    if (!ki || ki(kernel, K_PROGRAM, sizeof program, &program, NULL) != 0 ||
        ki(kernel, K_FUNCTION_NAME, sizeof name, name, NULL) != 0)
        return NULL;
    name[sizeof name - 1] = 0;
    struct kinfo *k = clt_map_get(&kinfo_of, (uint64_t)(uintptr_t)kernel);
    if (k && k->program == program && !strcmp(k->name, name))
        return k;
    if (!k && (!(k = calloc(1, sizeof *k)) || clt_map_put(&kinfo_of, (uint64_t)(uintptr_t)kernel, k) != 0)) {
        free(k);
        return NULL;
    }
    memset(k, 0, sizeof *k);
    k->program = program;
    strcpy(k->name, name);
    uint32_t n = 0;
    if (ki(kernel, K_NUM_ARGS, sizeof n, &n, NULL) != 0)
        n = 0;
    k->nargs = n < FP_MAX_ARGS ? n : FP_MAX_ARGS;
    int told = 0;
    for (unsigned i = 0; i < k->nargs; i++) {
        uint32_t addr = 0;
        uint64_t qual = 0;
        char type[128] = "";
        if (!ai || ai(kernel, i, KA_ADDRESS, sizeof addr, &addr, NULL) != 0 ||
            ai(kernel, i, KA_TYPE_QUAL, sizeof qual, &qual, NULL) != 0 ||
            ai(kernel, i, KA_TYPE_NAME, sizeof type, type, NULL) != 0) {
            if (!told++)
                clt_msg("kernel %s: the driver gives no argument info; its buffers are not fingerprinted", name);
            k->writes = 0;
            break;
        }
        type[sizeof type - 1] = 0;
        if (addr == ADDRESS_GLOBAL && !(qual & 1) && strchr(type, '*'))
            k->writes |= 1ull << i;
        k->elem[i] = (uint8_t)clt_elem_of(type);
    }
    return k;
}

/* Read mem back behind the command; 0 or the OpenCL error. */
static int32_t read_back(void *queue, void *mem, void *cmd_event, struct out *o)
{
    info_t mi = REAL(clGetMemObjectInfo);
    read_t rd = (read_t)REAL(clEnqueueReadBuffer);
    uint32_t type = 0;
    uint64_t flags = 0;
    size_t size = 0;
    if (!mi || !rd || mi(mem, M_TYPE, sizeof type, &type, NULL) != 0 || type != MEM_BUFFER ||
        mi(mem, M_FLAGS, sizeof flags, &flags, NULL) != 0 || mi(mem, M_SIZE, sizeof size, &size, NULL) != 0)
        return CL_INVALID_OPERATION_;
    if (!o->bytes || o->off >= size || o->bytes > size - o->off)    /* the whole buffer */
        o->off = 0, o->bytes = size;
    if (!o->bytes || !(o->host = host_get(o->bytes)))
        return -5;      /* CL_OUT_OF_RESOURCES */
    void *from = mem, *copy_ev = NULL, *wait = cmd_event;
    if (flags & (MEM_HOST_WRITE_ONLY | MEM_HOST_NO_ACCESS)) {   /* a staging buffer of cltrace's */
        void *ctx = NULL;
        int32_t err = -1;
        create_t mk = (create_t)REAL(clCreateBuffer);
        copy_t cp = (copy_t)REAL(clEnqueueCopyBuffer);
        if (!mk || !cp || mi(mem, M_CONTEXT, sizeof ctx, &ctx, NULL) != 0 ||
            !(from = mk(ctx, 1u /* READ_WRITE */, o->bytes, NULL, &err)) || err != 0)
            return err ? err : -4;
        err = cp(queue, mem, from, o->off, 0, o->bytes, 1, &wait, &copy_ev);
        if (err != 0) {
            ((release_t)REAL(clReleaseMemObject))(from);
            return err;
        }
        wait = copy_ev;
    }
    int32_t err = rd(queue, from, 0, from == mem ? o->off : 0, o->bytes, o->host, 1, &wait, &o->ev);
    if (copy_ev) {          /* the staging buffer: freed once the commands on it are done */
        ((release_t)REAL(clReleaseEvent))(copy_ev);
        ((release_t)REAL(clReleaseMemObject))(from);
    }
    return err;
}

static void digest(struct out *o)
{
    if (o->done)
        return;
    o->done = 1;
    if (!o->status && o->ev) {
        int32_t st = 1;
        info_t ei = REAL(clGetEventInfo);
        if (!ei || ei(o->ev, E_STATUS, sizeof st, &st, NULL) != 0 || st < 0)
            o->status = st < 0 ? st : -58;  /* CL_INVALID_EVENT */
    }
    if (!o->status)
        clt_digest(o->host, o->bytes, (enum clt_elem)o->elem, &o->d);
    if (o->ev)
        ((release_t)REAL(clReleaseEvent))(o->ev);
    o->ev = NULL;
    if (o->host)
        host_put(o->host, o->bytes);
    o->host = NULL;
    __atomic_fetch_sub(&bytes_in_flight, o->bytes, __ATOMIC_RELAXED);
}

/* CLTRACE_BREAK=nan: the readbacks waited for here, on the app's thread, so
 * the debugger stops in the call that enqueued the command. */
static void break_if_nonfinite(struct job *j)
{
    void *evs[FP_MAX_OUT];
    unsigned n = 0;
    for (unsigned i = 0; i < j->n; i++)
        if (j->o[i].ev)
            evs[n++] = j->o[i].ev;
    if (n)
        ((wait_t)REAL(clWaitForEvents))(n, evs);
    int bad = 0;
    for (unsigned i = 0; i < j->n; i++) {
        digest(&j->o[i]);
        bad |= j->o[i].d.nan || j->o[i].d.pos_inf || j->o[i].d.neg_inf;
    }
    if (bad)
        clt_break_if_debugged();
}

/* Too much read back and not digested (the collector holds completions
 * while the app enqueues): the collector now, the app waits (at most 10 s).
 * Asked again every ms: asked once, the collector took one pass and napped
 * as while the app enqueues (145 ms), and a loop of 100 launches each
 * writing 16 MiB on PoCL took 22-100 s instead of 1.2. */
static void wait_for_digests(void)
{
    for (int i = 0; i < 100000 && __atomic_load_n(&bytes_in_flight, __ATOMIC_RELAXED) > FP_MAX_BYTES / 2; i++) {
        if (i % 10 == 0)
            clt_collect_now();
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

/* The app's own call, inside its wrapper: not one of cltrace's own
 * (calibration fills, clock markers), whose commands are never collected. */
static int apps_call(unsigned fn)
{
    const struct clt_thread *th = clt_tls;
    return th && th->in_fn == fn + 1u && clt_is_active();
}

/* A command enqueued: read back what it may have written (a transfer: the
 * region off..off+bytes it wrote, or a read's that it read; bytes 0: the
 * whole buffer). */
static __thread int reading_back;   /* our own readback is a clEnqueueReadBuffer inside the app's */

static void fp_command(unsigned fn, void *queue, void *obj, void *event, size_t off, size_t bytes)
{
    if (!event || reading_back || !apps_call(fn))
        return;
    int kernel = fn == CLT_FN_clEnqueueNDRangeKernel || fn == CLT_FN_clEnqueueTask;
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return;
    pthread_mutex_lock(&lock);
    if (clt_map_get(&jobs, (uint64_t)(uintptr_t)event)) {     /* seen by an inner route already (preload + layer) */
        pthread_mutex_unlock(&lock);
        free(j);
        return;
    }
    const struct kinfo *k = kernel ? kernel_info(obj) : NULL;
    const char *name = k ? k->name : clt_fns[fn].name;
    j->cmd_n = ++n_commands;
    j->launch_n = clt_name_counts_next(&launches_of, name);
    void *mems[FP_MAX_OUT];
    int by_name = fn != CLT_FN_clEnqueueReadBuffer || !sel.all;
    if (by_name && clt_select_take(&sel, name, j->launch_n, j->cmd_n)) {
        const struct kargs *a = k ? clt_map_get(&kargs_of, (uint64_t)(uintptr_t)obj) : NULL;
        for (unsigned i = 0; a && i < k->nargs && j->n < FP_MAX_OUT; i++)
            if ((k->writes >> i & 1) && a->val[i]) {
                mems[j->n] = a->val[i];
                j->o[j->n].arg = i;
                j->o[j->n++].elem = k->elem[i];
                if (k->elem[i])
                    clt_map_put(&elem_of, (uint64_t)(uintptr_t)a->val[i], (void *)(uintptr_t)k->elem[i]);
            }
        if (!kernel) {      /* a transfer: its destination, typed as a kernel last wrote it */
            mems[0] = obj;
            j->o[0].arg = -1;
            j->o[0].off = off;
            j->o[0].bytes = bytes;
            j->o[0].elem = (int)(uintptr_t)clt_map_get(&elem_of, (uint64_t)(uintptr_t)obj);
            j->n = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    int saved = errno;
    reading_back = 1;
    for (unsigned i = 0; i < j->n; i++) {
        j->o[i].status = read_back(queue, mems[i], event, &j->o[i]);
        j->o[i].mem = mems[i];
        __atomic_fetch_add(&bytes_in_flight, j->o[i].bytes, __ATOMIC_RELAXED);
        if (j->o[i].status)
            digest(&j->o[i]);
    }
    reading_back = 0;
    if (j->n && break_nan)
        break_if_nonfinite(j);
    pthread_mutex_lock(&lock);
    if (!j->n || clt_map_put(&jobs, (uint64_t)(uintptr_t)event, j) != 0) {
        for (unsigned i = 0; i < j->n; i++)
            digest(&j->o[i]);
        free(j);
    }
    pthread_mutex_unlock(&lock);
    uint64_t held = __atomic_load_n(&bytes_in_flight, __ATOMIC_RELAXED);
    if (held > FP_MAX_BYTES)
        wait_for_digests();
    else if (held > FP_COLLECT_BYTES)   /* their memory comes back to the pool */
        clt_collect_now();
    errno = saved;
}

static int job_ready(const struct job *j)
{
    info_t ei = REAL(clGetEventInfo);
    for (unsigned i = 0; i < j->n; i++) {
        int32_t st = 0;
        if (!j->o[i].done && j->o[i].ev && ei && ei(j->o[i].ev, E_STATUS, sizeof st, &st, NULL) == 0 && st > 0)
            return 0;
    }
    return 1;
}

int clt_fp_collect(struct clt_thread *th, void *event, uint64_t flow)
{
    pthread_mutex_lock(&lock);
    struct job *j = clt_map_get(&jobs, (uint64_t)(uintptr_t)event);
    if (j && !job_ready(j)) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if (j)
        clt_map_del(&jobs, (uint64_t)(uintptr_t)event);
    pthread_mutex_unlock(&lock);
    if (!j)
        return 1;
    for (unsigned i = 0; i < j->n; i++) {
        struct out *o = &j->o[i];
        digest(o);
        struct clt_rec *rec = th ? clt_rec_begin(th, sizeof(struct clt_rec) + 8 * FP_N) : NULL;
        if (!rec)
            continue;
        struct clt_extra x = clt_extra_init(rec, FP_N);
        uint64_t *v = rec->arg;
        v[FP_FLOW] = flow;
        v[FP_MEM] = (uint64_t)(uintptr_t)o->mem;
        v[FP_ARG] = (uint64_t)o->arg;
        v[FP_BYTES] = o->bytes;
        v[FP_OFFSET] = o->off;
        v[FP_ELEM] = (uint64_t)o->elem;
        v[FP_STATUS] = (uint64_t)(int64_t)o->status;
        v[FP_HASH] = o->d.hash;
        v[FP_NAN] = o->d.nan;
        v[FP_POS_INF] = o->d.pos_inf;
        v[FP_NEG_INF] = o->d.neg_inf;
        v[FP_DENORMAL] = o->d.denormal;
        v[FP_FIRST_NONFINITE] = o->d.first_nonfinite;
        memcpy(&v[FP_MIN], &o->d.min, 8);
        memcpy(&v[FP_MAX], &o->d.max, 8);
        memcpy(&v[FP_SUM], &o->d.sum, 8);
        v[FP_CMD_N] = j->cmd_n;
        v[FP_LAUNCH_N] = j->launch_n;
        uint64_t now = clt_now();
        clt_rec_commit(th, rec, &x, CLT_REC_FINGERPRINT, now, now, 0);
    }
    free(j);
    return 1;
}

/* ---- the interposers: the driver's entry point, then a look ------------ */

enum { I_SETARG, I_SETARG_SVM, I_NDRANGE, I_TASK, I_WRITE, I_WRITE_RECT, I_FILL, I_COPY, I_COPY_RECT, I_READ, I_N };
static void *_Atomic next[I_N];          /* the driver's (or the next layer's) */
#define NEXT(i, type) ((type)__atomic_load_n(&next[i], __ATOMIC_ACQUIRE))
typedef void *P;
typedef const void *CP;

static int32_t fp_set_arg(P k, uint32_t i, size_t size, CP v)
{
    int32_t r = NEXT(I_SETARG, int32_t (*)(P, uint32_t, size_t, CP))(k, i, size, v);
    if (r == 0 && apps_call(CLT_FN_clSetKernelArg))
        set_arg(k, i, size, v);
    return r;
}

static int32_t fp_set_arg_svm(P k, uint32_t i, CP v)
{
    int32_t r = NEXT(I_SETARG_SVM, int32_t (*)(P, uint32_t, CP))(k, i, v);
    if (r == 0)
        set_arg(k, i, 0, NULL);   /* not a buffer cltrace can read back */
    return r;
}

#define AFTER(fn, obj, off, bytes) \
    if (r == 0 && ev) \
        fp_command(CLT_FN_##fn, q, obj, *ev, off, bytes); \
    return r

static int32_t fp_ndrange(P q, P k, uint32_t d, CP o, CP g, CP l, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_NDRANGE, int32_t (*)(P, P, uint32_t, CP, CP, CP, uint32_t, CP, P *))(q, k, d, o, g, l, n, w, ev);
    AFTER(clEnqueueNDRangeKernel, k, 0, 0);
}

static int32_t fp_task(P q, P k, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_TASK, int32_t (*)(P, P, uint32_t, CP, P *))(q, k, n, w, ev);
    AFTER(clEnqueueTask, k, 0, 0);
}

static int32_t fp_write(P q, P b, uint32_t bl, size_t off, size_t size, CP p, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_WRITE, int32_t (*)(P, P, uint32_t, size_t, size_t, CP, uint32_t, CP, P *))(q, b, bl, off, size,
                                                                                            p, n, w, ev);
    AFTER(clEnqueueWriteBuffer, b, off, size);
}

static int32_t fp_write_rect(P q, P b, uint32_t bl, CP bo, CP ho, CP rg, size_t brp, size_t bsp, size_t hrp,
                             size_t hsp, CP p, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_WRITE_RECT, int32_t (*)(P, P, uint32_t, CP, CP, CP, size_t, size_t, size_t, size_t, CP,
                                               uint32_t, CP, P *))(q, b, bl, bo, ho, rg, brp, bsp, hrp, hsp, p, n, w, ev);
    AFTER(clEnqueueWriteBufferRect, b, 0, 0);
}

/* What the app reads back (chosen by name only: `all` is what writes the
 * device's memory): the region it reads, as the read leaves it. */
static int32_t fp_read(P q, P b, uint32_t bl, size_t off, size_t size, P p, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_READ, int32_t (*)(P, P, uint32_t, size_t, size_t, P, uint32_t, CP, P *))(q, b, bl, off, size,
                                                                                          p, n, w, ev);
    AFTER(clEnqueueReadBuffer, b, off, size);
}

static int32_t fp_fill(P q, P b, CP pat, size_t ps, size_t off, size_t size, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_FILL, int32_t (*)(P, P, CP, size_t, size_t, size_t, uint32_t, CP, P *))(q, b, pat, ps, off,
                                                                                         size, n, w, ev);
    AFTER(clEnqueueFillBuffer, b, off, size);
}

static int32_t fp_copy(P q, P s, P d, size_t so, size_t dof, size_t size, uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_COPY, int32_t (*)(P, P, P, size_t, size_t, size_t, uint32_t, CP, P *))(q, s, d, so, dof, size,
                                                                                        n, w, ev);
    AFTER(clEnqueueCopyBuffer, d, dof, size);
}

static int32_t fp_copy_rect(P q, P s, P d, CP so, CP dof, CP rg, size_t srp, size_t ssp, size_t drp, size_t dsp,
                            uint32_t n, CP w, P *ev)
{
    int32_t r = NEXT(I_COPY_RECT, int32_t (*)(P, P, P, CP, CP, CP, size_t, size_t, size_t, size_t, uint32_t, CP,
                                              P *))(q, s, d, so, dof, rg, srp, ssp, drp, dsp, n, w, ev);
    AFTER(clEnqueueCopyBufferRect, d, 0, 0);
}

void *clt_fp_interpose(unsigned fn, void *real)
{
    static const struct { unsigned fn; void *with; } table[I_N] = {
        [I_SETARG] = { CLT_FN_clSetKernelArg, (void *)fp_set_arg },
        [I_SETARG_SVM] = { CLT_FN_clSetKernelArgSVMPointer, (void *)fp_set_arg_svm },
        [I_NDRANGE] = { CLT_FN_clEnqueueNDRangeKernel, (void *)fp_ndrange },
        [I_TASK] = { CLT_FN_clEnqueueTask, (void *)fp_task },
        [I_WRITE] = { CLT_FN_clEnqueueWriteBuffer, (void *)fp_write },
        [I_WRITE_RECT] = { CLT_FN_clEnqueueWriteBufferRect, (void *)fp_write_rect },
        [I_FILL] = { CLT_FN_clEnqueueFillBuffer, (void *)fp_fill },
        [I_COPY] = { CLT_FN_clEnqueueCopyBuffer, (void *)fp_copy },
        [I_COPY_RECT] = { CLT_FN_clEnqueueCopyBufferRect, (void *)fp_copy_rect },
        [I_READ] = { CLT_FN_clEnqueueReadBuffer, (void *)fp_read },
    };
    if (!clt_fp_on || !real || real == CLT_REAL_ABSENT)
        return real;
    for (unsigned i = 0; i < I_N; i++)
        if (table[i].fn == fn) {
            if (real == table[i].with)
                return real;
            __atomic_store_n(&next[i], real, __ATOMIC_RELEASE);
            return table[i].with;
        }
    return real;
}

char *clt_fp_build_options(const char *options)
{
    const char *o = options ? options : "";
    if (strstr(o, "-cl-kernel-arg-info"))
        return NULL;
    char *s = malloc(strlen(o) + 24);
    if (s)
        strcat(strcpy(s, o), o[0] ? " -cl-kernel-arg-info" : "-cl-kernel-arg-info");
    return s;
}

/* The child of fork(): the parent's readbacks are not ours (left, not freed:
 * their events belong to the parent's driver state). */
void clt_fp_forget(void)
{
    pthread_mutex_init(&lock, NULL);
    memset(&jobs, 0, sizeof jobs);
    bytes_in_flight = 0;
}
