/* Files in the user's cache (cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cache.h"
#include "probe_file.h"

int clt_make_dirs(const char *dir, unsigned mode)
{
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof p, "%s", dir) >= sizeof p)
        return -1;
    for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        mkdir(p, mode);        /* there already, most of them: the last one decides */
        *slash = '/';
    }
    return mkdir(p, mode) != 0 && errno != EEXIST ? -1 : 0;
}

int clt_cache_path(const char *sub, const char *name, char *path, size_t cap)
{
    char dir[PATH_MAX];
    if (clt_cache_dir(sub, dir, sizeof dir) != 0 || clt_make_dirs(dir, 0700) != 0)
        return -1;
    int n = snprintf(path, cap, "%s/%s", dir, name);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* Mapped, not read: a file of MBs read into fresh memory cost its copy and a
 * page fault a page; mapped, only the pages looked at come in, from the page
 * cache. A file is replaced by rename, never rewritten in place
 * (clt_cache_write): the mapping keeps the one it opened. */
/* path opened for reading where it holds no more than most bytes: the file
 * (its size in *size), or -1 */
static int open_at_most(const char *path, size_t most, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || (size_t)st.st_size > most)) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        *size = (size_t)st.st_size;
    return fd;
}

const void *clt_cache_map(const char *path, size_t *len, size_t most)
{
    size_t size = 0;
    int fd = open_at_most(path, most, &size);
    if (fd < 0)
        return NULL;
    void *m = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    *len = size;
    return m;
}

void clt_cache_unmap(const void *map, size_t len)
{
    if (map)
        munmap((void *)(uintptr_t)map, len);
}

void *clt_cache_read(const char *path, size_t *len, size_t most)
{
    size_t size = 0;
    int fd = open_at_most(path, most, &size);
    if (fd < 0)
        return NULL;
    char *s = malloc(size + 1);
    ssize_t got = s ? read(fd, s, size) : -1;
    close(fd);
    if (s && got >= 0 && (size_t)got == size) {
        s[got] = 0;
        *len = size;
        return s;
    }
    free(s);
    return NULL;
}

int clt_cache_write(const char *path, const struct iovec *parts, int n)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t want = 0;
    for (int i = 0; i < n; i++)
        want += parts[i].iov_len;
    int ok = writev(fd, parts, n) == (ssize_t)want;   /* a regular file: whole or an error */
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
