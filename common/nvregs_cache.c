#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nvregs_cache.h"
#include "probe_file.h"

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001B3ull;
    return (h ^ 0xFF) * 0x100000001B3ull;       /* a separator: "ab"+"c" is not "a"+"bc" */
}

int clt_nvregs_cache_path(const char *src, const char *opts, const char *device, const char *driver, char *path,
                          size_t cap)
{
    char dir[PATH_MAX];
    if (clt_cache_dir("nvregs", dir, sizeof dir) != 0)
        return -1;
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    const char *parts[] = { src, opts, device, driver };
    for (unsigned i = 0; i < 4; i++)
        a = fnv(a, parts[i]), b = fnv(b ^ a, parts[i]);
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        mkdir(dir, 0700);
        *slash = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    int n = snprintf(path, cap, "%s/%016llx%016llx.log", dir, (unsigned long long)a, (unsigned long long)b);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

char *clt_nvregs_cache_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *s = fd >= 0 && fstat(fd, &st) == 0 && st.st_size < (1 << 24) ? malloc((size_t)st.st_size + 1) : NULL;
    ssize_t got = s ? read(fd, s, (size_t)st.st_size) : -1;
    if (fd >= 0)
        close(fd);
    if (s && got == st.st_size) {
        s[got] = 0;
        return s;
    }
    free(s);
    return NULL;
}

/* a temporary file renamed over the name: a reader never sees half of it */
void clt_nvregs_cache_write(const char *path, const char *log)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    size_t n = strlen(log);
    int ok = write(fd, log, n) == (ssize_t)n;
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}
