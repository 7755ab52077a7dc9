/* The one rule for faster and slower, and kernels matched between two runs
 * (compare.h says both). */
#include <stdlib.h>
#include <string.h>
#include "compare.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void rm_spread_of(const double *v, unsigned n, struct rm_spread *out)
{
    double s[64];
    n = n < 64 ? n : 64;
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    out->min = s[0];
    out->max = s[n - 1];
    out->n = n;
}

double rm_change_percent(double base, double now)
{
    return base > 0 ? 100.0 * (now - base) / base : 0;
}

enum rm_trend rm_trend_of(const struct rm_spread *base, const struct rm_spread *now, double percent)
{
    double pct = rm_change_percent(base->median, now->median), diff = now->median - base->median;
    int spread_known = base->n > 1 && now->n > 1;
    if (pct > percent && diff > RM_TREND_MIN_NS && (!spread_known || now->min > base->max))
        return RM_SLOWER;
    if (-pct > percent && -diff > RM_TREND_MIN_NS && (!spread_known || now->max < base->min))
        return RM_FASTER;
    return RM_NO_CHANGE;
}

static int same_config(const struct rm_kernel *a, const struct rm_kernel *b)
{
    return a->work_dim == b->work_dim && a->local_null == b->local_null && !memcmp(a->gws, b->gws, sizeof a->gws) &&
           !memcmp(a->lws, b->lws, sizeof a->lws);
}

static int matches(const struct rm_kernel *a, const struct rm_kernel *b, enum rm_match how)
{
    return !strcmp(a->name, b->name) && (how == RM_MATCH_NAME || same_config(a, b));
}

/* k added to its pair (side 0 base, 1 new); a new pair where none matches */
static void pair_add(struct rm_kernel_pair *out, unsigned cap, unsigned *n, const struct rm_kernel *k, int side,
                     enum rm_match how)
{
    unsigned i = 0;
    while (i < *n && i < cap && !matches(out[i].base ? out[i].base : out[i].now, k, how))
        i++;
    if (i == *n) {
        if (i < cap)
            memset(&out[i], 0, sizeof out[i]);
        (*n)++;
    }
    if (i >= cap)
        return;
    struct rm_kernel_pair *p = &out[i];
    if (side == 0) {
        p->base = p->base ? p->base : k;
        p->base_ns += k->device_ns;
        p->base_launches += k->launches;
    } else {
        p->now = p->now ? p->now : k;
        p->now_ns += k->device_ns;
        p->now_launches += k->launches;
    }
}

unsigned rm_kernel_pairs(const struct rm_model *base, const struct rm_model *now, enum rm_match how,
                         struct rm_kernel_pair *out, unsigned cap)
{
    unsigned n = 0;
    for (unsigned i = 0; i < base->n_kernels; i++)
        pair_add(out, cap, &n, &base->kernels[i], 0, how);
    for (unsigned i = 0; i < now->n_kernels; i++)
        pair_add(out, cap, &n, &now->kernels[i], 1, how);
    return n;
}
