/* Device-side semantics: profiling on every queue (invisible to the app),
 * device and kernel facts queried once, what an event costs on each device
 * and where its clock stands (measured on the first queue: calibrate.c).
 * Everything here runs on app threads, but only on rare calls (queue
 * creation, builds, the first launch of a kernel on a queue); none of it on
 * clSetKernelArg-like calls. Completions are collected in collect.c. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include "capture/generated/clt_hooks.h"
#include "common/map.h"
#include "shim.h"
#include "calibrate.h"
#include "queues.h"
#include "cbtime.h"

/* OpenCL constants used here (the generated code does not include CL headers). */
enum {
    CL_SUCCESS_ = 0, CL_INVALID_VALUE_ = -30, CL_PROFILING_INFO_NOT_AVAILABLE_ = -7,
    CL_QUEUE_PROFILING_ENABLE_ = 2, CL_QUEUE_PROPERTIES_ = 0x1093, CL_QUEUE_PROPERTIES_ARRAY_ = 0x1098,
    CL_QUEUE_DEVICE_ = 0x1091, CL_EVENT_COMMAND_QUEUE_ = 0x11D0,
    CL_PROFILING_COMMAND_QUEUED_ = 0x1280, CL_COMPLETE_ = 0,
    CL_KERNEL_WORK_GROUP_SIZE_ = 0x11B0, CL_KERNEL_LOCAL_MEM_SIZE_ = 0x11B2,
    CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE_ = 0x11B3, CL_KERNEL_PRIVATE_MEM_SIZE_ = 0x11B4,
    CL_PROGRAM_NUM_DEVICES_ = 0x1162, CL_PROGRAM_DEVICES_ = 0x1163,
    CL_PROGRAM_BUILD_OPTIONS_ = 0x1182, CL_PROGRAM_BUILD_LOG_ = 0x1183,
    CL_DEVICE_VENDOR_ = 0x102C, CL_DEVICE_EXTENSIONS_ = 0x1030,
};

typedef int32_t (*get_info_t)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*get_info2_t)(void *, void *, uint32_t, size_t, void *, size_t *);

static uint64_t info_u64(void *dev, uint32_t param)
{
    get_info_t f = REAL(clGetDeviceInfo);
    uint64_t v = 0;
    size_t n = 0;
    if (!f || f(dev, param, sizeof v, &v, &n) != CL_SUCCESS_)
        return 0;
    return n == 4 ? (uint32_t)v : v;      /* cl_uint, size_t, cl_ulong */
}

static void info_str(void *dev, uint32_t param, char *buf, size_t cap)
{
    get_info_t f = REAL(clGetDeviceInfo);
    buf[0] = 0;
    if (!f || f(dev, param, cap, buf, NULL) != CL_SUCCESS_)
        buf[0] = 0;
    buf[cap - 1] = 0;
}

/* ---- records from hooks ---------------------------------------------- */

static struct clt_rec *special_begin(struct clt_thread *th, unsigned nslots, struct clt_extra *x)
{
    struct clt_rec *rec = th ? clt_rec_begin(th, sizeof(struct clt_rec) + 8 * nslots + 3 * CLT_MAX_STR) : NULL;
    if (rec)
        *x = clt_extra_init(rec, nslots);
    return rec;
}

static void special_commit(struct clt_thread *th, struct clt_rec *rec, struct clt_extra *x, unsigned kind)
{
    uint64_t now = clt_now();
    clt_rec_commit(th, rec, x, kind, now, now, 0);
}

/* Which physical device this is, so that a job's ranks on one GPU are seen
 * sharing it and two GPUs of one name are two: the device's UUID, else its
 * PCI place on this host. */
