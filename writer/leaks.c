/* What the app still holds at exit, classed as a memory checker would
 * (valgrind's definitely lost, still reachable), from what the object model
 * proves:
 *   definitely lost: the app released what the object belongs to (its
 *     context, or the program of a kernel, the queue of an event) to zero
 *     references of its own while the object stayed alive: nothing the app
 *     holds can reach it any more;
 *   growing: its creation site holds two or more at exit, made across the
 *     run: the first and latest it holds were made at least half the
 *     program's OpenCL calls apart, counted from the site's first creation
 *     to the exit (a loop's iterations, whatever their time): a leak in a
 *     loop, where a cache fills early and then holds still;
 *   still held: the rest: the last of a site that releases the others, a
 *     cache made once, anything of a context the app holds to the end.
 * Each leak is an instant on the leak track with its class and why
 * (TRACE_FORMAT.md); CLTRACE_BREAK=leak stops on the first two classes. */
#include <stdio.h>
#include <string.h>
#include "common/config.h"
#include "trace/ring.h"
#include "emit.h"
#include "lifetime.h"
#include "symbols.h"
#include "trace/tables.h"

static const char *const class_name[] = { "still_held", "growing", "definitely_lost" };

/* With windows (CLTRACE_WINDOW) an event's release may fall outside every
 * window, where events are not followed: events are not judged then. */
static int leaked(const struct clt_obj *o)
{
    return o && o->refs > 0 && !o->destroyed && !(o->type == CLT_O_EVENT && clt_windows_seen());
}

/* The context, program or queue the app released that this object belongs
 * to (a sub-buffer's parent's context...), or NULL. */
static const struct clt_obj *released_owner(const struct clt_obj *o)
{
    for (unsigned depth = 0; o && depth < 4; depth++) {
        const struct clt_obj *up = NULL;
        for (unsigned i = 0; i < CLT_OBJ_PARENTS; i++) {
            const struct clt_obj *p = o->parent[i];
            if (p && p->refs == 0 &&
                (p->type == CLT_O_CONTEXT || p->type == CLT_O_PROGRAM || p->type == CLT_O_QUEUE))
                return p;
            if (p && !up)
                up = p;
        }
        o = up;
    }
    return NULL;
}

static enum clt_leak_class classify(const struct clt_writer *w, const struct clt_obj *o, char *why, size_t cap)
{
    const struct clt_obj *owner = released_owner(o);
    if (owner) {
        snprintf(why, cap, "the app released its %s (object %llu) while it stayed alive: nothing the app holds "
                 "reaches it", clt_otype_name(owner->type), (unsigned long long)owner->id);
        return CLT_LEAK_DEFINITELY_LOST;
    }
    const struct clt_site_count *sc = clt_life_site(o->stack);
    uint64_t first = sc ? sc->first : 0;     /* no site without a stack (no libunwind) */
    uint64_t run = w->calls > first ? w->calls - first : 0;   /* calls since its first */
    if (sc && sc->held >= 2 && run && (sc->held_last - sc->held_first) * 2 >= run) {
        snprintf(why, cap, "its call site holds %u of the %u it made, made over %.0f %% of the program's calls since "
                 "its first: it grows with the run", sc->held, sc->made, 100.0 * (sc->held_last - sc->held_first) / run);
        return CLT_LEAK_GROWING;
    }
    if (sc && sc->released)
        snprintf(why, cap, "the latest of its call site, which released %u of the %u it made", sc->released, sc->made);
    else if (o->type == CLT_O_CONTEXT)
        snprintf(why, cap, "the app holds it to the end");
    else
        snprintf(why, cap, "made once, or early and then held; its context is held to the end");
    return CLT_LEAK_STILL_HELD;
}

static void emit_leak(struct clt_writer *w, uint64_t track, uint64_t ts, const struct clt_obj *o, const char *what,
                      int with_class)
{
    static struct clt_sym_scratch x;
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    clt_sym_add_interned(&w->syms, &w->own_sym, o->stack, &x, &in);
    if (in.n_callstacks) {
        Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
        p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
        p.trusted_packet_sequence_id = CLT_OWN_SEQ;
        p.sequence_flags = 2;   /* SEQ_NEEDS_INCREMENTAL_STATE */
        p.interned_data = &in;
        clt_put_packet(w, &p);
    }
    Perfetto__Protos__DebugAnnotation a[18], *ap[18];
    unsigned na = 0;
    char why[200];
    A_UINT("object", o->id);
    A_STR("type", clt_otype_name(o->type));
    A_STR("created_by", clt_fns[o->create_fn].name);
    A_UINT("reference_count", (uint64_t)o->refs);
    A_UINT("created_ns", o->t_created);
    A_UINT("thread", (uint64_t)o->tid);
    if (o->size)
        A_UINT("size", o->size);
    const struct clt_site_count *sc = clt_life_site(o->stack);
    if (sc) {                   /* what this object's creation site made and released */
        A_UINT("site_made", sc->made);
        A_UINT("site_released", sc->released);
    }
    if (o->name[0])
        A_STR("kernel_name", o->name);
    for (unsigned i = 0; i < CLT_OBJ_PARENTS; i++)
        if (o->parent[i] && o->parent[i]->type == CLT_O_CONTEXT)
            A_UINT("context", o->parent[i]->id);
    if (with_class) {
        A_STR("leak_class", class_name[classify(w, o, why, sizeof why)]);
        A_STR("leak_why", why);
    }
    char name[64];
    snprintf(name, sizeof name, "%s %s", what, clt_otype_name(o->type));
    clt_put_instant(w, track, ts, name, ap, na, o->stack);
}

