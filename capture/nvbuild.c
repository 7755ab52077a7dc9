/* NVIDIA register counts. After the app's program builds for an NVIDIA
 * device, cltrace compiles a private copy of its source with the app's
 * options plus -cl-nv-verbose (through the real entry points, unrecorded),
 * reads "ptxas info : Used N registers" per kernel from that copy's log and
 * releases it. The app's program, its build log and options are untouched:
 * the copy is invisible to the app. The copy is built on a thread of
 * cltrace's own, beside the app (on the app's thread it added a second
 * compile to the app's build: nbody's 93 ms build, 82 ms of it, on an H100),
 * holding a reference to the context and the program until it is done; the
 * exit waits for a copy still building (the driver's teardown must not
 * meet it). Programs made from binaries (no source) and asynchronous
 * builds (pfn_notify) get no counts. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include "capture/generated/clt_hooks.h"
#include "shim.h"
#include "replay/take/take.h"
#include "writer/writer.h"

enum { CL_SUCCESS_ = 0, CL_PROGRAM_CONTEXT_ = 0x1161, CL_PROGRAM_DEVICES_ = 0x1163, CL_PROGRAM_SOURCE_ = 0x1164,
       CL_PROGRAM_BUILD_LOG_ = 0x1183, CL_DEVICE_VENDOR_ = 0x102C };
#define VERBOSE " -cl-nv-verbose"
typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*get_info2_t)(void *, void *, uint32_t, size_t, void *, size_t *);

/* The tests' way into this path without NVIDIA's driver: every device
 * taken for one, the copy built with the app's options alone (PoCL: the
 * builder thread, its references and the exit's wait, on every run) */
static int any_device(void)
{
    static int any = -1;
    int v = __atomic_load_n(&any, __ATOMIC_RELAXED);
    if (v < 0)
        __atomic_store_n(&any, v = getenv("CLTRACE_TEST_NVBUILD_ANY") != NULL, __ATOMIC_RELAXED);
    return v;
}

static int nvidia_device(void *dev)
{
    get_info_t f = (get_info_t)REAL(clGetDeviceInfo);
    char vendor[128] = "";
    int32_t rc = f ? f(dev, CL_DEVICE_VENDOR_, sizeof vendor, vendor, NULL) : -1;
    vendor[sizeof vendor - 1] = 0;
    if (getenv("CLTRACE_DEBUG_NV"))
        clt_msg("nv: device %p vendor '%s' rc %d", dev, vendor, (int)rc);
    return any_device() || (rc == CL_SUCCESS_ && strstr(vendor, "NVIDIA") != NULL);
}

/* A malloc'd string from clGetProgramInfo / clGetProgramBuildInfo. */
static char *program_text(void *program, void *dev, uint32_t param)
{
    get_info_t pi = (get_info_t)REAL(clGetProgramInfo);
    get_info2_t bi = (get_info2_t)REAL(clGetProgramBuildInfo);
    size_t n = 0;
    int32_t rc = dev ? (bi ? bi(program, dev, param, 0, NULL, &n) : -1) : (pi ? pi(program, param, 0, NULL, &n) : -1);
    if (rc != CL_SUCCESS_ || n < 2)
        return NULL;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    rc = dev ? bi(program, dev, param, n, s, NULL) : pi(program, param, n, s, NULL);
    if (rc != CL_SUCCESS_) {
        free(s);
        return NULL;
    }
    s[n] = 0;
    return s;
}

/* A kernel's count, or of the program: its counts coming, all in */
static void put_regs(struct clt_thread *th, void *program, uint32_t regs, const char *name)
{
    struct clt_rec *rec = th ? clt_rec_begin(th, sizeof(struct clt_rec) + 8 * KR_N + CLT_MAX_STR) : NULL;
    if (rec) {
        struct clt_extra x = clt_extra_init(rec, KR_N);
        rec->arg[KR_PROGRAM] = (uint64_t)(uintptr_t)program;
        rec->arg[KR_REGS] = regs;
        rec->arg[KR_NAME] = clt_put_str(&x, KR_NAME, 1, name);
        uint64_t now = clt_now();
        clt_rec_commit(th, rec, &x, CLT_REC_KREGS, now, now, 0);
    }
}

