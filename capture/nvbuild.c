/* NVIDIA register counts. After the app's program builds for an NVIDIA
 * device, cltrace has a private copy of its source compiled with the app's
 * options plus -cl-nv-verbose, reads "ptxas info : Used N registers" per
 * kernel from that copy's log, and puts each count on the kernel's slices.
 * The app's program, its build log and options are untouched.
 *
 * The copy compiles in a process of its own, cltrace-nvregs (nvregs/main.c),
 * started by a thread of cltrace's while the app goes on: the app's build
 * time is its own. Not in the app's process: on a thread beside the app
 * NVIDIA's compiler (580.159, an H200 host) crashed on every run of the copy
 * example (NvCliCompileBitcode, a null jump buffer) while the app went on
 * calling the driver; inside the app's clBuildProgram it doubled a first
 * build (nbody 2.24x). The writer holds a program's kernels' commands until
 * its counts are in (CLT_KREGS_COMING, then CLT_KREGS_DONE); the exit waits
 * for a copy still compiling, NVREGS_WAIT_MS at most. The log is kept in the
 * user's cache (common/nvregs_cache.h) and a later build of the same
 * program reads it: nothing is compiled again. Programs made from binaries
 * (no source) and asynchronous builds (pfn_notify) get no counts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "capture/generated/clt_hooks.h"
#include "common/nvregs_cache.h"
#include "common/peek.h"
#include "shim.h"
#include "replay/take/take.h"
#include "writer/writer.h"

enum { CL_SUCCESS_ = 0, CL_PROGRAM_DEVICES_ = 0x1163, CL_PROGRAM_SOURCE_ = 0x1164, CL_DEVICE_NAME_ = 0x102B,
       CL_DEVICE_VENDOR_ = 0x102C, CL_DRIVER_VERSION_ = 0x102D, CL_DEVICE_PLATFORM_ = 0x1031,
       CL_PLATFORM_NAME_ = 0x0902, CL_DEVICE_TYPE_ALL_ = 0xFFFFFFFF };
#define VERBOSE " -cl-nv-verbose"
typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);

/* The tests' way into this path without NVIDIA's driver: every device
 * taken for one, the copy built with the app's options alone, its log
 * cached though it tells no counts */
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

/* The program's source, malloc'd (NULL: none, a program made from binaries) */
static char *program_source(void *program)
{
    get_info_t pi = (get_info_t)REAL(clGetProgramInfo);
    size_t n = 0;
    if (!pi || pi(program, CL_PROGRAM_SOURCE_, 0, NULL, &n) != CL_SUCCESS_ || n < 2)
        return NULL;
    char *s = malloc(n + 1);
    if (s && pi(program, CL_PROGRAM_SOURCE_, n, s, NULL) != CL_SUCCESS_) {
        free(s);
        return NULL;
    }
    if (s)
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
            if (strncmp(name, "cltrace_nvregs_", 15) != 0)     /* the helper's own kernel (nvregs/main.c) */
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

/* ---- the private build, in a process of its own -------------------------- */

#define NVREGS_WAIT_MS 2000      /* the exit waits this long at most for a copy still compiling */

/* A copy to compile: the app's program (its handle names it in the
 * records), the helper's arguments and environment, all copied on the
 * app's thread (environ may change under a thread of cltrace's) */
struct job {
    void *program;
    char *argv[8], **envp;
    unsigned defer_ms;      /* the helper's wait for the app's end (CLT_NVREGS_DEFER_MS; 0 with every command timed) */
    char *src;
    struct job *next;
};
static struct job *_Atomic jobs;            /* pushed by the app's threads, taken whole by the builder */
static _Atomic uint32_t pending;            /* futex: jobs handed and not yet done */
static _Atomic uint64_t deferred_until_ms;  /* CLOCK_MONOTONIC: the latest helper waits for the app till then */
static _Atomic uint32_t wake;               /* futex: bumped on each hand-over */
static _Atomic int builder;                 /* 0 none, 1 running, -1 could not start */

static void job_free(struct job *j)
{
    if (!j)
        return;
    for (unsigned i = 0; i < 8; i++)
        free(j->argv[i]);
    for (char **e = j->envp; e && *e; e++)
        free(*e);
    free(j->envp);
    free(j->src);
    free(j);
}

/* The app's environment without the shim (LD_PRELOAD), NVIDIA's compute
 * cache on (the helper's build is new to it): a program that turned it off
 * for its own first builds would cost the helper 1.5 s more at its start.
 * Where the app's driver library is known, the helper's ICD loader is
 * given that one alone, both ways loaders read (ocl-icd dlopens a library
 * named in OCL_ICD_VENDORS; the Khronos loader adds OCL_ICD_FILENAMES and
 * finds no folder there): an H200 host listing PoCL first and NVIDIA's
 * driver second in OCL_ICD_FILENAMES had the helper, started as the app
 * ended, find PoCL's platform alone, 3 runs of 3, and no count came. */
static char **helper_env(const char *driver)
{
    extern char **environ;
    size_t n = 2;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = calloc(n + 1, sizeof *env);
    size_t k = 0;
    int ok = env != NULL;
    for (char **e = environ; ok && e && *e; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "CUDA_CACHE_DISABLE=", 19) != 0 &&
            !(driver[0] && (strncmp(*e, "OCL_ICD_VENDORS=", 16) == 0 || strncmp(*e, "OCL_ICD_FILENAMES=", 18) == 0)))
            ok = (env[k++] = strdup(*e)) != NULL;
    if (ok && driver[0])
        ok = asprintf(&env[k++], "OCL_ICD_VENDORS=%s", driver) >= 0 &&
             asprintf(&env[k++], "OCL_ICD_FILENAMES=%s", driver) >= 0;
    if (!ok && env) {
        for (size_t i = 0; i < n; i++)
            free(env[i]);
        free(env);
        env = NULL;
    }
    return env;
}