static void device_uuid(void *dev, const char *ext, int nv, uint64_t *hi, uint64_t *lo)
{
    get_info_t f = REAL(clGetDeviceInfo);
    uint8_t id[16];
    *hi = *lo = 0;
    if (f && strstr(ext, "cl_khr_device_uuid") && f(dev, 0x106A, sizeof id, id, NULL) == CL_SUCCESS_)
        memcpy(hi, id, 8), memcpy(lo, id + 8, 8);
    else if (nv) {            /* CL_DEVICE_PCI_DOMAIN_ID_NV, _BUS_ID_NV, _SLOT_ID_NV */
        *hi = CLT_DEV_UUID_PCI | info_u64(dev, 0x400A) << 32 | info_u64(dev, 0x4008);
        *lo = info_u64(dev, 0x4009);
    } else if (f && strstr(ext, "cl_khr_pci_bus_info")) {
        uint32_t pci[4] = { 0 };      /* domain, bus, device, function */
        if (f(dev, 0x410F, sizeof pci, pci, NULL) == CL_SUCCESS_) {
            *hi = CLT_DEV_UUID_PCI | (uint64_t)pci[0] << 32 | pci[1];
            *lo = (uint64_t)pci[2] << 32 | pci[3];
        }
    }
}

/* Devices described, and those whose driver is not thread-safe: Oclgrind's
 * runtime keeps the commands in flight in one map without a lock, and a
 * clock marker of ours enqueued and flushed from the collector while the
 * app enqueued broke it (SIGSEGV in its asyncEnqueue, 1 run in ~20 of a
 * fingerprinted 33-command program). Its clock's evidence there is the
 * calibration's markers, on the app's thread. */
static pthread_mutex_t described_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { void *dev; int single_threaded; } described[64];
static unsigned n_described;

static int single_threaded(void *dev)
{
    int st = 0;
    pthread_mutex_lock(&described_lock);
    for (unsigned i = 0; i < n_described; i++)
        st |= described[i].dev == dev && described[i].single_threaded;
    pthread_mutex_unlock(&described_lock);
    return st;
}

/* Once per device: its limits, and a clGetDeviceAndHostTimer sample.
 * Returns the device's OpenCL version (clt_cl_version) the first time, 0
 * after. */
static int device_describe(struct clt_thread *th, void *dev)
{
    pthread_mutex_lock(&described_lock);
    unsigned i = 0;
    while (i < n_described && described[i].dev != dev)
        i++;
    int known = i < n_described;
    if (!known && n_described < 64)
        described[n_described++].dev = dev;
    pthread_mutex_unlock(&described_lock);
    if (known || !th)
        return 0;
    char ext[8192], name[CLT_MAX_STR], vendor[CLT_MAX_STR], version[CLT_MAX_STR];
    info_str(dev, CL_DEVICE_EXTENSIONS_, ext, sizeof ext);
    info_str(dev, 0x102B, name, sizeof name);
    pthread_mutex_lock(&described_lock);
    if (i < 64)
        described[i].single_threaded = strstr(name, "Oclgrind") != NULL;
    pthread_mutex_unlock(&described_lock);
    info_str(dev, CL_DEVICE_VENDOR_, vendor, sizeof vendor);
    info_str(dev, 0x102F, version, sizeof version);
    int nv = strstr(ext, "cl_nv_device_attribute_query") != NULL;
    int amd = strstr(ext, "cl_amd_device_attribute_query") != NULL;
    struct clt_extra x;
    struct clt_rec *rec = special_begin(th, DEV_N, &x);
    if (rec) {
        rec->arg[DEV_ID] = (uint64_t)(uintptr_t)dev;
        rec->arg[DEV_TYPE] = info_u64(dev, 0x1000);
        rec->arg[DEV_CU] = info_u64(dev, 0x1002);
        rec->arg[DEV_MAX_WG] = info_u64(dev, 0x1004);
        rec->arg[DEV_LOCAL_MEM] = info_u64(dev, 0x1023);
        rec->arg[DEV_GLOBAL_MEM] = info_u64(dev, 0x101F);
        /* not CL_DEVICE_MAX_CLOCK_FREQUENCY: nothing used it, and NVIDIA's
         * driver (580.159, an H200) took 0.55-0.77 ms to answer, on the
         * app's thread inside its first queue's creation */
        /* warp (NVIDIA) or wavefront (AMD) width, register file, compute capability */
        rec->arg[DEV_WARP] = nv ? info_u64(dev, 0x4003) : amd ? info_u64(dev, 0x4043) : 0;
        rec->arg[DEV_REGS] = nv ? info_u64(dev, 0x4002) : 0;
        rec->arg[DEV_CC_MAJOR] = nv ? info_u64(dev, 0x4000) : 0;
        rec->arg[DEV_CC_MINOR] = nv ? info_u64(dev, 0x4001) : 0;
        rec->arg[DEV_SIMD_PER_CU] = amd ? info_u64(dev, 0x4040) : 0;
        device_uuid(dev, ext, nv, &rec->arg[DEV_UUID_HI], &rec->arg[DEV_UUID_LO]);
        rec->arg[DEV_NAME] = clt_put_str(&x, DEV_NAME, 1, name);
        rec->arg[DEV_VENDOR] = clt_put_str(&x, DEV_VENDOR, 1, vendor);
        rec->arg[DEV_VERSION] = clt_put_str(&x, DEV_VERSION, 1, version);
        special_commit(th, rec, &x, CLT_REC_DEVICE);
    }
    /* The device/host timer pair, where the driver has one; our own clock
     * brackets it (its host half is in an implementation-defined clock). */
    typedef int32_t (*timer_t_)(void *, uint64_t *, uint64_t *);
    /* cltrace calls only what the device says it has: an ICD loader sends a
     * 2.1 command to a 1.2 device by name, i.e. back into us, forever. */
    timer_t_ timer = clt_cl_version(version) >= 201 ? REAL(clGetDeviceAndHostTimer) : NULL;
    uint64_t d = 0, h = 0, before = clt_now();
    int32_t st = timer ? timer(dev, &d, &h) : -59;
    uint64_t after = clt_now();
    clt_put_clock(th, dev, before, d, after, st, CLT_CLK_TIMER);
    return clt_cl_version(version) ? clt_cl_version(version) : 100;
}

