/* What an event costs on a device and where its clock stands, measured
 * with markers, fills and writes on the device's first queue before the
 * app uses it (calibrate.c); hooks.c records it. */
#ifndef CLT_CALIBRATE_H
#define CLT_CALIBRATE_H
#include <stdint.h>
#include "shim.h"

struct clt_evcost {
    uint64_t without, with;     /* a command's enqueue without, with an event: medians (ticks) */
    uint64_t samples;           /* pairs measured */
    uint64_t write_penalty;     /* a write + sync on a profiling queue against a plain one (ticks; 0: none) */
    uint64_t write_event;       /* what an event adds to a 4-byte write (ticks) */
};

/* 1: measured into *out (8 pairs at least); the clock markers' evidence
 * recorded on th as it goes (clock.c) where the queue is `profiled` now */
int clt_calibrate(struct clt_thread *th, void *queue, void *dev, int cpu_device, int app_profiling, int profiled,
                  struct clt_evcost *out);
#endif
