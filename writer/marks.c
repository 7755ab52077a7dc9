/* The program's own marks (annotate.c records) as Perfetto events, on the
 * writer's sequence with explicit tracks:
 *   range push/pop -> TYPE_SLICE_BEGIN/END on the thread's track, category
 *                     "cltrace.range" (a pop without a push is dropped, and
 *                     ranges still open at exit are ended there)
 *   mark           -> TYPE_INSTANT on the thread's track, "cltrace.mark"
 *   counter        -> a double value on the process's counter track of that
 *                     name (uuid pid << 32 | 0xD0000000 | index) */
#include <stdlib.h>
#include <string.h>
#include "emit.h"
#include "trace/record.h"

typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__TrackDescriptor Track;

#define MAX_COUNTERS 256
#define MAX_OPEN 64         /* threads with ranges open */

static char *counter_names[MAX_COUNTERS];
static unsigned n_counters;
static struct { uint64_t track; uint32_t depth; } open_ranges[MAX_OPEN];

static uint32_t *depth_of(uint64_t track)
{
    unsigned free_slot = MAX_OPEN;
    for (unsigned i = 0; i < MAX_OPEN; i++) {
        if (open_ranges[i].track == track)
            return &open_ranges[i].depth;
        if (!open_ranges[i].depth && free_slot == MAX_OPEN)
            free_slot = i;
    }
    if (free_slot == MAX_OPEN)
        return NULL;
    open_ranges[free_slot].track = track;
    open_ranges[free_slot].depth = 0;
    return &open_ranges[free_slot].depth;
}

static void event(struct clt_writer *w, uint64_t ts, uint64_t track, int type, const char *category,
                  const char *name)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    char *cat = (char *)category;
    e.has_type = e.has_track_uuid = 1;
    e.type = type;
    e.track_uuid = track;
    if (category) {
        e.n_categories = 1;
        e.categories = &cat;
    }
    if (name) {
        e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
        e.name = (char *)name;
    }
    clt_put_own_event(w, ts, &e);
}

static uint64_t counter_track(struct clt_writer *w, const char *name)
{
    unsigned i = 0;
    while (i < n_counters && strcmp(counter_names[i], name))
        i++;
    if (i == n_counters) {
        if (n_counters == MAX_COUNTERS || !(counter_names[i] = strdup(name)))
            return 0;
        n_counters++;
        Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
        Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        t.has_uuid = t.has_parent_uuid = 1;
        t.uuid = w->process_uuid | 0xD0000000u | i;
        t.parent_uuid = w->process_uuid;
        t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
        t.name = (char *)name;
        t.counter = &cd;
        clt_put_track(w, &t);
    }
    return w->process_uuid | 0xD0000000u | i;
}

void clt_annot_emit(struct clt_writer *w, uint64_t track, const struct clt_rec *rec)
{
    uint64_t ts = clt_clock_to_ns(&w->clock, rec->t0);
    char name[CLT_MAX_STR + 1];
    const uint8_t *base = (const uint8_t *)rec;
    name[0] = 0;
    if (!(rec->raw_mask & 1))
        clt_text(name, base + (rec->arg[0] >> 32), rec->arg[0] & 0xFFFFFFFFu, 0, '?');
    uint32_t *depth = depth_of(track);
    switch (rec->fn) {
    case CLT_REC_RANGE_PUSH:
        if (!depth)
            return;
        event(w, ts, track, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, "cltrace.range", name);
        ++*depth;
        w->ranges++;
        break;
    case CLT_REC_RANGE_POP:
        if (!depth || !*depth)
            return;      /* a pop without its push */
        event(w, ts, track, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL);
        --*depth;
        break;
    case CLT_REC_MARK:
        event(w, ts, track, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, "cltrace.mark", name);
        break;
    case CLT_REC_COUNTER: {
        uint64_t t = counter_track(w, name[0] ? name : "counter");
        if (!t)
            return;
        Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
        e.has_type = e.has_track_uuid = 1;
        e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
        e.track_uuid = t;
        e.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
        memcpy(&e.double_counter_value, &rec->arg[1], sizeof e.double_counter_value);
        clt_put_own_event(w, ts, &e);
        break;
    }
    }
}

/* At the end of the trace: ranges the program left open end at `ts`. */
void clt_annot_close(struct clt_writer *w, uint64_t ts)
{
    for (unsigned i = 0; i < MAX_OPEN; i++)
        for (; open_ranges[i].depth; open_ranges[i].depth--)
            event(w, ts, open_ranges[i].track, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL);
}
