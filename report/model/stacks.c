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
    for (size_t i = 0; i < in->n_mapping_paths; i++)
        strtab_set(&s->mpaths, in->mapping_paths[i]->iid, (const char *)in->mapping_paths[i]->str.data,
                   in->mapping_paths[i]->str.len);
    for (size_t i = 0; i < in->n_mappings; i++) {
        const Perfetto__Protos__Mapping *mp = in->mappings[i];
        if (mp->n_path_string_ids && cache_fit((void **)&s->map_path, &s->n_maps, mp->iid, sizeof *s->map_path))
            s->map_path[mp->iid] = mp->path_string_ids[0];
    }
    for (size_t i = 0; i < in->n_frames; i++) {
        const Perfetto__Protos__Frame *f = in->frames[i];
        if (!cache_fit((void **)&s->frames, &s->n_frames, f->iid, sizeof *s->frames))
            continue;
        s->frames[f->iid].fn = f->function_name_id;
        s->frames[f->iid].src = f->has_source_path_iid ? f->source_path_iid : 0;
        s->frames[f->iid].line = f->line_number;
        s->frames[f->iid].map = f->has_mapping_id ? f->mapping_id : 0;
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

/* ---- whose frame: the program's or a library's ------------------------------ */

static int has(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* Installed Python: the standard library (…/lib/python3.11/, …/lib64/…),
 * site-packages and dist-packages (pyopencl, numpy), frozen modules and code
 * a library generated; `python -c` and stdin are the user's. */
static int python_library(const char *path)
{
    if (path[0] == '<')           /* generated code (<pyopencl invoker for 'scale'>) but what the user typed */
        return strcmp(path, "<string>") && strcmp(path, "<stdin>");
    return has(path, "/site-packages/") || has(path, "/dist-packages/") ||
           has(path, "/lib/python3") || has(path, "/lib64/python3") || has(path, "/lib/python2");
}

static int system_path(const char *path)
{
    static const char *const dirs[] = { "/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/",
                                        "/usr/libexec/", "/usr/local/lib/", "/usr/include/", "/usr/src/",
                                        "/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/", "/opt/", "/usr/local/",
                                        "/snap/", "/nix/store/", "/gnu/store/", NULL };
    for (unsigned i = 0; dirs[i]; i++)
        if (starts(path, dirs[i]))
            return 1;
    return 0;
}

int rm_frame_is_library(const char *src, const char *binary, const char *fn, const char *program)
{
    const char *base = strrchr(binary, '/');
    base = base ? base + 1 : binary;
    if (src[0]) {
        size_t n = strlen(src);
        if ((n > 3 && !strcmp(src + n - 3, ".py")) || src[0] == '<')
            return python_library(src);
        if (starts(src, "/usr/include/") || starts(src, "/usr/src/"))
            return 1;             /* inlined from a system header */
    }
    if (base[0]) {
        /* the interpreter, cltrace, the loader, a Python package's extension, an
         * OpenCL driver wherever it is installed (/usr/local/nvidia/lib64) */
        static const char *const libs[] = { "python", "libpython", "libcltrace", "libOpenCL", "libnvidia-",
                                             "libcuda", "libpocl", "libamdocl", "libigdrcl", "libintelocl",
                                             "libmpi", "libopen-", "libhwloc", "hwloc_", "libffi", NULL };
        for (unsigned i = 0; libs[i]; i++)
            if (starts(base, libs[i]))
                return 1;
        if (has(base, ".cpython-") || has(binary, "-packages/"))
            return 1;
        /* the program itself, wherever it is installed (/usr/bin/clinfo) */
        if (program && program[0] && !strncmp(base, program, strlen(program)))
            return 0;
        return system_path(binary);
    }
    if (src[0])
        return system_path(src);
    return has(fn, ".so");        /* a name only: "libfoo.so+0x1234" */
}

/* ---- stacks as text ------------------------------------------------------------ */

struct frame_text { const char *fn; char src[1024]; unsigned line; int lib; };

/* The path of the binary a frame lies in ("" none: a Python frame) */
static const char *frame_binary(const struct seq *s, const struct frame *f)
{
    return f->map && f->map < s->n_maps ? strtab_get(&s->mpaths, s->map_path[f->map]) : "";
}

static void frame_text(const struct seq *s, uint64_t fid, const char *program, struct frame_text *t)
{
    const struct frame *f = &s->frames[fid];
    t->fn = strtab_get(&s->fnames, f->fn);
    snprintf(t->src, sizeof t->src, "%s", f->src ? strtab_get(&s->srcs, f->src) : "");
    rm_tidy_path(t->src);
    t->line = f->line;
    t->lib = rm_frame_is_library(t->src, frame_binary(s, f), t->fn, program);
}

/* One frame onto buf at n ("fn (file:line)"), " <- " before all but the
 * first; 0: no room (buf kept whole up to n). */
static int put_frame(char *buf, size_t cap, size_t *n, const struct frame_text *t, int mark)
{
    const char *sep = *n ? " <- " : "", *lib = mark && t->lib ? "~" : "";
    int w = t->src[0] ? snprintf(buf + *n, cap - *n, "%s%s%s (%s:%u)", sep, lib, t->fn, t->src, t->line)
                      : snprintf(buf + *n, cap - *n, "%s%s%s", sep, lib, t->fn);
    if (w < 0 || (size_t)w >= cap - *n) {
        if (*n == 0 && w > 0 && cap >= 4) {      /* one frame longer than the room (a C++ template): cut, marked */
            memcpy(buf + cap - 4, "...", 4);
            *n = cap - 1;
        } else {
            buf[*n] = 0;
        }
        return 0;
    }
    *n += (size_t)w;
    return 1;
}

static void keep_full(struct rm_model *m, const char *where, const char *full)
{
    for (unsigned i = 0; i < m->n_stack_texts; i++)
        if (!strcmp(m->stack_texts[i].where, where))
            return;
    if (m->n_stack_texts >= 4096 ||
        clt_grow(&m->stack_texts, m->n_stack_texts, &m->cap_stack_texts, sizeof *m->stack_texts, 16) != 0)
        return;
    struct rm_stack_text *t = &m->stack_texts[m->n_stack_texts];
    t->where = strdup(where);
    t->full = strdup(full);
    if (!t->where || !t->full) {
        free(t->where);
        free(t->full);
        return;
    }
    m->n_stack_texts++;
}

/* The where of a stack: "fn (file:line) <- caller (file:line) <- ...", the
 * program's own frames from the innermost outward (the library frames,
 * pyopencl's or the interpreter's, are in the whole text); all frames where
 * none is the program's. Up to main: what is above it is the C runtime. */
int rm_site_of(struct rm_model *m, const struct seq *s, uint64_t iid, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!s || iid >= s->n_stacks || !s->stacks[iid].n)
        return 0;
    const struct stack *st = &s->stacks[iid];
    const char *program = m ? m->program : "";
    /* one pass: the whole text (library frames marked), the program's
     * frames, and every frame unmarked (the where when none is the program's) */
    char full[2 * RM_MAX_SITE], all[RM_MAX_SITE];
    size_t n = 0, nf = 0, na = 0;
    int room = 1, room_full = 1, room_all = (size_t)cap <= sizeof all, mine = 0;
    for (uint32_t k = st->n; k-- > 0 && (room || room_full || room_all);) {
        if (st->frames[k] >= s->n_frames)
            continue;
        struct frame_text t;
        frame_text(s, st->frames[k], program, &t);
        mine |= !t.lib;
        if (room_full)
            room_full = put_frame(full, sizeof full, &nf, &t, 1);
        if (room && !t.lib)
            room = put_frame(buf, cap, &n, &t, 0);
        if (room_all && !mine)
            room_all = put_frame(all, cap, &na, &t, 0);
        if (!strcmp(t.fn, "main"))
            break;          /* what is above main is the C runtime */
    }
    full[nf] = 0;
    if (!mine && na)
        memcpy(buf, all, na + 1);
    if (m && buf[0])
        keep_full(m, buf, full);
    return mine;
}

/* A CPU sample's label (stack iid): `where`, the program's innermost frame
 * ("fn (file:line)"); `fn`, what ran there: an OpenCL call the program was
 * in (its outermost cl* frame), else the program's own function where the
 * sample stopped in it or in the interpreter running it, else the library
 * function it had called. Where no frame is the program's: the innermost. */
void rm_sample_label(const struct rm_model *m, const struct seq *s, uint64_t iid, char *fn, size_t fn_cap,
                     char *where, size_t where_cap)
{
    snprintf(fn, fn_cap, "(no stack)");
    where[0] = 0;
    if (!s || iid >= s->n_stacks || !s->stacks[iid].n)
        return;
    const struct stack *st = &s->stacks[iid];
    const char *program = m ? m->program : "";
    struct frame_text t;
    int mine = -1, callee = -1, cl_call = -1;
    for (uint32_t k = 0; k < st->n; k++) {         /* outermost first */
        if (st->frames[k] >= s->n_frames)
            continue;
        frame_text(s, st->frames[k], program, &t);
        if (cl_call < 0 && !strncmp(t.fn, "cl", 2) && t.fn[2] >= 'A' && t.fn[2] <= 'Z')
            cl_call = (int)k;
        /* code without symbols, or in a module loaded after the writer read
         * the modules (Open MPI's components) with neither file nor
         * binary: not the program's own frame, which has one or the other */
        int unplaced = !strncmp(t.fn, "0x", 2) || (!t.src[0] && !frame_binary(s, &s->frames[st->frames[k]])[0]);
        if (!t.lib && !unplaced) {
            mine = (int)k;
            callee = -1;
        } else if (mine >= 0 && callee < 0) {
            const char *bin = frame_binary(s, &s->frames[st->frames[k]]), *base = strrchr(bin, '/');
            base = base ? base + 1 : bin;
            if (strncmp(base, "python", 6) && strncmp(base, "libpython", 9))
                callee = (int)k;       /* the interpreter running the program's frame is not a callee */
        }
    }
    int label = cl_call >= 0 ? cl_call : mine < 0 ? (int)st->n - 1 : callee >= 0 ? callee : mine;
    frame_text(s, st->frames[label], program, &t);
    snprintf(fn, fn_cap, "%s", t.fn);
    if (!strncmp(t.fn, "0x", 2)) {      /* by its binary where known: "libopen-pal.so.40", not an address */
        const char *bin = frame_binary(s, &s->frames[st->frames[label]]), *base = strrchr(bin, '/');
        snprintf(fn, fn_cap, "%s", bin[0] ? (base ? base + 1 : bin) : "(code without symbols)");
    }
    frame_text(s, st->frames[mine >= 0 ? mine : label], program, &t);
    size_t n = 0;
    put_frame(where, where_cap, &n, &t, 0);
}

void rm_site_caller(const struct seq *s, uint64_t iid, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!s || iid >= s->n_stacks || !s->stacks[iid].n)
        return;
    const struct stack *st = &s->stacks[iid];
    uint64_t fid = st->frames[st->n - 1];
    if (fid >= s->n_frames)
        return;
    const struct frame *f = &s->frames[fid];
    const char *binary = frame_binary(s, f);
    const char *base = strrchr(binary, '/');
    snprintf(buf, cap, "%s", base ? base + 1 : binary[0] ? binary : strtab_get(&s->fnames, f->fn));
}

