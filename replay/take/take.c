/* Capturing a kernel launch, in the app's process (take.h).
 *
 * Off, nothing of this runs: rt_take_interpose hands back the driver's
 * entry points. On, clSetKernelArg keeps a copy of each argument's bytes
 * (the launch needs every argument as last set), and a chosen launch, on
 * the app's thread:
 *   1. waits for what it waits on and for its queue (clFinish), so what is
 *      read is what the kernel will read (a launch behind a user event the
 *      program has not set yet is not captured: that wait would not end);
 *   2. reads every buffer and image argument (a buffer the host may not
 *      read through a staging copy of cltrace's);
 *   3. enqueues the app's launch, unchanged, and waits for it;
 *   4. reads back every buffer and image the kernel may write;
 *   5. writes the program (source, IL or binary, as the app gave it), its
 *      build options and the manifest, last: a folder without a manifest
 *      is a capture cut short.
 * Only the chosen launches pay (two copies of their buffers and a wait);
 * the app's results are unchanged. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS   /* clEnqueueTask: apps still call it */
#include <CL/cl.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/map.h"
#include "common/select.h"
#include "replay/folder/manifest.h"
#include "take.h"

int rt_take_on;
static struct rt_host host;
enum { F_SETARG, F_SETARG_SVM, F_NDRANGE, F_TASK, F_N };
static const char *const fn_names[F_N] = { "clSetKernelArg", "clSetKernelArgSVMPointer", "clEnqueueNDRangeKernel",
                                           "clEnqueueTask" };
static int fn_id[F_N];
static struct clt_select sel;
static char out_dir[1024];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t n_launches;

#define MAX_SCALAR 4096
struct saved_arg { int set, svm; size_t size; void *bytes; };   /* bytes NULL with size: __local */
struct kernel_args { struct saved_arg a[RF_MAX_ARGS]; };
static struct clt_map args_of;                                   /* kernel -> kernel_args */
static struct clt_name_counts launches_of;                      /* by kernel name */

#define CL(fn) ((__typeof__(&fn))host.real(#fn))

void rt_take_load(const char *spec, const char *dir, const struct rt_host *h)
{
    if (!spec || !spec[0] || !strcmp(spec, "0"))
        return;
    host = *h;
    for (unsigned i = 0; i < F_N; i++)
        fn_id[i] = host.fn_id(fn_names[i]);
    char err[160];
    if (clt_select_parse(spec, &sel, err, sizeof err) != 0) {
        host.say("CLTRACE_CAPTURE=%s: %s; nothing captured", spec, err);
        return;
    }
    snprintf(out_dir, sizeof out_dir, "%s", dir && dir[0] ? dir : "cltrace-capture");
    rt_take_on = 1;
}

/* ---- arguments as last set -------------------------------------------- */

static void keep_arg(cl_kernel k, cl_uint i, size_t size, const void *value, int svm)
{
    if (i >= RF_MAX_ARGS)
        return;
    void *copy = NULL;
    if (value && !svm && size <= MAX_SCALAR && (copy = malloc(size ? size : 1)))
        memcpy(copy, value, size);
    pthread_mutex_lock(&lock);
    struct kernel_args *ka = clt_map_get(&args_of, (uint64_t)(uintptr_t)k);
    if (!ka && (ka = calloc(1, sizeof *ka)) && clt_map_put(&args_of, (uint64_t)(uintptr_t)k, ka) != 0) {
        free(ka);
        ka = NULL;
    }
    if (ka) {
        free(ka->a[i].bytes);
        ka->a[i] = (struct saved_arg){ .set = 1, .svm = svm, .size = size, .bytes = copy };
        copy = NULL;
    }
    pthread_mutex_unlock(&lock);
    free(copy);
}

/* ---- reading an argument's memory --------------------------------------- */

