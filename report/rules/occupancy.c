/* occupancy: theoretical occupancy below --min-occupancy, with the limiting
 * resource (seeds 001, 004; the models: model/occupancy.c). */
#include <stdio.h>
#include "report/model/describe.h"
#include "report/model/occupancy.h"
#include "report/model/phases.h"
#include "rules.h"

void rules_occupancy(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        struct occ_model omb;
        const struct occ_model *om = kernel_occ(m, k, &omb);
        if (k->local_null || !om || !om->max_warps || !k->wg_size)
            continue;
        struct occ_kernel ok = { (unsigned)k->wg_size, (unsigned)k->regs, (unsigned)k->local_bytes, 0 };
        struct occ_result r;
        occ_compute(om, &ok, &r);
        if (r.occupancy >= th->min_occupancy)
            continue;
        const char *unit = om->cus_per_unit > 1 ? "threads" : "warps";
        char cfg[KERNEL_CONFIG_SITE_MAX], regs[48] = "unknown (not in the build log)";
        kernel_config_site(m, k, cfg, sizeof cfg);
        if (k->regs)
            snprintf(regs, sizeof regs, "%llu", (unsigned long long)k->regs);
        struct finding *f = finding_add(out, "occupancy", SEV_WARNING, rm_kernel_main_phase(k));
        finding_span(f, k->span);
        finding_set(&f->where, "%s", cfg);
        finding_set(&f->numbers, "%.0f%% occupancy (%u %s of %u, %s), limited by %s: %s registers/work-item, %llu "
                    "bytes local memory/group", 100 * r.occupancy, r.warps, unit, om->max_warps, om->name,
                    occ_limit_name(r.limited_by), regs, (unsigned long long)k->local_bytes);
        finding_set(&f->fix, "reduce the limiting resource (%s) or change the work-group size",
                    occ_limit_name(r.limited_by));
        finding_set(&f->gain_method, "not estimated: whether more resident %s make this kernel faster depends on "
                    "what it waits for, which a trace does not show", unit);
    }
}
