/* nan: the first command that left a NaN or an infinity in a buffer it may
 * write (CLTRACE_FINGERPRINT), with every command before it clean. The
 * commands after it that still hold one are counted, not listed: they
 * carry what the first one wrote. */
#include <stdio.h>
#include <stdlib.h>
#include "report/model/describe.h"
#include "rules.h"

static uint64_t nonfinite(const struct rm_fp *f)
{
    return f->nan + f->pos_inf + f->neg_inf;
}

static void name_counts(const struct rm_fp *f, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    if (f->nan)
        n += (size_t)snprintf(buf + n, cap - n, "%llu NaN", (unsigned long long)f->nan);
    if (f->pos_inf && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "%s%llu +Inf", n ? ", " : "", (unsigned long long)f->pos_inf);
    if (f->neg_inf && n < cap)
        snprintf(buf + n, cap - n, "%s%llu -Inf", n ? ", " : "", (unsigned long long)f->neg_inf);
}

void rules_nan(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    const struct rm_fpcmd **v = m->n_fpcmds ? rm_fp_order(m) : NULL;
    if (!v)
        return;
    unsigned first = m->n_fpcmds, later = 0;
    const struct rm_fp *bad = NULL;
    for (unsigned i = 0; i < m->n_fpcmds; i++)
        for (unsigned j = 0; j < v[i]->n; j++)
            if (nonfinite(&v[i]->fp[j])) {
                if (first == m->n_fpcmds) {
                    first = i;
                    bad = &v[i]->fp[j];
                } else if (i != first) {
                    later++;
                    break;
                }
            }
    if (bad) {
        const struct rm_fpcmd *c = v[first];
        char cmd[256], buf[RM_MAX_SITE + 128], counts[96];
        rm_fpcmd_describe(c, cmd, sizeof cmd);
        rm_fp_buffer_describe(m, bad, buf, sizeof buf);
        name_counts(bad, counts, sizeof counts);
        const char *site = rm_fpcmd_site(m, c);
        struct finding *f = finding_add(out, "nan", SEV_ERROR, -1);
        finding_set(&f->where, "%s%s%s", cmd, site[0] ? ", enqueued at " : "", site);
        finding_set(&f->numbers, "%s first wrote %s into %s, the first at element %llu; the %u fingerprinted "
                    "commands before it left none; %u later commands still hold some", cmd, counts, buf,
                    (unsigned long long)bad->first_nonfinite, first, later);
        finding_set(&f->fix, "look at what `%s` computes for element %llu in this launch (a division by zero, the "
                    "square root or logarithm of a negative, an overflow, a value read out of bounds or before it "
                    "was written); CLTRACE_BREAK=nan under a debugger stops in the call that enqueued it",
                    c->name, (unsigned long long)bad->first_nonfinite);
        finding_set(&f->gain_method, "not a time cost: a wrong answer");
    }
    free(v);
}
