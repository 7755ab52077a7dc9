/* A device's probe results (`cltrace probe`): one small text file per
 * device in the user's cache, "key value" per line. The probe writes it,
 * the writer copies it into traces made afterwards (cltrace.probe.N.*), the
 * report reads it from there. */
#ifndef CLT_PROBE_FILE_H
#define CLT_PROBE_FILE_H
#include <stddef.h>
#include <stdint.h>

#define CLT_PROBE_MAX 48

struct clt_probe {
    unsigned n;
    char key[CLT_PROBE_MAX][40];
    char val[CLT_PROBE_MAX][128];
};

/* cltrace's folder `sub` in the user's cache: $XDG_CACHE_HOME/cltrace/sub,
 * else $HOME/.cache/cltrace/sub; -1 when none can be named (the probe's
 * results, NVIDIA's register counts: capture/nvbuild.c). */
int clt_cache_dir(const char *sub, char *out, size_t cap);
/* $CLTRACE_PROBE_DIR, else the cache's probe folder. */
int clt_probe_dir(char *out, size_t cap);
/* The file for a device (its name, made safe for a file name). */
int clt_probe_path(const char *device_name, char *out, size_t cap);
/* 0: read (for that device); -1: no file, or not a probe file. */
int clt_probe_load(const char *device_name, struct clt_probe *p);
const char *clt_probe_get(const struct clt_probe *p, const char *key);
int clt_probe_set(struct clt_probe *p, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Where a transfer stops being small on a device: time(n) = L + n / B,
 * fitted to the fastest time at each size (the largest size gives the
 * bandwidth B; the lesser time the two smallest took beyond their bytes at
 * B, the fixed cost L); a transfer of n < L x B bytes
 * reaches less than half the bandwidth: its fixed cost dominates. Rounded
 * up to a whole KiB. 0 when the curve does not allow it. */
struct clt_probe_fit { double latency_ns, gbps; uint64_t small_bytes; };
int clt_probe_fit(const uint64_t *bytes, const double *ns, unsigned n, struct clt_probe_fit *fit);

#endif
