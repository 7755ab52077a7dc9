/* Each physical device a report's traces used, however many ranks shared
 * it: its busy time is the union of every rank's commands on it (4 ranks on
 * one GPU are not 4 GPUs' time), and two GPUs of one name are two. Which
 * device a trace's device object is comes from its UUID or PCI place
 * (cltrace.device.N.uuid), else its name on its host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/map.h"
#include "model.h"
#include "reader.h"

static int seg_push(struct rm_seg **v, unsigned *n, unsigned *cap, struct rm_seg s)
{
    if (*n >= (1u << 24) || clt_grow(v, *n, cap, sizeof **v, 64) != 0)
        return -1;             /* (16 M busy periods: the union is then a lower bound) */
    (*v)[(*n)++] = s;
    return 0;
}

/* Commands on one device come about in completion order: one that starts
 * before the current busy period ends extends it. */
void rm_device_command(struct rm_model *m, uint64_t dev_obj, uint64_t start, uint64_t end, int kernel, int transfer)
{
    struct rm_devtrace *t = NULL;
    for (unsigned i = 0; i < m->n_dtr && !t; i++)
        if (m->dtr[i].dev_obj == dev_obj)
            t = &m->dtr[i];
    if (!t) {
        if (m->n_dtr >= 64 || clt_grow(&m->dtr, m->n_dtr, &m->cap_dtr, sizeof *m->dtr, 4) != 0)
            return;
        t = &m->dtr[m->n_dtr++];
        memset(t, 0, sizeof *t);
        t->dev_obj = dev_obj;
    }
    if (end < start)
        end = start;
    if (kernel) {
        t->kernel_ns += end - start;
        t->launches++;
    } else if (transfer) {
        t->transfer_ns += end - start;
        t->transfers++;
    }
    if (t->cur.end && start <= t->cur.end) {
        if (end > t->cur.end)
            t->cur.end = end;
        if (start < t->cur.start)
            t->cur.start = start;
        return;
    }
    if (t->cur.end)
        seg_push(&t->seg, &t->n_seg, &t->cap_seg, t->cur);
    t->cur = (struct rm_seg){ start, end };
}

static int by_start(const void *a, const void *b)
{
    const struct rm_seg *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* sorted, overlaps merged; the union's length and ends */
static void merge(struct rm_devbusy *d)
{
    qsort(d->seg, d->n_seg, sizeof *d->seg, by_start);
    unsigned k = 0;
    for (unsigned i = 0; i < d->n_seg; i++) {
        if (k && d->seg[i].start <= d->seg[k - 1].end) {
            if (d->seg[i].end > d->seg[k - 1].end)
                d->seg[k - 1].end = d->seg[i].end;
        } else {
            d->seg[k++] = d->seg[i];
        }
    }
    d->n_seg = k;
    d->busy_ns = 0;
    for (unsigned i = 0; i < k; i++)
        d->busy_ns += d->seg[i].end - d->seg[i].start;
    d->first = k ? d->seg[0].start : 0;
    d->last = k ? d->seg[k - 1].end : 0;
}

static const struct rm_device *device_of(const struct rm_model *m, uint64_t dev_obj)
{
    for (unsigned i = 0; i < m->n_dev && i < 8; i++)
        if (m->dev[i].id == dev_obj)
            return &m->dev[i];
    return m->n_dev == 1 ? &m->dev[0] : NULL;   /* a trace older than the ids: its one device */
}

void rm_devices_fold(struct rm_model *m)
{
    int who = m->rank >= 0 ? m->rank : (int)m->traces_read;
    m->traces_read++;
    uint64_t first = UINT64_MAX, last = 0;     /* this trace's device span */
    for (unsigned i = 0; i < m->n_dtr; i++) {
        const struct rm_devtrace *t = &m->dtr[i];
        uint64_t a = t->n_seg ? t->seg[0].start : t->cur.start, b = t->cur.end;
        if (t->cur.end || t->n_seg) {
            first = a < first ? a : first;
            last = b > last ? b : last;
        }
    }
    if (last > first)
        m->trace_spans_ns += last - first;
    for (unsigned i = 0; i < m->n_dtr; i++) {
        struct rm_devtrace *t = &m->dtr[i];
        if (t->cur.end)
            seg_push(&t->seg, &t->n_seg, &t->cap_seg, t->cur);
        const struct rm_device *dv = device_of(m, t->dev_obj);
        char key[256];
        const char *name = dv && dv->name[0] ? dv->name : "device";
        if (dv && dv->uuid[0] && strncmp(dv->uuid, "pci:", 4))
            snprintf(key, sizeof key, "%s", dv->uuid);          /* a UUID is the same on every host */
        else
            snprintf(key, sizeof key, "%s/%s/%s", m->host, dv && dv->uuid[0] ? dv->uuid : "", name);
        struct rm_devbusy *d = NULL;
        for (unsigned k = 0; k < m->n_devs && !d; k++)
            if (!strcmp(m->devs[k].key, key))
                d = &m->devs[k];
        if (!d) {
            if (m->n_devs >= 256 || clt_grow(&m->devs, m->n_devs, &m->cap_devs, sizeof *m->devs, 4) != 0)
                continue;
            d = &m->devs[m->n_devs++];
            memset(d, 0, sizeof *d);
            snprintf(d->key, sizeof d->key, "%s", key);
            snprintf(d->name, sizeof d->name, "%s", name);
            snprintf(d->host, sizeof d->host, "%s", m->host);
            snprintf(d->uuid, sizeof d->uuid, "%s", dv ? dv->uuid : "");
        }
        size_t len = strlen(d->ranks);
        if (len + 12 < sizeof d->ranks)
            snprintf(d->ranks + len, sizeof d->ranks - len, "%s%d", len ? ", " : "", who);
        else if (!strstr(d->ranks, "..."))
            snprintf(d->ranks + len, sizeof d->ranks - len, ", ...");
        d->n_traces++;
        d->kernel_ns += t->kernel_ns;
        d->transfer_ns += t->transfer_ns;
        d->launches += t->launches;
        d->transfers += t->transfers;
        for (unsigned s = 0; s < t->n_seg; s++)
            seg_push(&d->seg, &d->n_seg, &d->cap_seg, t->seg[s]);
        merge(d);
        free(t->seg);
    }
    m->n_dtr = 0;
}

void rm_devices_free(struct rm_model *m)
{
    for (unsigned i = 0; i < m->n_devs; i++)
        free(m->devs[i].seg);
    for (unsigned i = 0; i < m->n_dtr; i++)
        free(m->dtr[i].seg);
    free(m->devs);
    free(m->dtr);
}
