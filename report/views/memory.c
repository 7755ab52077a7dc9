/* Device memory in words: the peak of the buffers the program held, when it
 * came, which buffers held it, and how near the device's memory it was. */
#include <stdio.h>
#include <string.h>
#include "common/bytes.h"
#include "views.h"

/* The device with the least global memory: the one a peak nears first. */
static int smallest_device(const struct rm_model *m)
{
    int d = -1;
    for (unsigned i = 0; i < m->n_dev && i < 8; i++)
        if (m->dev[i].global_mem > 0 && (d < 0 || m->dev[i].global_mem < m->dev[d].global_mem))
            d = (int)i;
    return d;
}

void memory_view(const struct rm_model *m, struct memory_view *v)
{
    *v = (struct memory_view){ 0 };
    const struct rm_memory *x = &m->mem;
    if (!x->peak)
        return;
    v->peak_bytes = x->peak;
    v->peak_at_ns = x->peak_at > x->first_ts ? x->peak_at - x->first_ts : 0;
    v->buffers = x->buffers;
    v->untracked = x->untracked;
    v->n_held = rm_mem_at_peak(m, v->held, MEMORY_HELD);
    int d = smallest_device(m);
    if (d >= 0) {
        v->global_bytes = (uint64_t)m->dev[d].global_mem;
        v->device = d;
        v->percent = 100.0 * (double)x->peak / (double)m->dev[d].global_mem;
        v->near_limit = v->percent >= MEMORY_NEAR_PERCENT;
    }
}

/* The first screen's line ("peak 768 KiB of buffers at 0.095 s, 3 held it, the largest 256 KiB
 * (buffer 7, main (app.c:25)); 0.0 % of device 0's 7.0 GiB"), or with `all`
 * every buffer named (Markdown, HTML): where's first frame, or whole. */
void memory_words(const struct rm_model *m, const struct memory_view *v, int all, char *buf, size_t cap)
{
    char peak[32], one[32], dev[32], site[RM_MAX_SITE];
    size_t n = 0;
    buf[0] = 0;
    if (!v->peak_bytes)
        return;
    clt_bytes_words(v->peak_bytes, peak, sizeof peak);
    n += (size_t)snprintf(buf + n, cap - n, "peak %s of buffers at %.3f s, %u held it", peak, v->peak_at_ns / 1e9,
                          v->n_held);
    for (unsigned i = 0; i < v->n_held && i < (all ? MEMORY_HELD : 1) && n < cap; i++) {
        const struct rm_buffer *b = &v->held[i];
        clt_bytes_words(b->bytes, one, sizeof one);
        snprintf(site, sizeof site, "%s", b->site > 0 && (unsigned)b->site <= m->n_sites ? m->sites[b->site - 1].site : "");
        char *cut = all ? NULL : strstr(site, " <- ");     /* the first screen: the first frame */
        if (cut)
            *cut = 0;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s (buffer %llu%s%s)", i ? ", " : all ? ": " : ", the largest ",
                              one, (unsigned long long)b->id, site[0] ? ", " : "", site);
    }
    if (all && v->n_held > MEMORY_HELD && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ", %u more", v->n_held - MEMORY_HELD);
    if (v->global_bytes && n < cap) {
        clt_bytes_words(v->global_bytes, dev, sizeof dev);
        n += (size_t)snprintf(buf + n, cap - n, "; %.1f %% of device %d's %s%s", v->percent, v->device, dev,
                              v->near_limit ? ": near its limit" : "");
    }
    if (v->untracked && n < cap)
        snprintf(buf + n, cap - n, " (%llu buffers past the first 1,048,576 not counted)",
                 (unsigned long long)v->untracked);
}
