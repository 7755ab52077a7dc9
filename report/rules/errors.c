/* api-errors (a call returned an error) and use-after-release (a call on a
 * handle the app had released): correctness, each with the call's stack. */
#include "rules.h"

void rules_api_errors(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    for (unsigned i = 0; i < m->n_errors; i++) {
        const struct rm_error *e = &m->errors[i];
        struct finding *f = finding_add(out, "api-errors", e->by[0] ? SEV_INFO : SEV_ERROR, e->phase);
        uint64_t at[2] = { e->first_ts, e->first_ts + 1 };     /* the first failing call */
        if (e->first_ts)
            finding_span(f, at);
        if (e->by[0]) {         /* no frame of the program made it: the library's, said as such */
            f->library = 1;
            finding_set(&f->where, "%s, called by %s, not by the program%s%s", e->fn, e->by,
                        e->site[0] ? ": " : "", e->site);
            finding_set(&f->numbers, "%llu call(s) returned %s", (unsigned long long)e->count, e->error);
            finding_set(&f->fix, "none needed in the program: the library probes what the device has "
                        "(to keep its calls out of the trace: what it loads, e.g. HWLOC_COMPONENTS=-opencl)");
            finding_set(&f->gain_method, "not estimated: a library's own call");
            continue;
        }
        if (e->site[0])
            finding_set(&f->where, "%s, called from %s", e->fn, e->site);
        else
            finding_set(&f->where, "%s", e->fn);
        finding_set(&f->numbers, "%llu call(s) returned %s", (unsigned long long)e->count, e->error);
        finding_set(&f->fix, "check the arguments of %s where it returns %s", e->fn, e->error);
        finding_set(&f->gain_method, "not estimated: a correctness finding, not a time cost");
    }
}

void rules_use_after_release(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    for (unsigned i = 0; i < m->n_uars; i++) {
        const struct rm_uar *u = &m->uars[i];
        struct finding *f = finding_add(out, "use-after-release", SEV_ERROR, -1);
        finding_set(&f->where, "%s, called from %s", u->fn,
                    u->site[0] ? u->site : "(a call that succeeds carries no stack; the trace names the object: "
                                           "use_after_release)");
        finding_set(&f->numbers, "%llu call(s) on a handle the app had already released", (unsigned long long)u->count);
        finding_set(&f->fix, "retain the object while it is used, or stop using the handle after its last release "
                    "(undefined behaviour: the driver may crash or reuse it)");
        finding_set(&f->gain_method, "not estimated: a correctness finding, not a time cost");
    }
}