static void calibrate(struct clt_thread *th, void *queue, void *dev, int cpu_device, int app_profiling, int profiled)
{
    struct clt_evcost c;
    if (!clt_calibrate(th, queue, dev, cpu_device, app_profiling, profiled, &c))
        return;
    clt_sample_event_price(c.with > c.without ? c.with - c.without : 0, c.write_penalty);   /* the budget's */
    struct clt_extra x;
    struct clt_rec *rec = special_begin(th, EVC_N, &x);
    if (rec) {
        rec->arg[EVC_DEVICE] = (uint64_t)(uintptr_t)dev;
        rec->arg[EVC_WITHOUT] = c.without;
        rec->arg[EVC_WITH] = c.with;
        rec->arg[EVC_SAMPLES] = c.samples;
        rec->arg[EVC_WRITE_PENALTY] = c.write_penalty;
        rec->arg[EVC_WRITE_EVENT] = c.write_event;
        special_commit(th, rec, &x, CLT_REC_EVCOST);
    }
}

/* h->changed of a queue's creation: profiling added, left plain to switch
 * per command (queues.c), or left plain and timed by callbacks (cbtime.c). */
enum { PROFILING_ADDED = 1, LEFT_PLAIN = 2, BY_CALLBACKS = 3 };

/* Where not every command is timed (the budget, CLTRACE_SAMPLE), a queue
 * the app makes without profiling starts plain: where the device may switch
 * it (not yet tried, or tried and able), or, on a CPU device that cannot,
 * to be timed by callbacks (not Oclgrind's: it runs each command inside its
 * enqueue, before any callback could be set; not where a captured launch or
 * a fingerprint waits for the command's events in front of the driver: a
 * timed command's are held until its enqueue returns). 0: profiling added. */
static int plain_mode(void *context, void *device, uint64_t app_props)
{
    if (!clt_sampling || (app_props & (CL_QUEUE_PROFILING_ENABLE_ | 4 /* ON_DEVICE */)))
        return 0;
    if (!clt_profiling_refused(device))
        return LEFT_PLAIN;
    char name[256] = "";
    info_str(device, 0x102B /* CL_DEVICE_NAME */, name, sizeof name);
    return clt_clock_cpu_device(device) && !strstr(name, "Oclgrind") && !clt_interposer_waits &&
                   clt_profiling_clock_is_raw(context, device)
               ? BY_CALLBACKS
               : 0;
}

