/* The probe file: where it lives, reading and filling it, and the
 * latency/bandwidth fit that says what "small" means on a device. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_file.h"

int clt_cache_dir(const char *sub, char *out, size_t cap)
{
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n = x && *x ? snprintf(out, cap, "%s/cltrace/%s", x, sub)
          : h && *h ? snprintf(out, cap, "%s/.cache/cltrace/%s", h, sub) : -1;
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int clt_probe_dir(char *out, size_t cap)
{
    const char *d = getenv("CLTRACE_PROBE_DIR");
    if (!d || !*d)
        return clt_cache_dir("probe", out, cap);
    int n = snprintf(out, cap, "%s", d);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int clt_probe_path(const char *device_name, char *out, size_t cap)
{
    char dir[512], safe[128];
    if (clt_probe_dir(dir, sizeof dir) != 0)
        return -1;
    size_t k = 0;
    for (const char *s = device_name; *s && k + 1 < sizeof safe; s++)
        safe[k++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                    *s == '.' || *s == '-' ? *s : '_';
    safe[k] = 0;
    int n = snprintf(out, cap, "%s/%s.probe", dir, k ? safe : "unnamed");
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int clt_probe_set(struct clt_probe *p, const char *key, const char *fmt, ...)
{
    if (p->n == CLT_PROBE_MAX)
        return -1;
    snprintf(p->key[p->n], sizeof p->key[p->n], "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->val[p->n], sizeof p->val[p->n], fmt, ap);
    va_end(ap);
    p->n++;
    return 0;
}

const char *clt_probe_get(const struct clt_probe *p, const char *key)
{
    for (unsigned i = 0; i < p->n; i++)
        if (!strcmp(p->key[i], key))
            return p->val[i];
    return NULL;
}

int clt_probe_load(const char *device_name, struct clt_probe *p)
{
    char path[700], line[256];
    p->n = 0;
    if (clt_probe_path(device_name, path, sizeof path) != 0)
        return -1;
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int ok = fgets(line, sizeof line, f) && !strncmp(line, "cltrace-probe 1", 15);
    while (ok && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *sp = strchr(line, ' ');
        if (!sp || sp == line)
            continue;
        *sp = 0;
        clt_probe_set(p, line, "%s", sp + 1);
    }
    fclose(f);
    /* a file for another device of the same safe name is not this one's */
    const char *dev = clt_probe_get(p, "device");
    return ok && dev && !strcmp(dev, device_name) ? 0 : -1;
}

int clt_probe_fit(const uint64_t *bytes, const double *ns, unsigned n, struct clt_probe_fit *fit)
{
    fit->latency_ns = fit->gbps = 0;
    fit->small_bytes = 0;
    if (n < 2 || bytes[n - 1] <= bytes[0] || ns[n - 1] <= 0 || ns[0] <= 0)
        return -1;
    fit->gbps = (double)bytes[n - 1] / ns[n - 1];              /* bytes per ns = GB/s */
    /* the fixed cost: what the two smallest sizes took beyond their bytes
     * at that bandwidth, the lesser (a shared machine only ever adds time;
     * mid sizes are left out: a cache can serve them faster than B) */
    for (unsigned i = 0; i < 2 && i + 1 < n; i++) {
        double l = ns[i] - (double)bytes[i] / fit->gbps;
        if (ns[i] > 0 && l > 0 && (fit->latency_ns == 0 || l < fit->latency_ns))
            fit->latency_ns = l;
    }
    if (fit->latency_ns <= 0)
        return -1;
    double half = fit->latency_ns * fit->gbps;
    fit->small_bytes = ((uint64_t)half + 1023) / 1024 * 1024;
    return 0;
}
