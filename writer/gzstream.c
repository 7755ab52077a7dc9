/* The trace file's gzip, written as it goes: a deflate encoder made for a
 * stream of small Perfetto packets that mostly repeat one another.
 *
 * zlib's level 1 spends about 200 ns on an 80-byte call pair, more than
 * encoding it costs. Packets of one kind (a call's BEGIN, its END, a
 * command's slice) have the same length and differ from the previous one of
 * that length in a few bytes: the timestamp's low bytes, a value. So each
 * packet -- or two short ones as one unit (a call's BEGIN and END), by both
 * lengths -- is compared with the latest earlier one of its shape, 16 bytes
 * at a time (SSE2; 8 with word arithmetic elsewhere), and written as deflate matches against it (one distance
 * for the whole unit) with literals where it differs -- in fixed-Huffman
 * codes, so no tables are built. A match running to a unit's end goes on
 * into the next one when that lines up at the same distance. A unit of a
 * shape not seen within the window goes through a small greedy LZ77
 * instead. The packets are read where the writer put them (each buffer
 * starts with the last 32 KiB of the one before), so nothing is copied.
 * About 11 bytes per call, about 25 ns; the CRC is libdeflate's
 * (carry-less multiply).
 *
 * Used by writer.c only; the stream is one gzip member (trace processor
 * reads no second member), valid after each clt_gz_put + clt_gz_tail. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <libdeflate.h>
#include "gzstream.h"

/* Fixed-Huffman codes, bit-reversed for LSB-first output, with their extra
 * bits folded in: value in the low 24 bits, bit count in the top 8. */
static uint32_t lit_code[256];
static uint32_t len_code[259];
/* A distance's code (zlib's way: distance - 1 below 256 by itself, above by
 * its 128s), then its 5 bits and extra bits. A table of every distance (128
 * KiB) took 1.66 M instructions and 32 page faults of every trace's start. */
static uint8_t dist_lo[256], dist_hi[256];
static uint32_t dist_head[30];
static uint16_t dist_base[30];

static unsigned reverse(unsigned code, unsigned n)
{
    unsigned r = 0;
    while (n--) {
        r = r << 1 | (code & 1);
        code >>= 1;
    }
    return r;
}

static void build_codes(void)
{
    static const uint16_t lbase[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
                                        67, 83, 99, 115, 131, 163, 195, 227, 258 };
    static const uint8_t lext[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
                                      5, 5, 5, 5, 0 };
    static const uint16_t dbase[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
                                        513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
    static const uint8_t dext[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
                                      11, 11, 12, 12, 13, 13 };
    for (unsigned v = 0; v < 256; v++)      /* 0-143: 8 bits from 0x30; 144-255: 9 bits from 0x190 */
        lit_code[v] = v < 144 ? reverse(0x30 + v, 8) | 8u << 24 : reverse(0x190 + v - 144, 9) | 9u << 24;
    for (unsigned c = 0; c < 29; c++) {     /* symbols 257-279: 7 bits from 1; 280-285: 8 bits from 0xC0 */
        unsigned sym = 257 + c, nb = sym < 280 ? 7 : 8;
        unsigned code = sym < 280 ? reverse(sym - 256, 7) : reverse(0xC0 + sym - 280, 8);
        unsigned end = c == 28 ? 259 : lbase[c] + (1u << lext[c]);
        for (unsigned l = lbase[c]; l < end; l++)
            len_code[l] = (code | (l - lbase[c]) << nb) | (nb + lext[c]) << 24;
    }
    for (unsigned c = 0; c < 30; c++) {     /* distance codes: 5 bits */
        dist_head[c] = reverse(c, 5) | (5u + dext[c]) << 24;
        dist_base[c] = dbase[c];
        for (unsigned d = dbase[c] - 1u; d < dbase[c] - 1u + (1u << dext[c]) && d < CLT_GZ_WINDOW; d += d < 256 ? 1 : 128)
            *(d < 256 ? &dist_lo[d] : &dist_hi[d >> 7]) = (uint8_t)c;
    }
}

static inline uint32_t dist_code(uint32_t dist)       /* 1 to CLT_GZ_WINDOW */
{
    unsigned c = dist <= 256 ? dist_lo[dist - 1] : dist_hi[(dist - 1) >> 7];
    return dist_head[c] | (dist - dist_base[c]) << 5;
}

#define PUT_BITS(z, code) do { \
    (z)->bits |= (uint64_t)((code) & 0xFFFFFFu) << (z)->nbits; \
    (z)->nbits += (code) >> 24; \
} while (0)