/* How each queue is timed (CLT_QUEUE_*): the writer charges the profiling
 * queue's price only to the commands that ran with it on. */
static void put_queue_mode(struct clt_thread *th, void *queue, int mode)
{
    struct clt_extra x;
    struct clt_rec *rec = special_begin(th, QM_N, &x);
    if (rec) {
        rec->arg[QM_QUEUE] = (uint64_t)(uintptr_t)queue;
        rec->arg[QM_SWITCHED] = (uint64_t)mode;
        special_commit(th, rec, &x, CLT_REC_QUEUE_MODE);
    }
}

static void queue_created(struct clt_hook *h, void *queue, void *context, void *device, uint64_t app_props,
                          const uint64_t *arr, unsigned n_arr)
{
    if (!queue || !h->changed)
        return;
    int mode = h->changed == LEFT_PLAIN     ? CLT_QUEUE_SWITCHED
               : h->changed == BY_CALLBACKS ? CLT_QUEUE_BY_CALLBACKS
                                            : CLT_QUEUE_PROFILED;
    int cpu_device = clt_clock_cpu_device(device);    /* asked once: the queue, the calibration, the clock */
    struct clt_queue_ent made = { .queue = queue, .app_props = app_props, .mode = mode, .cpu_device = cpu_device,
                                  .device = device };
    made.n_arr = n_arr < 32 ? n_arr : 32;
    if (made.n_arr)          /* clCreateCommandQueue: no list */
        memcpy(made.arr, arr, made.n_arr * sizeof *arr);
    clt_queue_remember(&made);
    if (cpu_device)
        clt_writer_cpu_device();        /* its threads take every core: the writer naps longer */
    put_queue_mode(h->th, queue, mode);
    uint32_t refs = clt_context_refs(context);      /* the app's, before cltrace's calibration */
    if (device_describe(h->th, device) >= 102) {     /* OpenCL 1.2 */
        int on = clt_profiling_on(queue);       /* the calibration's markers are timed */
        calibrate(h->th, queue, device, cpu_device, (app_props & CL_QUEUE_PROFILING_ENABLE_) != 0,
                  on || mode == CLT_QUEUE_PROFILED);
        if (on)
            clt_profiling_done(queue);
    }
    if (!single_threaded(device))
        clt_clock_keep(h->th, context, device, cpu_device, refs);    /* fresh clock evidence while commands run (clock.c) */
}


/* A queue left plain on a device that cannot switch its profiling: made
 * again with profiling on (with the app's errcode_ret, as the app's own
 * call would have been), the plain one released. */
static void *made_again(struct clt_hook *h, void *plain, void *again, cl_int_ *errcode_ret)
{
    typedef int32_t (*rel_t)(void *);
    rel_t rel = REAL(clReleaseCommandQueue);
    if (!again && errcode_ret)
        *errcode_ret = 0;       /* the plain one is the app's: made */
    if (!again || !rel)
        return plain;           /* kept plain: its timed commands are counted untimed */
    rel(plain);
    h->changed = PROFILING_ADDED;
    return again;
}

void clt_pre_clCreateCommandQueue(struct clt_hook *h, void **context, void **device, uint64_t *properties,
                                  cl_int_ **errcode_ret)
{
    if (!h->th)
        return;
    if ((h->changed = plain_mode(*context, *device, *properties)) != 0)
        return;
    *properties |= CL_QUEUE_PROFILING_ENABLE_;
    h->changed = PROFILING_ADDED;
}

/* A queue made again by the post hooks below: an ICD loader that routes the
 * command back into cltrace by name (a 2.0 command on a 1.2 platform) would
 * otherwise have each failed retry retry again, without end. */
static __thread int remaking;

