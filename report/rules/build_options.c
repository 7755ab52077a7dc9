/* build-options: float code built without fast-math options (seed 001). */
#include "rules.h"

void rules_build_options(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    for (unsigned i = 0; i < m->n_programs; i++) {
        const struct rm_program *p = &m->programs[i];
        if (!p->builds || p->fast_math || !p->uses_float)
            continue;
        struct finding *f = finding_add(out, "build-options", SEV_INFO, -1);
        finding_set(&f->where, "program %llu", (unsigned long long)p->id);
        finding_set(&f->numbers, "float code built without -cl-mad-enable or -cl-fast-relaxed-math");
        finding_set(&f->fix, "if the kernel tolerates it, build with -cl-mad-enable (or -cl-fast-relaxed-math) for "
                    "faster multiply-add and math functions");
        finding_set(&f->gain_method, "not estimated: fast math changes results; measure it");
    }
}