/* "ptxas info    : Compiling entry function 'vadd' for 'sm_90a'" then
 * "ptxas info    : Used 10 registers, ..." -> one record per kernel. */
static void parse_log(struct clt_thread *th, void *program, const char *log)
{
    char name[CLT_MAX_STR] = "";
    static const char entry[] = "Compiling entry function '";
    for (const char *line = log; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        const char *f = strstr(buf, entry), *u = strstr(buf, "Used ");
        unsigned regs;
        if (f) {
            f += sizeof entry - 1;
            size_t k = strcspn(f, "'");
            snprintf(name, sizeof name, "%.*s", (int)k, f);
        } else if (u && name[0] && sscanf(u, "Used %u registers", &regs) == 1) {
            put_regs(th, program, regs, name);
            name[0] = 0;
        }
        line = nl ? nl + 1 : NULL;
    }
}

void clt_pre_clBuildProgram(struct clt_hook *h, void **program, uint32_t *num_devices, void **device_list,
                            void **options, void **pfn_notify, void **user_data)
{
    /* fingerprints: each kernel argument's address space and type */
    char *o = clt_fp_on || rt_take_on ? clt_fp_build_options(*options) : NULL;
    if (o) {
        h->scratch[0] = (uint64_t)(uintptr_t)o;
        *options = o;
    }
}

/* A private build to make: the app's context and program (a reference held
 * on each), its device, a copy of the source and the options */
struct job {
    void *ctx, *program, *dev;
    char *src, *opts;
    struct job *next;
};
static struct job *_Atomic jobs;            /* pushed by the app's threads, taken whole by the builder */
static _Atomic uint32_t pending;            /* futex: jobs handed and not yet done */
static _Atomic uint32_t wake;               /* futex: bumped on each hand-over */
static _Atomic int builder;                 /* 0 none, 1 running, -1 could not start */

typedef void *(*create_t)(void *, uint32_t, const char **, const size_t *, int32_t *);
typedef int32_t (*build_t)(void *, uint32_t, void *const *, const char *, void *, void *);
typedef int32_t (*release_t)(void *);

static void job_free(struct job *j)
{
    if (j) {
        free(j->src);
        free(j->opts);
        free(j);
    }
}

static void build_copy(struct clt_thread *th, const struct job *j)
{
    create_t create = (create_t)REAL(clCreateProgramWithSource);
    build_t build = (build_t)REAL(clBuildProgram);
    release_t release = (release_t)REAL(clReleaseProgram);
    int32_t err = -1;
    const char *srcs[1] = { j->src };
    void *copy = create && build && release ? create(j->ctx, 1, srcs, NULL, &err) : NULL;
    if (copy && err == CL_SUCCESS_ && build(copy, 1, &j->dev, j->opts, NULL, NULL) == CL_SUCCESS_) {
        char *log = program_text(copy, j->dev, CL_PROGRAM_BUILD_LOG_);
        if (log && th)
            parse_log(th, j->program, log);
        free(log);
    }
    if (copy)
        release(copy);
}

static void *builder_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-nvbuild", 0);     /* it calls into the driver */
    for (;;) {
        uint32_t seen = __atomic_load_n(&wake, __ATOMIC_ACQUIRE);
        struct job *j = __atomic_exchange_n(&jobs, NULL, __ATOMIC_ACQ_REL);
        if (!j) {
            syscall(SYS_futex, &wake, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
            continue;
        }
        while (j) {
            struct job *next = j->next;
            struct clt_thread *th = clt_enter();    /* its own ring: the counts are records like any other */
            build_copy(th, j);
            put_regs(th, j->program, CLT_KREGS_DONE, "");
            ((release_t)REAL(clReleaseProgram))(j->program);
            ((release_t)REAL(clReleaseContext))(j->ctx);
            job_free(j);
            __atomic_fetch_sub(&pending, 1, __ATOMIC_ACQ_REL);
            syscall(SYS_futex, &pending, FUTEX_WAKE_PRIVATE, 64, NULL, NULL, 0);
            j = next;
        }
    }
    return NULL;
}

