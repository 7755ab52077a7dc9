/* What an event costs on a device and where its clock stands, measured
 * with markers, fills and writes when the device's first queue is made
 * (calibrate.c), recorded for the writer and the budget. */
#ifndef CLT_CALIBRATE_H
#define CLT_CALIBRATE_H
#include <stdint.h>
#include "shim.h"

/* On the app's thread, on its queue: the record (and the budget's price);
 * the clock markers' evidence recorded on th as it goes (clock.c) where the
 * queue is `profiled` now. */
void clt_calibrate_here(struct clt_thread *th, void *queue, void *dev, int cpu_device, int app_profiling, int profiled);
/* On a GPU: what a profiling queue adds to a write (ticks), on the app's
 * thread and its queue (profiling on now); then the rest handed to a
 * thread of cltrace's, on the device's queue of cltrace's (clock.c). 0:
 * not handed over (no queue of ours): calibrate here. */
uint64_t clt_calibrate_penalty(void *app_queue, void *dev);
int clt_calibrate_beside(struct clt_thread *th, void *dev, uint64_t write_penalty);
void clt_calibrate_finish(void);     /* the exit: those handed over, done (2 s at most) */
void clt_calibrate_forget(void);     /* fork child */
#endif
