/* Fingerprints (digest.h). The hash runs at memory speed (XXH3: ~30 GB/s
 * a core, `make bench` states it); the float statistics look at each
 * element's bits once, without branches where the data is finite: blocks
 * of 256 in vector registers, and only a block holding a non-finite value
 * walked again to count and place it. */
#include <math.h>     /* INFINITY only: the shim links no libm */
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "digest.h"

const char *const clt_elem_names[CLT_ELEM_N] = { "bytes", "half", "float", "double" };

enum clt_elem clt_elem_of(const char *t)
{
    if (!t)
        return CLT_ELEM_BYTES;
    static const char *const skip[] = { "__global ", "global ", "const ", "volatile ", "restrict " };
    for (int again = 1; again;) {
        again = 0;
        while (*t == ' ')
            t++;
        for (unsigned i = 0; i < sizeof skip / sizeof skip[0]; i++)
            if (!strncmp(t, skip[i], strlen(skip[i]))) {
                t += strlen(skip[i]);
                again = 1;
            }
    }
    size_t n = strspn(t, "abcdefghijklmnopqrstuvwxyz_");
    if (n == 5 && !strncmp(t, "float", 5))
        return CLT_ELEM_FLOAT;
    if (n == 6 && !strncmp(t, "double", 6))
        return CLT_ELEM_DOUBLE;
    if (n == 4 && !strncmp(t, "half", 4))
        return CLT_ELEM_HALF;
    return CLT_ELEM_BYTES;
}

/* One element's class from its bits: exponent all ones (0: finite),
 * mantissa, sign; a float or double widened for min/max/sum. */
#define BLOCK 256

static double half_value(uint16_t h)
{
    unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? (double)m / 16777216.0
                      : e >= 25 ? (double)(m | 0x400) * (double)(1u << (e - 25))
                                : (double)(m | 0x400) / (double)(1u << (25 - e));
    return h & 0x8000 ? -v : v;
}

static double lesser(double a, double b) { return a < b ? a : b; }
static double greater(double a, double b) { return a > b ? a : b; }

static void note_bad(struct clt_digest *d, size_t i, int nan, int neg)
{
    if (nan)
        d->nan++;
    else if (neg)
        d->neg_inf++;
    else
        d->pos_inf++;
    if (d->first_nonfinite == UINT64_MAX)
        d->first_nonfinite = i;
}

/* The finite path of one block, vectorized (O3, and reassociating the
 * sum in float lanes: its elements are made finite first; a block of 256
 * is then added in double, so the sum is within 256 float roundings of the
 * exact one). Branch-free bit tests, which the vectorizer takes: an
 * exponent of all ones carries into bit 31 when one exponent step is
 * added; a zero exponent borrows into it when one is taken away. */
__attribute__((optimize("O3", "fast-math")))
static unsigned block_float(const uint32_t *u, size_t n, unsigned *den, float *mn_out, float *mx_out, float *sum_out)
{
    unsigned bad = 0, dn = 0;
    float mn = 3.4e38f, mx = -3.4e38f, part = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = u[i], ex = x & 0x7f800000u;
        uint32_t nonfinite = (ex + 0x00800000u) >> 31;
        bad += nonfinite;
        dn += ((ex - 1u) >> 31) & (((x & 0x7fffffu) + 0x7fffffu) >> 23);
        uint32_t y = x & (nonfinite - 1u);      /* 0.0f where not finite */
        float f;
        memcpy(&f, &y, 4);
        mn = f < mn ? f : mn;
        mx = f > mx ? f : mx;
        part += f;
    }
    *den = dn, *mn_out = mn, *mx_out = mx, *sum_out = part;
    return bad;
}

static void stats_float(const uint32_t *u, size_t n, uint64_t base, struct clt_digest *d, int *any)
{
    for (size_t b = 0; b < n; b += BLOCK) {
        size_t e = b + BLOCK < n ? b + BLOCK : n;
        unsigned den;
        float mn, mx, sum;
        unsigned bad = block_float(u + b, e - b, &den, &mn, &mx, &sum);
        d->denormal += den;
        if (bad) {   /* the non-finite ones (counted as 0 above): counted, placed, taken out of min/max */
            mn = INFINITY, mx = -INFINITY;
            for (size_t i = b; i < e; i++) {
                uint32_t x = u[i];
                float f;
                memcpy(&f, &x, 4);
                if ((x & 0x7f800000u) == 0x7f800000u)
                    note_bad(d, base + i, (x & 0x7fffffu) != 0, x >> 31);
                else {
                    mn = f < mn ? f : mn;
                    mx = f > mx ? f : mx;
                }
            }
        }
        if (mn <= mx) {
            d->min = *any ? lesser(d->min, mn) : mn;
            d->max = *any ? greater(d->max, mx) : mx;
            *any = 1;
        }
        d->sum += sum;
    }
}

static void stats_double(const uint64_t *u, size_t n, uint64_t base, struct clt_digest *d, int *any)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = u[i], ex = x & 0x7ff0000000000000ull;
        double f;
        memcpy(&f, &x, 8);
        if (ex == 0x7ff0000000000000ull) {
            note_bad(d, base + i, (x & 0xfffffffffffffull) != 0, (int)(x >> 63));
            continue;
        }
        d->denormal += ex == 0 && (x & 0xfffffffffffffull);
        d->min = *any ? lesser(d->min, f) : f;
        d->max = *any ? greater(d->max, f) : f;
        *any = 1;
        d->sum += f;
    }
}

static void stats_half(const uint16_t *u, size_t n, uint64_t base, struct clt_digest *d, int *any)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t x = u[i];
        if ((x & 0x7c00) == 0x7c00) {
            note_bad(d, base + i, (x & 0x3ff) != 0, x >> 15);
            continue;
        }
        d->denormal += (x & 0x7c00) == 0 && (x & 0x3ff);
        double f = half_value(x);
        d->min = *any ? lesser(d->min, f) : f;
        d->max = *any ? greater(d->max, f) : f;
        *any = 1;
        d->sum += f;
    }
}

/* Float data: hashed and counted a chunk at a time, so each chunk is read
 * from memory once (it is in cache for the second look): on a host whose
 * core streams ~6 GB/s from DRAM, two passes over a large buffer cost twice. */
#define CHUNK (64u << 10)

void clt_digest(const void *data, size_t bytes, enum clt_elem elem, struct clt_digest *d)
{
    memset(d, 0, sizeof *d);
    d->first_nonfinite = UINT64_MAX;
    if (elem == CLT_ELEM_BYTES) {
        d->hash = XXH3_64bits(data, bytes);
        return;
    }
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    int any = 0;
    const unsigned char *p = data;
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        XXH3_64bits_update(&st, p + off, n);
        if (elem == CLT_ELEM_FLOAT)
            stats_float((const uint32_t *)(p + off), n / 4, off / 4, d, &any);
        else if (elem == CLT_ELEM_DOUBLE)
            stats_double((const uint64_t *)(p + off), n / 8, off / 8, d, &any);
        else
            stats_half((const uint16_t *)(p + off), n / 2, off / 2, d, &any);
    }
    d->hash = XXH3_64bits_digest(&st);
}

uint64_t clt_hash(const void *data, size_t bytes)
{
    return XXH3_64bits(data, bytes);
}
