/* The phases table's figures (the model counts them: model/phases.c): each
 * phase's share of API and device time, its findings, the tree order, and
 * the phase where the device time went. */
#include "report/model/phases.h"
#include "views.h"

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The phases in tree order: each phase followed by its children. */
static unsigned tree_order(const struct rm_model *m, int parent, unsigned *out, unsigned n)
{
    for (unsigned i = 0; i < m->n_phases; i++)
        if (m->phases[i].parent == parent) {
            out[n++] = i;
            n = tree_order(m, (int)i, out, n);
        }
    return n;
}

void phase_view(const struct rm_model *m, const struct findings *fs, struct phase_view *v)
{
    uint64_t api = 0;
    for (unsigned i = 0; i < m->n_api; i++)
        api += m->api[i].total_ns;
    v->n = tree_order(m, -1, v->order, 0);
    v->top = -1;
    for (unsigned i = 0; i < m->n_phases && i < RM_MAX_PHASES; i++) {
        const struct rm_phase *p = &m->phases[i];
        v->findings[i] = 0;
        for (unsigned j = 0; j < fs->n; j++)
            v->findings[i] += fs->v[j].phase >= 0 && rm_phase_within(m, fs->v[j].phase, (int)i);
        v->api_pct[i] = pct(p->api_ns, api);
        v->device_pct[i] = pct(p->device_ns, m->phase_device_ns);
        if (p->parent < 0 && (v->top < 0 || p->device_ns > m->phases[v->top].device_ns))
            v->top = (int)i;
    }
}
