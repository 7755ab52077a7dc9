/* writer/gzstream.c against zlib's inflate: packet streams fed the way the
 * writer feeds them (flushes at odd points, the last 32 KiB kept at the
 * buffer's start), and after EVERY flush the file so far -- the whole bytes
 * plus the current tail -- must be a complete gzip file (CRC and length
 * checked by zlib) holding exactly the packets put so far. Also: a stream of
 * repeating call packets compresses to what the README claims, and packets
 * of a length not seen before still find their repeats (the LZ77 path). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "writer/gzstream.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* A packet: 0x0A, varint length, body. Kinds: a call's BEGIN and END (a
 * counter in the low timestamp bytes and a value that change), a long
 * packet that repeats exactly (runs past 258), a random one, a big one. */
static size_t make_packet(uint8_t *p, int kind, uint64_t i)
{
    uint8_t body[3000];
    size_t n;
    switch (kind) {
    case 0:         /* BEGIN-like, 58 bytes */
        n = 58;
        memset(body, 0x22, n);
        memcpy(body + 1, &i, 3);
        body[50] = (uint8_t)(i * 7);
        break;
    case 1:         /* END-like, 17 bytes */
        n = 17;
        memset(body, 0x48, n);
        memcpy(body + 1, &i, 2);
        break;
    case 2:         /* 700 bytes, identical every time */
        n = 700;
        for (size_t k = 0; k < n; k++)
            body[k] = (uint8_t)(k * 31);
        break;
    case 3:         /* random length and bytes */
        n = 1 + rnd() % 300;
        for (size_t k = 0; k < n; k++)
            body[k] = (uint8_t)rnd();
        break;
    default:        /* 2,500 bytes: beyond the length slots */
        n = 2500;
        for (size_t k = 0; k < n; k++)
            body[k] = (uint8_t)(k ^ i);
        break;
    }
    uint8_t *o = p;
    *o++ = 0x0A;
    size_t v = n;
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    memcpy(o, body, n);
    return (size_t)(o - p) + n;
}

/* Inflate file[0, n) as gzip; 0 when it is a whole, valid gzip file. */
static int inflate_all(const uint8_t *file, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK)
        return -1;
    s.next_in = (Bytef *)(uintptr_t)file;
    s.avail_in = (uInt)n;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    int rc = inflate(&s, Z_FINISH);
    *out_len = cap - s.avail_out;
    int trailing = (int)s.avail_in;
    inflateEnd(&s);
    return rc == Z_STREAM_END && trailing == 0 ? 0 : -1;
}

#define CAP (1u << 20)

static void run(const char *what, const int *kinds, unsigned n_kinds, unsigned packets, unsigned flush_every,
                double max_ratio)
{
    static struct clt_gz z;
    uint8_t *buf = calloc(1, CAP + 64);             /* the writer's buffer */
    uint8_t *all = malloc(64u << 20);               /* every packet put, in order */
    uint8_t *file = malloc(16u << 20);              /* the file: whole bytes, then the tail */
    uint8_t *back = malloc(64u << 20);
    size_t kept = 0, len = 0, all_len = 0, file_len = 0, flushes = 0;
    if (!buf || !all || !file || !back || clt_gz_init(&z, CAP) != 0) {
        CHECK(0, "out of memory");
        return;
    }
    clt_gz_begin(&z);
    for (unsigned i = 0; i < packets; i++) {
        uint8_t pk[3100];
        size_t n = make_packet(pk, kinds[i % n_kinds], i);
        memcpy(buf + len, pk, n);
        memcpy(all + all_len, pk, n);
        len += n;
        all_len += n;
        int last = i + 1 == packets;
        if (!last && (len + 4000 < CAP) && (flush_every == 0 || (i + 1) % flush_every))
            continue;
        clt_gz_put(&z, buf, kept, len);
        size_t keep = len < CLT_GZ_WINDOW ? len : CLT_GZ_WINDOW;
        memmove(buf, buf + len - keep, keep);
        kept = len = keep;
        memcpy(file + file_len, z.out, z.out_len);
        file_len += z.out_len;
        z.out_len = 0;
        uint8_t tail[CLT_GZ_TAIL_MAX];
        size_t tl = clt_gz_tail(&z, tail);
        CHECK(tl <= CLT_GZ_TAIL_MAX, "tail of %zu bytes", tl);
        memcpy(file + file_len, tail, tl);       /* not counted: the next flush writes over it */
        size_t got = 0;
        int rc = inflate_all(file, file_len + tl, back, 64u << 20, &got);
        flushes++;
        CHECK(rc == 0, "%s: flush %zu: not a whole gzip file", what, flushes);
        CHECK(got == all_len && memcmp(back, all, got) == 0, "%s: flush %zu: %zu bytes back, %zu put", what,
              flushes, got, all_len);
        if (rc != 0)
            break;
    }
    double ratio = (double)file_len / (double)all_len;
    printf("%-34s %8zu -> %7zu bytes (%.3f) in %zu flushes\n", what, all_len, file_len, ratio, flushes);
    CHECK(ratio <= max_ratio, "%s: ratio %.3f, want <= %.3f", what, ratio, max_ratio);
    clt_gz_free(&z);
    free(buf);
    free(all);
    free(file);
    free(back);
}

int main(void)
{
    static const int calls[] = { 0, 1 }, mixed[] = { 0, 1, 2, 0, 1, 3, 4, 0, 1 }, randoms[] = { 3 };
    /* a call loop: BEGIN/END pairs, the README's "about 11 bytes per call"
     * of 79 (0.14); here the changing bytes are fewer: well under 0.2 */
    run("call pairs, one flush per 1 MiB", calls, 2, 200000, 0, 0.2);
    run("call pairs, a flush every 7 packets", calls, 2, 6000, 7, 0.3);
    /* the 2,500-byte packets (no length slot) go through the small LZ77:
     * they repeat in runs; the random ones stay literals */
    run("mixed kinds, a flush every 50", mixed, 9, 5000, 50, 0.25);
    /* random bytes are literals: 8 or 9 bits each, so at most 9/8 */
    run("random packets, a flush every 3", randoms, 1, 3000, 3, 1.13);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
