/* A trace's bytes for the reader: the file mapped; a gzip trace inflated
 * as a stream into a window of 1 MiB, a raw one read in place. Packets are
 * handed out as pointers into those bytes: no copy, no call per byte.
 *
 * Measured on the 1 M-call trace (callgrind, 2026-11-27): zlib's gzread
 * stream with a call per byte of each packet's header, ~800 instructions a
 * packet (inflate 520, its CRC 230); libdeflate's whole-buffer
 * decompressor 430, but it needs a member whole in memory, and the writer
 * keeps a trace one gzip member (trace processor reads no second one): 60
 * MB for that trace, without bound for an hour-long one. So zlib's raw
 * inflate, the gzip header read here and the CRC not computed (the deflate
 * stream's own checks catch damage; a cut trace has no trailer to check):
 * ~540, the memory a window's.
 *
 * A stream cut short (the app was killed mid-write) or damaged gives what
 * it inflated before; members after the first are read too. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "input.h"

#define WINDOW (1u << 20)

/* The gzip header at in_pos (RFC 1952), skipped; 0 ok, -1 not one. */
static int gzip_header(struct rm_in *s)
{
    const uint8_t *p = s->map + s->in_pos, *end = s->map + s->map_len;
    if (end - p < 10 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8)
        return -1;
    unsigned flags = p[3];
    p += 10;
    if (flags & 4) {            /* FEXTRA */
        if (end - p < 2 || end - p - 2 < (p[0] | p[1] << 8))
            return -1;
        p += 2 + (p[0] | p[1] << 8);
    }
    for (unsigned f = 8; f <= 16; f <<= 1)      /* FNAME, FCOMMENT: zero-ended */
        if (flags & f) {
            const uint8_t *z = memchr(p, 0, (size_t)(end - p));
            if (!z)
                return -1;
            p = z + 1;
        }
    if (flags & 2)              /* FHCRC */
        p += 2;
    if (p > end)
        return -1;
    s->in_pos = (size_t)(p - s->map);
    return 0;
}

int rm_in_open(struct rm_in *s, int fd)
{
    memset(s, 0, sizeof *s);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    s->map_len = (size_t)st.st_size;
    if (s->map_len) {
        void *m = mmap(NULL, s->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            return -1;
        s->map = m;
        madvise(m, s->map_len, MADV_SEQUENTIAL);
    }
    s->gz = s->map_len >= 2 && s->map[0] == 0x1f && s->map[1] == 0x8b;
    if (!s->gz) {                /* raw: read in place */
        s->out = (uint8_t *)s->map;
        s->out_len = s->map_len;
        s->eof = 1;
        return 0;
    }
    s->z = calloc(1, sizeof *s->z);
    s->out = malloc(WINDOW);
    s->out_cap = WINDOW;
    if (!s->z || !s->out || inflateInit2(s->z, -MAX_WBITS) != Z_OK) {
        free(s->z);
        s->z = NULL;
        return -1;
    }
    if (gzip_header(s) != 0)
        s->eof = s->salvaged = 1;
    return 0;
}

void rm_in_close(struct rm_in *s)
{
    if (s->gz)
        free(s->out);
    if (s->z) {
        inflateEnd(s->z);
        free(s->z);
    }
    if (s->map)
        munmap((void *)s->map, s->map_len);
    memset(s, 0, sizeof *s);
}

/* More inflated bytes after those not yet taken (the window grown for a
 * packet larger than it). 0: more; -1: none. */
static int refill(struct rm_in *s, size_t need)
{
    if (s->eof)
        return -1;
    memmove(s->out, s->out + s->out_pos, s->out_len - s->out_pos);   /* what a packet left */
    s->out_len -= s->out_pos;
    s->out_pos = 0;
    if (need > s->out_cap) {
        uint8_t *g = realloc(s->out, need);
        if (!g)
            return -1;
        s->out = g;
        s->out_cap = need;
    }
    size_t before = s->out_len;
    /* the compressed bytes read are not read again: their pages go, so
     * that a large trace costs its window, not its size, in memory */
    size_t page = 4096, done = s->in_pos & ~(page - 1);
    if (done - s->dropped >= (1u << 20)) {
        madvise((void *)(s->map + s->dropped), done - s->dropped, MADV_DONTNEED);
        s->dropped = done;
    }
    while (s->out_len < s->out_cap) {
        size_t avail = s->map_len - s->in_pos;
        s->z->next_in = (Bytef *)(s->map + s->in_pos);
        s->z->avail_in = (uInt)(avail > (1u << 30) ? 1u << 30 : avail);
        s->z->next_out = s->out + s->out_len;
        s->z->avail_out = (uInt)(s->out_cap - s->out_len);
        int rc = inflate(s->z, Z_NO_FLUSH);
        s->in_pos += (size_t)((const uint8_t *)s->z->next_in - (s->map + s->in_pos));
        s->out_len = s->out_cap - s->z->avail_out;
        if (rc == Z_STREAM_END) {           /* the trailer (CRC, size), then another member or the end */
            s->in_pos += 8;
            if (s->in_pos >= s->map_len || inflateReset(s->z) != Z_OK || gzip_header(s) != 0) {
                s->eof = 1;
                s->salvaged |= s->in_pos > s->map_len;
                break;
            }
            continue;
        }
        if (rc != Z_OK) {       /* cut short (no more input) or damaged: what it gave */
            s->eof = s->salvaged = 1;
            break;
        }
    }
    return s->out_len > before || s->out_len - s->out_pos >= need ? 0 : -1;
}

const uint8_t *rm_in_take_slow(struct rm_in *s, size_t n)
{
    while (s->out_len - s->out_pos < n)
        if (refill(s, n) != 0)
            return NULL;
    const uint8_t *p = s->out + s->out_pos;
    s->out_pos += n;
    return p;
}