void clt_post_clCreateCommandQueue(struct clt_hook *h, void **ret, void *context, void *device,
                                   uint64_t properties, cl_int_ *errcode_ret)
{
    typedef void *(*create_t)(void *, void *, uint64_t, cl_int_ *);
    create_t create = h->real;
    if (!*ret && h->changed == PROFILING_ADDED) {  /* profiling refused: give the app what it asked for */
        if (!remaking) {
            remaking = 1;
            *ret = create(context, device, properties, errcode_ret);
            remaking = 0;
        }
        return;
    }
    if (*ret && h->changed == LEFT_PLAIN && !remaking && !clt_profiling_switchable(*ret, device)) {
        remaking = 1;
        void *again = create(context, device, properties | CL_QUEUE_PROFILING_ENABLE_, errcode_ret);
        remaking = 0;
        *ret = made_again(h, *ret, again, errcode_ret);
    }
    queue_created(h, *ret, context, device, properties, NULL, 0);
}

/* The app's property list with CL_QUEUE_PROFILING_ENABLE added, into out
 * (64 words); 0: too long for us. */
static int props_plus_profiling(const uint64_t *in, uint64_t *out)
{
    unsigned n = 0;
    int found = 0;
    for (; in && in[n] && n + 4 < 64; n += 2) {
        out[n] = in[n];
        out[n + 1] = in[n + 1];
        if (in[n] == CL_QUEUE_PROPERTIES_) {
            out[n + 1] |= CL_QUEUE_PROFILING_ENABLE_;
            found = 1;
        }
    }
    if (in && in[n])
        return 0;
    if (!found) {
        out[n++] = CL_QUEUE_PROPERTIES_;
        out[n++] = CL_QUEUE_PROFILING_ENABLE_;
    }
    out[n] = 0;
    return 1;
}

static uint64_t app_props_of(const uint64_t *props)
{
    for (unsigned n = 0; props && props[n] && n + 2 < 64; n += 2)
        if (props[n] == CL_QUEUE_PROPERTIES_)
            return props[n + 1];
    return 0;
}

static void props_with_profiling(struct clt_hook *h, void **context, void **device, void **properties)
{
    if (!h->th)
        return;
    if ((h->changed = plain_mode(*context, *device, app_props_of(*properties))) != 0)
        return;
    if (props_plus_profiling(*properties, h->scratch)) {
        *properties = h->scratch;
        h->changed = PROFILING_ADDED;
    }
}

static void post_create_with_props(struct clt_hook *h, void **ret, void *context, void *device,
                                   const uint64_t *props, cl_int_ *errcode_ret)
{
    typedef void *(*create_t)(void *, void *, const uint64_t *, cl_int_ *);
    create_t create = h->real;
    if (!*ret && h->changed == PROFILING_ADDED) {
        if (!remaking) {
            remaking = 1;
            *ret = create(context, device, props, errcode_ret);
            remaking = 0;
        }
        return;
    }
    if (*ret && h->changed == LEFT_PLAIN && !remaking && !clt_profiling_switchable(*ret, device)) {
        void *again = NULL;
        if (props_plus_profiling(props, h->scratch)) {
            remaking = 1;
            again = create(context, device, h->scratch, errcode_ret);
            remaking = 0;
        }
        *ret = made_again(h, *ret, again, errcode_ret);
    }
    uint64_t arr[32];
    unsigned n = 0;
    for (; props && props[n] && n + 2 < 32; n += 2) {
        arr[n] = props[n];
        arr[n + 1] = props[n + 1];
    }
    if (props)
        arr[n++] = 0;
    queue_created(h, *ret, context, device, app_props_of(props), arr, n);
}

void clt_pre_clCreateCommandQueueWithProperties(struct clt_hook *h, void **context, void **device,
                                                void **properties, cl_int_ **errcode_ret)
{
    props_with_profiling(h, context, device, properties);
}

void clt_post_clCreateCommandQueueWithProperties(struct clt_hook *h, void **ret, void *context, void *device,
                                                 void *properties, cl_int_ *errcode_ret)
{
    post_create_with_props(h, ret, context, device, properties, errcode_ret);
}

void clt_pre_clCreateCommandQueueWithPropertiesKHR(struct clt_hook *h, void **context, void **device,
                                                   void **properties, cl_int_ **errcode_ret)
{
    props_with_profiling(h, context, device, properties);
}

