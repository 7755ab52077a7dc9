/* The kernel table: one entry per kernel name and launch configuration
 * (the reader adds launches to it; sampling.c extrapolates over it). */
#include <stdio.h>
#include <string.h>
#include "common/map.h"
#include "model.h"
#include "reader.h"

/* The entry of a kernel and launch configuration; made (no launches yet)
 * when new. NULL: out of memory. */
struct rm_kernel *rm_kernel_find(struct rm_model *m, const char *name, const struct rm_kernel *k)
{
    for (unsigned i = 0; i < m->n_kernels; i++) {
        struct rm_kernel *x = &m->kernels[i];
        if (!strcmp(x->name, name) && x->work_dim == k->work_dim && x->local_null == k->local_null &&
            !memcmp(x->gws, k->gws, sizeof k->gws) && !memcmp(x->lws, k->lws, sizeof k->lws))
            return x;
    }
    if (clt_grow(&m->kernels, m->n_kernels, &m->cap_kernels, sizeof *m->kernels, 16) != 0)
        return NULL;
    struct rm_kernel *x = &m->kernels[m->n_kernels++];
    *x = *k;
    snprintf(x->name, sizeof x->name, "%s", name);
    x->launches = x->device_ns = x->timed = x->untimed = x->est_n = x->est_ns = 0;
    x->site = 0;
    memset(x->ph_ns, 0, sizeof x->ph_ns);
    return x;
}
