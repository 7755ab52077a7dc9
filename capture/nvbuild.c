/* NVIDIA register counts. After the app's program builds for an NVIDIA
 * device, cltrace compiles a private copy of its source with the app's
 * options plus -cl-nv-verbose (through the real entry points, unrecorded),
 * reads "ptxas info : Used N registers" per kernel from that copy's log and
 * releases it. The app's program, its build log and options are untouched:
 * the copy is invisible to the app, at the cost of one extra compile per
 * build. Programs made from binaries (no source) and asynchronous builds
 * (pfn_notify) get no counts. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/generated/clt_hooks.h"
#include "shim.h"
#include "replay/take/take.h"

enum { CL_SUCCESS_ = 0, CL_PROGRAM_CONTEXT_ = 0x1161, CL_PROGRAM_DEVICES_ = 0x1163, CL_PROGRAM_SOURCE_ = 0x1164,
       CL_PROGRAM_BUILD_LOG_ = 0x1183, CL_DEVICE_VENDOR_ = 0x102C };
#define VERBOSE " -cl-nv-verbose"
typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*get_info2_t)(void *, void *, uint32_t, size_t, void *, size_t *);

static int nvidia_device(void *dev)
{
    get_info_t f = (get_info_t)REAL(clGetDeviceInfo);
    char vendor[128] = "";
    int32_t rc = f ? f(dev, CL_DEVICE_VENDOR_, sizeof vendor, vendor, NULL) : -1;
    vendor[sizeof vendor - 1] = 0;
    if (getenv("CLTRACE_DEBUG_NV"))
        clt_msg("nv: device %p vendor '%s' rc %d", dev, vendor, (int)rc);
    return rc == CL_SUCCESS_ && strstr(vendor, "NVIDIA") != NULL;
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
            struct clt_rec *rec = clt_rec_begin(th, sizeof(struct clt_rec) + 8 * KR_N + CLT_MAX_STR);
            if (rec) {
                struct clt_extra x = clt_extra_init(rec, KR_N);
                rec->arg[KR_PROGRAM] = (uint64_t)(uintptr_t)program;
                rec->arg[KR_REGS] = regs;
                rec->arg[KR_NAME] = clt_put_str(&x, KR_NAME, 1, name);
                uint64_t now = clt_now();
                clt_rec_commit(th, rec, &x, CLT_REC_KREGS, now, now, 0);
            }
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
    typedef void *(*create_t)(void *, uint32_t, const char **, const size_t *, int32_t *);
    typedef int32_t (*build_t)(void *, uint32_t, void *const *, const char *, void *, void *);
    typedef int32_t (*release_t)(void *);
    create_t create = (create_t)REAL(clCreateProgramWithSource);
    build_t build = (build_t)REAL(clBuildProgram);
    release_t release = (release_t)REAL(clReleaseProgram);
    void *ctx = NULL;
    char *src = program_text(program, NULL, CL_PROGRAM_SOURCE_);
    const char *opt = options ? options : "";
    char *opts = malloc(strlen(opt) + sizeof VERBOSE);
    int32_t err = -1;
    if (src && opts && create && build && release && pi &&
        pi(program, CL_PROGRAM_CONTEXT_, sizeof ctx, &ctx, NULL) == CL_SUCCESS_) {
        strcpy(opts, opt);
        strcat(opts, VERBOSE);
        const char *srcs[1] = { src };
        void *copy = create(ctx, 1, srcs, NULL, &err);
        if (copy && err == CL_SUCCESS_ && build(copy, 1, &dev, opts, NULL, NULL) == CL_SUCCESS_) {
            char *log = program_text(copy, dev, CL_PROGRAM_BUILD_LOG_);
            if (log)
                parse_log(h->th, program, log);
            free(log);
        }
        if (copy)
            release(copy);
    }
    free(src);
    free(opts);
    errno = saved;
}