void clt_post_clCreateCommandQueueWithPropertiesKHR(struct clt_hook *h, void **ret, void *context,
                                                    void *device, void *properties, cl_int_ *errcode_ret)
{
    post_create_with_props(h, ret, context, device, properties, errcode_ret);
}

/* The app reads back exactly the properties it asked for. */
void clt_pre_clGetCommandQueueInfo(struct clt_hook *h, void **command_queue, uint32_t *param_name,
                                   size_t *param_value_size, void **param_value, void **param_value_size_ret)
{
    if (*param_name == CL_QUEUE_PROPERTIES_ARRAY_) {   /* ours may be longer: read into scratch */
        *param_value = h->scratch;
        *param_value_size = sizeof h->scratch;
    }
}

void clt_post_clGetCommandQueueInfo(struct clt_hook *h, int32_t *ret, void *command_queue, uint32_t param_name,
                                    size_t param_value_size, void *param_value, void *param_value_size_ret)
{
    struct clt_queue_ent q;
    if (param_name == CL_QUEUE_PROPERTIES_ARRAY_) {
        size_t n = 0;
        const void *src = h->scratch;
        if (*ret == CL_SUCCESS_ && clt_queue_lookup(command_queue, &q)) {
            n = q.n_arr * sizeof(uint64_t);
            src = q.arr;
        } else if (*ret == CL_SUCCESS_) {
            size_t got = 0;    /* not ours: what the driver said */
            typedef int32_t (*qi_t)(void *, uint32_t, size_t, void *, size_t *);
            qi_t f = h->real;
            *ret = f(command_queue, param_name, 0, NULL, &got);
            n = got <= sizeof h->scratch ? got : 0;
        }
        if (*ret != CL_SUCCESS_)
            return;
        if (param_value && param_value_size < n) {
            *ret = CL_INVALID_VALUE_;
            return;
        }
        if (param_value && n)
            memcpy(param_value, src, n);
        if (param_value_size_ret)
            *(size_t *)param_value_size_ret = n;
        return;
    }
    if (*ret == CL_SUCCESS_ && param_name == CL_QUEUE_PROPERTIES_ && param_value &&
        param_value_size >= sizeof(uint64_t) && clt_queue_lookup(command_queue, &q) &&
        !(q.app_props & CL_QUEUE_PROFILING_ENABLE_))
        *(uint64_t *)param_value &= ~(uint64_t)CL_QUEUE_PROFILING_ENABLE_;
}

/* Profiling the app did not ask for stays unavailable to it, unless its
 * driver gives it without being asked (queues.c). */
void clt_post_clGetEventProfilingInfo(struct clt_hook *h, int32_t *ret, void *event, uint32_t param_name,
                                      size_t param_value_size, void *param_value, void *param_value_size_ret)
{
    get_info_t ev_info = REAL(clGetEventInfo);
    void *queue = NULL;
    struct clt_queue_ent q;
    if (*ret == CL_SUCCESS_ && ev_info &&
        ev_info(event, CL_EVENT_COMMAND_QUEUE_, sizeof queue, &queue, NULL) == CL_SUCCESS_ &&
        queue && clt_queue_lookup(queue, &q) && !(q.app_props & CL_QUEUE_PROFILING_ENABLE_) && !clt_profiles_unasked(queue))
        *ret = CL_PROFILING_INFO_NOT_AVAILABLE_;
}

/* ---- kernels: work-group facts, asked when made, recorded at the first
 * launch per (kernel, queue) -------------------------------------------- */

/* Asked after the first launch, PoCL answered under the lock its worker
 * held while compiling that launch: beside two CPU hogs 35-100 ms of the
 * app's call, 3 runs in 100 of a 300-call program. So they are asked when
 * the kernel is made, for each device of its program, and kept here; the
 * first launch records them, asking the driver only where they were not
 * kept (a kernel made before cltrace, a full table). */
