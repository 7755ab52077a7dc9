/* Call stacks in the reader: interned frames per sequence, stacks as text
 * ("fn (file:line) <- caller (file:line) <- ..."), call sites, and the
 * lifetime findings that carry them (leaks, use after release). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "reader.h"

/* ---- call stacks ------------------------------------------------------------ */

void rm_intern_stacks(struct seq *s, const Perfetto__Protos__InternedData *in)
{
    for (size_t i = 0; i < in->n_function_names; i++)
        strtab_set(&s->fnames, in->function_names[i]->iid, (const char *)in->function_names[i]->str.data,
                   in->function_names[i]->str.len);
    for (size_t i = 0; i < in->n_source_paths; i++)
        strtab_set(&s->srcs, in->source_paths[i]->iid, (const char *)in->source_paths[i]->str.data,
                   in->source_paths[i]->str.len);
    for (size_t i = 0; i < in->n_frames; i++) {
        const Perfetto__Protos__Frame *f = in->frames[i];
        if (!cache_fit((void **)&s->frames, &s->n_frames, f->iid, sizeof *s->frames))
            continue;
        s->frames[f->iid].fn = f->function_name_id;
        s->frames[f->iid].src = f->has_source_path_iid ? f->source_path_iid : 0;
        s->frames[f->iid].line = f->line_number;
    }
    for (size_t i = 0; i < in->n_callstacks; i++) {
        const Perfetto__Protos__Callstack *c = in->callstacks[i];
        if (!cache_fit((void **)&s->stacks, &s->n_stacks, c->iid, sizeof *s->stacks))
            continue;
        struct stack *st = &s->stacks[c->iid];
        free(st->frames);
        st->n = 0;
        st->frames = c->n_frame_ids ? malloc(c->n_frame_ids * sizeof *st->frames) : NULL;
        if (st->frames) {
            memcpy(st->frames, c->frame_ids, c->n_frame_ids * sizeof *st->frames);
            st->n = (uint32_t)(c->n_frame_ids < 64 ? c->n_frame_ids : 64);
        }
    }
}

/* "fn (file:line) <- caller (file:line) <- ...": innermost frame first. */
void rm_site_of(const struct seq *s, uint64_t iid, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!s || iid >= s->n_stacks || !s->stacks[iid].n)
        return;
    const struct stack *st = &s->stacks[iid];
    size_t n = 0;
    for (uint32_t k = st->n; k-- > 0 && n + 8 < cap;) {
        uint64_t fid = st->frames[k];
        if (fid >= s->n_frames)
            continue;
        const struct frame *f = &s->frames[fid];
        const char *src = f->src ? strtab_get(&s->srcs, f->src) : "";
        int w = src[0] ? snprintf(buf + n, cap - n, "%s%s (%s:%u)", n ? " <- " : "", strtab_get(&s->fnames, f->fn),
                                  src, f->line)
                       : snprintf(buf + n, cap - n, "%s%s", n ? " <- " : "", strtab_get(&s->fnames, f->fn));
        if (w < 0 || (size_t)w >= cap - n) {
            if (n == 0 && w > 0) {      /* one frame longer than the room (a C++ template): cut, marked */
                memcpy(buf + cap - 4, "...", 4);
                return;
            }
            buf[n] = 0;
            break;
        }
        n += (size_t)w;
        if (!strcmp(strtab_get(&s->fnames, f->fn), "main"))
            break;          /* what is above main is the C runtime */
    }
}

/* The m->sites index + 1 of a call stack (its text), 0 if none. */
int rm_site_index(struct rm_model *m, struct seq *s, uint64_t cs)
{
    if (!cs || !cache_fit((void **)&s->site, &s->n_site, cs, sizeof *s->site))
        return 0;
    if (!s->site[cs]) {
        char site[RM_MAX_SITE];
        rm_site_of(s, cs, site, sizeof site);
        unsigned i = 0;
        while (i < m->n_sites && strcmp(m->sites[i].site, site))
            i++;
        if (i == m->n_sites) {
            if (m->n_sites >= 1024 || clt_grow(&m->sites, m->n_sites, &m->cap_sites, sizeof *m->sites, 16) != 0)
                return 0;
            memset(&m->sites[i], 0, sizeof m->sites[i]);
            snprintf(m->sites[i].site, sizeof m->sites[i].site, "%s", site);
            m->n_sites++;
        }
        s->site[cs] = (int32_t)i + 1;
    }
    return s->site[cs];
}

/* A small host<->device transfer, counted at its call site. */
void rm_small_site_add(struct rm_model *m, struct seq *s, uint64_t cs, uint64_t bytes)
{
    int i = rm_site_index(m, s, cs);
    if (i) {
        m->sites[i - 1].count++;
        m->sites[i - 1].bytes += bytes;
    }
}

void rm_leak_add(struct rm_model *m, const struct open_slice *o, const char *site)
{
    struct rm_leak *l = NULL;
    for (unsigned i = 0; i < m->n_leaks && !l; i++)
        if (!strcmp(m->leaks[i].type, o->type) && !strcmp(m->leaks[i].created_by, o->created_by) &&
            !strcmp(m->leaks[i].site, site) && !strcmp(m->leaks[i].kernel, o->kname))
            l = &m->leaks[i];
    if (!l) {
        if (m->n_leaks >= 4096 || clt_grow(&m->leaks, m->n_leaks, &m->cap_leaks, sizeof *m->leaks, 16) != 0)
            return;
        l = &m->leaks[m->n_leaks++];
        memset(l, 0, sizeof *l);
        snprintf(l->type, sizeof l->type, "%s", o->type);
        snprintf(l->created_by, sizeof l->created_by, "%s", o->created_by);
        snprintf(l->kernel, sizeof l->kernel, "%s", o->kname);
        snprintf(l->site, sizeof l->site, "%s", site);
        l->leak_class = RM_LEAK_UNKNOWN;
    }
    l->count++;
    l->once += o->site_made == 1 && o->site_released == 0;   /* the only object its own creation stack made */
    l->bytes += o->size;
    if (o->site_made > l->site_made)
        l->site_made = o->site_made;
    if (o->site_released > l->site_released)
        l->site_released = o->site_released;
    if (o->leak_class > l->leak_class) {      /* the worst class of its objects, and why */
        l->leak_class = o->leak_class;
        snprintf(l->why, sizeof l->why, "%s", o->leak_why);
    }
}

void rm_uar_add(struct rm_model *m, const char *fn, const char *site)
{
    struct rm_uar *u = NULL;
    for (unsigned i = 0; i < m->n_uars && !u; i++)
        if (!strcmp(m->uars[i].fn, fn) && !strcmp(m->uars[i].site, site))
            u = &m->uars[i];
    if (!u) {
        if (m->n_uars >= 4096 || clt_grow(&m->uars, m->n_uars, &m->cap_uars, sizeof *m->uars, 16) != 0)
            return;
        u = &m->uars[m->n_uars++];
        memset(u, 0, sizeof *u);
        snprintf(u->fn, sizeof u->fn, "%s", fn);
        snprintf(u->site, sizeof u->site, "%s", site);
    }
    u->count++;
}

