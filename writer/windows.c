/* Windows (capture/window.c: CLTRACE_WINDOW, cltrace_start/stop, cltrace
 * ctl) as the trace shows them: one slice per window on a track of the
 * process's own, "cltrace windows" (uuid pid << 32 | 0xE0000000), and the
 * trace attribute cltrace.windows, "START-END;..." in trace nanoseconds
 * (a window open at the end ends there). A close with no open before it:
 * the run was recorded from its start until the program stopped it. */
#include <stdio.h>
#include <string.h>
#include "emit.h"
#include "trace/record.h"

typedef Perfetto__Protos__TrackEvent Event;

#define MAX_KEPT 256        /* windows listed in the attribute (all are drawn) */

static struct { uint64_t start, end; } kept[MAX_KEPT];
static unsigned n_windows, n_kept;
static int open_now, declared;
static char attr[MAX_KEPT * 44];

static uint64_t track(struct clt_writer *w)
{
    uint64_t uuid = w->process_uuid | 0xE0000000u;
    if (!declared) {
        declared = 1;
        Perfetto__Protos__TrackDescriptor t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        t.has_uuid = t.has_parent_uuid = 1;
        t.uuid = uuid;
        t.parent_uuid = w->process_uuid;
        t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
        t.name = (char *)"cltrace windows";
        clt_put_track(w, &t);
    }
    return uuid;
}

static void slice(struct clt_writer *w, uint64_t ts, int begin, const char *name)
{
    Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    char *cat = (char *)"cltrace.window";
    e.has_type = e.has_track_uuid = 1;
    e.type = begin ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    e.track_uuid = track(w);
    if (begin) {
        e.n_categories = 1;
        e.categories = &cat;
        e.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
        e.name = (char *)name;
    }
    clt_put_own_event(w, ts, &e);
}

static void begin(struct clt_writer *w, uint64_t ts, unsigned n, const char *why)
{
    char name[CLT_MAX_STR + 64];
    snprintf(name, sizeof name, "window %u (opened by %s)", n, why);
    slice(w, ts, 1, name);
    open_now = 1;
    n_windows++;
    if (n_kept < MAX_KEPT)
        kept[n_kept++].start = ts;
}

static void end(struct clt_writer *w, uint64_t ts)
{
    slice(w, ts, 0, NULL);
    open_now = 0;
    if (n_kept && n_kept <= MAX_KEPT && !kept[n_kept - 1].end)
        kept[n_kept - 1].end = ts;
}

void clt_window_emit(struct clt_writer *w, const struct clt_rec *rec)
{
    uint64_t ts = clt_clock_to_ns(&w->clock, rec->t0);
    char why[CLT_MAX_STR + 1] = "";
    if (!(rec->raw_mask & 1))
        clt_text(why, (const uint8_t *)rec + (rec->arg[0] >> 32), rec->arg[0] & 0xFFFFFFFFu, 0, '?');
    unsigned n = (unsigned)(rec->arg[1] >> 1);
    if (rec->arg[1] & CLT_WIN_OPEN) {
        if (!open_now)
            begin(w, ts, n, why);
        return;
    }
    if (!open_now)      /* recorded from the start until the program or ctl stopped it */
        begin(w, w->start_ns < ts ? w->start_ns : ts, n, "the start of the run");
    end(w, ts);
}

/* The attribute: the windows so far, one still open ending at `now`. */
void clt_windows_attr(struct clt_attrs *a, uint64_t now)
{
    if (!n_windows)
        return;
    size_t len = 0;
    attr[0] = 0;
    for (unsigned i = 0; i < n_kept && len + 44 < sizeof attr; i++)
        len += (size_t)snprintf(attr + len, sizeof attr - len, "%s%llu-%llu", i ? ";" : "",
                                (unsigned long long)kept[i].start,
                                (unsigned long long)(kept[i].end ? kept[i].end : now));
    clt_attr_str(a, "cltrace.windows", attr);
    clt_attr_int(a, "cltrace.window_count", (int64_t)n_windows);
}

/* At the end of the trace: a window still open ends here; the attribute. */
void clt_windows_close(struct clt_writer *w, uint64_t ts, struct clt_attrs *a)
{
    if (open_now)
        end(w, ts);
    clt_windows_attr(a, ts);
}

/* The first window that ended after `after` and by `until` (trace ns):
 * untimed launches enqueued before it are drawn in it (device_commands.c) */
uint64_t clt_windows_closed_between(uint64_t after, uint64_t until)
{
    for (unsigned i = 0; i < n_kept && i < MAX_KEPT; i++)
        if (kept[i].end > after && kept[i].end <= until)
            return kept[i].end;
    return 0;
}

int clt_windows_seen(void)
{
    return n_windows > 0;
}

void clt_windows_forget(void)
{
    n_windows = n_kept = 0;
    open_now = declared = 0;
}
