/* A stand-in OpenCL implementation, an ICD the Khronos or ocl-icd loader
 * loads like any vendor's: one platform, one device, objects with reference
 * counts, buffers in host memory (reads and writes copy), kernels that run
 * nothing, commands complete at once with profiling times from the host's
 * monotonic clock. It serves the capture tests where no real OpenCL runs:
 * arm64 under qemu (PoCL's arm64 package cannot be installed beside the
 * amd64 one). Whatever it does not implement answers CL_INVALID_OPERATION
 * (a NULL object for a creation), as a driver without the feature would.
 * tests/arm64.sh uses it; tests/reuse.sh asks more of it:
 *   STANDIN_REUSE=1     a released program's or kernel's handle is the next
 *                       new one's (of any thread), as drivers with pools do;
 *                       =2: a queue's too
 *   STANDIN_BUILD_MS=N  a build takes N ms and holds the program meanwhile:
 *                       released by the app during it, the program goes at
 *                       its middle; asked about afterwards, its answers
 *                       take N ms more (a driver looking for what is gone)
 *   kernels named slow* run 2 ms (enqueue returns when done), others 2 us
 *   STANDIN_RUN_MS=N    every kernel runs N ms after its enqueue returns: its
 *                       event running until then, its callbacks called from
 *                       a thread of the driver's, clFinish, clWaitForEvents
 *                       and blocking transfers waiting for it
 *   STANDIN_LAUNCHES=FILE  each launch's kernel and local size appended
 *                       ("a 8 1 1", "b NULL"): what the driver was given */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum kind { K_PLATFORM = 1, K_DEVICE, K_CONTEXT, K_QUEUE, K_MEM, K_PROGRAM, K_KERNEL, K_EVENT, K_SAMPLER };

struct obj {                    /* every handle: the loader reads dispatch first */
    struct _cl_icd_dispatch *dispatch;
    enum kind kind;
    int refs;
    struct obj *context, *parent;       /* a queue's, buffer's, program's; a kernel's program; an event's queue */
    cl_command_queue_properties props;
    size_t size;
    cl_mem_flags flags;
    void *host;                 /* a buffer's bytes */
    char name[64];              /* a kernel's */
    cl_command_type command;
    cl_ulong t[4];              /* an event's queued, submitted, started, ended */
    cl_int status;
};

static struct _cl_icd_dispatch table;
static struct obj platform = { &table, K_PLATFORM, 1, 0, 0, 0, 0, 0, 0, "", 0, { 0 }, 0 };
static struct obj device = { &table, K_DEVICE, 1, 0, 0, 0, 0, 0, 0, "", 0, { 0 }, 0 };

static cl_ulong now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (cl_ulong)ts.tv_sec * 1000000000u + (cl_ulong)ts.tv_nsec;
}

/* STANDIN_REUSE: released objects, handed out again (newest first) */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj *pool[64];
static unsigned pooled;

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

static void sleep_until(cl_ulong t)
{
    for (cl_ulong now = now_ns(); now < t; now = now_ns()) {
        struct timespec ts = { (time_t)((t - now) / 1000000000u), (long)((t - now) % 1000000000u) };
        nanosleep(&ts, NULL);
    }
}

/* STANDIN_REUSE=1: programs and kernels; 2: queues too */
static int reused(enum kind k)
{
    int r = env_int("STANDIN_REUSE");
    return (r >= 1 && (k == K_PROGRAM || k == K_KERNEL)) || (r >= 2 && k == K_QUEUE);
}

static void locals_alive(void);

static struct obj *make(enum kind k, struct obj *context, cl_int *err)
{
    struct obj *o = NULL;
    locals_alive();
    pthread_mutex_lock(&pool_lock);
    if (pooled && reused(k))
        o = pool[--pooled];
    pthread_mutex_unlock(&pool_lock);
    if (o)
        memset(o, 0, sizeof *o);
    else
        o = calloc(1, sizeof *o);
    if (err)
        *err = o ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    if (o) {
        o->dispatch = &table;
        o->kind = k;
        o->refs = 1;
        o->context = context;
    }
    return o;
}

/* The calling thread's thread-locals, as a C++ driver keeps them: Oclgrind
 * keeps the API call it is in on a thread_local vector. They are destroyed
 * as the thread ends, and for the thread that calls exit() before any
 * atexit handler or library destructor runs; such a driver, called on that
 * thread after it, writes to freed memory ("corrupted double-linked list",
 * 1 run in ~150). Here every such call aborts at once, with a message. */
extern int __cxa_thread_atexit_impl(void (*)(void *), void *, void *);
extern void *__dso_handle;
static __thread int locals;     /* 0: not made yet, 1: live, 2: destroyed */

