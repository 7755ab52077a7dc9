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
 * launches' period, which the timeline cannot draw end to end. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>
#include <dlfcn.h>
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
     * object PoCL makes: change its one slot, once */
    struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)p;
    if (d->clGetEventProfilingInfo != fake_prof) {
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t at = (uintptr_t)&d->clGetEventProfilingInfo & ~(uintptr_t)(page - 1);
        if (mprotect((void *)at, (size_t)page * 2, PROT_READ | PROT_WRITE) != 0)
            return -1001;
        real_prof = d->clGetEventProfilingInfo;
        d->clGetEventProfilingInfo = fake_prof;
    }
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
