/* What the host ran while the device waited: the trace's CPU samples
 * (PerfSample packets, capture/cpusample.c) against the device's busy
 * spans. Each sample is labelled as it is read (its stack's program frame
 * and what ran there: stacks.c rm_sample_label); at the end, the samples
 * in the device's idle time are counted by thread, the busiest thread's by
 * label, and the program's calls that thread sat in meanwhile, off the
 * CPU. A sample stands for a period of the thread's CPU time, so a count
 * times the period is time on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "reader.h"

#define MAX_SAMPLES (16u << 20)
#define MAX_CALLS (4u << 20)

static int grow(void **arr, size_t n, size_t *cap, size_t elem, size_t most)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 1024;
    void *g = n < most ? realloc(*arr, c * elem) : NULL;
    if (!g)
        return -1;
    *arr = g;
    *cap = c;
    return 0;
}

/* The length of a where without its line: "fn (file" of "fn (file:12)" */
static size_t without_line(const char *where)
{
    const char *colon = strrchr(where, ':');
    return colon && colon[strlen(colon) - 1] == ')' ? (size_t)(colon - where) : strlen(where);
}

/* A function and where it ran, by function and file: the line of its
 * first sample stands for its lines */
static uint32_t label_of(struct rm_host *h, const char *fn, const char *where)
{
    size_t wl = without_line(where);
    for (unsigned i = h->n_labels; i-- > 0;)     /* the latest first: a loop's samples repeat it */
        if (!strcmp(h->labels[i].function, fn) && without_line(h->labels[i].where) == wl &&
            !strncmp(h->labels[i].where, where, wl))
            return i;
    if (h->n_labels >= 65536 || clt_grow(&h->labels, h->n_labels, &h->cap_labels, sizeof *h->labels, 64) != 0)
        return UINT32_MAX;
    struct rm_host_fn *l = &h->labels[h->n_labels];
    memset(l, 0, sizeof *l);
    snprintf(l->function, sizeof l->function, "%s", fn);
    snprintf(l->where, sizeof l->where, "%s", where);
    return h->n_labels++;
}

/* A sample's thread's CPU time since its previous sample (µs; 0: the trace
 * does not say): timebase_count, the thread's total so far. Above the
 * kernel's HZ one signal comes a tick late for the expiries it merged. */
static uint32_t cpu_us_of(struct rm_host *h, const Perfetto__Protos__PerfSample *ps)
{
    if (!ps->has_timebase_count || !ps->timebase_count)
        return 0;
    uint64_t key = (uint64_t)ps->pid << 32 | ps->tid | 1ull << 63;
    uint64_t last = (uint64_t)(uintptr_t)clt_map_get(&h->thread_time, key);
    if (ps->timebase_count <= last || clt_map_put(&h->thread_time, key, (void *)(uintptr_t)ps->timebase_count))
        return 0;
    uint64_t us = (ps->timebase_count - last) / 1000;
    return us < 1 ? 1 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* The timer periods a sample stands for (at least 1) */
static uint64_t periods(const struct rm_host *h, const struct rm_host_sample *s)
{
    uint64_t n = ((uint64_t)s->cpu_us * 1000 + h->period_ns / 2) / h->period_ns;
    return n ? n : 1;
}

void rm_host_sample(struct rm_model *m, const struct seq *s, uint64_t ts, const Perfetto__Protos__PerfSample *ps,
                    uint64_t stack_iid)
{
    struct rm_host *h = &m->hostcpu;
    uint32_t tid = ps->tid, cpu_us = cpu_us_of(h, ps);
    h->samples++;
    char fn[96], where[160];
    rm_sample_label(m, s, stack_iid, fn, sizeof fn, where, sizeof where);
    uint32_t label = label_of(h, fn, where);
    if (label == UINT32_MAX || grow((void **)&h->s, h->n_s, &h->cap_s, sizeof *h->s, MAX_SAMPLES) != 0)
        return;
    h->s[h->n_s++] = (struct rm_host_sample){ ts, tid, label, cpu_us };
}

void rm_host_device(struct rm_model *m, uint64_t start, uint64_t end)
{
    struct rm_host *h = &m->hostcpu;
    if (h->n_busy && h->busy[h->n_busy - 1].start <= start && start <= h->busy[h->n_busy - 1].end) {
        if (end > h->busy[h->n_busy - 1].end)
            h->busy[h->n_busy - 1].end = end;       /* touches the last: one span */
        return;
    }
    if (grow((void **)&h->busy, h->n_busy, &h->cap_busy, sizeof *h->busy, MAX_SAMPLES) == 0)
        h->busy[h->n_busy++] = (struct rm_span){ start, end, 0 };
}

void rm_host_call(struct rm_model *m, const char *name, uint32_t tid, uint64_t start, uint64_t end)
{
    struct rm_host *h = &m->hostcpu;
    if (grow((void **)&h->calls, h->n_calls, &h->cap_calls, sizeof *h->calls, MAX_CALLS) != 0)
        return;
    struct rm_host_call *c = &h->calls[h->n_calls++];
    c->start = start;
    c->end = end;
    c->tid = tid;
    snprintf(c->name, sizeof c->name, "%s", name);
}

/* Whether ts lies in the device's idle time: between two busy spans */
static int idle_at(const struct rm_span *b, size_t n, uint64_t ts)
{
    size_t lo = 0, hi = n;          /* the first span starting after ts */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && lo < n && ts >= b[lo - 1].end;
}

/* The idle time a span [a, b) overlaps */
static uint64_t idle_within(const struct rm_span *busy, size_t n, uint64_t a, uint64_t b)
{
    uint64_t sum = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t s = busy[i - 1].end > a ? busy[i - 1].end : a, e = busy[i].start < b ? busy[i].start : b;
        if (e > s)
            sum += e - s;
    }
    return sum;
}