/* The encoder's state while a buffer is put: a local copy of clt_gz's, so
 * that the compiler keeps it in registers (a store through the uint8_t
 * output pointer could alias any field of clt_gz and would force reloads). */
struct enc {
    uint64_t bits;
    unsigned nbits;
    uint8_t *out;
    uint32_t run_len, run_dist;
};

/* Whole bytes out when fewer than 64 bits are pending (no 64-bit shift). */
static inline __attribute__((always_inline)) void drain63(struct enc *z)
{
    memcpy(z->out, &z->bits, 8);
    unsigned whole = z->nbits >> 3;
    z->out += whole;
    z->bits >>= whole * 8;
    z->nbits &= 7;
}

/* Whole bytes out; fewer than 8 bits stay. out has 8 bytes of slack. */
static inline __attribute__((always_inline)) void drain(struct enc *z)
{
    memcpy(z->out, &z->bits, 8);
    unsigned whole = z->nbits >> 3;
    z->out += whole;
    z->bits = whole == 8 ? 0 : z->bits >> (whole * 8);
    z->nbits -= whole * 8;
}

static inline __attribute__((always_inline)) void literal(struct enc *z, uint8_t c)
{
    if (z->nbits > 55)
        drain(z);
    PUT_BITS(z, lit_code[c]);
}

static inline __attribute__((always_inline)) void emit_match(struct enc *z, uint32_t len, uint32_t dist)
{
    if (z->nbits > 33)      /* a match is at most 13 + 18 bits */
        drain(z);
    PUT_BITS(z, len_code[len]);
    PUT_BITS(z, dist_code(dist));
}

static inline __attribute__((always_inline)) void end_run(struct enc *z)
{
    if (z->run_len)
        emit_match(z, z->run_len, z->run_dist);
    z->run_len = 0;
}

/* n equal bytes at distance dist: grows the open run when it lines up. */
static inline __attribute__((always_inline)) void match(struct enc *z, const uint8_t *cur, size_t n,
                                                       uint32_t dist)
{
    if (z->run_len && z->run_dist != dist)
        end_run(z);
    z->run_dist = dist;
    while (n) {
        if (!z->run_len && n < 3) {     /* the rest of a run cut at 258 */
            while (n--)
                literal(z, *cur++);
            return;
        }
        uint32_t take = n < 258 - z->run_len ? (uint32_t)n : 258 - z->run_len;
        z->run_len += take;
        cur += take;
        n -= take;
        if (z->run_len == 258)
            end_run(z);
    }
}

static inline __attribute__((always_inline)) void literals(struct enc *z, const uint8_t *p, size_t n)
{
    if (!n)
        return;
    end_run(z);
    for (size_t i = 0; i < n; i++)
        literal(z, p[i]);
}

/* Bit k set: byte k of the 16 at a and b is equal. SSE2 (every x86-64);
 * elsewhere (arm64) two words, each byte's difference folded into its low
 * bit and the eight gathered by one multiply (little-endian: byte k is
 * bits 8k..8k+7 of the word). */
