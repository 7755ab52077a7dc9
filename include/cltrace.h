/* cltrace.h — mark your program's phases in a cltrace trace.
 *
 *   #include <cltrace.h>
 *   cltrace_range_push("solver");      // a slice on this thread's track,
 *   ... OpenCL calls ...                // around the calls it contains
 *   cltrace_range_pop();
 *   cltrace_mark("checkpoint written"); // an instant on this thread's track
 *   cltrace_counter("residual", r);     // a counter track of the process
 *   cltrace_stop();  ...  cltrace_start();   // record only part of the run:
 *                                       // outside, calls that use objects are
 *                                       // not recorded, nor timed on the device
 *
 * Header only, nothing to link: each function looks libcltrace up once
 * (dlsym(RTLD_DEFAULT, "cltrace_api_v1"), found when the program runs under
 * `cltrace` or LD_PRELOAD=libcltrace.so) and does nothing without it -- one
 * load and one branch per call. Under cltrace with CLTRACE_DISABLE=1 a call
 * costs a function call and one more branch. The program behaves the same
 * with or without cltrace.
 *
 * Ranges nest per thread (push/pop on the same thread, like NVTX's); names
 * are copied (up to 255 bytes). cltrace-report breaks API time, device time,
 * transfers and findings down by range ("phases").
 *
 * Stable ABI: struct cltrace_api_v1 only grows at its end (check `size`). */
#ifndef CLTRACE_H
#define CLTRACE_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cltrace_api_v1 {
    size_t size;                                  /* sizeof the struct the library has */
    void (*range_push)(const char *name);
    void (*range_pop)(void);
    void (*mark)(const char *name);
    void (*counter)(const char *name, double value);
    /* since 2026-11: record from here (a window opens) / stop recording
     * (calls that make or release objects are still kept, so the objects a
     * window shows are named). Run under `cltrace --window manual`, nothing
     * is recorded until the first start. */
    void (*start)(void);
    void (*stop)(void);
};

/* The library's table, or NULL when the program runs without cltrace. */
static inline const struct cltrace_api_v1 *cltrace_api(void)
{
    static const struct cltrace_api_v1 *api;
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&api, (const struct cltrace_api_v1 *)dlsym(RTLD_DEFAULT, "cltrace_api_v1"),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&api, __ATOMIC_RELAXED);
}

static inline void cltrace_range_push(const char *name)
{
    const struct cltrace_api_v1 *a = cltrace_api();
    if (a)
        a->range_push(name);
}

static inline void cltrace_range_pop(void)
{
    const struct cltrace_api_v1 *a = cltrace_api();
    if (a)
        a->range_pop();
}

static inline void cltrace_mark(const char *name)
{
    const struct cltrace_api_v1 *a = cltrace_api();
    if (a)
        a->mark(name);
}

static inline void cltrace_counter(const char *name, double value)
{
    const struct cltrace_api_v1 *a = cltrace_api();
    if (a)
        a->counter(name, value);
}

/* the library has this entry (an older one may not) */
#define CLTRACE_HAS_(a, field) ((a) && (a)->size >= offsetof(struct cltrace_api_v1, field) + sizeof (a)->field)

static inline void cltrace_start(void)
{
    const struct cltrace_api_v1 *a = cltrace_api();
    if (CLTRACE_HAS_(a, start))
        a->start();
}

static inline void cltrace_stop(void)
{
    const struct cltrace_api_v1 *a = cltrace_api();
    if (CLTRACE_HAS_(a, stop))
        a->stop();
}

#ifdef __cplusplus
}
#endif
#endif
