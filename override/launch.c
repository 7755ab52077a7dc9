/* CLTRACE_OVERRIDE_LOCAL: "KERNEL=X[,Y[,Z]]" items, ';'-separated (the
 * launcher joins its --local flags so): every launch of a kernel whose name
 * matches (fnmatch) gets that local size, the app's NULL included. Missing
 * dimensions are 1.
 *
 * A size the launch cannot take is not passed to the driver: the app's own
 * launch runs, and the trace and stderr say why, once per kernel and
 * reason. Refused here: more dimensions than the launch has, more
 * work-items than the kernel's maximum on the queue's device, a dimension
 * over the device's maximum, and, on OpenCL 1.x devices (and 3.0 without
 * non-uniform work-groups), a size that does not divide the global size.
 * Where the driver refuses the size itself, the app's launch runs too. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "ov.h"

#define MAX_LOCAL 16
#define MAX_SAID 64
struct local { char glob[128]; size_t l[3]; unsigned dims; uint64_t applied, refused; };
static struct local locals[MAX_LOCAL];
static unsigned n_locals;
static char said[MAX_SAID][160];          /* notes made once */
static unsigned n_said;
static void *_Atomic next_ndrange;
static int fn_ndrange;

int ov_local_load(const char *spec, char *err, size_t cap)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", spec);
    for (char *save = NULL, *it = strtok_r(copy, ";", &save); it; it = strtok_r(NULL, ";", &save)) {
        char *eq = strrchr(it, '=');
        struct local *l = &locals[n_locals];
        if (!eq || eq == it || n_locals == MAX_LOCAL) {
            snprintf(err, cap, "--local %s: KERNEL=X[,Y[,Z]] (at most %d)", it, MAX_LOCAL);
            n_locals = 0;
            return -1;
        }
        memset(l, 0, sizeof *l);
        snprintf(l->glob, sizeof l->glob, "%.*s", (int)(eq - it), it);
        char *s = eq + 1, *end;
        for (; l->dims < 3; l->dims++) {
            unsigned long long v = strtoull(s, &end, 10);
            if (end == s || !v) {
                snprintf(err, cap, "--local %s: sizes are whole numbers from 1, up to 3, comma-separated", it);
                n_locals = 0;
                return -1;
            }
            l->l[l->dims] = (size_t)v;
            if (*end != ',')
                break;
            s = end + 1;
        }
        if (*end) {
            snprintf(err, cap, "--local %s: sizes are whole numbers from 1, up to 3, comma-separated", it);
            n_locals = 0;
            return -1;
        }
        l->dims++;
        n_locals++;
    }
    fn_ndrange = ov_host.fn_id("clEnqueueNDRangeKernel");
    return 0;
}

/* The kernel's name, asked of the driver at each launch a rule may change:
 * not cached by handle, which a driver reuses once the app released the
 * kernel (a cached name gave another kernel's --local). */
static const char *kernel_name(cl_kernel k, char *buf, size_t cap)
{
    buf[0] = 0;
    if (OV_CL(clGetKernelInfo)(k, CL_KERNEL_FUNCTION_NAME, cap, buf, NULL) != CL_SUCCESS)
        return NULL;
    buf[cap - 1] = 0;
    return buf;
}

/* Once per text: the trace's note and a line on stderr. */
static void say_once(enum ov_what what, const char *name, const char *text)
{
    pthread_mutex_lock(&ov_lock);
    int seen = 0;
    for (unsigned i = 0; i < n_said && !seen; i++)
        seen = !strncmp(said[i], text, sizeof said[i] - 1);
    if (!seen && n_said < MAX_SAID)
        snprintf(said[n_said++], sizeof said[0], "%s", text);
    pthread_mutex_unlock(&ov_lock);
    if (seen)
        return;
    ov_host.note(NULL, 0, what, name, text);
    if (what == OV_FAILED)
        ov_host.say("%s", text);
}

static int version_1x(cl_device_id dev, int *non_uniform)
{
    char v[64] = "";
    OV_CL(clGetDeviceInfo)(dev, CL_DEVICE_VERSION, sizeof v, v, NULL);   /* "OpenCL 3.0 ..." */
    *non_uniform = 0;
    if (!strncmp(v, "OpenCL 2.", 9))
        *non_uniform = 1;
    else if (strncmp(v, "OpenCL 1.", 9) != 0) {
        cl_bool nu = CL_FALSE;
        if (OV_CL(clGetDeviceInfo)(dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof nu, &nu, NULL) == CL_SUCCESS)
            *non_uniform = nu == CL_TRUE;
    }
    return !strncmp(v, "OpenCL 1.", 9);
}

