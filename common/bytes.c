#include <stdio.h>
#include "bytes.h"

char *clt_bytes_words(uint64_t bytes, char *buf, size_t cap)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    /* a tenth below 10 where it says something: 1.5 MiB, 4 KiB */
    snprintf(buf, cap, "%.*f %s", u && v < 10 && v != (double)(uint64_t)v ? 1 : 0, v, unit[u]);
    return buf;
}