/* cltrace-nvregs beside the shim (build/, lib/cltrace/), or $CLTRACE_TEST_NVREGS_HELPER */
static char *helper_path(void)
{
    const char *set = getenv("CLTRACE_TEST_NVREGS_HELPER");
    if (set && *set)
        return strdup(set);
    Dl_info self;
    if (!dladdr((void *)&clt_post_clBuildProgram, &self) || !self.dli_fname)
        return NULL;
    const char *slash = strrchr(self.dli_fname, '/');
    char *path = NULL;
    if (slash && asprintf(&path, "%.*s/cltrace-nvregs", (int)(slash - self.dli_fname), self.dli_fname) < 0)
        path = NULL;
    return path;
}

struct spawn { const struct job *j; int in, out; };

/* The child of a clone sharing the builder's memory until it execs: only
 * calls safe there (no SIGCHLD for it: the app's handler and wait() never
 * see cltrace's process) */
static int helper_child(void *arg)
{
    const struct spawn *s = arg;
    if (dup2(s->in, 0) < 0 || dup2(s->out, 1) < 0)
        syscall(SYS_exit, 127);
    /* none of the app's files beyond its stderr: the helper runs after the
     * app has ended, and would hold its pipes, sockets and devices open
     * (a pipe reader waits for its end). Linux 5.9 on; before, kept */
    syscall(SYS_close_range, 3u, ~0u, 0u);
    syscall(SYS_execve, s->j->argv[0], s->j->argv, s->j->envp);   /* not the shim's execve (life.c) */
    syscall(SYS_exit, 127);       /* not _exit: the shim's own (life.c) would finish the app's trace */
    return 127;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

static char *read_all(int fd)
{
    size_t n = 0, cap = 4096;
    char *s = malloc(cap);
    for (ssize_t k; s;) {
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                break;
            s = t;
        }
        k = read(fd, s + n, cap - n - 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    if (s)
        s[n] = 0;
    return s;
}

/* A pipe whose ends are not 0, 1 or 2 (an app that closed its standard
 * streams gets them from pipe2; the child's dup2 onto them would then leave
 * them close-on-exec): 0, or -1 */
static int pipe_above_stdio(int fd[2])
{
    if (pipe2(fd, O_CLOEXEC) != 0)
        return -1;
    for (int k = 0; k < 2; k++)
        if (fd[k] < 3) {
            int moved = fcntl(fd[k], F_DUPFD_CLOEXEC, 3);
            close(fd[k]);
            fd[k] = moved;
        }
    if (fd[0] >= 0 && fd[1] >= 0)
        return 0;
    for (int k = 0; k < 2; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    return -1;
}

/* The helper run on a job: its log (malloc'd), or NULL where it did not build */
static char *run_helper(const struct job *j)
{
    int in[2], out[2];
    if (pipe_above_stdio(in) != 0)
        return NULL;
    if (pipe_above_stdio(out) != 0) {
        close(in[0]);
        close(in[1]);
        return NULL;
    }
    struct spawn s = { j, in[0], out[1] };
    size_t stack_size = 64 * 1024;
    char *stack = malloc(stack_size);
    pid_t pid = stack ? clone(helper_child, stack + stack_size, CLONE_VM | CLONE_VFORK, &s) : -1;
    __atomic_store_n(&deferred_until_ms, clt_clock_ns(CLOCK_MONOTONIC) / 1000000 + j->defer_ms, __ATOMIC_RELEASE);
    free(stack);                  /* CLONE_VFORK: the child has exec'd (or exited) by now */
    close(in[0]);
    close(out[1]);
    char *log = NULL;
    if (pid > 0) {
        write_all(in[1], j->src, strlen(j->src));    /* EPIPE where it died: its signals are blocked here */
        close(in[1]);
        log = read_all(out[0]);
        int status = 0;
        while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            free(log);
            log = NULL;
        }
    } else {
        close(in[1]);
    }
    close(out[0]);
    return log;
}

static void *builder_main(void *arg)
{
    (void)arg;
    clt_own_thread_begin("cltrace-nvregs", 0);      /* the helper inherits its priority: normal */
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
            char *log = run_helper(j);
            if (getenv("CLTRACE_DEBUG_NV"))
                clt_msg("nv: register counts compiled by %s: %s", j->argv[0], log ? "built" : "not built");
            if (log)
                parse_log(th, j->program, log);
            free(log);
            put_regs(th, j->program, CLT_KREGS_DONE, "");
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
    if (!__atomic_load_n(&builder, __ATOMIC_ACQUIRE))
        __atomic_store_n(&builder, clt_spawn_own(builder_main) == 0 ? 1 : -1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return __atomic_load_n(&builder, __ATOMIC_ACQUIRE) == 1;
}

/* At exit: the copies still compiling waited for, as long as the sampling
 * budget's share of the run (5 %: 25 ms of a 0.5 s run; CLTRACE_SAMPLE=all:
 * NVREGS_WAIT_MS). A first run's copy needs 150-300 ms on an H200 (the
 * helper's own driver start): waited for whole, it was 28-58 % of each
 * example's run. Not at all where the latest helper is still waiting for
 * the app to end (CLT_NVREGS_DEFER_MS): it compiles after it and fills the
 * cache, so that the next run has the counts. The copies left: returned. */
uint64_t clt_nvbuild_finish(void)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t share_ms = clt_sample_budget_share_ns() / 1000000;
    uint64_t now_ms = (uint64_t)t0.tv_sec * 1000 + (uint64_t)t0.tv_nsec / 1000000;
    long wait_ms = share_ms < NVREGS_WAIT_MS ? (long)share_ms : NVREGS_WAIT_MS;
    if (now_ms < __atomic_load_n(&deferred_until_ms, __ATOMIC_ACQUIRE))
        wait_ms = 0;           /* it waits for this exit */
    for (uint32_t p; (p = __atomic_load_n(&pending, __ATOMIC_ACQUIRE)) != 0;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left_ms = wait_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left_ms <= 0)
            return p;
        struct timespec ts = { left_ms / 1000, left_ms % 1000 * 1000000 };
        syscall(SYS_futex, &pending, FUTEX_WAIT_PRIVATE, p, &ts, NULL, 0);
    }
    return 0;
}

/* A fork child: the builder is its parent's */
void clt_nvbuild_forget(void)
{
    __atomic_store_n(&jobs, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&pending, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&builder, 0, __ATOMIC_RELAXED);
}

/* The device as the helper finds it: its platform's name, its name, its
 * place among the platform's devices; and its driver (for the cache) */
static int device_names(void *dev, char *platform, char *name, char *driver, unsigned *index, void **plat_out)
{
    get_info_t di = (get_info_t)REAL(clGetDeviceInfo), pi = (get_info_t)REAL(clGetPlatformInfo);
    typedef int32_t (*ids_t)(void *, uint64_t, uint32_t, void **, uint32_t *);
    ids_t ids = (ids_t)REAL(clGetDeviceIDs);
    void *plat = NULL, *devs[64];
    uint32_t n = 0;
    platform[0] = name[0] = driver[0] = 0;
    if (!di || !pi || !ids || di(dev, CL_DEVICE_PLATFORM_, sizeof plat, &plat, NULL) != CL_SUCCESS_ ||
        pi(plat, CL_PLATFORM_NAME_, 256, platform, NULL) != CL_SUCCESS_ ||
        di(dev, CL_DEVICE_NAME_, 256, name, NULL) != CL_SUCCESS_ ||
        di(dev, CL_DRIVER_VERSION_, 256, driver, NULL) != CL_SUCCESS_ ||
        ids(plat, CL_DEVICE_TYPE_ALL_, 64, devs, &n) != CL_SUCCESS_)
        return -1;
    platform[255] = name[255] = driver[255] = 0;
    *plat_out = plat;
    for (*index = 0; *index < n && *index < 64 && devs[*index] != dev; ++*index)
        ;
    return 0;
}

/* The file of the driver that made platform (its ICD dispatch table's
 * clGetPlatformInfo, the table every ICD object starts with), into lib;
 * "" where that is the loader's own, or the handle or table unreadable. */
static void driver_library(void *platform, char *lib, size_t cap)
{
    Dl_info in, loader;
    void *table[2] = { NULL, NULL }, *at = NULL;       /* read checked: a driver's handle may be no pointer */
    void *loader_fn = (void *)REAL(clGetPlatformIDs);
    lib[0] = 0;
    if (!platform || !clt_peek(clt_pid, platform, &at, sizeof at) || !at || !clt_peek(clt_pid, at, table, sizeof table))
        return;
    if (table[1] && dladdr(table[1], &in) && in.dli_fname && in.dli_fname[0] == '/' &&
        !(loader_fn && dladdr(loader_fn, &loader) && loader.dli_fbase == in.dli_fbase) &&
        strlen(in.dli_fname) < cap)
        strcpy(lib, in.dli_fname);
}

/* The job for the helper (NULL: none could be made) */
static struct job *job_new(void *program, char *src, const char *opts, const char *path, const char *platform,
                           const char *device, unsigned index, const char *driver)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->program = program;
    j->src = src;
    j->argv[0] = helper_path();
    j->argv[1] = strdup(platform);
    j->argv[2] = strdup(device);
    if (asprintf(&j->argv[3], "%u", index) < 0)
        j->argv[3] = NULL;
    j->argv[4] = strdup(opts);
    j->argv[5] = strdup(path);
    /* every command timed (CLTRACE_SAMPLE=all): everything in this run's
     * trace, the counts compiled beside the app and waited for at exit */
    j->defer_ms = clt_sampling ? CLT_NVREGS_DEFER_MS : 0;
    if (asprintf(&j->argv[6], "%u", j->defer_ms) < 0)
        j->argv[6] = NULL;
    j->envp = helper_env(driver);
    for (unsigned i = 0; i < 7; i++)
        if (!j->argv[i] || !j->envp) {
            j->src = NULL;        /* the caller's still */
            job_free(j);
            return NULL;
        }
    return j;
}

