/* A byte count as a reader wants it: "4 B", "256 KiB", "1.5 MiB" (the
 * writer's transfer names, the report's memory line). */
#ifndef CLT_BYTES_H
#define CLT_BYTES_H
#include <stddef.h>
#include <stdint.h>

char *clt_bytes_words(uint64_t bytes, char *buf, size_t cap);   /* buf */

#endif