static void locals_destroyed(void *unused)
{
    locals = 2;
}

static void locals_alive(void)
{
    static const char gone[] = "standin: called on a thread whose thread-locals were destroyed\n";
    if (locals == 1)
        return;
    if (locals == 2) {
        ssize_t said = write(2, gone, sizeof gone - 1);
        (void)said;
        abort();
    }
    locals = 1;
    __cxa_thread_atexit_impl(locals_destroyed, NULL, &__dso_handle);
}

static int is(const void *h, enum kind k)
{
    locals_alive();
    return h && ((const struct obj *)h)->kind == k;
}

static cl_int retain(void *h, enum kind k, cl_int bad)
{
    if (!is(h, k))
        return bad;
    ((struct obj *)h)->refs++;
    return CL_SUCCESS;
}

static cl_int release(void *h, enum kind k, cl_int bad)
{
    struct obj *o = h;
    if (!is(h, k))
        return bad;
    if (--o->refs == 0) {
        free(o->host);
        o->host = NULL;
        o->kind = 0;            /* a later call on it answers "invalid", not a crash */
        pthread_mutex_lock(&pool_lock);
        int keep = reused(k) && pooled < 64;
        if (keep)
            pool[pooled++] = o;
        pthread_mutex_unlock(&pool_lock);
        if (!keep)
            free(o);
    }
    return CL_SUCCESS;
}

/* An info answer: value (n bytes) into (size, value, size_ret) */
static cl_int answer(const void *v, size_t n, size_t size, void *value, size_t *size_ret)
{
    if (size_ret)
        *size_ret = n;
    if (value) {
        if (size < n)
            return CL_INVALID_VALUE;
        memcpy(value, v, n);
    }
    return CL_SUCCESS;
}
#define ANSWER_OF(x) answer(&(x), sizeof(x), size, value, size_ret)
#define ANSWER_STR(s) answer((s), strlen(s) + 1, size, value, size_ret)

static cl_int unsupported(void)
{
    return CL_INVALID_OPERATION;
}

/* platform and device */
static cl_int get_platform_ids(cl_uint n, cl_platform_id *p, cl_uint *num)
{
    locals_alive();
    if ((!n && p) || (!p && !num))
        return CL_INVALID_VALUE;
    if (p)
        p[0] = (cl_platform_id)&platform;
    if (num)
        *num = 1;
    return CL_SUCCESS;
}

EXPORT cl_int clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *p, cl_uint *num)
{
    return get_platform_ids(n, p, num);
}

static cl_int get_platform_info(cl_platform_id p, cl_platform_info what, size_t size, void *value, size_t *size_ret)
{
    if (p && !is(p, K_PLATFORM))
        return CL_INVALID_PLATFORM;
    cl_version v = CL_MAKE_VERSION(3, 0, 0);
    cl_ulong res = 0;
    switch (what) {
    case CL_PLATFORM_PROFILE: return ANSWER_STR("FULL_PROFILE");
    case CL_PLATFORM_VERSION: return ANSWER_STR("OpenCL 3.0 cltrace stand-in");
    case CL_PLATFORM_NUMERIC_VERSION: return ANSWER_OF(v);
    case CL_PLATFORM_NAME: return ANSWER_STR("cltrace stand-in");
    case CL_PLATFORM_VENDOR: return ANSWER_STR("cltrace tests");
    case CL_PLATFORM_EXTENSIONS: return ANSWER_STR("cl_khr_icd");
    case CL_PLATFORM_ICD_SUFFIX_KHR: return ANSWER_STR("STANDIN");
    case CL_PLATFORM_HOST_TIMER_RESOLUTION: return ANSWER_OF(res);
    default: return CL_INVALID_VALUE;
    }
}

/* (exported too: ocl-icd looks it up by name in the vendor library) */
EXPORT cl_int clGetPlatformInfo(cl_platform_id p, cl_platform_info what, size_t size, void *value, size_t *size_ret)
{
    return get_platform_info(p, what, size, value, size_ret);
}

static cl_int get_device_ids(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *d, cl_uint *num)
{
    if (p && !is(p, K_PLATFORM))
        return CL_INVALID_PLATFORM;
    if (!(type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT)) && type != CL_DEVICE_TYPE_ALL)
        return CL_DEVICE_NOT_FOUND;
    if ((!n && d) || (!d && !num))
        return CL_INVALID_VALUE;
    if (d)
        d[0] = (cl_device_id)&device;
    if (num)
        *num = 1;
    return CL_SUCCESS;
}

