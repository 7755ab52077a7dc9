/* The app's queues as cltrace changed them (queues.c): the properties the
 * app asked for, and profiling switched per timed command (CLTRACE_SAMPLE,
 * where the driver can). */
#ifndef CLT_QUEUES_H
#define CLT_QUEUES_H
#include <stdint.h>

struct clt_queue_ent {
    void *queue;
    uint64_t app_props;          /* CL_QUEUE_PROPERTIES the app asked for */
    unsigned n_arr;              /* the app's property array (values incl. the 0), 0: none */
    uint64_t arr[32];
    unsigned timing;             /* timed commands being enqueued now (profiling stays on while > 0) */
    int profiling;               /* on now (switched queues) */
    int cpu_device;              /* its device is a CPU (PoCL): it runs on the app's cores */
    int mode;                    /* how cltrace times it: CLT_QUEUE_* (trace/record.h) */
    void *device;                /* its device: asking the driver takes the queue's lock (below) */
};

/* A queue made: e's queue, app_props, arr/n_arr, mode, cpu_device and device */
void clt_queue_remember(const struct clt_queue_ent *made);
int clt_queue_lookup(void *q, struct clt_queue_ent *out);
int clt_queue_by_callbacks(void *queue);     /* left plain, timed by callbacks */

/* Some queue has profiling switched (CLT_MODE_SWITCHED): the generated
 * enqueue wrappers then ask clt_profiling_on before a timed command (1: call
 * clt_profiling_done once it is enqueued), clt_profiling_plain before an
 * untimed one; some queue is timed by callbacks (CLT_MODE_CALLBACKS): they
 * ask clt_queue_by_callbacks before a timed command (cbtime.h). One word,
 * so that an enqueue elsewhere tests one flag. */
enum { CLT_MODE_SWITCHED = 1, CLT_MODE_CALLBACKS = 2 };
extern int clt_queue_modes;
int clt_profiling_on(void *queue);
void clt_profiling_done(void *queue);
void clt_profiling_plain(void *queue);
int clt_profiling_refused(void *device);               /* tried on this device: it cannot */
int clt_profiling_switchable(void *queue, void *device);   /* try once per device (a plain queue of it) */
/* The device's profiling clock is the host's CLOCK_MONOTONIC_RAW, as PoCL's
 * is (what callbacks read: cbtime.c): asked once per device, on a profiling
 * queue of cltrace's own in context. */
int clt_profiling_clock_is_raw(void *context, void *device);
int clt_profiling_clock_known_raw(void *device);   /* that verdict, where reached: no trial */
/* Whether the driver of queue's device gives a plain queue's events
 * profiling times anyway (Oclgrind): then the app reads them under cltrace
 * too. Asked once per device, when an app first reads profiling it did not
 * ask for. */
int clt_profiles_unasked(void *queue);

#endif
