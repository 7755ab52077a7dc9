/* A fake ICD whose device timestamps cannot be true: it is PoCL with its
 * profiling answers replaced. The ICD loader finds it (OCL_ICD_FILENAMES=
 * this library), it loads PoCL and hands PoCL's platform on, with one slot
 * of PoCL's dispatch table changed: clGetEventProfilingInfo answers QUEUED
 * 0, SUBMIT 1, START 2, END 3 (ns) for every command, as one open-source
 * implementation does; FAKE_TIMING=backwards answers END before START
 * (START 3, END 2). Every other call is PoCL's, so programs still compute
 * their results. Test-only: the report must call such timing unusable.
 * FAKE_TIMING=late-end:NS: PoCL's own answers, END and COMPLETE NS later,
 * as NVIDIA's events of a short kernel end ~1.7 us after its last group
 * and start ~4.4 us before its first (an H200): events longer than the
 * launches' period, which the timeline cannot draw end to end.
 * FAKE_DEVICE=gpu: PoCL's device says it is a GPU (CL_DEVICE_TYPE), so that
 * cltrace treats it as it treats NVIDIA's: profiling queues, a queue of its
 * own for clock markers, the calibration beside the app. FAKE_LOG=FILE:
 * each thread that enqueued a fill (cltrace's calibration fills 4 bytes),
 * by name, and how many, written there at exit. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static cl_api_clGetEventProfilingInfo real_prof;

static cl_int CL_API_CALL fake_prof(cl_event e, cl_profiling_info what, size_t size, void *value, size_t *size_ret)
{
    const char *mode = getenv("FAKE_TIMING");
    int backwards = mode && !strcmp(mode, "backwards");
    if (mode && !strncmp(mode, "late-end:", 9)) {
        cl_int rc = real_prof(e, what, size, value, size_ret);
        cl_ulong late;
        if (rc == CL_SUCCESS && value && size >= sizeof late &&
            (what == CL_PROFILING_COMMAND_END || what == CL_PROFILING_COMMAND_COMPLETE)) {
            memcpy(&late, value, sizeof late);
            late += strtoull(mode + 9, NULL, 10);
            memcpy(value, &late, sizeof late);
        }
        return rc;
    }
    cl_ulong t;
    switch (what) {
    case CL_PROFILING_COMMAND_QUEUED: t = 0; break;
    case CL_PROFILING_COMMAND_SUBMIT: t = 1; break;
    case CL_PROFILING_COMMAND_START: t = backwards ? 3 : 2; break;
    case CL_PROFILING_COMMAND_END: t = backwards ? 2 : 3; break;
    case CL_PROFILING_COMMAND_COMPLETE: t = backwards ? 2 : 3; break;
    default: return real_prof(e, what, size, value, size_ret);
    }
    cl_ulong ignored;      /* the real answer's error (not ready, no profiling) is kept */
    cl_int rc = real_prof(e, what, sizeof ignored, &ignored, NULL);
    if (rc != CL_SUCCESS)
        return rc;
    if (value && size < sizeof t)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, &t, sizeof t);
    if (size_ret)
        *size_ret = sizeof t;
    return CL_SUCCESS;
}

static cl_api_clGetDeviceInfo real_dev_info;

static cl_int CL_API_CALL fake_dev_info(cl_device_id dev, cl_device_info what, size_t size, void *value,
                                        size_t *size_ret)
{
    const char *kind = getenv("FAKE_DEVICE");
    cl_device_type gpu = CL_DEVICE_TYPE_GPU;
    if (what != CL_DEVICE_TYPE || !kind || strcmp(kind, "gpu"))
        return real_dev_info(dev, what, size, value, size_ret);
    if (value && size < sizeof gpu)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, &gpu, sizeof gpu);
    if (size_ret)
        *size_ret = sizeof gpu;
    return CL_SUCCESS;
}

static cl_api_clEnqueueFillBuffer real_fill;
static struct { char name[16]; unsigned n; } fillers[8];
static pthread_mutex_t fillers_lock = PTHREAD_MUTEX_INITIALIZER;