const char *rm_stack_full(const struct rm_model *m, const char *where)
{
    const char *best = NULL;
    size_t best_len = 0;
    for (unsigned i = 0; i < m->n_stack_texts; i++) {
        size_t len = strlen(m->stack_texts[i].where);
        if (len > best_len && strstr(where, m->stack_texts[i].where)) {
            best = m->stack_texts[i].full;
            best_len = len;
        }
    }
    return best;
}

/* "a/b/../c.c" -> "a/c.c"; "./x" -> "x" (in place) */
void rm_tidy_path(char *p)
{
    if (!strstr(p, "/.") && strncmp(p, "./", 2))
        return;
    char buf[1024], *seg[256];
    unsigned n = 0;
    int abs = p[0] == '/';
    snprintf(buf, sizeof buf, "%s", p);
    char *save = NULL;
    for (char *t = strtok_r(buf, "/", &save); t && n < 256; t = strtok_r(NULL, "/", &save)) {
        if (!strcmp(t, "."))
            continue;
        if (!strcmp(t, "..") && n && strcmp(seg[n - 1], ".."))
            n--;
        else
            seg[n++] = t;
    }
    size_t k = 0;
    p[0] = 0;
    if (abs)
        p[k++] = '/', p[k] = 0;
    for (unsigned i = 0; i < n && k < sizeof buf; i++)
        k += (size_t)snprintf(p + k, sizeof buf - k, "%s%s", i ? "/" : "", seg[i]);
}

/* The m->sites index + 1 of a call stack (its text), 0 if none. */
int rm_site_index(struct rm_model *m, struct seq *s, uint64_t cs)
{
    if (!cs || !cache_fit((void **)&s->site, &s->n_site, cs, sizeof *s->site))
        return 0;
    if (!s->site[cs]) {
        char site[RM_MAX_SITE];
        rm_site_of(m, s, cs, site, sizeof site);
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
    if (o->created_ns && (!l->first_made || o->created_ns < l->first_made))
        l->first_made = o->created_ns;
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

