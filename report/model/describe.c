/* The model described in words and looked up (describe.h). */
#include <stdio.h>
#include <string.h>
#include "describe.h"
#include "occupancy.h"

const struct occ_model *kernel_occ(const struct rm_model *m, const struct rm_kernel *k, struct occ_model *buf)
{
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    return d ? occ_for_device(d->vendor, d->name, (unsigned)d->cc, d->warp > 0 ? (unsigned)d->warp : 0,
                              k ? (unsigned)k->pref_multiple : 0, buf) : NULL;
}

void occ_model_note(const struct rm_model *m, char *buf, size_t cap)
{
    struct occ_model b;
    const struct occ_model *om = kernel_occ(m, NULL, &b);
    const struct rm_device *d = m->n_dev ? &m->dev[0] : NULL;
    if (om)
        snprintf(buf, cap, "occupancy model: %s%s", om->name,
                 om->max_warps ? "" : " (no documented resident maximum: wavefronts counted, no percentage)");
    else
        snprintf(buf, cap, "occupancy: no model for %s%s%s (models: NVIDIA by compute capability, AMD TeraScale, "
                 "GCN, CDNA, RDNA, Intel Gen9 to Xe); the work-group and fill findings still apply",
                 d && d->name[0] ? d->name : "this device", d && d->vendor[0] ? ", " : "", d ? d->vendor : "");
}

const char *small_source(const struct rm_model *m)
{
    return m->small_given ? "--small-bytes"
         : m->small_source[0] ? m->small_source
         : "the default: no cltrace probe of this device in the trace; run `cltrace probe` once, then trace again";
}

const char *rm_cut_short(const struct rm_model *m)
{
    static __thread char why[200];
    if (m->disk_full[0]) {
        snprintf(why, sizeof why, "the disk filled while tracing (%s): the trace holds what was written before, "
                 "%llu bytes", m->disk_full, (unsigned long long)m->disk_full_bytes);
        return why;
    }
    return m->truncated || !m->has_attributes ? "the app crashed or was killed" : NULL;
}

int rm_sampled_timeline(const struct rm_model *m)
{
    if (!m->self.sampling[0] || !strcmp(m->self.sampling, "off"))
        return 0;
    uint64_t untimed = 0;       /* commands left untimed, against those drawn where they ran (estimated) */
    for (unsigned i = 0; i < m->n_dev; i++)
        untimed += m->dev[i].sampled_out > 0 ? (uint64_t)m->dev[i].sampled_out : 0;
    return untimed > m->estimated_commands;
}

void kernel_config(const struct rm_kernel *k, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s global=", k->name);
    for (unsigned i = 0; i < k->work_dim && n < (int)cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, "%s%llu", i ? "x" : "", (unsigned long long)k->gws[i]);
    if (n < (int)cap && k->local_null)
        snprintf(buf + n, cap - (size_t)n, " local=NULL");
    else
        for (unsigned i = 0; i < k->work_dim && n < (int)cap; i++)
            n += snprintf(buf + n, cap - (size_t)n, "%s%llu", i ? "x" : " local=", (unsigned long long)k->lws[i]);
}

void kernel_config_site(const struct rm_model *m, const struct rm_kernel *k, char *buf, size_t cap)
{
    kernel_config(k, buf, cap);
    size_t n = strlen(buf);
    if (k->site && k->site <= (int)m->n_sites && n < cap)     /* where it was launched from */
        snprintf(buf + n, cap - n, ", launched from %s", m->sites[k->site - 1].site);
}