/* A buffer's bytes, read whole (blocking); NULL with why. */
static void *read_buffer(cl_command_queue q, cl_mem m, size_t size, cl_mem_flags flags, char *why, size_t cap)
{
    void *host_copy = malloc(size ? size : 1);
    if (!host_copy) {
        snprintf(why, cap, "no memory for %zu bytes", size);
        return NULL;
    }
    cl_mem from = m;
    cl_int err = CL_SUCCESS;
    if (flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) {     /* through a staging copy */
        cl_context ctx = NULL;
        CL(clGetMemObjectInfo)(m, CL_MEM_CONTEXT, sizeof ctx, &ctx, NULL);
        from = CL(clCreateBuffer)(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
        if (from && !err)
            err = CL(clEnqueueCopyBuffer)(q, m, from, 0, 0, size, 0, NULL, NULL);
    }
    if (!err)
        err = CL(clEnqueueReadBuffer)(q, from, CL_TRUE, 0, size, host_copy, 0, NULL, NULL);
    if (from && from != m)
        CL(clReleaseMemObject)(from);
    if (err) {
        snprintf(why, cap, "reading it back failed (OpenCL error %d)", err);
        free(host_copy);
        return NULL;
    }
    return host_copy;
}

static void *read_image(cl_command_queue q, cl_mem m, const struct rf_arg *a, char *why, size_t cap)
{
    if (a->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) {
        snprintf(why, cap, "an image the host may not read");
        return NULL;
    }
    size_t origin[3] = { 0, 0, 0 }, region[3] = { a->width, a->height ? a->height : 1, a->depth ? a->depth : 1 };
    if (a->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        region[1] = a->array_size;
    else if (a->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        region[2] = a->array_size;
    void *p = malloc(a->bytes ? a->bytes : 1);
    cl_int err = p ? CL(clEnqueueReadImage)(q, m, CL_TRUE, origin, region, 0, 0, p, 0, NULL, NULL)
                   : CL_OUT_OF_HOST_MEMORY;
    if (err) {
        snprintf(why, cap, "reading the image failed (OpenCL error %d)", err);
        free(p);
        return NULL;
    }
    return p;
}

/* ---- the kernel's arguments, described -------------------------------- */

struct taking {
    struct rf_capture c;
    cl_mem mem[RF_MAX_ARGS];
    void *in[RF_MAX_ARGS];
};

static size_t image_bytes(cl_mem m, struct rf_arg *a)
{
    cl_image_format fmt = { 0, 0 };
    size_t elem = 0;
    cl_mem_object_type t = 0;
    CL(clGetMemObjectInfo)(m, CL_MEM_TYPE, sizeof t, &t, NULL);
    CL(clGetImageInfo)(m, CL_IMAGE_FORMAT, sizeof fmt, &fmt, NULL);
    CL(clGetImageInfo)(m, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL);
    CL(clGetImageInfo)(m, CL_IMAGE_WIDTH, sizeof a->width, &a->width, NULL);
    CL(clGetImageInfo)(m, CL_IMAGE_HEIGHT, sizeof a->height, &a->height, NULL);
    CL(clGetImageInfo)(m, CL_IMAGE_DEPTH, sizeof a->depth, &a->depth, NULL);
    CL(clGetImageInfo)(m, CL_IMAGE_ARRAY_SIZE, sizeof a->array_size, &a->array_size, NULL);
    a->image_type = t;
    a->order = fmt.image_channel_order;
    a->data_type = fmt.image_channel_data_type;
    size_t n = a->width * (a->height ? a->height : 1) * (a->depth ? a->depth : 1);
    if (t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        n *= a->array_size;
    return n * elem;
}

/* Argument i: its kind from the kernel's argument info (asked with
 * -cl-kernel-arg-info, which cltrace adds to builds while capturing). */
static void describe_arg(cl_kernel k, cl_command_queue q, unsigned i, const struct saved_arg *s, struct taking *t)
{
    struct rf_arg *a = &t->c.arg[i];
    cl_kernel_arg_address_qualifier addr = 0;
    cl_kernel_arg_type_qualifier qual = 0;
    cl_kernel_arg_access_qualifier access = CL_KERNEL_ARG_ACCESS_NONE;
    int info = CL(clGetKernelArgInfo) &&
               CL(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof addr, &addr, NULL) == 0 &&
               CL(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof a->type, a->type, NULL) == 0;
    if (info) {
        CL(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof qual, &qual, NULL);
        CL(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof access, &access, NULL);
    }
    a->type[sizeof a->type - 1] = 0;
    char why[160] = "";
    if (!s || !s->set) {
        snprintf(why, sizeof why, "never set through a call cltrace saw (clCloneKernel?)");
    } else if (s->svm) {
        snprintf(why, sizeof why, "an SVM pointer (clSetKernelArgSVMPointer): its allocation is not captured");
    } else if (!info) {
        snprintf(why, sizeof why, "the driver gives no argument info for this kernel");
    } else if (addr == CL_KERNEL_ARG_ADDRESS_LOCAL) {
        a->kind = RF_LOCAL;
        a->bytes = s->size;
    } else if (!strcmp(a->type, "sampler_t") && s->bytes) {
        cl_sampler sm = *(cl_sampler *)s->bytes;
        cl_bool norm = 0;
        a->kind = RF_SAMPLER;
        CL(clGetSamplerInfo)(sm, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL);
        CL(clGetSamplerInfo)(sm, CL_SAMPLER_ADDRESSING_MODE, sizeof a->addressing, &a->addressing, NULL);
        CL(clGetSamplerInfo)(sm, CL_SAMPLER_FILTER_MODE, sizeof a->filter, &a->filter, NULL);
        a->normalized = norm;
    } else if (addr == CL_KERNEL_ARG_ADDRESS_GLOBAL || addr == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
               !strncmp(a->type, "image", 5)) {
        cl_mem m = s->bytes && s->size == sizeof(cl_mem) ? *(cl_mem *)s->bytes : NULL;
        cl_mem_object_type mt = 0;
        if (!m) {
            a->kind = RF_NULL;
        } else if (CL(clGetMemObjectInfo)(m, CL_MEM_TYPE, sizeof mt, &mt, NULL) != 0 ||
                   CL(clGetMemObjectInfo)(m, CL_MEM_FLAGS, sizeof a->flags, &a->flags, NULL) != 0) {
            snprintf(why, sizeof why, "not a memory object cltrace can ask about");
        } else if (mt == CL_MEM_OBJECT_BUFFER) {
            a->kind = RF_BUFFER;
            CL(clGetMemObjectInfo)(m, CL_MEM_SIZE, sizeof a->bytes, &a->bytes, NULL);
            cl_mem parent = NULL;
            if (CL(clGetMemObjectInfo)(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) == 0 && parent) {
                a->sub = 1;
                CL(clGetMemObjectInfo)(m, CL_MEM_OFFSET, sizeof a->sub_offset, &a->sub_offset, NULL);
            }
            a->writes = addr == CL_KERNEL_ARG_ADDRESS_GLOBAL && !(qual & CL_KERNEL_ARG_TYPE_CONST) &&
                        !(a->flags & CL_MEM_READ_ONLY);
            t->in[i] = read_buffer(q, m, a->bytes, a->flags, why, sizeof why);
        } else if (mt == CL_MEM_OBJECT_IMAGE1D_BUFFER || mt == CL_MEM_OBJECT_PIPE) {
            snprintf(why, sizeof why, "a %s (not captured)", mt == CL_MEM_OBJECT_PIPE ? "pipe" : "1D image buffer");
        } else {
            a->kind = RF_IMAGE;
            a->bytes = image_bytes(m, a);
            a->writes = access == CL_KERNEL_ARG_ACCESS_WRITE_ONLY || access == CL_KERNEL_ARG_ACCESS_READ_WRITE;
            t->in[i] = read_image(q, m, a, why, sizeof why);
        }
        if ((a->kind == RF_BUFFER || a->kind == RF_IMAGE) && !t->in[i])
            a->kind = RF_UNSET;
        t->mem[i] = a->kind == RF_BUFFER || a->kind == RF_IMAGE ? m : NULL;
    } else if (s->bytes) {
        a->kind = RF_SCALAR;
        a->bytes = s->size;
        t->in[i] = malloc(s->size ? s->size : 1);
        if (t->in[i])
            memcpy(t->in[i], s->bytes, s->size);
    } else {
        snprintf(why, sizeof why, "a value of %zu bytes (over %d: not kept)", s->size, MAX_SCALAR);
    }
    if (a->kind == RF_UNSET) {
        a->kind = RF_NOT_CAPTURED;
        snprintf(a->why, sizeof a->why, "%s", why);
    }
}

/* ---- the program --------------------------------------------------------- */

/* The program as the app gave it: source, else IL, else the device's binary. */
static void *program_of(cl_program p, cl_device_id dev, struct rf_capture *c, size_t *n)
{
    size_t len = 0;
    void *bytes = NULL;
    if (CL(clGetProgramInfo)(p, CL_PROGRAM_SOURCE, 0, NULL, &len) == 0 && len > 1 && (bytes = malloc(len)) &&
        CL(clGetProgramInfo)(p, CL_PROGRAM_SOURCE, len, bytes, NULL) == 0) {
        c->program = RF_SOURCE;
        *n = strlen(bytes);
        return bytes;
    }
    free(bytes);
    bytes = NULL;
    len = 0;
    if (CL(clGetProgramInfo)(p, CL_PROGRAM_IL, 0, NULL, &len) == 0 && len > 0 && (bytes = malloc(len)) &&
        CL(clGetProgramInfo)(p, CL_PROGRAM_IL, len, bytes, NULL) == 0) {
        c->program = RF_IL;
        *n = len;
        return bytes;
    }
    free(bytes);
    cl_uint ndev = 0;
    if (CL(clGetProgramInfo)(p, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL) != 0 || !ndev || ndev > 64)
        return NULL;
    cl_device_id devs[64];
    size_t sizes[64];
    unsigned char *bins[64] = { 0 };
    if (CL(clGetProgramInfo)(p, CL_PROGRAM_DEVICES, sizeof devs, devs, NULL) != 0 ||
        CL(clGetProgramInfo)(p, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL) != 0)
        return NULL;
    unsigned mine = 0;
    while (mine < ndev && devs[mine] != dev)
        mine++;
    if (mine == ndev || !(bins[mine] = malloc(sizes[mine] ? sizes[mine] : 1)))
        return NULL;
    if (CL(clGetProgramInfo)(p, CL_PROGRAM_BINARIES, ndev * sizeof bins[0], bins, NULL) != 0) {
        free(bins[mine]);
        return NULL;
    }
    c->program = RF_BINARY;
    *n = sizes[mine];
    return bins[mine];
}

static void device_facts(cl_device_id dev, struct rf_capture *c)
{
    cl_platform_id plat = NULL;
    CL(clGetDeviceInfo)(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
    CL(clGetPlatformInfo)(plat, CL_PLATFORM_NAME, sizeof c->platform - 1, c->platform, NULL);
    CL(clGetDeviceInfo)(dev, CL_DEVICE_NAME, sizeof c->device - 1, c->device, NULL);
    CL(clGetDeviceInfo)(dev, CL_DEVICE_VERSION, sizeof c->device_version - 1, c->device_version, NULL);
    CL(clGetDeviceInfo)(dev, CL_DRIVER_VERSION, sizeof c->driver_version - 1, c->driver_version, NULL);
    for (char *s = c->platform; *s; s++)    /* one line each in the manifest */
        *s = *s == '\n' ? ' ' : *s;
    for (char *s = c->device; *s; s++)
        *s = *s == '\n' ? ' ' : *s;
}

/* The folder's name: the kernel's and its launch number's. */
static int make_folder(const struct rf_capture *c, char *dir, size_t cap)
{
    mkdir(out_dir, 0755);
    snprintf(dir, cap, "%s/%s@%llu", out_dir, c->kernel, (unsigned long long)c->launch_n);
    if (mkdir(dir, 0755) == 0)
        return 0;
    snprintf(dir, cap, "%s/%s@%llu.%d", out_dir, c->kernel, (unsigned long long)c->launch_n, (int)getpid());
    return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static void write_folder(struct taking *t, cl_program p, cl_device_id dev, void *const *out)
{
    struct rf_capture *c = &t->c;
    char dir[2048], name[32];
    if (make_folder(c, dir, sizeof dir) != 0) {
        host.say("capture of %s launch %llu: cannot make %s: %s", c->kernel, (unsigned long long)c->launch_n, dir,
                 strerror(errno));
        return;
    }
    size_t plen = 0;
    void *prog = program_of(p, dev, c, &plen);
    size_t opt_len = 0;
    CL(clGetProgramBuildInfo)(p, dev, CL_PROGRAM_BUILD_OPTIONS, sizeof c->build_options - 1, c->build_options,
                              &opt_len);
    for (char *s = c->build_options; *s; s++)
        *s = *s == '\n' ? ' ' : *s;
    int bad = !prog || rf_write_file(dir, rf_program_file(c->program), prog, plen) != 0;
    free(prog);
    for (unsigned i = 0; i < c->nargs && !bad; i++) {
        snprintf(name, sizeof name, "arg%u.in", i);
        if (t->in[i])
            bad = rf_write_file(dir, name, t->in[i], c->arg[i].bytes) != 0;
        snprintf(name, sizeof name, "arg%u.out", i);
        if (!bad && c->arg[i].writes)
            bad = rf_write_file(dir, name, out[i], c->arg[i].bytes) != 0;
    }
    if (bad || rf_write(dir, c) != 0) {
        host.say("capture of %s launch %llu into %s: %s; the folder is partial (no manifest)", c->kernel,
                 (unsigned long long)c->launch_n, dir, prog ? strerror(errno) : "the program's text or binary "
                 "could not be had");
        return;
    }
    unsigned missing = 0;
    for (unsigned i = 0; i < c->nargs; i++)
        missing += c->arg[i].kind == RF_NOT_CAPTURED;
    host.say("captured %s launch %llu into %s%s", c->kernel, (unsigned long long)c->launch_n, dir,
             missing ? " (some arguments not capturable: see its manifest)" : "");
}

/* ---- a launch --------------------------------------------------------- */

/* Chosen? Then t is filled with its numbers (and the caller takes it). */
static int chosen(cl_kernel k, struct taking *t)
{
    char name[128] = "";
    if (CL(clGetKernelInfo)(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL) != 0)
        return 0;
    pthread_mutex_lock(&lock);
    uint64_t cmd = ++n_launches, nth = clt_name_counts_next(&launches_of, name);
    int take = clt_select_take(&sel, name, nth, cmd);
    pthread_mutex_unlock(&lock);
    if (take) {
        snprintf(t->c.kernel, sizeof t->c.kernel, "%s", name);
        t->c.launch_n = nth;
        t->c.cmd_n = cmd;
    }
    return take;
}

typedef cl_int (*launch_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
                            cl_uint, const cl_event *, cl_event *);

/* A user event of the wait list not yet set: the app sets it once the
 * launch is enqueued, so waiting for it here would never end. */
static int waits_on_the_host(cl_uint nw, const cl_event *w)
{
    for (cl_uint i = 0; w && i < nw; i++) {
        cl_command_type type = 0;
        cl_int status = CL_COMPLETE;
        if (CL(clGetEventInfo)(w[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL) == 0 &&
            type == CL_COMMAND_USER &&
            CL(clGetEventInfo)(w[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) == 0 &&
            status > CL_COMPLETE)
            return 1;
    }
    return 0;
}

static cl_int take_launch(launch_fn next, cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                          const size_t *gws, const size_t *lws, cl_uint nw, const cl_event *w, cl_event *ev)
{
    struct taking *t = calloc(1, sizeof *t);
    if (!t || !chosen(k, t)) {
        free(t);
        return next(q, k, dim, off, gws, lws, nw, w, ev);
    }
    if (waits_on_the_host(nw, w)) {
        host.say("not captured: %s launch %llu waits for a user event the program has not set yet", t->c.kernel,
                 (unsigned long long)t->c.launch_n);
        free(t);
        return next(q, k, dim, off, gws, lws, nw, w, ev);
    }
    int saved = errno;
    struct rf_capture *c = &t->c;
    cl_device_id dev = NULL;
    cl_program prog = NULL;
    CL(clGetCommandQueueInfo)(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    CL(clGetKernelInfo)(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL);
    device_facts(dev, c);
    c->work_dim = dim;
    for (unsigned d = 0; d < 3; d++) {
        c->offset[d] = off && d < dim ? off[d] : 0;
        c->global[d] = gws && d < dim ? gws[d] : 1;
        c->local[d] = lws && d < dim ? lws[d] : 1;
    }
    c->local_null = !lws;
    cl_uint nargs = 0;
    CL(clGetKernelInfo)(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    c->nargs = nargs < RF_MAX_ARGS ? nargs : RF_MAX_ARGS;
    if (nw)                        /* before: what the launch waits for, then the queue */
        CL(clWaitForEvents)(nw, w);
    CL(clFinish)(q);
    pthread_mutex_lock(&lock);
    const struct kernel_args *ka = clt_map_get(&args_of, (uint64_t)(uintptr_t)k);
    struct kernel_args copy = { 0 };   /* another thread may set them meanwhile */
    for (unsigned i = 0; ka && i < c->nargs; i++) {
        copy.a[i] = ka->a[i];
        if (ka->a[i].bytes && (copy.a[i].bytes = malloc(ka->a[i].size ? ka->a[i].size : 1)))
            memcpy(copy.a[i].bytes, ka->a[i].bytes, ka->a[i].size);
    }
    pthread_mutex_unlock(&lock);
    for (unsigned i = 0; i < c->nargs; i++) {
        describe_arg(k, q, i, ka ? &copy.a[i] : NULL, t);
        free(copy.a[i].bytes);
    }
    cl_event mine = NULL;
    cl_int r = next(q, k, dim, off, gws, lws, nw, w, ev ? ev : &mine);
    if (r == CL_SUCCESS) {
        cl_event done = ev ? *ev : mine;
        CL(clWaitForEvents)(1, &done);
        void *out[RF_MAX_ARGS] = { 0 };
        char why[160];
        int ok = 1;
        for (unsigned i = 0; i < c->nargs && ok; i++) {
            struct rf_arg *a = &c->arg[i];
            if (!a->writes)
                continue;
            out[i] = a->kind == RF_BUFFER ? read_buffer(q, t->mem[i], a->bytes, a->flags, why, sizeof why)
                                          : read_image(q, t->mem[i], a, why, sizeof why);
            if (!out[i]) {
                host.say("capture of %s launch %llu: argument %u after the launch: %s; not captured", c->kernel,
                         (unsigned long long)c->launch_n, i, why);
                ok = 0;
            }
        }
        if (ok)
            write_folder(t, prog, dev, out);
        for (unsigned i = 0; i < c->nargs; i++)
            free(out[i]);
    }
    if (mine)
        CL(clReleaseEvent)(mine);
    for (unsigned i = 0; i < c->nargs; i++)
        free(t->in[i]);
    free(t);
    errno = saved;
    return r;
}

/* ---- the interposers ---------------------------------------------------- */

enum { I_SETARG = F_SETARG, I_SETARG_SVM = F_SETARG_SVM, I_NDRANGE = F_NDRANGE, I_TASK = F_TASK, I_N = F_N };
static void *_Atomic next[I_N];
#define NEXT(i, type) ((type)__atomic_load_n(&next[i], __ATOMIC_ACQUIRE))

static cl_int CL_API_CALL set_arg(cl_kernel k, cl_uint i, size_t size, const void *v)
{
    cl_int r = NEXT(I_SETARG, __typeof__(&clSetKernelArg))(k, i, size, v);
    if (r == CL_SUCCESS && host.apps_call(fn_id[F_SETARG]))
        keep_arg(k, i, size, v, 0);
    return r;
}

static cl_int CL_API_CALL set_arg_svm(cl_kernel k, cl_uint i, const void *v)
{
    cl_int r = NEXT(I_SETARG_SVM, __typeof__(&clSetKernelArgSVMPointer))(k, i, v);
    if (r == CL_SUCCESS && host.apps_call(fn_id[F_SETARG_SVM]))
        keep_arg(k, i, sizeof v, &v, 1);
    return r;
}

static cl_int CL_API_CALL ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *gws,
                                  const size_t *lws, cl_uint nw, const cl_event *w, cl_event *ev)
{
    launch_fn n = NEXT(I_NDRANGE, launch_fn);
    if (!host.apps_call(fn_id[F_NDRANGE]))
        return n(q, k, dim, off, gws, lws, nw, w, ev);
    return take_launch(n, q, k, dim, off, gws, lws, nw, w, ev);
}

/* A task is a launch of one work-item (what the driver does with it too). */
static cl_int launch_as_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *gws,
                                const size_t *lws, cl_uint nw, const cl_event *w, cl_event *ev)
{
    return NEXT(I_TASK, __typeof__(&clEnqueueTask))(q, k, nw, w, ev);
}

static cl_int CL_API_CALL task(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *w, cl_event *ev)
{
    static const size_t one = 1;
    if (!host.apps_call(fn_id[F_TASK]))
        return NEXT(I_TASK, __typeof__(&clEnqueueTask))(q, k, nw, w, ev);
    return take_launch(launch_as_ndrange, q, k, 1, NULL, &one, &one, nw, w, ev);
}

void *rt_take_interpose(const char *fn, void *real)
{
    static void *const with[I_N] = { (void *)set_arg, (void *)set_arg_svm, (void *)ndrange, (void *)task };
    if (!rt_take_on || !real)
        return real;
    for (unsigned i = 0; i < I_N; i++)
        if (!strcmp(fn_names[i], fn)) {
            if (real == with[i])
                return real;
            __atomic_store_n(&next[i], real, __ATOMIC_RELEASE);
            return with[i];
        }
    return real;
}

void rt_take_forget(void)
{
    pthread_mutex_init(&lock, NULL);
}
