/* The kernel-source heuristics (strided-access, redundant-global-reads,
 * double-literals): the model's hints (model/source.c), for the kernels
 * that ran (all of them when the trace has no launches). */
#include <string.h>
#include "report/model/phases.h"
#include "rules.h"

static const struct { const char *rule, *fix; } fixes[] = {
    { "strided-access", "let neighbouring work-items touch neighbouring words: swap the index roles, or stage the "
                        "data through __local memory (seed: transpose)" },
    { "redundant-global-reads", "load the values a work-group shares into __local memory once (a tile), barrier, "
                                "then read them from there" },
    { "double-literals", "write float literals with an f suffix (2.0f): a double literal makes the expression "
                         "double precision" },
};

void rules_source_hints(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    for (unsigned i = 0; i < m->n_hints; i++) {
        const struct rm_hint *h = &m->hints[i];
        int launched = !m->n_kernels, phase = -1;
        uint64_t span[2] = { 0, 0 };
        for (unsigned k = 0; k < m->n_kernels; k++)
            if (!strcmp(m->kernels[k].name, h->kernel)) {
                phase = launched ? phase : rm_kernel_main_phase(&m->kernels[k]);
                launched = 1;
                if (m->kernels[k].span[1])       /* every configuration of the kernel */
                    rm_span_add(span, m->kernels[k].span[0], m->kernels[k].span[1]);
            }
        if (!launched)
            continue;
        size_t k = 0;          /* the rule: the table's id, from the fix's row */
        while (k + 1 < sizeof fixes / sizeof fixes[0] && strcmp(h->rule, fixes[k].rule))
            k++;
        int dbl = !strcmp(fixes[k].rule, "double-literals");
        struct finding *f = finding_add(out, fixes[k].rule, dbl ? SEV_INFO : SEV_WARNING, phase);
        finding_span(f, span);
        finding_set(&f->where, "kernel %s, line %u of program %llu: %s", h->kernel, h->line,
                    (unsigned long long)h->program, h->code);
        finding_set(&f->numbers, "heuristic: %s (%llu place(s) in this kernel)", h->what, (unsigned long long)h->count);
        finding_set(&f->fix, "%s", fixes[k].fix);
        const struct rm_program *pg = NULL;
        for (unsigned p = 0; p < m->n_programs && !pg; p++)
            if (m->programs[p].id == h->program && m->programs[p].file[0])
                pg = &m->programs[p];
        if (pg && !dbl)           /* where to edit it, and how to try the edit in the program */
            finding_set(&f->fix, "%s; edit it in the program's file: `cltrace --programs progs -- %s` writes it as "
                        "progs/%s, then `cltrace try --override progs/%s -- %s`", f->fix,
                        m->cmdline[0] ? m->cmdline : "./app", pg->file, pg->file, m->cmdline[0] ? m->cmdline : "./app");
        finding_set(&f->gain_method, dbl ? "not estimated: a source heuristic"
                    : "not estimated: a source heuristic; the trace times the kernel, not its accesses");
    }
}
