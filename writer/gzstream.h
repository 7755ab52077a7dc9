/* The trace file's gzip, written as the trace goes (gzstream.c).
 *
 * One gzip member whose deflate stream never ends until the file does: after
 * every flush the file is a whole gzip file (the open block closed, an empty
 * final block, CRC-32 and length), and the next flush writes over that tail.
 * So a crash or a full disk leaves a trace any gzip reader -- trace
 * processor's included, which reads only one member -- opens up to the last
 * flush, and a clean exit has nothing left to compress. */
#ifndef CLT_GZSTREAM_H
#define CLT_GZSTREAM_H
#include <stddef.h>
#include <stdint.h>

#define CLT_GZ_WINDOW (32u << 10)       /* deflate's reach back */
#define CLT_GZ_SLOTS 1024               /* packets are matched by length below this */
#define CLT_GZ_PAIR 64                  /* and two packets this short as one, by both lengths */
#define CLT_GZ_TAIL_MAX 16
#define CLT_GZ_HASH_BITS 13             /* 4-byte hash -> latest offset, for packets of a new length */

struct clt_gz {
    uint64_t in_bytes;              /* uncompressed bytes so far */
    uint32_t crc;
    /* offset + 1 of the latest packet of each length, then of the latest
     * pair of each two lengths */
    uint64_t last[CLT_GZ_SLOTS + (CLT_GZ_PAIR + 1) * (CLT_GZ_PAIR + 1)];
    uint64_t hash[1u << CLT_GZ_HASH_BITS];   /* 4 bytes -> offset + 1 where they last began */
    uint64_t bits;                  /* bits not yet whole bytes, LSB first */
    unsigned nbits;
    uint32_t run_len, run_dist;     /* a match still growing (0: none) */
    uint8_t *out;                   /* whole bytes since the last flush */
    size_t out_len, out_cap;
};

/* The output room clt_gz_put needs for n input bytes. */
static inline size_t clt_gz_bound(size_t n) { return n + n / 8 + 64; }

int clt_gz_init(struct clt_gz *z, size_t max_put);     /* its output's memory; -1: none; z static */
void clt_gz_begin(struct clt_gz *z);                   /* the stream's start, before the first put */
void clt_gz_free(struct clt_gz *z);
/* Compress buf[kept, n), whole Perfetto packets (0x0A, varint length,
 * body). buf[0, kept) is the end of what was put before (the caller keeps
 * up to CLT_GZ_WINDOW bytes of it: matches reach back into it, so nothing
 * is copied). buf must be readable up to n + 64 (compared 64 bytes at a
 * time). */
void clt_gz_put(struct clt_gz *z, const uint8_t *buf, size_t kept, size_t n);
/* The state before a put, to go back to when its bytes could not be written
 * (a full disk); going back also empties the match tables (what the failed
 * put left there points at bytes to be put again). */
struct clt_gz_mark { uint64_t in_bytes, bits; uint32_t crc, run_len, run_dist; unsigned nbits; size_t out_len; };
void clt_gz_mark(const struct clt_gz *z, struct clt_gz_mark *m);
void clt_gz_rewind(struct clt_gz *z, const struct clt_gz_mark *m);
/* The bytes that make what was put so far a whole gzip file after out[]:
 * the pending bits, the block's end, an empty final block, CRC and length. */
size_t clt_gz_tail(const struct clt_gz *z, uint8_t tail[CLT_GZ_TAIL_MAX]);
#endif
