/* The real library: where every wrapper forwards, found lazily on the
 * first call (the libOpenCL.so.1 the app has loaded, even privately, or
 * CLTRACE_LIBRARY; never the shim itself), and the facts about the process
 * and platform that every other part asks for (its pid, a device's OpenCL
 * version). The bottom of capture/: it uses nothing of capture/'s. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "trace/tables.h"

int clt_pid;

static void *real_lib;
void *clt_real_tab[CLT_FN_COUNT];
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static Dl_info self_info;

int clt_is_self(const void *p)
{
    Dl_info di;
    return p && dladdr(p, &di) && di.dli_fbase == self_info.dli_fbase;
}
#define is_self clt_is_self

/* The OpenCL library the app loaded at run time (dlsym.c): also where
 * cltrace's own calls go, even in a dlmopen namespace or under a full path. */
static void *app_lib;
void clt_app_library(void *handle)
{
    void *none = NULL;
    __atomic_compare_exchange_n(&app_lib, &none, handle, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void real_open(void)
{
    if (clt_cfg.LIBRARY[0]) {
        real_lib = dlopen(clt_cfg.LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!real_lib)
            clt_msg("cannot load CLTRACE_LIBRARY=%s: %s", clt_cfg.LIBRARY, dlerror());
        return;
    }
    /* The loader the app already has, even if it dlopen'ed it privately
     * (pyopencl, plugin hosts: RTLD_NEXT finds nothing there); else load it. */
    real_lib = __atomic_load_n(&app_lib, __ATOMIC_ACQUIRE);
    static const char *const names[] = { "libOpenCL.so.1", "libOpenCL.so" };
    for (unsigned i = 0; i < 2 && !real_lib; i++)
        real_lib = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!real_lib)
        real_lib = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!real_lib)
        clt_msg("no OpenCL library found (set CLTRACE_LIBRARY)");
}

/* Every place that sets a real entry point passes it through here: with
 * fingerprints or captures on, theirs stand in front of the driver's
 * (fingerprints outermost; life.c sets the function at load); off, real
 * itself. */
static void *(*interposer)(unsigned fn, void *real);
int clt_interposer_waits;

void clt_real_set_interposer(void *(*fn)(unsigned fn, void *real))
{
    interposer = fn;
}

void *clt_interpose(unsigned fn, void *real)
{
    if (!real || real == CLT_REAL_ABSENT || !interposer)
        return real;
    return interposer(fn, real);
}

void clt_real_self(void *addr)
{
    dladdr(addr, &self_info);
}

const char *clt_real_self_name(void)
{
    return self_info.dli_fname;
}

void *clt_real_slow(unsigned fn)
{
    void *p = __atomic_load_n(&clt_real_tab[fn], __ATOMIC_ACQUIRE);
    if (p == CLT_REAL_ABSENT)
        return NULL;
    int saved = errno;
    pthread_once(&real_once, real_open);
    p = real_lib ? dlsym(real_lib, clt_fns[fn].name) : NULL;
    if (!p)
        p = dlsym(RTLD_NEXT, clt_fns[fn].name);
    if (is_self(p))          /* never forward to ourselves */
        p = NULL;
    p = clt_interpose(fn, p);
    void *expected = NULL;   /* an extension lookup may have set it meanwhile */
    __atomic_compare_exchange_n(&clt_real_tab[fn], &expected, p ? p : CLT_REAL_ABSENT, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    errno = saved;
    p = __atomic_load_n(&clt_real_tab[fn], __ATOMIC_ACQUIRE);
    return p == CLT_REAL_ABSENT ? NULL : p;
}

/* A wrapper found its real function calling straight back into it: the
 * library has no implementation of its own and routes the command by name
 * (ocl-icd does so for a 2.x command a 1.2 vendor lacks). The command fails
 * with CL_INVALID_OPERATION instead of spinning forever; said once each. */
void clt_loop_detected(unsigned fn)
{
    static _Atomic uint8_t said[CLT_FN_COUNT];
    int saved = errno;
    if (!__atomic_exchange_n(&said[fn], 1, __ATOMIC_RELAXED))
        clt_msg("%s: the OpenCL library calls it back into cltrace (the platform lacks it); "
                "it fails with CL_INVALID_OPERATION instead of looping", clt_fns[fn].name);
    errno = saved;
}

/* "OpenCL <major>.<minor> <vendor info>" (CL_DEVICE_VERSION) as 100 * major
 * + minor; 0 when it does not parse, so nothing newer than 1.x is called. */
int clt_cl_version(const char *s)
{
    unsigned major = 0, minor = 0;
    if (strncmp(s, "OpenCL ", 7) != 0 || sscanf(s + 7, "%u.%u", &major, &minor) != 2 || minor > 99)
        return 0;
    return (int)(major * 100 + minor);
}
