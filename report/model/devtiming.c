/* Whether a trace's device timestamps can be true. A platform may answer
 * every profiling query with made-up values (one open-source
 * implementation gives QUEUED 0, SUBMIT 1, START 2, END 3 ns for every
 * command): the writer places such commands on the host's clock all the
 * same, and every figure derived from them (kernel time, bandwidth, idle,
 * a fix's gain) would be a number the trace cannot support. Three signs,
 * each impossible for a device that measures:
 *   - END before START, in 1 % of the commands or more;
 *   - every command the same few ns long (2 or more commands, <= 100 ns);
 *   - the device's clock standing still: from the first command's QUEUED
 *     to the last one's END it moved less than 1 % of what the host's clock
 *     moved between their enqueues (each command found by its flow), where
 *     that is 1 ms or more. QUEUED is stamped as the command is enqueued,
 *     so a device that measures spans at least the host's time; START
 *     alone would not (PoCL starts a kernel 40 ms after its first enqueue,
 *     having built it). */
#include <stdio.h>
#include <string.h>
#include "model.h"

#define TINY_NS 100

void rm_devtiming_command(struct rm_devtiming *t, uint64_t queued, uint64_t start, uint64_t end)
{
    uint64_t dur = end >= start ? end - start : 0, lo = queued < start ? queued : start, hi = end > start ? end : start;
    if (end < start)
        t->backwards++;
    if (!t->commands++) {
        t->dur_first = dur;
        t->raw_min = lo;
        t->raw_max = hi;
        return;
    }
    t->dur_differ |= dur != t->dur_first;
    if (lo < t->raw_min)
        t->raw_min = lo;
    if (hi > t->raw_max)
        t->raw_max = hi;
}

void rm_devtiming_enqueue(struct rm_devtiming *t, uint64_t host_ts)
{
    if (!t->enqueues++ || host_ts < t->enq_first)
        t->enq_first = host_ts;
    if (host_ts > t->enq_last)
        t->enq_last = host_ts;
}

void rm_devtiming_judge(struct rm_devtiming *t)
{
    char *w = t->why;
    size_t cap = sizeof t->why, n = 0;
    w[0] = 0;
    t->unusable = 0;
    if (t->commands < 2)
        return;
    uint64_t host = t->enq_last > t->enq_first ? t->enq_last - t->enq_first : 0;
    uint64_t dev = t->raw_max - t->raw_min;
    if (t->backwards && t->backwards * 100 >= t->commands)
        n += (size_t)snprintf(w + n, cap - n, "%s%llu of %llu commands end before they start", n ? "; " : "",
                              (unsigned long long)t->backwards, (unsigned long long)t->commands);
    if (!t->dur_differ && t->dur_first <= TINY_NS && n < cap)
        n += (size_t)snprintf(w + n, cap - n, "%severy one of the %llu commands took %llu ns", n ? "; " : "",
                              (unsigned long long)t->commands, (unsigned long long)t->dur_first);
    if (host >= 1000000 && dev * 100 < host && t->enqueues >= 2 && n < cap)
        snprintf(w + n, cap - n, "%sthe device's clock moved %llu ns while the host's moved %.1f ms between "
                 "the enqueues", n ? "; " : "", (unsigned long long)dev, host / 1e6);
    t->unusable = w[0] != 0;
}