#define KFACTS 512
#define KFACTS_PROBE 8
struct kfacts { void *kernel, *dev, *program; uint64_t v[4]; char name[CLT_MAX_STR]; };
static struct kfacts kfacts[KFACTS];
static pthread_mutex_t kfacts_lock = PTHREAD_MUTEX_INITIALIZER;
static const uint32_t kfacts_params[4] = { CL_KERNEL_WORK_GROUP_SIZE_, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE_,
                                           CL_KERNEL_LOCAL_MEM_SIZE_, CL_KERNEL_PRIVATE_MEM_SIZE_ };

/* A kernel and a device or queue, as one key (this file's two tables) */
static uint64_t kernel_key(void *kernel, void *other)
{
    return ((uint64_t)(uintptr_t)kernel * 0x9E3779B97F4A7C15ull) ^ (uint64_t)(uintptr_t)other;
}

static unsigned kfacts_slot(void *kernel, void *dev)
{
    return (unsigned)(kernel_key(kernel, dev) >> 20) & (KFACTS - 1);
}

static int kfacts_find(void *kernel, void *dev, struct kfacts *out)
{
    int found = 0;
    pthread_mutex_lock(&kfacts_lock);
    for (unsigned i = 0, s = kfacts_slot(kernel, dev); i < KFACTS_PROBE && !found; i++, s = (s + 1) & (KFACTS - 1))
        if (kfacts[s].kernel == kernel && kfacts[s].dev == dev) {
            *out = kfacts[s];
            found = 1;
        }
    pthread_mutex_unlock(&kfacts_lock);
    return found;
}

static void kfacts_ask(void *kernel, void *dev, uint64_t v[4])
{
    get_info2_t kinfo = REAL(clGetKernelWorkGroupInfo);
    for (int i = 0; i < 4; i++)
        if (!kinfo || kinfo(kernel, dev, kfacts_params[i], sizeof v[i], &v[i], NULL) != CL_SUCCESS_)
            v[i] = 0;
}

/* A new kernel's facts for each device of its program (a handle reused
 * after a release replaces the old one's); src: a clone's source, copied */
static void kfacts_keep(void *kernel, void *src)
{
    get_info_t kinfo = REAL(clGetKernelInfo), pinfo = REAL(clGetProgramInfo);
    void *program = NULL, *devs[8];
    size_t bytes = 0;
    char name[sizeof kfacts[0].name] = "";
    if (!kernel || !kinfo || !pinfo || kinfo(kernel, 0x1194 /* CL_KERNEL_PROGRAM */, sizeof program, &program, NULL) ||
        pinfo(program, CL_PROGRAM_DEVICES_, sizeof devs, devs, &bytes) != CL_SUCCESS_)
        return;
    if (kinfo(kernel, 0x1190 /* CL_KERNEL_FUNCTION_NAME */, sizeof name, name, NULL) != CL_SUCCESS_)
        name[0] = 0;        /* longer than kept: the trace's name, if any */
    name[sizeof name - 1] = 0;
    for (size_t d = 0; d < bytes / sizeof *devs && d < 8; d++) {
        struct kfacts f = { kernel, devs[d], program, { 0, 0, 0, 0 }, "" }, from;
        memcpy(f.name, name, sizeof name);
        if (src && kfacts_find(src, devs[d], &from))
            memcpy(f.v, from.v, sizeof f.v);
        else
            kfacts_ask(kernel, devs[d], f.v);
        pthread_mutex_lock(&kfacts_lock);
        unsigned s = kfacts_slot(kernel, devs[d]), at = s;
        for (unsigned i = 0; i < KFACTS_PROBE; i++, s = (s + 1) & (KFACTS - 1))
            if (kfacts[s].kernel == kernel && kfacts[s].dev == devs[d]) {
                at = s;
                break;
            } else if (!kfacts[s].kernel && kfacts[at].kernel) {
                at = s;
            }
        kfacts[at] = f;       /* all probed taken: the first, overwritten */
        pthread_mutex_unlock(&kfacts_lock);
    }
}

#define KSEEN_SIZE 4096
static uint64_t kseen[KSEEN_SIZE];