#if defined(__SSE2__)
static inline uint64_t equal16(const uint8_t *a, const uint8_t *b)
{
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)a);
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)b);
    return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y));
}
#else
static inline uint64_t differ8(const uint8_t *a, const uint8_t *b)
{
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    x ^= y;
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    return ((x & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56;
}

static inline uint64_t equal16(const uint8_t *a, const uint8_t *b)
{
    return ~(differ8(a, b) | differ8(a + 8, b + 8) << 8) & 0xFFFF;
}
#endif

/* Bit k set: byte k of the first n (up to 64) at a and b differs, and maybe
 * bits past n (the caller masks them). One chunk for a pair's last few
 * bytes, else all four, no loop: both are readable 64 bytes on. */
static inline uint64_t differing(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n <= 16)
        return ~equal16(a, b);
    return ~(equal16(a, b) | equal16(a + 16, b + 16) << 16 | equal16(a + 32, b + 32) << 32 |
             equal16(a + 48, b + 48) << 48);
}

/* A packet with no earlier one of its length to compare with (interned
 * names, stacks, descriptors, a call of a new shape): plain greedy LZ77,
 * 4-byte hash, the latest candidate only -- zlib's level 1 in small. */
static inline uint32_t hash4(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (v * 2654435761u) >> (32 - CLT_GZ_HASH_BITS);
}

/* (Out of line, the state passed by value: the hot loop's copy stays in
 * registers.) */
static __attribute__((noinline)) struct enc unmatched(struct enc state, uint64_t *hash, const uint8_t *buf,
                                                      uint64_t base, const uint8_t *cur, size_t len, uint64_t at)
{
    struct enc *z = &state;
    size_t i = 0, lit = 0;          /* cur[lit, i) waits to go out as literals */
    while (i + 4 <= len) {
        uint32_t h = hash4(cur + i);
        uint64_t cand = hash[h];
        hash[h] = at + i + 1;
        if (cand && cand - 1 >= base && at + i - (cand - 1) <= CLT_GZ_WINDOW) {
            const uint8_t *c = buf + (cand - 1 - base);
            size_t n = 0, most = len - i < 258 ? len - i : 258;
            while (n < most && c[n] == cur[i + n])
                n++;
            if (n >= 4) {
                literals(z, cur + lit, i - lit);
                match(z, cur + i, n, (uint32_t)(at + i - (cand - 1)));
                i += n;
                lit = i;
                continue;
            }
        }
        i++;
    }
    literals(z, cur + lit, len - lit);
    return state;
}

/* A match of run bytes (>= 3) at the distance whose code is dcode: one
 * PUT (the length's code and extra bits, then the distance's). Longer than
 * 258: split so that no piece is under 3. Needs nbits <= 7 + 31 spare. */
static inline __attribute__((always_inline)) void put_match(struct enc *z, uint32_t run, uint32_t dcode)
{
    while (__builtin_expect(run > 258, 0)) {
        uint32_t take = run - 258 < 3 ? run - 3 : 258;
        PUT_BITS(z, len_code[take]);
        PUT_BITS(z, dcode);
        drain(z);
        run -= take;
    }
    uint32_t lc = len_code[run], lb = lc >> 24;
    z->bits |= (uint64_t)((lc & 0xFFFFFFu) | (dcode & 0xFFFFFFu) << lb) << z->nbits;
    z->nbits += lb + (dcode >> 24);
}

/* One packet (or pair) at stream offset `at` (cur readable 64 bytes past
 * its end): compared with the latest one of its shape (*last: its offset
 * + 1; NULL: none kept), 64 bytes at a time, and written as matches at
 * that one distance with literals where it differs.
 * An equal stretch at the packet's end stays open (z->run_len): the next
 * packet may go on with it. The caller's buffer starts at stream offset
 * `base`. */
static inline void packet(struct enc *z, uint64_t *last, uint64_t *hash, const uint8_t *buf, uint64_t base,
                          const uint8_t *cur, size_t len, uint64_t at)
{
    uint64_t ref_at = last ? *last : 0;
    if (last)
        *last = at + 1;
    if (!ref_at || at - (ref_at - 1) > CLT_GZ_WINDOW || ref_at - 1 < base) {
        *z = unmatched(*z, hash, buf, base, cur, len, at);
        return;
    }
    const uint8_t *ref = buf + (ref_at - 1 - base);
    uint32_t dist = (uint32_t)(at - (ref_at - 1));
    uint32_t dcode = dist_code(dist);
    uint32_t run = z->run_len;      /* equal bytes not yet written, as a match at z->run_dist */
    if (run && z->run_dist != dist) {
        put_match(z, run, dist_code(z->run_dist));
        run = 0;
    }
    size_t pos = 0;                 /* cur[0, pos) is written or in run */
    for (size_t blk = 0; blk < len; blk += 64) {
        uint64_t m = differing(cur + blk, ref + blk, len - blk);
        if (len - blk < 64)
            m &= (1ull << (len - blk)) - 1;
        while (m) {
            size_t k = blk + (size_t)__builtin_ctzll(m);
            m &= m - 1;
            uint32_t gap = (uint32_t)(k - pos);
            drain63(z);                            /* <= 7 bits left: room for a match and 3 literals */
            if (run + gap >= 3 && (run || gap >= 3)) {
                put_match(z, run + gap, dcode);
            } else {
                for (size_t i = pos; i < k; i++)   /* 0-2 bytes */
                    PUT_BITS(z, lit_code[cur[i]]);
            }
            run = 0;
            PUT_BITS(z, lit_code[cur[k]]);
            pos = k + 1;
        }
    }
    uint32_t gap = (uint32_t)(len - pos);
    drain63(z);
    if (run || gap >= 3) {
        run += gap;
        if (run > 258) {                           /* keep at most 258 open */
            uint32_t take = run - 258 < 3 ? run - 3 : run - 258;
            put_match(z, take, dcode);
            run -= take;
        }
    } else {
        for (size_t i = pos; i < len; i++)
            PUT_BITS(z, lit_code[cur[i]]);
    }
    z->run_len = run;
    z->run_dist = dist;
}

int clt_gz_init(struct clt_gz *z, size_t max_put)
{
    z->out_cap = clt_gz_bound(max_put) + 16;
    z->out = malloc(z->out_cap);
    return z->out ? 0 : -1;
}

static void tables_clear(struct clt_gz *z)
{
    memset(z->last, 0, sizeof z->last);
    memset(z->hash, 0, sizeof z->hash);
}

/* The stream's start, on the thread that compresses: the gzip header, and
 * the tables cleared where something was put since they were zero (a fork
 * child's copy of its parent's). A trace's first start leaves them as they
 * are, zero (static), their pages made as the matches use them: clearing
 * ~0.1 MB here was 26 page faults of every trace's start, ~12 us each on a
 * 2-core VM (2026-11-30). */
void clt_gz_begin(struct clt_gz *z)
{
    if (z->in_bytes)
        tables_clear(z);
    z->in_bytes = 0;
    z->crc = 0;
    z->run_len = z->run_dist = 0;
    /* gzip header: deflate, no name, no time, Unix */
    static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
    memcpy(z->out, header, sizeof header);
    z->out_len = sizeof header;
    z->bits = 2;                      /* BFINAL 0, BTYPE 01: one fixed-Huffman block for the whole trace */
    z->nbits = 3;
}

void clt_gz_free(struct clt_gz *z)
{
    free(z->out);
    z->out = NULL;
}

/* The length of the packet at p (0x0A, varint length, body), at most
 * left. p is readable 3 bytes on (the buffer has 64 bytes of slack). */
static inline size_t packet_len(const uint8_t *p, size_t left)
{
    size_t q = 1, body = 0;
    uint8_t b1 = p[1], b2 = p[2];
    if (b1 >= 0x80 && b2 < 0x80) {               /* fastpack's 2-byte lengths */
        body = (b1 & 0x7Fu) | (size_t)b2 << 7;
        q = 3;
    } else if (b1 < 0x80) {                      /* protobuf-c's, under 128 */
        body = b1;
        q = 2;
    } else {
        for (unsigned shift = 0; q < left && shift < 35; shift += 7) {
            body |= (size_t)(p[q] & 0x7F) << shift;
            if (!(p[q++] & 0x80))
                break;
        }
    }
    return q + body > left ? left : q + body;
}

void clt_gz_put(struct clt_gz *z, const uint8_t *buf, size_t kept, size_t n)
{
    /* Built on the first put, on the thread that compresses, not in
     * clt_gz_init on the app's first OpenCL call (~30,000 instructions). */
    static pthread_once_t codes_built = PTHREAD_ONCE_INIT;
    pthread_once(&codes_built, build_codes);
    uint64_t base = z->in_bytes - kept;     /* stream offset of buf[0] */
    z->crc = libdeflate_crc32(z->crc, buf + kept, n - kept);
    struct enc e = { z->bits, z->nbits, z->out + z->out_len, z->run_len, z->run_dist };
    uint64_t at = z->in_bytes;
    size_t p = kept;
    while (p < n) {
        /* Two small packets go as one unit, matched against the latest
         * pair of the same two lengths: a call's BEGIN and END (or an END
         * and the next BEGIN) cost one lookup and one comparison. */
        size_t len = packet_len(buf + p, n - p), slot = len < CLT_GZ_SLOTS ? len : 0;
        if (len <= CLT_GZ_PAIR && p + len < n) {
            size_t len2 = packet_len(buf + p + len, n - p - len);
            if (len2 <= CLT_GZ_PAIR) {
                slot = CLT_GZ_SLOTS + len * (CLT_GZ_PAIR + 1) + len2;
                len += len2;
            }
        }
        packet(&e, slot ? &z->last[slot] : NULL, z->hash, buf, base, buf + p, len, at);
        drain(&e);
        at += len;
        p += len;
    }
    end_run(&e);
    drain(&e);
    z->in_bytes = at;
    z->out_len = (size_t)(e.out - z->out);
    z->bits = e.bits;
    z->nbits = e.nbits;
    z->run_len = e.run_len;
    z->run_dist = e.run_dist;
}

size_t clt_gz_tail(const struct clt_gz *z, uint8_t tail[CLT_GZ_TAIL_MAX])
{
    /* fewer than 8 bits are pending (clt_gz_put drained) and no run is open */
    struct enc t = { z->bits, z->nbits, tail, 0, 0 };
    PUT_BITS(&t, 0u | 7u << 24);      /* end of the open block (symbol 256) */
    PUT_BITS(&t, 3u | 3u << 24);      /* BFINAL 1, BTYPE 01 */
    PUT_BITS(&t, 0u | 7u << 24);      /* its end */
    t.nbits += 7;                     /* pad to a byte */
    unsigned whole = t.nbits >> 3;
    memcpy(tail, &t.bits, 8);
    uint32_t crc = z->crc, size = (uint32_t)z->in_bytes;    /* ISIZE: length mod 2^32 */
    uint8_t trailer[8] = { (uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24),
                           (uint8_t)size, (uint8_t)(size >> 8), (uint8_t)(size >> 16), (uint8_t)(size >> 24) };
    memcpy(tail + whole, trailer, 8);
    return whole + 8;
}

void clt_gz_mark(const struct clt_gz *z, struct clt_gz_mark *m)
{
    *m = (struct clt_gz_mark){ z->in_bytes, z->bits, z->crc, z->run_len, z->run_dist, z->nbits, z->out_len };
}

void clt_gz_rewind(struct clt_gz *z, const struct clt_gz_mark *m)
{
    /* what the failed put left in the tables points at or past the bytes
     * to be put again (a match of distance 0): forget it all (a full disk
     * is rare; the next packets just match less) */
    tables_clear(z);
    z->in_bytes = m->in_bytes;
    z->bits = m->bits;
    z->crc = m->crc;
    z->run_len = m->run_len;
    z->run_dist = m->run_dist;
    z->nbits = m->nbits;
    z->out_len = m->out_len;
}
