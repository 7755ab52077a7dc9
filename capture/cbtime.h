/* Commands timed by their events' callbacks, on a queue cltrace leaves plain
 * (capture/cbtime.c says where and why). */
#ifndef CLT_CBTIME_H
#define CLT_CBTIME_H
#include <stdint.h>

/* Callbacks on event's CL_SUBMITTED, CL_RUNNING and CL_COMPLETE: the slot
 * that will hold its times (0: none could be set). */
uint32_t clt_cb_arm(void *event);

/* The slot's times, on the device's clock: 1 over (all 0 where the command
 * ran before its callbacks were set: not timed), 0 still running, -1 no
 * callbacks (ask the driver). */
int clt_cb_times(uint32_t slot, uint64_t *submit, uint64_t *start, uint64_t *end, int32_t *status);

/* A timed command of such a queue is held until its callbacks are set: a
 * user event of cltrace's own added to its wait list (clt_cb_gate: list
 * and n are what to pass the driver; NULL, nothing held, where the app's
 * list is malformed or long), then set complete once the callbacks are
 * (clt_cb_open, with the command's event, NULL if its enqueue failed). */
#define CLT_GATE_MAX 16
struct clt_gate {
    void *user;                  /* the user event; NULL: not held */
    uint32_t n;
    void *const *list;
    void *room[CLT_GATE_MAX];
};
struct clt_gate *clt_cb_gate(void *queue, uint32_t n, const void *list);   /* the thread's; NULL: not held */
void clt_cb_open(struct clt_gate *g, void *event);

/* A blocking command of such a queue, enqueued non-blocking and opened:
 * waited for, so that the app's call returns when it would have
 * (clWaitForEvents' result). clt_track_command takes the slot clt_cb_open
 * armed (clt_cb_take_armed). */
int32_t clt_cb_block(void *event);
uint32_t clt_cb_take_armed(void);
/* An event handed to the collector (collect.c): its slot, armed at its
 * enqueue (held), or now, perhaps too late (not held: a long wait list); 0
 * where its queue is not timed by callbacks. */
uint32_t clt_cb_slot(void *event, void *queue);

#endif
