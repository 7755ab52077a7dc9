/* Device memory as the program held it: every buffer clCreateBuffer* made,
 * its bytes, when it was made and released and where, so that the report
 * can say the peak, when it came and which buffers held it (gDEBugger's
 * view of memory per object; seed 004's debugging course works from it).
 *
 * The peak is of the buffers' bytes summed over every trace read (ranks of
 * a job on one host share the clock: their sum is what a shared device
 * held). Sub-buffers take no memory of their own and are not counted. */
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "reader.h"

#define RM_MEM_MAX (1u << 20)    /* buffers kept; past it only the count (said) */

static void rm_mem_made(struct rm_model *m, uint64_t id, uint64_t bytes, uint64_t ts, int site)
{
    struct rm_memory *x = &m->mem;
    if (!id || !bytes)
        return;
    if (x->n == RM_MEM_MAX || clt_grow(&x->v, x->n, &x->cap, sizeof *x->v, 256) != 0 ||
        clt_map_put(&x->live, id, (void *)(uintptr_t)(x->n + 1)) != 0) {
        x->untracked++;
        return;
    }
    x->v[x->n++] = (struct rm_buffer){ id, bytes, ts, UINT64_MAX, site };
    x->bytes += bytes;
    x->buffers++;
    if (x->bytes > x->peak) {
        x->peak = x->bytes;
        x->peak_at = ts;
    }
}

static void rm_mem_released(struct rm_model *m, uint64_t id, uint64_t ts)
{
    struct rm_memory *x = &m->mem;
    uintptr_t i = id ? (uintptr_t)clt_map_del(&x->live, id) : 0;
    if (!i)
        return;
    x->v[i - 1].freed = ts;
    x->bytes -= x->v[i - 1].bytes;
}

/* An API call that ended at ts, without an error, and made a handle or let
 * one go (totals.c asks for no other): a buffer made, or released to no
 * reference. */
void rm_mem_buffer_call(struct rm_model *m, const struct open_slice *o, uint64_t ts)
{
    if (o->result_id && !strncmp(o->name, "clCreateBuffer", 14))
        rm_mem_made(m, o->result_id, o->size, o->ts, o->site);
    else if (o->refs_after == 1 && !strcmp(o->name, "clReleaseMemObject"))
        rm_mem_released(m, o->memobj, ts);
}

static int by_bytes(const void *a, const void *b)
{
    const struct rm_buffer *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : x->made < y->made ? -1 : x->made > y->made;
}

/* The buffers live at the peak, largest first, at most `cap` of them (their
 * count in all: the return value). */
unsigned rm_mem_at_peak(const struct rm_model *m, struct rm_buffer *out, unsigned cap)
{
    const struct rm_memory *x = &m->mem;
    unsigned n = 0, all = 0;
    struct rm_buffer *held = malloc((x->n ? x->n : 1) * sizeof *held);
    for (unsigned i = 0; held && i < x->n; i++)
        if (x->v[i].made <= x->peak_at && x->v[i].freed > x->peak_at)
            held[n++] = x->v[i];
    all = n;
    if (held)
        qsort(held, n, sizeof *held, by_bytes);
    for (unsigned i = 0; held && i < n && i < cap; i++)
        out[i] = held[i];
    free(held);
    return all;
}

void rm_mem_free(struct rm_model *m)
{
    free(m->mem.v);
    clt_map_free(&m->mem.live);
    memset(&m->mem, 0, sizeof m->mem);
}