static cl_int get_device_info(cl_device_id d, cl_device_info what, size_t size, void *value, size_t *size_ret)
{
    if (!is(d, K_DEVICE))
        return CL_INVALID_DEVICE;
    cl_device_type type = CL_DEVICE_TYPE_CPU;
    cl_uint u4 = 4, dims = 3, bits = 64, vendor = 0x10000, align = 1024, yes = CL_TRUE, no = CL_FALSE;
    size_t wg = 256, items[3] = { 256, 256, 256 }, res = 1, zero = 0;
    cl_ulong gmem = 1ull << 30, lmem = 64 << 10, alloc = 256ull << 20, cache = 1 << 20;
    cl_command_queue_properties qp = CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    cl_device_local_mem_type lt = CL_LOCAL;
    cl_platform_id plat = (cl_platform_id)&platform;
    cl_version v = CL_MAKE_VERSION(3, 0, 0);
    switch (what) {
    case CL_DEVICE_TYPE: return ANSWER_OF(type);
    case CL_DEVICE_VENDOR_ID: return ANSWER_OF(vendor);
    case CL_DEVICE_MAX_COMPUTE_UNITS: return ANSWER_OF(u4);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: return ANSWER_OF(dims);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: return ANSWER_OF(items);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: return ANSWER_OF(wg);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY: return ANSWER_OF(align);
    case CL_DEVICE_ADDRESS_BITS: return ANSWER_OF(bits);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN: return ANSWER_OF(align);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return ANSWER_OF(gmem);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: return ANSWER_OF(cache);
    case CL_DEVICE_LOCAL_MEM_SIZE: return ANSWER_OF(lmem);
    case CL_DEVICE_LOCAL_MEM_TYPE: return ANSWER_OF(lt);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return ANSWER_OF(alloc);
    case CL_DEVICE_PROFILING_TIMER_RESOLUTION: return ANSWER_OF(res);
    case CL_DEVICE_ENDIAN_LITTLE:
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE: return ANSWER_OF(yes);
    case CL_DEVICE_IMAGE_SUPPORT:
    case CL_DEVICE_HOST_UNIFIED_MEMORY: return ANSWER_OF(no);
    case CL_DEVICE_QUEUE_PROPERTIES: return ANSWER_OF(qp);
    case CL_DEVICE_PLATFORM: return ANSWER_OF(plat);
    case CL_DEVICE_NAME: return ANSWER_STR("stand-in device");
    case CL_DEVICE_VENDOR: return ANSWER_STR("cltrace tests");
    case CL_DRIVER_VERSION: return ANSWER_STR("1.0");
    case CL_DEVICE_PROFILE: return ANSWER_STR("FULL_PROFILE");
    case CL_DEVICE_VERSION: return ANSWER_STR("OpenCL 3.0 stand-in");
    case CL_DEVICE_OPENCL_C_VERSION: return ANSWER_STR("OpenCL C 1.2 stand-in");
    case CL_DEVICE_EXTENSIONS: return ANSWER_STR("");
    case CL_DEVICE_BUILT_IN_KERNELS: return ANSWER_STR("");
    case CL_DEVICE_NUMERIC_VERSION: return ANSWER_OF(v);
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: return ANSWER_OF(wg);
    case CL_DEVICE_PRINTF_BUFFER_SIZE: return ANSWER_OF(zero);
    default: return CL_INVALID_VALUE;
    }
}

static cl_int device_keep(cl_device_id d)
{
    return is(d, K_DEVICE) ? CL_SUCCESS : CL_INVALID_DEVICE;
}

/* context and queue */
static cl_context create_context(const cl_context_properties *props, cl_uint n, const cl_device_id *d,
                                 void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user,
                                 cl_int *err)
{
    if (!n || !d || !is(d[0], K_DEVICE)) {
        if (err)
            *err = !n || !d ? CL_INVALID_VALUE : CL_INVALID_DEVICE;
        return NULL;
    }
    return (cl_context)make(K_CONTEXT, NULL, err);
}

static cl_context create_context_from_type(const cl_context_properties *props, cl_device_type type,
                                           void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                           void *user, cl_int *err)
{
    cl_device_id d = (cl_device_id)&device;
    return create_context(props, 1, &d, notify, user, err);
}

static cl_int context_retain(cl_context c) { return retain(c, K_CONTEXT, CL_INVALID_CONTEXT); }
static cl_int context_release(cl_context c) { return release(c, K_CONTEXT, CL_INVALID_CONTEXT); }

