/* NVIDIA register counts. After the app's program builds for an NVIDIA
 * device, cltrace compiles a private copy of its source with the app's
 * options plus -cl-nv-verbose (through the real entry points, unrecorded),
 * reads "ptxas info : Used N registers" per kernel from that copy's log and
 * releases it. The app's program, its build log and options are untouched:
 * the copy is invisible to the app.
 *
 * The copy builds on the app's thread, inside its clBuildProgram: built on a
 * thread of cltrace's beside the app (2026-11-28), NVIDIA's compiler
 * (580.159, an H200 host) crashed in it on every run of the copy example
 * (NvCliCompileBitcode, a null jump buffer) while the app went on calling
 * the driver. What it costs (nbody: 82 ms of a 93 ms first build) is paid
 * once: the copy's log (where it has counts) is kept in the user's cache
 * (${XDG_CACHE_HOME:-~/.cache}/cltrace/nvregs/, by the source, the options,
 * the device and the driver), and a later build of the same program reads
 * it instead of compiling. Programs made from binaries (no source) and
 * asynchronous builds (pfn_notify) get no counts. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "capture/generated/clt_hooks.h"
#include "common/probe_file.h"
#include "shim.h"
#include "replay/take/take.h"
#include "writer/writer.h"

enum { CL_SUCCESS_ = 0, CL_PROGRAM_CONTEXT_ = 0x1161, CL_PROGRAM_DEVICES_ = 0x1163, CL_PROGRAM_SOURCE_ = 0x1164,
       CL_PROGRAM_BUILD_LOG_ = 0x1183, CL_DEVICE_NAME_ = 0x102B, CL_DEVICE_VENDOR_ = 0x102C,
       CL_DRIVER_VERSION_ = 0x102D };
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

typedef void *(*create_t)(void *, uint32_t, const char **, const size_t *, int32_t *);
typedef int32_t (*build_t)(void *, uint32_t, void *const *, const char *, void *, void *);
typedef int32_t (*release_t)(void *);

/* The private copy built and its log (malloc'd; "" where the driver gave
 * none: cached too, a build that tells no counts; NULL: not built) */
static char *build_copy(void *ctx, void *dev, const char *src, const char *opts)
{
    create_t create = (create_t)REAL(clCreateProgramWithSource);
    build_t build = (build_t)REAL(clBuildProgram);
    release_t release = (release_t)REAL(clReleaseProgram);
    int32_t err = -1;
    const char *srcs[1] = { src };
    void *copy = create && build && release ? create(ctx, 1, srcs, NULL, &err) : NULL;
    char *log = NULL;
    if (copy && err == CL_SUCCESS_ && build(copy, 1, &dev, opts, NULL, NULL) == CL_SUCCESS_ &&
        !(log = program_text(copy, dev, CL_PROGRAM_BUILD_LOG_)))
        log = calloc(1, 1);
    if (copy)
        release(copy);
    return log;
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001B3ull;
    return (h ^ 0xFF) * 0x100000001B3ull;       /* a separator: "ab"+"c" is not "a"+"bc" */
}

/* The cache file of this source, options, device and driver; 0: no cache
 * (no home, no room, a name too long) */
static int cache_path(const char *src, const char *opts, void *dev, char *path, size_t cap)
{
    get_info_t f = (get_info_t)REAL(clGetDeviceInfo);
    char name[256] = "", driver[256] = "";
    if (!f || f(dev, CL_DEVICE_NAME_, sizeof name, name, NULL) != CL_SUCCESS_ ||
        f(dev, CL_DRIVER_VERSION_, sizeof driver, driver, NULL) != CL_SUCCESS_)
        return 0;
    name[sizeof name - 1] = driver[sizeof driver - 1] = 0;
    char dir[PATH_MAX];
    if (clt_cache_dir("nvregs", dir, sizeof dir) != 0)
        return 0;
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    const char *parts[] = { src, opts, name, driver };
    for (unsigned i = 0; i < 4; i++)
        a = fnv(a, parts[i]), b = fnv(b ^ a, parts[i]);
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;             /* each folder on the way, as mkdir -p (a fresh home has no .cache) */
        mkdir(dir, 0700);
        *slash = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return 0;
    int n = snprintf(path, cap, "%s/%016llx%016llx.log", dir, (unsigned long long)a, (unsigned long long)b);
    return n > 0 && (size_t)n < cap;
}

static char *read_cached(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *s = fd >= 0 && fstat(fd, &st) == 0 && st.st_size < (1 << 24) ? malloc((size_t)st.st_size + 1) : NULL;
    ssize_t got = s ? read(fd, s, (size_t)st.st_size) : -1;
    if (fd >= 0)
        close(fd);
    if (s && got == st.st_size) {
        s[got] = 0;
        return s;
    }
    free(s);
    return NULL;
}

/* Written whole or not at all: a temporary file renamed over the name */
static void write_cached(const char *path, const char *log)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    size_t n = strlen(log);
    int ok = write(fd, log, n) == (ssize_t)n;
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
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
    char *src = program_text(program, NULL, CL_PROGRAM_SOURCE_), *opts = malloc(strlen(opt) + sizeof VERBOSE);
    void *ctx = NULL;
    if (src && opts && pi(program, CL_PROGRAM_CONTEXT_, sizeof ctx, &ctx, NULL) == CL_SUCCESS_ && ctx) {
        strcpy(opts, opt);
        strcat(opts, any_device() ? "" : VERBOSE);
        char path[PATH_MAX];
        int cache = cache_path(src, opts, dev, path, sizeof path);
        char *log = cache ? read_cached(path) : NULL;
        if (log && getenv("CLTRACE_DEBUG_NV"))
            clt_msg("nv: register counts from %s", path);
        /* kept only where it told the counts (or in the tests): NVIDIA's
         * compute cache answers a build it holds with an empty log */
        if (!log && (log = build_copy(ctx, dev, src, opts)) != NULL && cache &&
            (strstr(log, "registers") || any_device()))
            write_cached(path, log);
        if (log)
            parse_log(h->th, program, log);
        free(log);
    }
    free(src);
    free(opts);
    errno = saved;
}
