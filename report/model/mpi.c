/* A rank's MPI calls against its device's time: the question people ask of
 * an MPI + GPU program -- is the device idle while this rank waits in MPI,
 * and is the halo exchange overlapped with the kernel?
 *
 * While the trace is read, each MPI slice (capture/mpi.c, writer/mpi.c) is
 * kept as an interval, and each device command's span too (merged where
 * they touch: commands come in order per queue); at the end both are
 * sorted and swept once:
 *   in_mpi     the rank's time inside MPI calls (their union)
 *   busy       that time with the device running a command
 *   idle       that time with the device idle, within the device's span
 *              (its first command to its last)
 *   wait_idle  idle, inside the calls a non-blocking one could overlap
 *              (MPI_Send, MPI_Ssend, MPI_Recv, MPI_Sendrecv, MPI_Wait,
 *              MPI_Waitall: where the rank stops for a message)
 * and the time per MPI function. The intervals are freed then; the
 * figures stay (model.h, struct rm_mpi). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "reader.h"

static int by_start(const void *a, const void *b)
{
    const struct rm_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int span_add(struct rm_span **arr, size_t *n, size_t *cap, uint64_t start, uint64_t end, int blocking)
{
    if (*n && (*arr)[*n - 1].start <= start && start <= (*arr)[*n - 1].end && blocking == (*arr)[*n - 1].blocking) {
        if (end > (*arr)[*n - 1].end)
            (*arr)[*n - 1].end = end;           /* touches the last: one span */
        return 0;
    }
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        struct rm_span *g = realloc(*arr, c * sizeof *g);
        if (!g)
            return -1;
        *arr = g;
        *cap = c;
    }
    (*arr)[(*n)++] = (struct rm_span){ start, end, blocking };
    return 0;
}

static int blocks_for_a_message(const char *name)
{
    static const char *const p2p[] = { "MPI_Send", "MPI_Ssend", "MPI_Recv", "MPI_Sendrecv", "MPI_Wait",
                                       "MPI_Waitall" };
    for (unsigned i = 0; i < sizeof p2p / sizeof p2p[0]; i++)
        if (!strcmp(name, p2p[i]))
            return 1;
    return 0;
}

void rm_mpi_call(struct rm_model *m, const char *name, uint64_t start, uint64_t end, uint64_t bytes)
{
    struct rm_mpi *x = &m->mpi;
    unsigned i = 0;
    while (i < x->n_fns && strcmp(x->fns[i].name, name))
        i++;
    if (i == x->n_fns && i < RM_MPI_FNS) {
        snprintf(x->fns[i].name, sizeof x->fns[i].name, "%s", name);
        x->n_fns++;
    }
    if (i < x->n_fns) {
        x->fns[i].calls++;
        x->fns[i].ns += end - start;
        x->fns[i].bytes += bytes;
    }
    x->calls++;
    span_add(&x->call, &x->n_call, &x->cap_call, start, end, blocks_for_a_message(name));
}

/* Kept whether or not MPI calls follow (a trace says it is a rank's only
 * at its end); a trace with no MPI call in its first 65,536 device spans
 * lets them go and keeps the ones after. */
#define UNSEEN_MAX 65536
void rm_mpi_device(struct rm_model *m, uint64_t start, uint64_t end)
{
    struct rm_mpi *x = &m->mpi;
    if (!x->calls && x->n_busy >= UNSEEN_MAX)
        x->n_busy = 0;
    span_add(&x->busy, &x->n_busy, &x->cap_busy, start, end, 0);
}

/* Spans sorted and merged into a union; their count (host.c too) */
size_t rm_spans_merge(struct rm_span *s, size_t n)
{
    if (!n)
        return 0;
    qsort(s, n, sizeof *s, by_start);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && s[i].start <= s[k - 1].end) {
            if (s[i].end > s[k - 1].end)
                s[k - 1].end = s[i].end;
        } else {
            s[k++] = s[i];
        }
    }
    return k;
}

/* Of [a, b): the device's busy time (busy: sorted, disjoint; *from: a
 * cursor, the calls come sorted too) */
static uint64_t busy_within(const struct rm_span *busy, size_t n, size_t *from, uint64_t a, uint64_t b)
{
    while (*from < n && busy[*from].end <= a)
        (*from)++;
    uint64_t sum = 0;
    for (size_t i = *from; i < n && busy[i].start < b; i++) {
        uint64_t s = busy[i].start > a ? busy[i].start : a, e = busy[i].end < b ? busy[i].end : b;
        if (e > s)
            sum += e - s;
    }
    return sum;
}

void rm_mpi_finish(struct rm_model *m)
{
    struct rm_mpi *x = &m->mpi;
    if (x->n_call) {
        m->mpi_traces++;
        size_t nb = rm_spans_merge(x->busy, x->n_busy), cur = 0;
        uint64_t first = nb ? x->busy[0].start : 0, last = nb ? x->busy[nb - 1].end : 0, covered = 0;
        qsort(x->call, x->n_call, sizeof *x->call, by_start);
        for (size_t i = 0; i < x->n_call; i++) {
            uint64_t a = x->call[i].start, b = x->call[i].end;
            if (a < covered)
                a = covered;            /* calls on two threads at once: counted once */
            if (b <= a)
                continue;
            covered = b;
            uint64_t busy = busy_within(x->busy, nb, &cur, a, b);
            uint64_t sa = a > first ? a : first, sb = b < last ? b : last;    /* inside the device's span */
            uint64_t idle = sb > sa ? sb - sa - busy : 0;
            x->in_mpi_ns += b - a;
            x->busy_ns += busy;
            x->idle_ns += idle;
            if (x->call[i].blocking)
                x->wait_idle_ns += idle;
        }
    }
    free(x->call);
    free(x->busy);
    x->call = x->busy = NULL;
    x->n_call = x->n_busy = x->cap_call = x->cap_busy = 0;
}

int64_t rm_mpi_offset(const struct rm_mpi_clock clock[2], uint64_t ts)
{
    const struct rm_mpi_clock *a = &clock[0], *b = &clock[1];
    if (!a->have || !b->have || b->at <= a->at)
        return a->have ? a->offset : b->have ? b->offset : 0;
    if (ts <= a->at)
        return a->offset;
    if (ts >= b->at)
        return b->offset;
    return a->offset + (int64_t)((double)(b->offset - a->offset) * (double)(ts - a->at) / (double)(b->at - a->at));
}