static cl_int get_context_info(cl_context c, cl_context_info what, size_t size, void *value, size_t *size_ret)
{
    if (!is(c, K_CONTEXT))
        return CL_INVALID_CONTEXT;
    cl_uint one = 1, refs = (cl_uint)((struct obj *)c)->refs;
    cl_device_id d = (cl_device_id)&device;
    switch (what) {
    case CL_CONTEXT_REFERENCE_COUNT: return ANSWER_OF(refs);
    case CL_CONTEXT_NUM_DEVICES: return ANSWER_OF(one);
    case CL_CONTEXT_DEVICES: return ANSWER_OF(d);
    case CL_CONTEXT_PROPERTIES: return answer(NULL, 0, size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

static cl_command_queue create_queue_props(cl_context c, cl_device_id d, const cl_queue_properties *props, cl_int *err)
{
    if (!is(c, K_CONTEXT) || !is(d, K_DEVICE)) {
        if (err)
            *err = is(c, K_CONTEXT) ? CL_INVALID_DEVICE : CL_INVALID_CONTEXT;
        return NULL;
    }
    struct obj *q = make(K_QUEUE, (struct obj *)c, err);
    for (const cl_queue_properties *p = props; q && p && p[0]; p += 2)
        if (p[0] == CL_QUEUE_PROPERTIES)
            q->props = p[1];
    return (cl_command_queue)q;
}

static cl_command_queue create_queue(cl_context c, cl_device_id d, cl_command_queue_properties props, cl_int *err)
{
    cl_queue_properties p[] = { CL_QUEUE_PROPERTIES, props, 0 };
    return create_queue_props(c, d, p, err);
}

static cl_int queue_retain(cl_command_queue q) { return retain(q, K_QUEUE, CL_INVALID_COMMAND_QUEUE); }
static cl_int queue_release(cl_command_queue q) { return release(q, K_QUEUE, CL_INVALID_COMMAND_QUEUE); }
static cl_int queue_flush(cl_command_queue q) { return is(q, K_QUEUE) ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE; }

static cl_int queue_finish(cl_command_queue q)
{
    if (!is(q, K_QUEUE))
        return CL_INVALID_COMMAND_QUEUE;
    sleep_until(((struct obj *)q)->t[3]);     /* its last kernel's end (STANDIN_RUN_MS) */
    return CL_SUCCESS;
}

static cl_int get_queue_info(cl_command_queue q, cl_command_queue_info what, size_t size, void *value,
                             size_t *size_ret)
{
    struct obj *o = (struct obj *)q;
    if (!is(q, K_QUEUE))
        return CL_INVALID_COMMAND_QUEUE;
    cl_device_id d = (cl_device_id)&device;
    cl_context c = (cl_context)o->context;
    cl_uint refs = (cl_uint)o->refs;
    switch (what) {
    case CL_QUEUE_CONTEXT: return ANSWER_OF(c);
    case CL_QUEUE_DEVICE: return ANSWER_OF(d);
    case CL_QUEUE_REFERENCE_COUNT: return ANSWER_OF(refs);
    case CL_QUEUE_PROPERTIES: return ANSWER_OF(o->props);
    default: return CL_INVALID_VALUE;
    }
}

/* buffers */
static cl_mem create_buffer(cl_context c, cl_mem_flags flags, size_t n, void *host, cl_int *err)
{
    if (!is(c, K_CONTEXT) || !n || (!host != !(flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)))) {
        if (err)
            *err = !is(c, K_CONTEXT) ? CL_INVALID_CONTEXT : !n ? CL_INVALID_BUFFER_SIZE : CL_INVALID_HOST_PTR;
        return NULL;
    }
    struct obj *m = make(K_MEM, (struct obj *)c, err);
    if (m && !(m->host = calloc(1, n))) {
        free(m);
        if (err)
            *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    if (m && host)
        memcpy(m->host, host, n);
    if (m) {
        m->size = n;
        m->flags = flags;
    }
    return (cl_mem)m;
}

static cl_int mem_retain(cl_mem m) { return retain(m, K_MEM, CL_INVALID_MEM_OBJECT); }
static cl_int mem_release(cl_mem m) { return release(m, K_MEM, CL_INVALID_MEM_OBJECT); }

static cl_int get_mem_info(cl_mem m, cl_mem_info what, size_t size, void *value, size_t *size_ret)
{
    struct obj *o = (struct obj *)m;
    if (!is(m, K_MEM))
        return CL_INVALID_MEM_OBJECT;
    cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
    cl_context c = (cl_context)o->context;
    cl_uint refs = (cl_uint)o->refs;
    void *none = NULL;
    switch (what) {
    case CL_MEM_TYPE: return ANSWER_OF(type);
    case CL_MEM_FLAGS: return ANSWER_OF(o->flags);
    case CL_MEM_SIZE: return ANSWER_OF(o->size);
    case CL_MEM_HOST_PTR: return ANSWER_OF(none);
    case CL_MEM_CONTEXT: return ANSWER_OF(c);
    case CL_MEM_REFERENCE_COUNT: return ANSWER_OF(refs);
    default: return CL_INVALID_VALUE;
    }
}

/* programs and kernels */
static cl_program create_program(cl_context c, cl_uint n, const char **src, const size_t *len, cl_int *err)
{
    if (!is(c, K_CONTEXT) || !n || !src || !src[0]) {
        if (err)
            *err = is(c, K_CONTEXT) ? CL_INVALID_VALUE : CL_INVALID_CONTEXT;
        return NULL;
    }
    return (cl_program)make(K_PROGRAM, (struct obj *)c, err);
}

static cl_int build_program(cl_program p, cl_uint n, const cl_device_id *d, const char *options,
                            void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    if (!is(p, K_PROGRAM))
        return CL_INVALID_PROGRAM;
    int ms = env_int("STANDIN_BUILD_MS");
    if (ms) {                    /* held through the build; the app may let go meanwhile */
        ((struct obj *)p)->refs++;
        sleep_ms(ms / 2);
        int gone = ((struct obj *)p)->refs == 1;
        release(p, K_PROGRAM, CL_INVALID_PROGRAM);
        sleep_ms(ms - ms / 2);
        if (gone)
            return CL_SUCCESS;
    }
    if (notify)
        notify(p, user);
    return CL_SUCCESS;
}

static cl_int program_retain(cl_program p) { return retain(p, K_PROGRAM, CL_INVALID_PROGRAM); }
static cl_int program_release(cl_program p) { return release(p, K_PROGRAM, CL_INVALID_PROGRAM); }

static cl_int get_program_info(cl_program p, cl_program_info what, size_t size, void *value, size_t *size_ret)
{
    struct obj *o = (struct obj *)p;
    if (p && !is(p, K_PROGRAM) && env_int("STANDIN_BUILD_MS"))
        sleep_ms(env_int("STANDIN_BUILD_MS"));
    if (!is(p, K_PROGRAM))
        return CL_INVALID_PROGRAM;
    cl_uint one = 1, refs = (cl_uint)o->refs;
    cl_device_id d = (cl_device_id)&device;
    cl_context c = (cl_context)o->context;
    switch (what) {
    case CL_PROGRAM_REFERENCE_COUNT: return ANSWER_OF(refs);
    case CL_PROGRAM_CONTEXT: return ANSWER_OF(c);
    case CL_PROGRAM_NUM_DEVICES: return ANSWER_OF(one);
    case CL_PROGRAM_DEVICES: return ANSWER_OF(d);
    default: return CL_INVALID_VALUE;
    }
}

static cl_int get_build_info(cl_program p, cl_device_id d, cl_program_build_info what, size_t size, void *value,
                             size_t *size_ret)
{
    if (!is(p, K_PROGRAM))
        return CL_INVALID_PROGRAM;
    cl_build_status ok = CL_BUILD_SUCCESS;
    switch (what) {
    case CL_PROGRAM_BUILD_STATUS: return ANSWER_OF(ok);
    case CL_PROGRAM_BUILD_LOG:
    case CL_PROGRAM_BUILD_OPTIONS: return ANSWER_STR("");
    default: return CL_INVALID_VALUE;
    }
}

static cl_kernel create_kernel(cl_program p, const char *name, cl_int *err)
{
    if (!is(p, K_PROGRAM) || !name) {
        if (err)
            *err = name ? CL_INVALID_PROGRAM : CL_INVALID_VALUE;
        return NULL;
    }
    struct obj *k = make(K_KERNEL, ((struct obj *)p)->context, err);
    if (k) {
        k->parent = (struct obj *)p;
        strncpy(k->name, name, sizeof k->name - 1);
    }
    return (cl_kernel)k;
}

static cl_int kernel_retain(cl_kernel k) { return retain(k, K_KERNEL, CL_INVALID_KERNEL); }
static cl_int kernel_release(cl_kernel k) { return release(k, K_KERNEL, CL_INVALID_KERNEL); }

static cl_int set_kernel_arg(cl_kernel k, cl_uint i, size_t n, const void *v)
{
    if (!is(k, K_KERNEL))
        return CL_INVALID_KERNEL;
    return i < 16 ? CL_SUCCESS : CL_INVALID_ARG_INDEX;
}

static cl_int get_kernel_info(cl_kernel k, cl_kernel_info what, size_t size, void *value, size_t *size_ret)
{
    struct obj *o = (struct obj *)k;
    if (!is(k, K_KERNEL))
        return CL_INVALID_KERNEL;
    cl_uint args = 4, refs = (cl_uint)o->refs;
    cl_context c = (cl_context)o->context;
    cl_program p = (cl_program)o->parent;
    switch (what) {
    case CL_KERNEL_FUNCTION_NAME: return ANSWER_STR(o->name);
    case CL_KERNEL_NUM_ARGS: return ANSWER_OF(args);
    case CL_KERNEL_REFERENCE_COUNT: return ANSWER_OF(refs);
    case CL_KERNEL_CONTEXT: return ANSWER_OF(c);
    case CL_KERNEL_PROGRAM: return ANSWER_OF(p);
    case CL_KERNEL_ATTRIBUTES: return ANSWER_STR("");
    default: return CL_INVALID_VALUE;
    }
}

static cl_int get_kernel_wg_info(cl_kernel k, cl_device_id d, cl_kernel_work_group_info what, size_t size,
                                 void *value, size_t *size_ret)
{
    if (!is(k, K_KERNEL))
        return CL_INVALID_KERNEL;
    size_t wg = 256, multiple = 32, compile[3] = { 0, 0, 0 };
    cl_ulong zero = 0;
    switch (what) {
    case CL_KERNEL_WORK_GROUP_SIZE: return ANSWER_OF(wg);
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: return ANSWER_OF(multiple);
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: return ANSWER_OF(compile);
    case CL_KERNEL_LOCAL_MEM_SIZE:
    case CL_KERNEL_PRIVATE_MEM_SIZE: return ANSWER_OF(zero);
    default: return CL_INVALID_VALUE;
    }
}

/* commands: done when enqueued; an event with its times if asked for */
static cl_int done(cl_command_queue q, cl_command_type type, cl_uint nwait, const cl_event *wait, cl_event *ev,
                   cl_ulong started, cl_ulong ended)
{
    if (!is(q, K_QUEUE))
        return CL_INVALID_COMMAND_QUEUE;
    if ((nwait && !wait) || (!nwait && wait))
        return CL_INVALID_EVENT_WAIT_LIST;
    for (cl_uint i = 0; i < nwait; i++)
        if (!is(wait[i], K_EVENT))
            return CL_INVALID_EVENT_WAIT_LIST;
    cl_ulong run_ns = type == CL_COMMAND_NDRANGE_KERNEL ? (cl_ulong)env_int("STANDIN_RUN_MS") * 1000000u : 0;
    struct obj *queue = (struct obj *)q;
    if (run_ns)
        queue->t[3] = now_ns() + run_ns;      /* the queue is busy until then */
    if (!ev)
        return CL_SUCCESS;
    cl_int err;
    struct obj *e = make(K_EVENT, ((struct obj *)q)->context, &err);
    if (!e)
        return err;
    e->parent = (struct obj *)q;
    e->command = type;
    e->status = CL_COMPLETE;
    e->t[0] = started ? started : now_ns();
    e->t[1] = e->t[0] + 100;
    e->t[2] = e->t[1] + 400;
    e->t[3] = ended > e->t[2] ? ended : e->t[2] + 2000;   /* 2 us of "work", or what it took */
    if (run_ns) {
        e->t[3] = queue->t[3];
        e->status = CL_RUNNING;
    }
    *ev = (cl_event)e;
    return CL_SUCCESS;
}

static cl_int enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *gws,
                              const size_t *lws, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (!is(k, K_KERNEL))
        return CL_INVALID_KERNEL;
    if (dim < 1 || dim > 3 || !gws)
        return dim < 1 || dim > 3 ? CL_INVALID_WORK_DIMENSION : CL_INVALID_GLOBAL_WORK_SIZE;
    const char *log = getenv("STANDIN_LAUNCHES");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        if (lws)
            fprintf(f, "%s %zu %zu %zu\n", ((struct obj *)k)->name, lws[0], dim > 1 ? lws[1] : 1, dim > 2 ? lws[2] : 1);
        else
            fprintf(f, "%s NULL\n", ((struct obj *)k)->name);
        fclose(f);
    }
    if (!strncmp(((struct obj *)k)->name, "slow", 4)) {    /* 2 ms of work, done when it returns */
        cl_ulong t0 = now_ns();
        sleep_ms(2);
        return done(q, CL_COMMAND_NDRANGE_KERNEL, nwait, wait, ev, t0 > 500 ? t0 - 500 : t0, now_ns());
    }
    return done(q, CL_COMMAND_NDRANGE_KERNEL, nwait, wait, ev, 0, 0);
}

static cl_int copy_check(cl_mem m, size_t off, size_t n, const void *p)
{
    if (!is(m, K_MEM))
        return CL_INVALID_MEM_OBJECT;
    struct obj *o = (struct obj *)m;
    return !p || off > o->size || n > o->size - off ? CL_INVALID_VALUE : CL_SUCCESS;
}

static cl_int enqueue_read(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t n, void *p,
                           cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    cl_int err = copy_check(m, off, n, p);
    if (err == CL_SUCCESS && (err = done(q, CL_COMMAND_READ_BUFFER, nwait, wait, ev, 0, 0)) == CL_SUCCESS)
        memcpy(p, (char *)((struct obj *)m)->host + off, n);
    if (err == CL_SUCCESS && block)
        sleep_until(((struct obj *)q)->t[3]);
    return err;
}

static cl_int enqueue_write(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t n, const void *p,
                            cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    cl_int err = copy_check(m, off, n, p);
    if (err == CL_SUCCESS && (err = done(q, CL_COMMAND_WRITE_BUFFER, nwait, wait, ev, 0, 0)) == CL_SUCCESS)
        memcpy((char *)((struct obj *)m)->host + off, p, n);
    return err;
}

static cl_int enqueue_marker(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    return done(q, CL_COMMAND_MARKER, nwait, wait, ev, 0, 0);
}

static cl_int enqueue_barrier(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    return done(q, CL_COMMAND_BARRIER, nwait, wait, ev, 0, 0);
}

/* events: a running kernel's is complete once its end has passed */
static cl_int status_of(struct obj *e)
{
    if (e->status == CL_RUNNING && e->command != CL_COMMAND_USER && now_ns() >= e->t[3])
        e->status = CL_COMPLETE;
    return e->status;
}

static cl_int wait_events(cl_uint n, const cl_event *e)
{
    if (!n || !e)
        return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < n; i++)
        if (!is(e[i], K_EVENT))
            return CL_INVALID_EVENT;
    for (cl_uint i = 0; i < n; i++)
        if (((struct obj *)e[i])->command != CL_COMMAND_USER)
            sleep_until(((struct obj *)e[i])->t[3]);
    return CL_SUCCESS;
}

