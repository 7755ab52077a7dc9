/* dropped-calls: the tracer's buffer was full and calls were not recorded;
 * every count in the report is short by them. */
#include "rules.h"

void rules_dropped_calls(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    if (!m->dropped_calls)
        return;
    struct finding *f = finding_add(out, "dropped-calls", SEV_WARNING, -1);
    finding_set(&f->where, "trace");
    finding_set(&f->numbers, "%llu calls not recorded (the tracer's buffer was full): every count in this report "
                "is short by them", (unsigned long long)m->dropped_calls);
    finding_set(&f->fix, "trace again without CLTRACE_DROP=1 (the default waits for the writer), or with a "
                "larger CLTRACE_BUFFER_KB");
    finding_set(&f->gain_method, "not a time cost: every count is short by the calls not recorded");
}