static int builder_started(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!__atomic_load_n(&builder, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&builder, clt_spawn_own(builder_main) == 0 ? 1 : -1, __ATOMIC_RELEASE);
        /* registered after the driver loaded its compiler, so run before
         * that compiler's own exit handlers: a build still running when
         * they tore it down crashed in it (PoCL's clang, NVIDIA's) */
        if (__atomic_load_n(&builder, __ATOMIC_ACQUIRE) == 1)
            atexit(clt_nvbuild_finish);
    }
    pthread_mutex_unlock(&lock);
    return __atomic_load_n(&builder, __ATOMIC_ACQUIRE) == 1;
}

void clt_post_clBuildProgram(struct clt_hook *h, int32_t *ret, void *program, uint32_t num_devices,
                             void *device_list, void *options, void *pfn_notify, void *user_data)
{
    free((void *)(uintptr_t)h->scratch[0]);
    if (!h->th || *ret != CL_SUCCESS_ || pfn_notify)
        return;
    void *devs[16] = { 0 }, *dev = num_devices && device_list ? ((void **)device_list)[0] : NULL;
    get_info_t pi = (get_info_t)REAL(clGetProgramInfo);
    if (!dev && pi && pi(program, CL_PROGRAM_DEVICES_, sizeof devs, devs, NULL) == CL_SUCCESS_)
        dev = devs[0];
    if (!dev || !nvidia_device(dev))
        return;
    int saved = errno;
    typedef int32_t (*retain_t)(void *);
    retain_t retain_prog = (retain_t)REAL(clRetainProgram), retain_ctx = (retain_t)REAL(clRetainContext);
    const char *opt = options ? options : "";
    struct job *j = calloc(1, sizeof *j);
    if (j && (j->src = program_text(program, NULL, CL_PROGRAM_SOURCE_)) &&
        (j->opts = malloc(strlen(opt) + sizeof VERBOSE)) && pi && retain_prog && retain_ctx &&
        REAL(clReleaseContext) && REAL(clReleaseProgram) &&
        pi(program, CL_PROGRAM_CONTEXT_, sizeof j->ctx, &j->ctx, NULL) == CL_SUCCESS_ && builder_started() &&
        retain_ctx(j->ctx) == CL_SUCCESS_) {
        if (retain_prog(program) != CL_SUCCESS_) {
            ((release_t)REAL(clReleaseContext))(j->ctx);
            job_free(j);
            errno = saved;
            return;
        }
        strcpy(j->opts, opt);
        strcat(j->opts, any_device() ? "" : VERBOSE);
        j->program = program;
        j->dev = dev;
        put_regs(h->th, program, CLT_KREGS_COMING, "");  /* the writer holds its kernels' commands for them */
        __atomic_fetch_add(&pending, 1, __ATOMIC_ACQ_REL);
        j->next = __atomic_load_n(&jobs, __ATOMIC_ACQUIRE);
        while (!__atomic_compare_exchange_n(&jobs, &j->next, j, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            ;
        __atomic_fetch_add(&wake, 1, __ATOMIC_ACQ_REL);
        syscall(SYS_futex, &wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    } else {
        job_free(j);
    }
    errno = saved;
}

/* At exit, while recording: the copies still building, waited for (10 s at
 * most), so that their counts are in the trace and the driver's teardown
 * does not meet a build. */
void clt_nvbuild_finish(void)
{
    uint64_t end = clt_clock_ns(CLOCK_MONOTONIC) + 10000000000ull;
    uint32_t n;
    while ((n = __atomic_load_n(&pending, __ATOMIC_ACQUIRE)) && clt_clock_ns(CLOCK_MONOTONIC) < end) {
        struct timespec ts = { 0, 50000000 };
        syscall(SYS_futex, &pending, FUTEX_WAIT_PRIVATE, n, &ts, NULL, 0);
    }
}

/* A fork child: no builder thread there, no copies of its own to wait for */
void clt_nvbuild_forget(void)
{
    __atomic_store_n(&jobs, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&pending, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&builder, 0, __ATOMIC_RELAXED);
}