static cl_int event_retain(cl_event e) { return retain(e, K_EVENT, CL_INVALID_EVENT); }
static cl_int event_release(cl_event e) { return release(e, K_EVENT, CL_INVALID_EVENT); }

static cl_int get_event_info(cl_event e, cl_event_info what, size_t size, void *value, size_t *size_ret)
{
    struct obj *o = (struct obj *)e;
    if (!is(e, K_EVENT))
        return CL_INVALID_EVENT;
    cl_command_queue q = (cl_command_queue)o->parent;
    cl_context c = (cl_context)o->context;
    cl_uint refs = (cl_uint)o->refs;
    switch (what) {
    case CL_EVENT_COMMAND_QUEUE: return ANSWER_OF(q);
    case CL_EVENT_CONTEXT: return ANSWER_OF(c);
    case CL_EVENT_COMMAND_TYPE: return ANSWER_OF(o->command);
    case CL_EVENT_COMMAND_EXECUTION_STATUS: {
        cl_int status = status_of(o);
        return ANSWER_OF(status);
    }
    case CL_EVENT_REFERENCE_COUNT: return ANSWER_OF(refs);
    default: return CL_INVALID_VALUE;
    }
}

static cl_int get_profiling_info(cl_event e, cl_profiling_info what, size_t size, void *value, size_t *size_ret)
{
    struct obj *o = (struct obj *)e;
    if (!is(e, K_EVENT))
        return CL_INVALID_EVENT;
    if (!o->parent || !(o->parent->props & CL_QUEUE_PROFILING_ENABLE) || o->command == CL_COMMAND_USER ||
        status_of(o) != CL_COMPLETE)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    switch (what) {
    case CL_PROFILING_COMMAND_QUEUED: return ANSWER_OF(o->t[0]);
    case CL_PROFILING_COMMAND_SUBMIT: return ANSWER_OF(o->t[1]);
    case CL_PROFILING_COMMAND_START: return ANSWER_OF(o->t[2]);
    case CL_PROFILING_COMMAND_END:
    case CL_PROFILING_COMMAND_COMPLETE: return ANSWER_OF(o->t[3]);
    default: return CL_INVALID_VALUE;
    }
}

