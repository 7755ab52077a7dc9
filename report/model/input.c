/* A trace's bytes for the reader: the file mapped; a gzip trace inflated
 * as a stream into a window of 1 MiB, a raw one read in place. Packets are
 * handed out as pointers into those bytes: no copy, no call per byte.
 *
 * Measured on the 1 M-call trace (callgrind, 2026-11-27, instructions a
 * packet): zlib's gzread stream with a call per byte of each packet's
 * header ~800 (inflate 520, its CRC 230); libdeflate's whole-buffer
 * decompressor 430, but it needs a member whole in memory, and the writer
 * keeps a trace one gzip member (trace processor reads no second one): 60
 * MB for that trace, without bound for an hour-long one; zlib's raw
 * inflate as a stream 520; ISA-L's (igzip) 263, half the wall time. So
 * ISA-L's raw inflate, the gzip header read here and the CRC not computed
 * (the deflate stream's own checks catch damage; a cut trace has no
 * trailer to check), the memory a window's.
 *
 * A stream cut short (the app was killed mid-write) or damaged gives what
 * it inflated before; members after the first are read too. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
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
    s->z = malloc(sizeof *s->z);
    s->out = malloc(WINDOW);
    s->out_cap = WINDOW;
    if (!s->z || !s->out) {
        free(s->z);
        free(s->out);
        s->z = NULL;
        s->gz = 0;
        return -1;
    }
    isal_inflate_init(s->z);
    s->z->crc_flag = ISAL_DEFLATE;
    if (gzip_header(s) != 0)
        s->eof = s->salvaged = 1;
    return 0;
}

void rm_in_close(struct rm_in *s)
{
    if (s->gz)
        free(s->out);
    free(s->z);
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
        struct inflate_state *z = s->z;
        size_t avail = s->map_len - s->in_pos, had = s->out_len;
        z->next_in = (uint8_t *)(s->map + s->in_pos);
        z->avail_in = (uint32_t)(avail > (1u << 30) ? 1u << 30 : avail);
        z->next_out = s->out + s->out_len;
        z->avail_out = (uint32_t)(s->out_cap - s->out_len);
        int rc = isal_inflate(z);
        s->in_pos = (size_t)(z->next_in - s->map);
        s->out_len = s->out_cap - z->avail_out;
        if (rc == ISAL_DECOMP_OK && z->block_state == ISAL_BLOCK_FINISH) {
            /* the member's end: the bytes it read ahead (whole ones) are the
             * trailer's (CRC, size); then another member or the end */
            s->in_pos = s->in_pos - (size_t)z->read_in_length / 8 + 8;
            isal_inflate_reset(z);
            z->crc_flag = ISAL_DEFLATE;
            if (s->in_pos >= s->map_len || gzip_header(s) != 0) {
                s->eof = 1;
                s->salvaged |= s->in_pos > s->map_len;
                break;
            }
            continue;
        }
        /* damaged, or cut short (all the input read, nothing more came):
         * what it gave */
        if (rc != ISAL_DECOMP_OK || (s->in_pos == s->map_len && s->out_len == had)) {
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