static cl_int CL_API_CALL fake_fill(cl_command_queue q, cl_mem b, const void *pat, size_t pat_size, size_t off,
                                   size_t size, cl_uint n, const cl_event *list, cl_event *ev)
{
    char name[16] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    pthread_mutex_lock(&fillers_lock);
    for (unsigned i = 0; i < 8; i++)
        if (!fillers[i].n || !strcmp(fillers[i].name, name)) {
            memcpy(fillers[i].name, name, sizeof name);
            fillers[i].n++;
            break;
        }
    pthread_mutex_unlock(&fillers_lock);
    return real_fill(q, b, pat, pat_size, off, size, n, list, ev);
}

__attribute__((destructor)) static void fillers_write(void)
{
    const char *path = getenv("FAKE_LOG");
    FILE *f = path && fillers[0].n ? fopen(path, "w") : NULL;
    for (unsigned i = 0; f && i < 8 && fillers[i].n; i++)
        fprintf(f, "%s %u\n", fillers[i].name, fillers[i].n);
    if (f)
        fclose(f);
}

/* One slot of the dispatch table every PoCL object shares, changed once. */
static int swap_slot(void **slot, void *fake, void **real)
{
    if (*slot == fake)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t at = (uintptr_t)slot & ~(uintptr_t)(page - 1);
    if (mprotect((void *)at, (size_t)page * 2, PROT_READ | PROT_WRITE) != 0)
        return -1;
    *real = *slot;
    *slot = fake;
    return 0;
}

typedef cl_int (*icd_get_t)(cl_uint, cl_platform_id *, cl_uint *);
typedef void *(*ext_t)(const char *);

static void *pocl_sym(const char *name)
{
    static void *pocl;
    if (!pocl)
        pocl = dlopen("libpocl.so.2", RTLD_NOW | RTLD_LOCAL);
    return pocl ? dlsym(pocl, name) : NULL;
}

EXPORT cl_int clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *platforms, cl_uint *n_ret)
{
    ext_t ext = (ext_t)pocl_sym("clGetExtensionFunctionAddress");   /* as a loader asks PoCL */
    icd_get_t get = ext ? (icd_get_t)ext("clIcdGetPlatformIDsKHR") : NULL;
    if (!get)
        return -1001;      /* CL_PLATFORM_NOT_FOUND_KHR */
    cl_platform_id p;
    cl_uint have = 0;
    cl_int rc = get(1, &p, &have);
    if (rc != CL_SUCCESS || !have)
        return rc != CL_SUCCESS ? rc : -1001;
    /* the platform's first field is its dispatch table, shared by every
     * object PoCL makes */
    struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)p;
    if (swap_slot((void **)&d->clGetEventProfilingInfo, (void *)fake_prof, (void **)&real_prof) != 0 ||
        swap_slot((void **)&d->clGetDeviceInfo, (void *)fake_dev_info, (void **)&real_dev_info) != 0 ||
        swap_slot((void **)&d->clEnqueueFillBuffer, (void *)fake_fill, (void **)&real_fill) != 0)
        return -1001;
    if (platforms && n)
        platforms[0] = p;
    if (n_ret)
        *n_ret = 1;
    return CL_SUCCESS;
}

/* How an ICD loader finds clIcdGetPlatformIDsKHR; the rest are PoCL's. */
EXPORT void *clGetExtensionFunctionAddress(const char *name)
{
    if (!strcmp(name, "clIcdGetPlatformIDsKHR"))
        return (void *)clIcdGetPlatformIDsKHR;
    ext_t real = (ext_t)pocl_sym("clGetExtensionFunctionAddress");
    if (strcmp(name, "clGetPlatformInfo"))
        return real ? real(name) : NULL;
    /* ocl-icd asks for this one too; PoCL exports it under another name,
     * so it is taken from the dispatch table */
    cl_platform_id p;
    if (clIcdGetPlatformIDsKHR(1, &p, NULL) != CL_SUCCESS)
        return NULL;
    return (void *)(*(struct _cl_icd_dispatch **)p)->clGetPlatformInfo;
}