struct later {                  /* a callback for a kernel still running */
    struct obj *event;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *user;
};

static void *call_later(void *arg)
{
    struct later *l = arg;
    sleep_until(l->event->t[3]);
    l->event->status = CL_COMPLETE;
    l->fn((cl_event)l->event, CL_COMPLETE, l->user);
    release(l->event, K_EVENT, CL_INVALID_EVENT);
    free(l);
    return NULL;
}

static cl_int set_event_callback(cl_event e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *user)
{
    struct obj *o = (struct obj *)e;
    if (!is(e, K_EVENT) || !fn)
        return !fn ? CL_INVALID_VALUE : CL_INVALID_EVENT;
    cl_int status = status_of(o);
    if (status <= type) {       /* reached (CL_COMPLETE is 0): at once, as a driver may */
        fn(e, status, user);
        return CL_SUCCESS;
    }
    struct later *l = o->command != CL_COMMAND_USER ? malloc(sizeof *l) : NULL;
    pthread_t t;
    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    if (l) {
        *l = (struct later){ o, fn, user };
        o->refs++;              /* the driver's own reference until the call */
        if (pthread_create(&t, &detached, call_later, l) != 0) {
            o->refs--;
            free(l);
            l = NULL;
        }
    }
    pthread_attr_destroy(&detached);
    return l || o->command == CL_COMMAND_USER ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
}

