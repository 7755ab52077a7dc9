/* Files kept in the user's cache, ${XDG_CACHE_HOME:-~/.cache}/cltrace/SUB/NAME:
 * their folders made as mkdir -p (a fresh home has no .cache), each written
 * whole or not at all (a temporary file renamed over the name: a reader
 * never sees half of one). NVIDIA's register counts (nvregs_cache.c), the
 * writer's symbol tables (writer/symtab.c). */
#ifndef CLT_CACHE_H
#define CLT_CACHE_H
#include <stddef.h>
#include <sys/uio.h>

int clt_make_dirs(const char *dir, unsigned mode);   /* as mkdir -p: 0, or -1 (errno) */
int clt_cache_path(const char *sub, const char *name, char *path, size_t cap);   /* -1: no cache */
void *clt_cache_read(const char *path, size_t *len, size_t most);   /* malloc'd, a NUL after; NULL: none */
const void *clt_cache_map(const char *path, size_t *len, size_t most);   /* read-only; NULL: none */
void clt_cache_unmap(const void *map, size_t len);
int clt_cache_write(const char *path, const struct iovec *parts, int n);   /* 0: written whole */

#endif
