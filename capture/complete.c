/* A pending command's completion, asked by whoever collects (collect.c:
 * the collector, or an app thread where it waits anyway): its times from
 * the callbacks that timed it (cbtime.c) or from the driver's profiling,
 * the command recorded into the collecting ring, its event released. */
#define _GNU_SOURCE
#include <string.h>
#include "capture/complete.h"
#include "capture/generated/clt_hooks.h"
#include "cbtime.h"
#include "shim.h"

enum { CL_PROFILING_COMMAND_QUEUED_ = 0x1280, CL_PROFILING_COMMAND_END_ = 0x1283,
       CL_EVENT_COMMAND_EXECUTION_STATUS_ = 0x11D3 };

static int (*before_command)(struct clt_thread *th, void *event, uint64_t flow);

void clt_complete_set_before(int (*fn)(struct clt_thread *th, void *event, uint64_t flow))
{
    before_command = fn;
}

/* 1: recorded (complete or failed) and its event released, 0: still running. */
int clt_complete_try(struct clt_thread *th, const struct clt_pending *p, clt_info_fn prof, clt_info_fn ev_info)
{
    uint64_t t[4] = { 0, 0, 0, 0 };
    int32_t status = 0;
    int by_cb = p->cb ? clt_cb_times(p->cb, &t[1], &t[2], &t[3], &status) : -1;   /* -1: ask the driver */
    if (!by_cb)
        return 0;
    if (by_cb < 0 && (!prof || prof(p->event, CL_PROFILING_COMMAND_END_, 8, &t[3], NULL) != 0 || !t[3])) {
        t[3] = 0;
        if (!ev_info || ev_info(p->event, CL_EVENT_COMMAND_EXECUTION_STATUS_, sizeof status, &status, NULL) != 0)
            status = -1;          /* the driver no longer knows the event: count it, do not spin */
        if (status > 0)
            return 0;
        /* it completed between the two questions: its times are there now */
        if (status == 0 && (!prof || prof(p->event, CL_PROFILING_COMMAND_END_, 8, &t[3], NULL) != 0))
            t[3] = 0;
    }
    /* its fingerprints first (their readbacks run behind it), then the command */
    if (CLT_UNLIKELY(before_command != NULL) && !before_command(th, p->event, p->flow))
        return 0;
    for (int i = 0; i < 3 && t[3] && by_cb < 0; i++)
        if (prof(p->event, CL_PROFILING_COMMAND_QUEUED_ + (uint32_t)i, 8, &t[i], NULL) != 0)
            t[i] = 0;
    struct clt_rec *rec = th ? clt_rec_begin(th, sizeof(struct clt_rec) + 8 * CMD_N) : NULL;
    if (rec) {
        struct clt_extra x = clt_extra_init(rec, CMD_N);
        rec->arg[CMD_FLOW] = p->flow;
        rec->arg[CMD_EVENT] = (uint64_t)(uintptr_t)p->event;
        rec->arg[CMD_STATUS] = (uint64_t)(int64_t)status;
        memcpy(&rec->arg[CMD_QUEUED], t, sizeof t);
        uint64_t now = clt_now();
        clt_rec_commit(th, rec, &x, CLT_REC_COMMAND, now, now, 0);
    }
    typedef int32_t (*event_fn_t)(void *);
    event_fn_t rel = REAL(clReleaseEvent);
    if (rel)
        rel(p->event);
    return 1;
}