static void leak_track(struct clt_writer *w, uint64_t track)
{
    Perfetto__Protos__TrackDescriptor t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    t.has_uuid = t.has_parent_uuid = 1;
    t.uuid = track;
    t.parent_uuid = w->own_group_uuid;
    t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    t.name = "OpenCL objects leaked";
    clt_put_track(w, &t);
}

static int in_context(const struct clt_obj *o, const struct clt_obj *ctx)
{
    for (unsigned depth = 0; o && depth < 4; depth++) {    /* a sub-buffer's parent's context... */
        const struct clt_obj *up = NULL;
        for (unsigned i = 0; i < CLT_OBJ_PARENTS; i++) {
            if (o->parent[i] == ctx)
                return 1;
            if (o->parent[i] && !up)
                up = o->parent[i];
        }
        o = up;
    }
    return 0;
}

/* The app released a context (its count reached 0) while it still holds
 * objects made in it: legal (the runtime keeps the context for them), but
 * where tools like gDEBugger report leaks, and the only report a program that
 * never exits gets. Written as "held at context release" instants on the leak
 * track; whether they leaked is decided at exit. */
void clt_leaks_context_released(struct clt_writer *w, const struct clt_obj *ctx, uint64_t ts)
{
    uint64_t track = w->process_uuid | 0x80000002u;
    const struct clt_map *m = &w->objs.ids;
    for (uint64_t i = 0; i < m->cap; i++) {
        const struct clt_obj *x = m->keys[i] ? m->vals[i] : NULL;
        if (!leaked(x) || x == ctx || !in_context(x, ctx))
            continue;
        if (!w->leak_track_declared) {
            w->leak_track_declared = 1;
            leak_track(w, track);
        }
        emit_leak(w, track, ts, x, "held at context release:", 0);
    }
}

/* Every object once: the id map, then the orphans (replaced handles). */
typedef void each_fn(struct clt_writer *w, const struct clt_obj *x, void *arg);
static void each_object(struct clt_writer *w, each_fn *fn, void *arg)
{
    const struct clt_map *m = &w->objs.ids;
    for (uint64_t i = 0; i < m->cap; i++)
        if (m->keys[i] && m->vals[i])
            fn(w, m->vals[i], arg);
    for (const struct clt_obj *o = w->objs.orphans; o; o = o->next_orphan)
        fn(w, o, arg);
}

/* What each site still holds, and when the first and latest of those were made. */
static void count_held(struct clt_writer *w, const struct clt_obj *x, void *arg)
{
    struct clt_site_count *sc = leaked(x) ? clt_life_site(x->stack) : NULL;
    if (!sc)
        return;
    if (!sc->held++ || x->call_created < sc->held_first)
        sc->held_first = x->call_created;
    if (x->call_created > sc->held_last)
        sc->held_last = x->call_created;
}

struct emitting { uint64_t ts, track; unsigned n; struct clt_leak_counts *counts; };

static void emit_one(struct clt_writer *w, const struct clt_obj *x, void *arg)
{
    struct emitting *e = arg;
    if (!leaked(x))
        return;
    if (e->n++ == 0 && !w->leak_track_declared)
        leak_track(w, e->track);
    char why[200];
    e->counts->by_type[x->type]++;
    e->counts->by_class[classify(w, x, why, sizeof why)]++;
    emit_leak(w, e->track, e->ts, x, "leaked", 1);
}

/* The leaks said in one line, by type and class. */
static void say_leaks(unsigned n, const struct clt_leak_counts *c)
{
    char list[256] = "";
    size_t k = 0;
    for (unsigned t = 0; t < CLT_O_COUNT && k < sizeof list - 40; t++)
        if (c->by_type[t])
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%u %s", k ? ", " : "", c->by_type[t],
                                  clt_otype_name(t));
    clt_msg("%u OpenCL object%s still held at exit (%s): %u definitely lost, %u growing with the run, %u still "
            "reachable; %s", n, n == 1 ? "" : "s", list, c->by_class[CLT_LEAK_DEFINITELY_LOST],
            c->by_class[CLT_LEAK_GROWING], c->by_class[CLT_LEAK_STILL_HELD],
            clt_stacks_recorded ? "their creation stacks are in the trace"
                                : "no creation stacks (none recorded: a leak in a loop is told by its site)");
}

void clt_life_emit_leaks(struct clt_writer *w, uint64_t ts)
{
    struct clt_leak_counts counts = { { 0 }, { 0 } };
    struct emitting e = { ts, w->process_uuid | 0x80000002u, 0, &counts };   /* the track appears only with a leak */
    each_object(w, count_held, NULL);
    each_object(w, emit_one, &e);
    w->leaks = e.n;
    w->leaks_serious = counts.by_class[CLT_LEAK_DEFINITELY_LOST] + counts.by_class[CLT_LEAK_GROWING];
    if (e.n)
        say_leaks(e.n, &counts);
}
