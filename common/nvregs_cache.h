/* NVIDIA's register counts kept in the user's cache: a private build's log
 * (-cl-nv-verbose) by the program's source, its options, the device and
 * the driver, in ${XDG_CACHE_HOME:-~/.cache}/cltrace/nvregs/. The shim reads
 * it (capture/nvbuild.c), cltrace-nvregs writes it (nvregs/main.c). */
#ifndef CLT_NVREGS_CACHE_H
#define CLT_NVREGS_CACHE_H
#include <stddef.h>

/* The file's path, its folders made (as mkdir -p: a fresh home has no
 * .cache); -1: no cache (no home, no room, a name too long) */
int clt_nvregs_cache_path(const char *src, const char *opts, const char *device, const char *driver, char *path,
                          size_t cap);
char *clt_nvregs_cache_read(const char *path);             /* malloc'd; NULL: none */
/* cltrace-nvregs starts the driver once the app has ended, or this long
 * after it was started (nvregs/main.c says why) */
#define CLT_NVREGS_DEFER_MS 2000
void clt_nvregs_cache_write(const char *path, const char *log);   /* whole or not at all */

#endif
