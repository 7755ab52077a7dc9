/* Device memory over time, on the writer thread: the bytes of live buffers
 * (clCreateBuffer*) per context and per device, as counters.
 *
 * A context's counter sits in its device's group when it has one device; a
 * device's counter sums every context on it (a buffer of a context of
 * several devices counts on each: the driver may place it on any). A
 * context made from a type names no device: its devices are those of the
 * queues the app makes in it, its bytes so far carried over when the first
 * is seen. A device's counter is drawn once device.c has declared its
 * group (when the driver named the device). Contract: TRACE_FORMAT.md. */
#include <stdio.h>
#include <string.h>
#include "device_model.h"
#include "emit.h"

static struct clt_ctx *ctx_find(struct clt_devmodel *m, uint64_t id)
{
    for (unsigned i = 0; id && i < m->n_ctxs; i++)
        if (m->ctxs[i].id == id)
            return &m->ctxs[i];
    return NULL;
}

static struct clt_ctx *ctx_get(struct clt_writer *w, uint64_t id)
{
    struct clt_devmodel *m = w->dev;
    struct clt_ctx *c = ctx_find(m, id);
    if (c || m->n_ctxs == CLT_DM_CONTEXTS || !id)
        return c;
    c = &m->ctxs[m->n_ctxs];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->index = m->n_ctxs++;
    c->uuid = w->process_uuid | 0xC0000000u | c->index;
    return c;
}

static void ctx_add_device(struct clt_ctx *c, struct clt_dev *d)
{
    for (unsigned i = 0; i < c->n_devs; i++)
        if (c->devs[i] == d)
            return;
    if (c->n_devs < CLT_CTX_DEVS)
        c->devs[c->n_devs++] = d;
}

/* A device's counter: its bytes in every context, in its group once
 * device.c declared it (until then counted, drawn from there on). */
static void dev_bytes(struct clt_writer *w, struct clt_dev *d, int64_t delta, uint64_t ts)
{
    d->mem_bytes += delta;
    if (!d->mem_uuid && d->declared) {
        char name[CLT_MAX_STR + 48];
        d->mem_uuid = w->process_uuid | 0xC0000000u | 0x100u | d->index;
        snprintf(name, sizeof name, "device memory, Device %u (every context)", d->index);
        clt_counter_track(w, d->mem_uuid, d->uuid, name, 1);
    }
    if (d->mem_uuid)
        clt_counter(w, d->mem_uuid, ts, d->mem_bytes);
}

unsigned clt_mem_devices(struct clt_writer *w, uint64_t ctx_id, struct clt_dev **out, unsigned cap)
{
    const struct clt_ctx *c = ctx_find(w->dev, ctx_id);
    unsigned n = 0;
    for (; c && n < c->n_devs && n < cap; n++)
        out[n] = c->devs[n];
    return n;
}

/* clCreateContext: the devices it was made for (a context from a type
 * learns its own from its queues: clt_mem_queue). */
void clt_mem_context(struct clt_writer *w, uint64_t ctx_id, struct clt_dev *const *devs, unsigned n)
{
    struct clt_ctx *c = ctx_get(w, ctx_id);
    for (unsigned i = 0; c && i < n; i++)
        if (devs[i])
            ctx_add_device(c, devs[i]);
}

/* A queue made in a context on a device: a context from a type learns its
 * first device so, with what it holds already. */
void clt_mem_queue(struct clt_writer *w, uint64_t ctx_id, struct clt_dev *d, uint64_t ts)
{
    struct clt_ctx *c = ctx_get(w, ctx_id);
    if (!c || !d || c->n_devs)
        return;
    ctx_add_device(c, d);
    if (c->bytes)
        dev_bytes(w, d, c->bytes, ts);
}

/* A buffer made (delta > 0) or let go: its context's counter and its devices'. */
void clt_mem_change(struct clt_writer *w, uint64_t ctx_id, int64_t delta, uint64_t ts)
{
    struct clt_ctx *c = ctx_get(w, ctx_id);
    if (!c)
        return;
    if (!c->declared) {
        char name[64];
        c->declared = 1;
        snprintf(name, sizeof name, "device memory, context %llu", (unsigned long long)c->id);
        int in_group = c->n_devs == 1 && c->devs[0]->declared;
        clt_counter_track(w, c->uuid, in_group ? c->devs[0]->uuid : w->process_uuid, name, 1);
    }
    c->bytes += delta;
    clt_counter(w, c->uuid, ts, c->bytes);
    for (unsigned i = 0; i < c->n_devs; i++)
        dev_bytes(w, c->devs[i], delta, ts);
}
