/* Phases: the program's own ranges (include/cltrace.h; slices of category
 * "cltrace.range" on a thread's track) and what happened inside them. Every
 * figure is inclusive: a call inside "solver/iteration" counts for
 * "solver/iteration" and for "solver". Device commands count for the phase
 * their enqueue call was made in (matched by flow id). */
#include <stdio.h>
#include <string.h>
#include "common/map.h"
#include "phases.h"

/* A label longer than its field ends in "..." (it is a label: the phase
 * is still told apart by its parent and index). */
static void label(char *buf, size_t cap, int len)
{
    if (len >= (int)cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
}

int rm_phase_enter(struct rm_model *m, int parent, const char *name)
{
    for (unsigned i = 0; i < m->n_phases; i++)
        if (m->phases[i].parent == parent && !strcmp(m->phases[i].name, name))
            return (int)i;
    if (m->n_phases >= RM_MAX_PHASES ||
        clt_grow(&m->phases, m->n_phases, &m->cap_phases, sizeof *m->phases, 16) != 0)
        return parent;   /* too many: count it in its parent */
    struct rm_phase *p = &m->phases[m->n_phases];
    memset(p, 0, sizeof *p);
    p->parent = parent;
    p->depth = parent >= 0 ? m->phases[parent].depth + 1 : 0;
    if (parent >= 0)
        label(p->path, sizeof p->path, snprintf(p->path, sizeof p->path, "%s/%s", m->phases[parent].path, name));
    else
        label(p->path, sizeof p->path, snprintf(p->path, sizeof p->path, "%s", name));
    label(p->name, sizeof p->name, snprintf(p->name, sizeof p->name, "%s", name));
    return (int)m->n_phases++;
}

/* fn(phase) for the phase and each of its ancestors */
#define EACH(m, idx, p) \
    for (struct rm_phase *p = (idx) >= 0 && (unsigned)(idx) < (m)->n_phases ? &(m)->phases[idx] : NULL; p; \
         p = p->parent >= 0 ? &(m)->phases[p->parent] : NULL)

void rm_phase_range(struct rm_model *m, int idx, uint64_t dur)
{
    if (idx < 0 || (unsigned)idx >= m->n_phases)
        return;
    m->phases[idx].entered++;
    m->phases[idx].wall_ns += dur;
}

void rm_phase_call(struct rm_model *m, int idx, uint64_t dur, int error, uint64_t transfer_bytes, int small,
                   int synced)
{
    EACH(m, idx, p) {
        p->calls++;
        p->api_ns += dur;
        p->errors += error != 0;
        p->transfer_bytes += transfer_bytes;
        p->transfers += transfer_bytes != 0;
        p->small_transfers += small != 0;
        p->synced_launches += synced != 0;
    }
}

void rm_phase_command(struct rm_model *m, int idx, uint64_t dur, int kernel)
{
    if (idx >= 0 && (unsigned)idx < m->n_phases) {
        m->phase_device_ns += dur;
    } else {
        m->phase_device_ns += dur;
        m->unphased_device_ns += dur;
    }
    EACH(m, idx, p) {
        p->device_ns += dur;
        if (kernel)
            p->kernel_ns += dur;
    }
}

/* The innermost phase where a kernel spent most of its device time. */
void rm_kernel_phase(struct rm_kernel *k, int idx, uint64_t dur)
{
    unsigned i = 0;
    while (i < RM_KERNEL_PHASES && k->ph_ns[i] && k->ph[i] != idx)
        i++;
    if (i == RM_KERNEL_PHASES)
        return;
    k->ph[i] = idx;
    k->ph_ns[i] += dur;
}

int rm_kernel_main_phase(const struct rm_kernel *k)
{
    int best = -1;
    uint64_t best_ns = 0;
    for (unsigned i = 0; i < RM_KERNEL_PHASES && k->ph_ns[i]; i++)
        if (k->ph_ns[i] > best_ns) {
            best_ns = k->ph_ns[i];
            best = k->ph[i];
        }
    return best;
}

/* The innermost phase that holds most of a per-phase tally (small
 * transfers, synchronized launches, errors): where a finding about it lives. */
int rm_phase_most(const struct rm_model *m, enum rm_phase_tally what)
{
    int best = -1;
    uint64_t best_n = 0;
    for (unsigned i = 0; i < m->n_phases; i++) {
        const struct rm_phase *p = &m->phases[i];
        uint64_t n = what == RM_TALLY_SMALL ? p->small_transfers
                     : what == RM_TALLY_SYNCED ? p->synced_launches : p->errors;
        /* deeper wins a tie: its parent's tally includes it */
        if (n > best_n || (n && n == best_n && best >= 0 && p->depth > m->phases[best].depth)) {
            best_n = n;
            best = (int)i;
        }
    }
    return best;
}

/* Is `phase` `idx` or nested in it? */
int rm_phase_within(const struct rm_model *m, int phase, int idx)
{
    EACH(m, phase, p)
        if (p == &m->phases[idx])
            return 1;
    return 0;
}