void clt_post_clBuildProgram(struct clt_hook *h, int32_t *ret, void *program, uint32_t num_devices,
                             void *device_list, void *options, void *pfn_notify, void *user_data)
{
    (void)user_data;
    free((void *)(uintptr_t)h->scratch[0]);
    if (!h->th || *ret != CL_SUCCESS_ || pfn_notify)
        return;
    void *devs[16] = { 0 }, *dev = num_devices && device_list ? ((void **)device_list)[0] : NULL;
    get_info_t pi = (get_info_t)REAL(clGetProgramInfo);
    if (!dev && pi && pi(program, CL_PROGRAM_DEVICES_, sizeof devs, devs, NULL) == CL_SUCCESS_)
        dev = devs[0];
    if (!dev || !pi || !nvidia_device(dev))
        return;
    int saved = errno;
    const char *opt = options ? options : "";
    char *src = program_source(program), *opts = malloc(strlen(opt) + sizeof VERBOSE);
    char platform[256], device[256], driver[256], path[PATH_MAX], lib[PATH_MAX];
    unsigned index = 0;
    void *plat = NULL;
    if (src && opts && device_names(dev, platform, device, driver, &index, &plat) == 0) {
        driver_library(plat, lib, sizeof lib);
        if (getenv("CLTRACE_DEBUG_NV"))
            clt_msg("nv: the helper's driver: %s", lib[0] ? lib : "(every one the app's loader lists)");
        strcpy(opts, opt);
        strcat(opts, any_device() ? "" : VERBOSE);
        int cache = clt_nvregs_cache_path(src, opts, device, driver, path, sizeof path) == 0;
        char *log = cache ? clt_nvregs_cache_read(path) : NULL;
        struct job *j = NULL;
        if (log) {
            if (getenv("CLTRACE_DEBUG_NV"))
                clt_msg("nv: register counts from %s", path);
            parse_log(h->th, program, log);
            free(log);
        } else if (builder_started() &&
                   (j = job_new(program, src, opts, cache ? path : "", platform, device, index, lib)) != NULL) {
            src = NULL;                                   /* the job's now */
            put_regs(h->th, program, CLT_KREGS_COMING, "");   /* the writer holds its kernels' commands */
            __atomic_fetch_add(&pending, 1, __ATOMIC_ACQ_REL);
            j->next = __atomic_load_n(&jobs, __ATOMIC_RELAXED);
            while (!__atomic_compare_exchange_n(&jobs, &j->next, j, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                ;
            __atomic_fetch_add(&wake, 1, __ATOMIC_RELEASE);
            syscall(SYS_futex, &wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        }
    }
    free(src);
    free(opts);
    errno = saved;
}
