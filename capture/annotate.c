/* The program's own marks (include/cltrace.h): ranges, instants, counters.
 * The header finds `cltrace_api_v1` with dlsym; each entry point writes one
 * record into the calling thread's ring, like a wrapper does (no lock, no
 * allocation); the writer turns them into slices, instants and counter
 * values (marks.c). Off (CLTRACE_DISABLE, or after exit): one load
 * and a branch. */
#include <string.h>
#include "include/cltrace.h"
#include "hooks.h"
#include "put.h"
#include "window.h"

static void annotate(unsigned kind, const char *name, uint64_t value)
{
    struct clt_thread *th = clt_enter();
    if (!th)
        return;
    int saved = errno;
    uint64_t now = clt_now();
    struct clt_rec *rec = clt_rec_begin(th, sizeof(struct clt_rec) + 8 * 2 + CLT_MAX_STR);
    if (rec) {
        struct clt_extra x = clt_extra_init(rec, 2);
        rec->arg[0] = clt_put_str(&x, 0, 1, name ? name : "");
        rec->arg[1] = value;
        clt_rec_commit(th, rec, &x, kind, now, now, 0);
    }
    errno = saved;
}

static void range_push(const char *name)
{
    annotate(CLT_REC_RANGE_PUSH, name, 0);
}

static void range_pop(void)
{
    annotate(CLT_REC_RANGE_POP, NULL, 0);
}

static void mark(const char *name)
{
    annotate(CLT_REC_MARK, name, 0);
}

static void counter(const char *name, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    annotate(CLT_REC_COUNTER, name, bits);
}

CLT_EXPORT const struct cltrace_api_v1 cltrace_api_v1 = {
    sizeof(struct cltrace_api_v1), range_push, range_pop, mark, counter, clt_window_start, clt_window_stop,
};
