/* What the capture side's parts share: configuration, the library lookups
 * (real.c), the thread rings (rings.c), the writer they start. */
#ifndef CLT_SHIM_H
#define CLT_SHIM_H
#include "common/config.h"
#include "put.h"
#include "fingerprint.h"
#include "writer/writer.h"

/* capture/generated/clt_wrappers.c: every wrapper by name, the loader's
 * dispatch-table order */
struct clt_ext_entry { const char *name; void *wrapper; };
extern const struct clt_ext_entry clt_ext_table[];   /* indexed by enum clt_fn */
extern const unsigned clt_ext_table_len;
extern const int16_t clt_icd_dispatch[];              /* loader dispatch slot -> clt_fn, -1 */
extern const unsigned clt_icd_dispatch_len;
const struct clt_ext_entry *clt_ext_find(const char *name);   /* a command's wrapper by name, NULL */

void *clt_ext_wrap(const char *name, void *real);   /* our wrapper for an extension lookup's result */

/* real.c: the real library, the process, the platform */
extern int clt_pid;
int clt_is_self(const void *addr);           /* addr lies in libcltrace.so */
void clt_app_library(void *handle);          /* dlsym.c: the OpenCL library the app dlopen'ed */
void clt_real_self(void *addr_in_shim);      /* at load: which file is ours */
const char *clt_real_self_name(void);
void clt_real_set_interposer(void *(*fn)(unsigned fn, void *real));   /* life.c, at load */
/* what stands in front of the driver may wait on a command's events before
 * enqueueing it (a launch captured, fingerprints): set by life.c at load */
extern int clt_interposer_waits;
void *clt_interpose(unsigned fn, void *real);
void clt_loop_detected(unsigned fn);
int clt_cl_version(const char *device_version);   /* "OpenCL 2.1 …" -> 201; 0: unknown */

/* rings.c: what the process's first recorded call starts (life.c sets it at
 * load): start() the writer (0: it runs), started() once the first ring is
 * there, stopped() where recording ended (the writer failed or finished) */
struct clt_rings_life {
    int (*start)(void);
    void (*started)(void);
    void (*stopped)(void);
};
void clt_rings_set_life(const struct clt_rings_life *life);
int clt_rings_state(void);                   /* 0 not started, 1 running, -1 failed, 2 finished */
int clt_rings_finish(void);                  /* at exit: 1 if the writer ran */
void clt_rings_forget(void);                 /* a fork child */
void clt_rings_measure_clock(void);          /* at load: clt_clock_read_ticks */

void clt_sample_load(void);                  /* sample.c: CLTRACE_SAMPLE, at load */
void clt_sample_event_price(uint64_t event_ticks, uint64_t write_penalty_ticks);   /* the calibration's */
uint64_t clt_sample_budget_share_ns(void);    /* the budget's share of the work so far; sampling off: UINT64_MAX */

#endif
