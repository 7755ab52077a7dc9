/* cltrace's own files found from the running program: beside it (the build
 * folder), or where `make install` puts them (bin/, lib/cltrace/). */
#ifndef CLT_BESIDE_H
#define CLT_BESIDE_H
#include <stddef.h>

int clt_find_beside(const char *file, char *out, size_t cap);   /* 0 found (out: its path), -1 not */

#endif