static void fmt_size(char *out, size_t cap, const size_t *l, unsigned d)
{
    if (!l) {
        snprintf(out, cap, "NULL");
        return;
    }
    size_t k = 0;
    for (unsigned i = 0; i < d && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%zu", i ? "," : "", l[i]);
}

/* Why the size cannot be used for this launch ("" it can). */
static void check(const struct local *l, cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *g,
                  const size_t *use, char *why, size_t cap)
{
    cl_device_id dev = NULL;
    size_t kmax = 0, dmax[3] = { 0 };
    why[0] = 0;
    if (l->dims > dim) {
        snprintf(why, cap, "%u dimensions given, the launch has %u", l->dims, dim);
        return;
    }
    OV_CL(clGetCommandQueueInfo)(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    size_t items = 1;
    for (cl_uint i = 0; i < dim; i++)
        items *= use[i];
    if (OV_CL(clGetKernelWorkGroupInfo)(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) == CL_SUCCESS &&
        kmax && items > kmax) {
        snprintf(why, cap, "%zu work-items in a group, over the kernel's maximum on this device (%zu)", items, kmax);
        return;
    }
    if (OV_CL(clGetDeviceInfo)(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof dmax, dmax, NULL) == CL_SUCCESS)
        for (cl_uint i = 0; i < dim && i < 3; i++)
            if (dmax[i] && use[i] > dmax[i]) {
                snprintf(why, cap, "%zu in dimension %u, over the device's maximum (%zu)", use[i], i, dmax[i]);
                return;
            }
    int nu;
    int old = version_1x(dev, &nu);
    for (cl_uint i = 0; i < dim && g; i++)
        if (g[i] % use[i] && !nu) {
            snprintf(why, cap, "%zu does not divide the global size %zu (dimension %u), as %s requires", use[i], g[i],
                     i, old ? "OpenCL 1.x" : "a device without non-uniform work-groups");
            return;
        }
}

static cl_int ov_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *g,
                         const size_t *l, cl_uint n, const cl_event *w, cl_event *ev)
{
    typedef __typeof__(&clEnqueueNDRangeKernel) ndrange_t;
    ndrange_t real = (ndrange_t)__atomic_load_n(&next_ndrange, __ATOMIC_ACQUIRE);
    char kname[256];
    const char *name = n_locals && dim >= 1 && dim <= 3 && ov_host.apps_call(fn_ndrange)
                       ? kernel_name(k, kname, sizeof kname) : NULL;
    struct local *rule = NULL;
    for (unsigned i = 0; name && i < n_locals && !rule; i++)
        if (!fnmatch(locals[i].glob, name, 0))
            rule = &locals[i];
    if (!rule)
        return real(q, k, dim, off, g, l, n, w, ev);
    size_t use[3] = { 1, 1, 1 };
    memcpy(use, rule->l, rule->dims * sizeof use[0]);
    char why[200], text[720], was[64], now[64], glob_size[64];
    check(rule, q, k, dim, g, use, why, sizeof why);
    fmt_size(was, sizeof was, l, dim);
    fmt_size(now, sizeof now, use, dim);
    if (!why[0]) {
        cl_int r = real(q, k, dim, off, g, use, n, w, ev);
        if (r == CL_SUCCESS) {
            __atomic_add_fetch(&rule->applied, 1, __ATOMIC_RELAXED);
            snprintf(text, sizeof text, "%.100s launched with local size %s instead of %s (--local %.100s)", name,
                     now, was, rule->glob);
            say_once(OV_LOCAL, name, text);
            return r;
        }
        snprintf(why, sizeof why, "the driver refused it (error %d)", r);
    }
    __atomic_add_fetch(&rule->refused, 1, __ATOMIC_RELAXED);
    fmt_size(glob_size, sizeof glob_size, g, dim);
    snprintf(text, sizeof text, "--local %.60s=%s not used for %.60s (global %s, the app's local %s): %.150s; "
             "the app's own launch ran", rule->glob, now, name, glob_size, was, why);
    say_once(OV_FAILED, name, text);
    return real(q, k, dim, off, g, l, n, w, ev);
}

void *ov_local_interpose(const char *fn, void *real)
{
    if (!n_locals || strcmp(fn, "clEnqueueNDRangeKernel") != 0 || real == (void *)ov_ndrange)
        return real;
    __atomic_store_n(&next_ndrange, real, __ATOMIC_RELEASE);
    return (void *)ov_ndrange;
}

void ov_local_exit(void)
{
    for (unsigned i = 0; i < n_locals; i++)
        if (!locals[i].applied && !locals[i].refused) {
            char text[256];
            snprintf(text, sizeof text, "--local %.120s: no kernel of that name was launched", locals[i].glob);
            say_once(OV_FAILED, locals[i].glob, text);
        }
}
