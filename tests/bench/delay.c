/* A control for scripts/selfcost-check.py --delay: preloaded, it adds a
 * bare busy-wait of DELAY_NS before each OpenCL call the measuring
 * programs make, and nothing else: no threads, no memory, no events. Given
 * cltrace's own time per call (what the report states on the app's
 * threads, over the calls), it shows what any tracer that took that long on
 * the calling thread would cost the program. Where a driver's thread goes
 * to sleep between commands, that is not the time itself: on a 2-vCPU VM
 * whose idle CPUs halt at once, 1 us before each of 4,000 small blocking
 * writes on PoCL cost +9.7 us a write (docs/PERFORMANCE.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static long delay_ns = -1;

static void spin(void)
{
    if (delay_ns < 0) {
        const char *s = getenv("DELAY_NS");
        delay_ns = s ? atol(s) : 0;
    }
    if (delay_ns <= 0)
        return;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < delay_ns);
}

#define REAL(name) static name##_t real; if (!real) real = (name##_t)dlsym(RTLD_NEXT, #name)

typedef int32_t (*clEnqueueWriteBuffer_t)(void *, void *, uint32_t, size_t, size_t, const void *, uint32_t,
                                          const void *, void *);
int32_t clEnqueueWriteBuffer(void *q, void *b, uint32_t blocking, size_t off, size_t size, const void *p,
                             uint32_t n, const void *wait, void *ev)
{
    REAL(clEnqueueWriteBuffer);
    spin();
    return real(q, b, blocking, off, size, p, n, wait, ev);
}

typedef int32_t (*clEnqueueReadBuffer_t)(void *, void *, uint32_t, size_t, size_t, void *, uint32_t, const void *,
                                         void *);
int32_t clEnqueueReadBuffer(void *q, void *b, uint32_t blocking, size_t off, size_t size, void *p, uint32_t n,
                            const void *wait, void *ev)
{
    REAL(clEnqueueReadBuffer);
    spin();
    return real(q, b, blocking, off, size, p, n, wait, ev);
}

typedef int32_t (*clEnqueueNDRangeKernel_t)(void *, void *, uint32_t, const size_t *, const size_t *,
                                            const size_t *, uint32_t, const void *, void *);
int32_t clEnqueueNDRangeKernel(void *q, void *k, uint32_t dim, const size_t *off, const size_t *g, const size_t *l,
                               uint32_t n, const void *wait, void *ev)
{
    REAL(clEnqueueNDRangeKernel);
    spin();
    return real(q, k, dim, off, g, l, n, wait, ev);
}

typedef int32_t (*clFinish_t)(void *);
int32_t clFinish(void *q)
{
    REAL(clFinish);
    spin();
    return real(q);
}

typedef int32_t (*clWaitForEvents_t)(uint32_t, const void *);
int32_t clWaitForEvents(uint32_t n, const void *evs)
{
    REAL(clWaitForEvents);
    spin();
    return real(n, evs);
}

typedef int32_t (*clSetKernelArg_t)(void *, uint32_t, size_t, const void *);
int32_t clSetKernelArg(void *k, uint32_t i, size_t size, const void *v)
{
    REAL(clSetKernelArg);
    spin();
    return real(k, i, size, v);
}