static int kernel_first_launch(void *kernel, void *queue)
{
    uint64_t key = kernel_key(kernel, queue) | 1;
    for (unsigned i = 0, s = (unsigned)(key >> 20) & (KSEEN_SIZE - 1); i < 64; i++, s = (s + 1) & (KSEEN_SIZE - 1)) {
        uint64_t cur = __atomic_load_n(&kseen[s], __ATOMIC_ACQUIRE);
        if (cur == key)
            return 0;
        if (!cur) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&kseen[s], &expected, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return 1;
            if (expected == key)
                return 0;
        }
    }
    return 0;    /* table full: no more facts, nothing breaks */
}

void clt_post_clCreateKernel(struct clt_hook *h, void **ret, void *program, void *kernel_name, cl_int_ *errcode_ret)
{
    (void)program, (void)kernel_name, (void)errcode_ret;
    if (h->th)
        kfacts_keep(*ret, NULL);
}

/* The kernels made: the program's, not the room the app gave (the rest of
 * its array is not written) */
void clt_post_clCreateKernelsInProgram(struct clt_hook *h, int32_t *ret, void *program, uint32_t num_kernels,
                                       void *kernels, void *num_kernels_ret)
{
    get_info_t pinfo = REAL(clGetProgramInfo);
    size_t made = 0;
    if (!h->th || *ret != CL_SUCCESS_ || !kernels)
        return;
    if (num_kernels_ret)
        made = *(uint32_t *)num_kernels_ret;
    else if (!pinfo || pinfo(program, 0x1167 /* CL_PROGRAM_NUM_KERNELS */, sizeof made, &made, NULL) != CL_SUCCESS_)
        return;
    for (size_t i = 0; i < made && i < num_kernels; i++)
        kfacts_keep(((void **)kernels)[i], NULL);
}

void clt_post_clCloneKernel(struct clt_hook *h, void **ret, void *source_kernel, cl_int_ *errcode_ret)
{
    (void)errcode_ret;
    if (h->th)
        kfacts_keep(*ret, source_kernel);
}

void clt_post_clEnqueueNDRangeKernel(struct clt_hook *h, int32_t *ret, void *command_queue, void *kernel,
                                     uint32_t work_dim, void *global_work_offset, void *global_work_size,
                                     void *local_work_size, uint32_t num_events_in_wait_list,
                                     void *event_wait_list, void *event)
{
    if (!h->th || *ret != CL_SUCCESS_)
        return;
    if (!kernel_first_launch(kernel, command_queue)) {
        h->th->launch_memo.seen_kernel = kernel;
        h->th->launch_memo.seen_queue = command_queue;
        return;
    }
    /* the device as cltrace saw the queue made: PoCL answers CL_QUEUE_DEVICE
     * under the queue's lock, just taken by the launch (beside two CPU hogs
     * 45 ms once in 100 runs of a 300-call program) */
    get_info_t qinfo = REAL(clGetCommandQueueInfo);
    struct clt_queue_ent q;
    void *dev = clt_queue_lookup(command_queue, &q) ? q.device : NULL;
    if (!dev && (!qinfo || qinfo(command_queue, CL_QUEUE_DEVICE_, sizeof dev, &dev, NULL) != CL_SUCCESS_))
        return;
    struct kfacts f = { kernel, dev, NULL, { 0, 0, 0, 0 }, "" };
    if (!kfacts_find(kernel, dev, &f))
        kfacts_ask(kernel, dev, f.v);
    struct clt_extra x;
    struct clt_rec *rec = special_begin(h->th, KI_N, &x);
    if (!rec)
        return;
    rec->arg[KI_KERNEL] = (uint64_t)(uintptr_t)kernel;
    rec->arg[KI_DEVICE] = (uint64_t)(uintptr_t)dev;
    memcpy(&rec->arg[KI_WG_SIZE], f.v, sizeof f.v);      /* KI_WG_SIZE .. KI_PRIVATE_MEM */
    rec->arg[KI_PROGRAM] = (uint64_t)(uintptr_t)f.program;
    rec->arg[KI_NAME] = clt_put_str(&x, KI_NAME, 1, f.name);
    special_commit(h->th, rec, &x, CLT_REC_KERNEL);
}
