/* NVIDIA register counts: builds for an NVIDIA device get -cl-nv-verbose, so
 * the build log holds "ptxas info : Used N registers" per kernel. The app
 * never sees it: clGetProgramBuildInfo returns the log without the ptxas
 * lines and the build options it passed. Only synchronous builds (no
 * pfn_notify) are parsed: an asynchronous one may not be finished on return. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "generated/clt_hooks.h"
#include "shim.h"

enum { CL_SUCCESS_ = 0, CL_INVALID_VALUE_ = -30, CL_PROGRAM_DEVICES_ = 0x1163,
       CL_PROGRAM_BUILD_OPTIONS_ = 0x1182, CL_PROGRAM_BUILD_LOG_ = 0x1183, CL_DEVICE_VENDOR_ = 0x102C };
#define VERBOSE " -cl-nv-verbose"
typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*get_info2_t)(void *, void *, uint32_t, size_t, void *, size_t *);

/* Programs built with our flag, and the options the app gave. */
struct verbose_prog { void *program; char *options; };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct verbose_prog progs[256];
static unsigned n_progs;

static int nvidia_device(void *dev)
{
    get_info_t f = (get_info_t)clt_real(CLT_FN_clGetDeviceInfo);
    char vendor[128] = "";
    return f && f(dev, CL_DEVICE_VENDOR_, sizeof vendor, vendor, NULL) == CL_SUCCESS_ &&
           strstr(vendor, "NVIDIA") != NULL;
}

static void *first_device(void *program, uint32_t num_devices, void *device_list)
{
    if (num_devices && device_list)
        return ((void **)device_list)[0];
    get_info_t f = (get_info_t)clt_real(CLT_FN_clGetProgramInfo);
    void *devs[16] = { 0 };
    return f && f(program, CL_PROGRAM_DEVICES_, sizeof devs, devs, NULL) == CL_SUCCESS_ ? devs[0] : NULL;
}

static const char *app_options(void *program, int *found)
{
    const char *o = NULL;
    *found = 0;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < n_progs; i++)
        if (progs[i].program == program) {
            o = progs[i].options;
            *found = 1;
        }
    pthread_mutex_unlock(&lock);
    return o;
}

void clt_pre_clBuildProgram(struct clt_hook *h, void **program, uint32_t *num_devices, void **device_list,
                            void **options, void **pfn_notify, void **user_data)
{
    const char *opt = *options ? *options : "";
    size_t n = strlen(opt);
    if (!h->th || *pfn_notify || strstr(opt, "-cl-nv-verbose") || n + sizeof VERBOSE > sizeof h->scratch)
        return;
    void *dev = first_device(*program, *num_devices, *device_list);
    if (!dev || !nvidia_device(dev))
        return;
    char *buf = (char *)h->scratch;
    memcpy(buf, opt, n);
    memcpy(buf + n, VERBOSE, sizeof VERBOSE);
    *options = buf;
    h->changed = 1;
}

/* "ptxas info    : Compiling entry function 'vadd' for 'sm_90'" ...
 * "ptxas info    : Used 8 registers, ..." -> one record per kernel. */
static void parse_log(struct clt_thread *th, void *program, const char *log)
{
    char name[CLT_MAX_STR] = "";
    for (const char *line = log; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *f = strstr(line, "Compiling entry function '");
        const char *nl = strchr(line, '\n');
        if (f && (!nl || f < nl)) {
            f += strlen("Compiling entry function '");
            size_t k = 0;
            while (f[k] && f[k] != '\'' && k + 1 < sizeof name)
                k++;
            memcpy(name, f, k);
            name[k] = 0;
            continue;
        }
        const char *u = strstr(line, "Used ");
        unsigned regs;
        if (u && (!nl || u < nl) && name[0] && sscanf(u, "Used %u registers", &regs) == 1) {
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
    }
}

static char *full_log(void *program, void *dev)
{
    get_info2_t f = (get_info2_t)clt_real(CLT_FN_clGetProgramBuildInfo);
    size_t n = 0;
    if (!f || f(program, dev, CL_PROGRAM_BUILD_LOG_, 0, NULL, &n) != CL_SUCCESS_ || !n)
        return NULL;
    char *log = malloc(n + 1);
    if (log && f(program, dev, CL_PROGRAM_BUILD_LOG_, n, log, NULL) != CL_SUCCESS_) {
        free(log);
        return NULL;
    }
    if (log)
        log[n] = 0;
    return log;
}

void clt_post_clBuildProgram(struct clt_hook *h, int32_t *ret, void *program, uint32_t num_devices,
                             void *device_list, void *options, void *pfn_notify, void *user_data)
{
    if (!h->changed)
        return;
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < n_progs && progs[i].program != program)
        i++;
    if (i == n_progs && n_progs < 256)
        n_progs++;
    if (i < n_progs) {
        free(progs[i].options);
        progs[i].program = program;
        progs[i].options = options ? strdup(options) : NULL;
    }
    pthread_mutex_unlock(&lock);
    void *dev = first_device(program, num_devices, device_list);
    char *log = dev ? full_log(program, dev) : NULL;
    if (log && h->th)
        parse_log(h->th, program, log);
    free(log);
}

void clt_pre_clGetProgramBuildInfo(struct clt_hook *h, void **program, void **device, uint32_t *param_name,
                                   size_t *param_value_size, void **param_value, void **param_value_size_ret)
{
}

/* What the app gets back: the options it passed, the log without ptxas lines. */
void clt_post_clGetProgramBuildInfo(struct clt_hook *h, int32_t *ret, void *program, void *device,
                                    uint32_t param_name, size_t param_value_size, void *param_value,
                                    void *param_value_size_ret)
{
    int ours;
    const char *opt = app_options(program, &ours);
    if (*ret != CL_SUCCESS_ || !ours || (param_name != CL_PROGRAM_BUILD_OPTIONS_ && param_name != CL_PROGRAM_BUILD_LOG_))
        return;
    char *text = NULL;
    if (param_name == CL_PROGRAM_BUILD_OPTIONS_) {
        text = strdup(opt ? opt : "");
    } else if ((text = full_log(program, device)) != NULL) {
        char *w = text;
        for (char *line = text; *line;) {
            char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
            if (strncmp(line, "ptxas", 5) != 0) {
                memmove(w, line, len);
                w += len;
            }
            line += len;
        }
        *w = 0;
    }
    if (!text)
        return;
    size_t n = strlen(text) + 1;
    if (param_value && param_value_size < n)
        *ret = CL_INVALID_VALUE_;
    else if (param_value)
        memcpy(param_value, text, n);
    if (*ret == CL_SUCCESS_ && param_value_size_ret)
        *(size_t *)param_value_size_ret = n;
    free(text);
}