static int by_periods(const void *a, const void *b)
{
    const struct rm_host_fn *x = a, *y = b;
    return x->periods < y->periods ? 1 : x->periods > y->periods ? -1 : strcmp(x->function, y->function);
}

/* The busiest thread's calls it waited in during the idle time, the longest first */
static void blocked_calls(struct rm_host *h, const struct rm_span *busy, size_t nb)
{
    struct { char name[48]; uint64_t ns; } acc[16];
    unsigned n = 0;
    for (size_t i = 0; i < h->n_calls; i++) {
        const struct rm_host_call *c = &h->calls[i];
        uint64_t ns = c->tid == h->busiest_tid ? idle_within(busy, nb, c->start, c->end) : 0;
        unsigned k = 0;
        while (ns && k < n && strcmp(acc[k].name, c->name))
            k++;
        if (!ns || (k == n && n == 16))
            continue;
        if (k == n) {
            snprintf(acc[n].name, sizeof acc[n].name, "%s", c->name);
            acc[n++].ns = 0;
        }
        acc[k].ns += ns;
    }
    for (h->n_blocked = 0; h->n_blocked < 3; h->n_blocked++) {
        unsigned best = n;
        for (unsigned k = 0; k < n; k++)
            if (acc[k].ns && (best == n || acc[k].ns > acc[best].ns))
                best = k;
        if (best == n)
            break;
        snprintf(h->blocked[h->n_blocked].name, sizeof h->blocked[0].name, "%s", acc[best].name);
        h->blocked[h->n_blocked].share = (double)acc[best].ns / (double)h->gap_ns;
        acc[best].ns = 0;
    }
}

void rm_host_finish(struct rm_model *m)
{
    struct rm_host *h = &m->hostcpu;
    size_t nb = rm_spans_merge(h->busy, h->n_busy);
    h->gap_ns = 0;
    for (size_t i = 1; i < nb; i++)
        h->gap_ns += h->busy[i].start - h->busy[i - 1].end;
    if (!h->period_ns && h->samples)
        h->period_ns = 10000000;    /* the default rate, where the trace does not say */
    struct { uint32_t tid; uint64_t n, periods; } by_tid[64];
    unsigned nt = 0;
    for (size_t i = 0; i < h->n_s && h->gap_ns; i++) {
        if (!idle_at(h->busy, nb, h->s[i].ts))
            continue;
        h->gap_samples++;
        unsigned k = 0;
        while (k < nt && by_tid[k].tid != h->s[i].tid)
            k++;
        if (k == nt && nt < 64)
            by_tid[nt++] = (typeof(by_tid[0])){ h->s[i].tid, 0, 0 };
        if (k < nt) {
            by_tid[k].n++;
            by_tid[k].periods += periods(h, &h->s[i]);
        }
    }
    for (unsigned k = 0; k < nt; k++)
        if (by_tid[k].periods > h->busiest_periods) {
            h->busiest_samples = by_tid[k].n;
            h->busiest_periods = by_tid[k].periods;
            h->busiest_tid = by_tid[k].tid;
        }
    if (h->busiest_samples) {
        for (size_t i = 0; i < h->n_s; i++)
            if (h->s[i].tid == h->busiest_tid && idle_at(h->busy, nb, h->s[i].ts)) {
                h->labels[h->s[i].label].samples++;
                h->labels[h->s[i].label].periods += periods(h, &h->s[i]);
            }
        qsort(h->labels, h->n_labels, sizeof *h->labels, by_periods);
        for (h->n_top = 0; h->n_top < RM_HOST_TOP && h->n_top < h->n_labels && h->labels[h->n_top].samples;
             h->n_top++) {
            h->top[h->n_top] = h->labels[h->n_top];
            double share = (double)h->top[h->n_top].periods * (double)h->period_ns / (double)h->gap_ns;
            h->top[h->n_top].share = share < 1 ? share : 1;     /* a tick's granularity can overshoot */
        }
        double on = (double)h->busiest_periods * (double)h->period_ns / (double)h->gap_ns;
        h->on_cpu_share = on < 1 ? on : 1;
        blocked_calls(h, h->busy, nb);
    }
    rm_host_free(m);
}

const char *rm_host_where(const struct rm_host_fn *t, char *buf, size_t cap)
{
    size_t fl = strlen(t->function), wl = strlen(t->where);
    if (!strncmp(t->where, t->function, fl) && !strncmp(t->where + fl, " (", 2) && t->where[wl - 1] == ')')
        snprintf(buf, cap, "%.*s", (int)(wl - fl - 3), t->where + fl + 2);
    else
        snprintf(buf, cap, "%s%s", t->where[0] ? "from " : "", t->where);
    return buf;
}

void rm_host_free(struct rm_model *m)
{
    struct rm_host *h = &m->hostcpu;
    free(h->s);
    free(h->labels);
    free(h->busy);
    free(h->calls);
    clt_map_free(&h->thread_time);
    h->s = NULL;
    h->labels = NULL;
    h->busy = NULL;
    h->calls = NULL;
    h->n_s = h->cap_s = h->n_busy = h->cap_busy = h->n_calls = h->cap_calls = 0;
    h->n_labels = h->cap_labels = 0;
}
