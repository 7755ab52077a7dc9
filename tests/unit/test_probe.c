/* The probe's fit (what "small" means on a device) with worked numbers,
 * and the probe file: written, found again by device name, not confused
 * with another device's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/probe_file.h"

static int failures;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

int main(void)
{
    /* 10 us per transfer and 12.5 GB/s (a PCIe 4 link): t(n) = 10000 + n / 12.5;
     * the largest size reads B = 16 MiB / (10000 + 1342177) ns = 12.41 GB/s;
     * L = t(4 KiB) - 4096 / B = 10327.7 - 330.0 = 9997.7 ns; L x B = 124,090
     * bytes -> 122 KiB (124,928) */
    static const uint64_t sz[7] = { 4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20 };
    double t[7];
    for (int i = 0; i < 7; i++)
        t[i] = 10000 + (double)sz[i] / 12.5;
    struct clt_probe_fit f;
    EXPECT(clt_probe_fit(sz, t, 7, &f) == 0);
    EXPECT(f.gbps > 12.40 && f.gbps < 12.42);
    EXPECT(f.latency_ns > 9990 && f.latency_ns < 10000);
    EXPECT(f.small_bytes == 124928);
    /* PoCL on this machine (measured): ~2.6 us and ~14.4 GB/s -> ~37 KiB */
    for (int i = 0; i < 7; i++)
        t[i] = 2600 + (double)sz[i] / 14.4;
    EXPECT(clt_probe_fit(sz, t, 7, &f) == 0 && f.small_bytes == 37888);
    /* noise only adds time: a slow 4 KiB sample leaves the 16 KiB one to say L */
    t[0] += 50000;
    EXPECT(clt_probe_fit(sz, t, 7, &f) == 0 && f.small_bytes == 37888);
    /* no fixed cost to see, or a curve that is not one: no threshold */
    for (int i = 0; i < 7; i++)
        t[i] = (double)sz[i] / 14.4;
    EXPECT(clt_probe_fit(sz, t, 7, &f) == -1 && f.small_bytes == 0);
    EXPECT(clt_probe_fit(sz, t, 1, &f) == -1);

    /* the file: written as the probe writes it, read back by device name */
    char dir[] = "/tmp/cltrace-probe-test.XXXXXX", path[700];
    EXPECT(mkdtemp(dir) != NULL);
    setenv("CLTRACE_PROBE_DIR", dir, 1);
    EXPECT(clt_probe_path("NVIDIA H100 80GB HBM3", path, sizeof path) == 0);
    EXPECT(strstr(path, "/NVIDIA_H100_80GB_HBM3.probe") != NULL);
    FILE *o = fopen(path, "w");
    EXPECT(o != NULL);
    fprintf(o, "cltrace-probe 1\ndevice NVIDIA H100 80GB HBM3\nsmall_transfer_bytes 124928\n");
    fclose(o);
    struct clt_probe p;
    EXPECT(clt_probe_load("NVIDIA H100 80GB HBM3", &p) == 0);
    EXPECT(clt_probe_get(&p, "small_transfer_bytes") && !strcmp(clt_probe_get(&p, "small_transfer_bytes"), "124928"));
    EXPECT(clt_probe_load("NVIDIA H100 80GB HBM3?", &p) == -1);   /* the same file name, another device */
    EXPECT(clt_probe_load("NVIDIA H200", &p) == -1);
    o = fopen(path, "w");
    fprintf(o, "not a probe\ndevice NVIDIA H100 80GB HBM3\n");
    fclose(o);
    EXPECT(clt_probe_load("NVIDIA H100 80GB HBM3", &p) == -1);
    unlink(path);
    rmdir(dir);
    unsetenv("CLTRACE_PROBE_DIR");
    setenv("XDG_CACHE_HOME", "/x", 1);
    EXPECT(clt_probe_path("d", path, sizeof path) == 0 && !strcmp(path, "/x/cltrace/probe/d.probe"));
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/h", 1);
    EXPECT(clt_probe_path("d", path, sizeof path) == 0 && !strcmp(path, "/h/.cache/cltrace/probe/d.probe"));
    printf("probe: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
