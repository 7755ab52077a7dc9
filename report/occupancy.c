/* Occupancy calculator. NVIDIA limits per compute capability follow the
 * CUDA Occupancy Calculator's data (registers and shared memory per SM,
 * allocation units, resident warps and blocks); registers per work-item come
 * from the build log (cltrace's registers_per_work_item). */
#include <limits.h>
#include <stddef.h>
#include "occupancy.h"

static const struct {
    unsigned cc;
    struct occ_model m;
} nvidia[] = {
    /* name                    warp warps grps  regs unit perwarp walloc local  unit */
    { 10, { "NVIDIA G80 (CC 1.0)",    32, 24,  8,  8192, 256, 0, 2,  16384, 512 } },
    { 11, { "NVIDIA CC 1.1",          32, 24,  8,  8192, 256, 0, 2,  16384, 512 } },
    { 12, { "NVIDIA CC 1.2",          32, 32,  8, 16384, 512, 0, 2,  16384, 512 } },
    { 13, { "NVIDIA GT200 (CC 1.3)",  32, 32,  8, 16384, 512, 0, 2,  16384, 512 } },
    { 20, { "NVIDIA Fermi (CC 2.0)",  32, 48,  8, 32768,  64, 1, 1,  49152, 128 } },
    { 21, { "NVIDIA Fermi (CC 2.1)",  32, 48,  8, 32768,  64, 1, 1,  49152, 128 } },
    { 30, { "NVIDIA Kepler (CC 3.0)", 32, 64, 16, 65536, 256, 1, 1,  49152, 256 } },
    { 35, { "NVIDIA Kepler (CC 3.5)", 32, 64, 16, 65536, 256, 1, 1,  49152, 256 } },
    { 50, { "NVIDIA Maxwell (CC 5.0)",32, 64, 32, 65536, 256, 1, 1,  65536, 256 } },
    { 52, { "NVIDIA Maxwell (CC 5.2)",32, 64, 32, 65536, 256, 1, 1,  98304, 256 } },
    { 60, { "NVIDIA Pascal (CC 6.0)", 32, 64, 32, 65536, 256, 1, 1,  65536, 256 } },
    { 61, { "NVIDIA Pascal (CC 6.1)", 32, 64, 32, 65536, 256, 1, 1,  98304, 256 } },
    { 70, { "NVIDIA Volta (CC 7.0)",  32, 64, 32, 65536, 256, 1, 1,  98304, 256 } },
    { 75, { "NVIDIA Turing (CC 7.5)", 32, 32, 16, 65536, 256, 1, 1,  65536, 256 } },
    { 80, { "NVIDIA Ampere (CC 8.0)", 32, 64, 32, 65536, 256, 1, 1, 167936, 128 } },
    { 86, { "NVIDIA Ampere (CC 8.6)", 32, 48, 16, 65536, 256, 1, 1, 102400, 128 } },
    { 89, { "NVIDIA Ada (CC 8.9)",    32, 48, 24, 65536, 256, 1, 1, 102400, 128 } },
    { 90, { "NVIDIA Hopper (CC 9.0)", 32, 64, 32, 65536, 256, 1, 1, 233472, 128 } },
};

const struct occ_model *occ_nvidia(unsigned cc)
{
    for (size_t i = 0; i < sizeof nvidia / sizeof nvidia[0]; i++)
        if (nvidia[i].cc == cc)
            return &nvidia[i].m;
    return NULL;
}

struct occ_model occ_generic(unsigned warp, unsigned regs, unsigned local_mem)
{
    struct occ_model m = { "generic", warp ? warp : 1, 0, 0, regs, 1, 0, 1, local_mem, 1 };
    return m;
}

static unsigned round_up(unsigned v, unsigned unit)
{
    return unit > 1 ? (v + unit - 1) / unit * unit : v;
}

const char *occ_limit_name(enum occ_limit l)
{
    static const char *const names[] = { "resident warps", "resident work-groups", "registers",
                                         "local memory", "nothing" };
    return names[l];
}

unsigned occ_max_work_items_by_regs(const struct occ_model *m, unsigned regs)
{
    if (!m->regs || !regs)
        return UINT_MAX;
    if (m->reg_per_warp) {
        unsigned per_warp = round_up(regs * m->warp, m->reg_unit);
        return m->regs / per_warp * m->warp;
    }
    return m->regs / regs;
}

int occ_compute(const struct occ_model *m, const struct occ_kernel *k, struct occ_result *r)
{
    unsigned warps_per_group = (k->wg_size + m->warp - 1) / m->warp;
    r->by_warps = m->max_warps ? m->max_warps / warps_per_group : UINT_MAX;
    r->by_groups = m->max_groups ? m->max_groups : UINT_MAX;
    r->by_regs = UINT_MAX;
    if (m->regs && k->regs) {
        /* per work-group (CC 1.x): warps rounded to the warp allocation
         * granularity, then to the register unit; a generic model with both
         * at 1 is plain work-items x registers */
        unsigned alloc_items = m->warp_alloc > 1 ? round_up(warps_per_group, m->warp_alloc) * m->warp : k->wg_size;
        unsigned need = m->reg_per_warp ? warps_per_group * round_up(k->regs * m->warp, m->reg_unit)
                                        : round_up(k->regs * alloc_items, m->reg_unit);
        r->by_regs = m->regs / need;
    }
    r->by_local = m->local_mem && k->local_bytes ? m->local_mem / round_up(k->local_bytes, m->local_unit)
                                                 : UINT_MAX;
    /* the smallest limit wins; ties name the first in this order */
    unsigned lim[4] = { r->by_warps, r->by_groups, r->by_regs, r->by_local };
    r->groups = UINT_MAX;
    r->limited_by = OCC_BY_NOTHING;
    for (int i = 0; i < 4; i++)
        if (lim[i] < r->groups) {
            r->groups = lim[i];
            r->limited_by = (enum occ_limit)i;
        }
    if (r->groups == UINT_MAX)
        r->groups = 1;      /* nothing limits: one group at least, occupancy unknown */
    r->warps = r->groups * warps_per_group;
    r->work_items = r->groups * k->wg_size;
    r->occupancy = m->max_warps ? (double)r->warps / m->max_warps : 0.0;
    return r->groups ? 0 : -1;
}
