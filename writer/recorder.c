/* The flight recorder (CLTRACE_RING_MB): the trace's packets kept in memory,
 * only the last MB of them, written out when asked: at exit, on a fatal
 * signal or _exit (the main trace file), on `cltrace ctl PID snapshot`, the
 * program's first failing call or a kernel's first launch (a snapshot file
 * beside it).
 *
 * What the writer flushes becomes a blob here instead of file bytes. The
 * memory is cut into epochs of about MB/8: at each, the writer restarts
 * every sequence (its interning cleared, its track declared again), so an
 * epoch decodes without the ones before it; the oldest blobs go as the
 * memory fills, always down to an epoch's start. Track descriptors and trace
 * attributes are kept apart, once each, and written first: a queue's track
 * declared an hour ago still names its commands. */
#include <stdlib.h>
#include <string.h>
#include "emit.h"

struct blob {
    struct blob *next;
    size_t len;
    int epoch_start;
    uint8_t data[];
};

static struct blob *oldest, *newest;
static size_t held, cap, since_epoch, epoch_len;
static int next_starts_epoch = 1;
static uint64_t dropped_bytes, taken_bytes;
static uint8_t *lasting;
static size_t lasting_len, lasting_cap;
static uint64_t *uuids;         /* tracks kept in `lasting` */
static size_t n_uuids, cap_uuids;

int clt_rec_on(void)
{
    return cap != 0;
}

void clt_rec_init(double mb)
{
    cap = mb > 0 ? (size_t)(mb * 1048576.0) : 0;
    if (cap && cap < 65536)
        cap = 65536;
    epoch_len = cap / 8;
}

static int grow(void **p, size_t *capacity, size_t need, size_t elem)
{
    if (need <= *capacity)
        return 0;
    size_t c = *capacity ? *capacity * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *capacity = c;
    return 0;
}

void clt_rec_keep(const uint8_t *pkt, size_t n, uint64_t uuid)
{
    if (!cap)
        return;
    if (uuid) {
        for (size_t i = 0; i < n_uuids; i++)
            if (uuids[i] == uuid)
                return;
        if (grow((void **)&uuids, &cap_uuids, n_uuids + 1, sizeof *uuids) != 0)
            return;
        uuids[n_uuids++] = uuid;
    }
    if (lasting_len + n > CLT_OUT_FLUSH / 2 ||        /* bounded: written in one flush */
        grow((void **)&lasting, &lasting_cap, lasting_len + n, 1) != 0)
        return;
    memcpy(lasting + lasting_len, pkt, n);
    lasting_len += n;
}

int clt_rec_take(const uint8_t *buf, size_t n)
{
    if (!n)
        return 0;
    struct blob *b = malloc(sizeof *b + n);
    if (!b) {
        dropped_bytes += n;     /* out of memory: this part is lost, said in the trace */
        return 0;
    }
    memcpy(b->data, buf, n);
    b->len = n;
    b->next = NULL;
    b->epoch_start = next_starts_epoch;
    next_starts_epoch = 0;
    if (newest)
        newest->next = b;
    else
        oldest = b;
    newest = b;
    held += n;
    taken_bytes += n;
    since_epoch = b->epoch_start ? n : since_epoch + n;
    /* the oldest epoch goes whole while the memory is over its size */
    while (held > cap && oldest != newest) {
        struct blob *o = oldest;
        oldest = o->next;
        held -= o->len;
        dropped_bytes += o->len;
        free(o);
        while (oldest && !oldest->epoch_start && oldest != newest) {
            o = oldest;
            oldest = o->next;
            held -= o->len;
            dropped_bytes += o->len;
            free(o);
        }
    }
    return since_epoch >= epoch_len;
}

/* The next blob taken starts an epoch (dispatch.c starts one between two
 * records: every sequence declared again). */
void clt_rec_epoch_next(void)
{
    next_starts_epoch = 1;
}

size_t clt_rec_flush_at(void)
{
    size_t at = epoch_len / 4;        /* blobs small beside an epoch: the memory is cut finely */
    return cap && at < CLT_OUT_FLUSH ? (at > 16384 ? at : 16384) : CLT_OUT_FLUSH;
}

uint64_t clt_rec_dropped(void)
{
    return dropped_bytes;
}

uint64_t clt_rec_held(void)
{
    return held;
}

void clt_rec_dump(struct clt_writer *w, void (*put)(struct clt_writer *, const uint8_t *, size_t))
{
    if (lasting_len)
        put(w, lasting, lasting_len);
    struct blob *b = oldest;
    while (b && !b->epoch_start)    /* cannot happen: the oldest kept starts an epoch */
        b = b->next;
    for (; b; b = b->next)
        put(w, b->data, b->len);
}

void clt_rec_forget(void)
{
    while (oldest) {
        struct blob *o = oldest;
        oldest = o->next;
        free(o);
    }
    newest = NULL;
    held = since_epoch = lasting_len = n_uuids = 0;
    dropped_bytes = taken_bytes = 0;
    next_starts_epoch = 1;
}
