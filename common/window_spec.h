/* When cltrace records (CLTRACE_WINDOW, cltrace --window): a comma list of
 * windows, each START[+LENGTH], opened one after the other:
 *
 *   START   TIME          that long after the program started (90s, 250ms, 2m, 1h)
 *           Ncalls        after the program's first N OpenCL calls
 *           kernel:GLOB   at the first launch of a kernel whose name matches
 *           manual        when the program calls cltrace_start() or someone
 *                         runs `cltrace ctl PID start` (nothing opens it else)
 *   LENGTH  TIME | Ncalls how long it stays open; none: until stopped or the end
 *
 * CLTRACE_WINDOW_EVERY=TIME repeats the list that often (timed windows only,
 * each over before the next round's first starts):
 * "60s+10s" every 600s is 10 s at 60 s, 660 s, 1260 s...
 * Shared by the shim (capture/window.c) and the launcher (which checks the
 * spelling before the program starts). */
#ifndef CLT_WINDOW_SPEC_H
#define CLT_WINDOW_SPEC_H
#include <stdint.h>

enum clt_win_at { CLT_AT_TIME, CLT_AT_CALLS, CLT_AT_KERNEL, CLT_AT_MANUAL };
enum clt_win_for { CLT_FOR_EVER, CLT_FOR_TIME, CLT_FOR_CALLS };

#define CLT_WINDOWS_MAX 16
struct clt_window_spec {
    enum clt_win_at at;
    uint64_t start;           /* ns (TIME) or calls (CALLS) */
    char glob[96];            /* KERNEL */
    enum clt_win_for len_kind;
    uint64_t len;             /* ns or calls */
};
struct clt_windows {
    unsigned n;
    struct clt_window_spec w[CLT_WINDOWS_MAX];
    uint64_t every_ns;        /* 0: once */
    int counts;               /* a window starts or ends by calls or a kernel: every call is looked at */
};

/* 0 ok; -1 not readable (err says why). every: CLTRACE_WINDOW_EVERY or "". */
int clt_windows_parse(const char *spec, const char *every, struct clt_windows *ws, char *err, unsigned errlen);
/* "TIME" -> ns; -1: not a duration. */
int clt_duration_parse(const char *s, uint64_t *ns);

#endif
