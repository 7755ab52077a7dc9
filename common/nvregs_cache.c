#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cache.h"
#include "nvregs_cache.h"

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001B3ull;
    return (h ^ 0xFF) * 0x100000001B3ull;       /* a separator: "ab"+"c" is not "a"+"bc" */
}

int clt_nvregs_cache_path(const char *src, const char *opts, const char *device, const char *driver, char *path,
                          size_t cap)
{
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    const char *parts[] = { src, opts, device, driver };
    for (unsigned i = 0; i < 4; i++)
        a = fnv(a, parts[i]), b = fnv(b ^ a, parts[i]);
    char name[48];
    snprintf(name, sizeof name, "%016llx%016llx.log", (unsigned long long)a, (unsigned long long)b);
    return clt_cache_path("nvregs", name, path, cap);
}

char *clt_nvregs_cache_read(const char *path)
{
    size_t n;
    return clt_cache_read(path, &n, 1u << 24);
}

void clt_nvregs_cache_write(const char *path, const char *log)
{
    struct iovec one = { (void *)log, strlen(log) };
    clt_cache_write(path, &one, 1);
}