static cl_event create_user_event(cl_context c, cl_int *err)
{
    if (!is(c, K_CONTEXT)) {
        if (err)
            *err = CL_INVALID_CONTEXT;
        return NULL;
    }
    struct obj *e = make(K_EVENT, (struct obj *)c, err);
    if (e) {
        e->command = CL_COMMAND_USER;
        e->status = CL_SUBMITTED;
    }
    return (cl_event)e;
}

static cl_int set_user_event_status(cl_event e, cl_int status)
{
    if (!is(e, K_EVENT) || ((struct obj *)e)->command != CL_COMMAND_USER)
        return CL_INVALID_EVENT;
    ((struct obj *)e)->status = status;
    return CL_SUCCESS;
}

static cl_int unload_compiler(cl_platform_id p)
{
    return CL_SUCCESS;
}

static void *extension_address(const char *name)
{
    return name && !strcmp(name, "clIcdGetPlatformIDsKHR") ? (void *)clIcdGetPlatformIDsKHR : NULL;
}

EXPORT void *clGetExtensionFunctionAddress(const char *name)
{
    return extension_address(name);
}

static void *extension_address_for(cl_platform_id p, const char *name)
{
    return extension_address(name);
}

__attribute__((constructor)) static void fill_table(void)
{
    void **slot = (void **)&table;
    for (size_t i = 0; i < sizeof table / sizeof *slot; i++)
        slot[i] = (void *)unsupported;
#define SET(f, impl) table.f = impl
    SET(clGetPlatformIDs, get_platform_ids);
    SET(clGetPlatformInfo, get_platform_info);
    SET(clGetDeviceIDs, get_device_ids);
    SET(clGetDeviceInfo, get_device_info);
    SET(clRetainDevice, device_keep);
    SET(clReleaseDevice, device_keep);
    SET(clCreateContext, create_context);
    SET(clCreateContextFromType, create_context_from_type);
    SET(clRetainContext, context_retain);
    SET(clReleaseContext, context_release);
    SET(clGetContextInfo, get_context_info);
    SET(clCreateCommandQueue, create_queue);
    SET(clCreateCommandQueueWithProperties, create_queue_props);
    SET(clRetainCommandQueue, queue_retain);
    SET(clReleaseCommandQueue, queue_release);
    SET(clGetCommandQueueInfo, get_queue_info);
    SET(clFlush, queue_flush);
    SET(clFinish, queue_finish);
    SET(clCreateBuffer, create_buffer);
    SET(clRetainMemObject, mem_retain);
    SET(clReleaseMemObject, mem_release);
    SET(clGetMemObjectInfo, get_mem_info);
    SET(clCreateProgramWithSource, create_program);
    SET(clBuildProgram, build_program);
    SET(clRetainProgram, program_retain);
    SET(clReleaseProgram, program_release);
    SET(clGetProgramInfo, get_program_info);
    SET(clGetProgramBuildInfo, get_build_info);
    SET(clCreateKernel, create_kernel);
    SET(clRetainKernel, kernel_retain);
    SET(clReleaseKernel, kernel_release);
    SET(clSetKernelArg, set_kernel_arg);
    SET(clGetKernelInfo, get_kernel_info);
    SET(clGetKernelWorkGroupInfo, get_kernel_wg_info);
    SET(clEnqueueNDRangeKernel, enqueue_ndrange);
    SET(clEnqueueReadBuffer, enqueue_read);
    SET(clEnqueueWriteBuffer, enqueue_write);
    SET(clEnqueueMarkerWithWaitList, enqueue_marker);
    SET(clEnqueueBarrierWithWaitList, enqueue_barrier);
    SET(clWaitForEvents, wait_events);
    SET(clRetainEvent, event_retain);
    SET(clReleaseEvent, event_release);
    SET(clGetEventInfo, get_event_info);
    SET(clGetEventProfilingInfo, get_profiling_info);
    SET(clSetEventCallback, set_event_callback);
    SET(clCreateUserEvent, create_user_event);
    SET(clSetUserEventStatus, set_user_event_status);
    SET(clUnloadPlatformCompiler, unload_compiler);
    SET(clGetExtensionFunctionAddress, extension_address);
    SET(clGetExtensionFunctionAddressForPlatform, extension_address_for);
#undef SET
}
