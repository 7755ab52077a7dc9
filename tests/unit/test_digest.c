/* Fingerprints' parts on known data: the digest (hash, NaN/Inf/denormal
 * counts, the first non-finite element, min/max/sum of the finite ones,
 * for float, double and half; across the 4096-element blocks), the element
 * type of OpenCL C type names, and the selection spelling. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/digest.h"
#include "common/select.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "test_digest: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

static void floats(void)
{
    enum { N = 10000 };
    float *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = (float)(i % 100) - 50.0f;           /* -50 .. 49 */
    struct clt_digest d, d2;
    clt_digest(v, N * sizeof *v, CLT_ELEM_FLOAT, &d);
    CHECK(d.nan == 0 && d.pos_inf == 0 && d.neg_inf == 0 && d.first_nonfinite == UINT64_MAX, "clean data: non-finite");
    CHECK(d.min == -50 && d.max == 49 && d.sum == -5000, "min %g max %g sum %g", d.min, d.max, d.sum);
    v[4097] = NAN, v[9000] = NAN, v[5000] = INFINITY, v[7] = -INFINITY, v[8] = 1e-40f;   /* a denormal */
    clt_digest(v, N * sizeof *v, CLT_ELEM_FLOAT, &d2);
    CHECK(d2.nan == 2 && d2.pos_inf == 1 && d2.neg_inf == 1 && d2.denormal == 1, "counts %llu %llu %llu %llu",
          (unsigned long long)d2.nan, (unsigned long long)d2.pos_inf, (unsigned long long)d2.neg_inf,
          (unsigned long long)d2.denormal);
    CHECK(d2.first_nonfinite == 7, "first non-finite %llu", (unsigned long long)d2.first_nonfinite);
    CHECK(d2.min == -50 && d2.max == 49, "min/max skip non-finite: %g %g", d2.min, d2.max);
    CHECK(d2.hash != d.hash, "a changed buffer, the same hash");
    clt_digest(v, N * sizeof *v, CLT_ELEM_BYTES, &d);
    CHECK(d.hash == d2.hash && d.nan == 0 && d.min == 0, "bytes: the same hash, no statistics");
    free(v);
}

static void doubles_and_halves(void)
{
    double v[5] = { 1.5, -2.0, NAN, 4.0, -INFINITY };
    struct clt_digest d;
    clt_digest(v, sizeof v, CLT_ELEM_DOUBLE, &d);
    CHECK(d.nan == 1 && d.neg_inf == 1 && d.first_nonfinite == 2 && d.min == -2 && d.max == 4 && d.sum == 3.5,
          "double: %llu %llu %g %g %g", (unsigned long long)d.nan, (unsigned long long)d.neg_inf, d.min, d.max, d.sum);
    uint16_t h[4] = { 0x3c00 /* 1 */, 0xc000 /* -2 */, 0x7e00 /* NaN */, 0x0001 /* denormal */ };
    clt_digest(h, sizeof h, CLT_ELEM_HALF, &d);
    CHECK(d.nan == 1 && d.denormal == 1 && d.first_nonfinite == 2 && d.min == -2 && d.max == 1,
          "half: %llu %llu %g %g", (unsigned long long)d.nan, (unsigned long long)d.denormal, d.min, d.max);
}

static void types(void)
{
    CHECK(clt_elem_of("float*") == CLT_ELEM_FLOAT, "float*");
    CHECK(clt_elem_of("float4*") == CLT_ELEM_FLOAT, "float4*");
    CHECK(clt_elem_of("__global const double16 *") == CLT_ELEM_DOUBLE, "double16");
    CHECK(clt_elem_of("half*") == CLT_ELEM_HALF, "half*");
    CHECK(clt_elem_of("int*") == CLT_ELEM_BYTES && clt_elem_of("floaty*") == CLT_ELEM_BYTES &&
          clt_elem_of(NULL) == CLT_ELEM_BYTES, "not float");
}

static void selection(void)
{
    struct clt_select s;
    char err[160];
    CHECK(clt_select_parse("", &s, err, sizeof err) == 0 && s.all, "empty: all");
    CHECK(clt_select_parse("upd*@3,#7,count=2", &s, err, sizeof err) == 0, "parse: %s", err);
    CHECK(!clt_select_take(&s, "update", 2, 5), "update@2 taken");
    CHECK(clt_select_take(&s, "update", 3, 6), "update@3 not taken");
    CHECK(!clt_select_take(&s, "flux", 1, 6), "flux taken");
    CHECK(clt_select_take(&s, "flux", 1, 7), "#7 not taken");
    CHECK(!clt_select_take(&s, "update", 3, 7), "past count=2");
    CHECK(clt_select_parse("flux", &s, err, sizeof err) == 0 && clt_select_take(&s, "flux", 9, 9) &&
          !clt_select_take(&s, "clEnqueueWriteBuffer", 1, 10), "a kernel glob");
    CHECK(clt_select_parse("#0", &s, err, sizeof err) != 0 && strstr(err, "#N"), "#0 accepted");
    CHECK(clt_select_parse("k@x", &s, err, sizeof err) != 0 && strstr(err, "NAME@N"), "k@x accepted");
    CHECK(clt_select_parse("count=", &s, err, sizeof err) != 0, "count= accepted");
}

int main(void)
{
    floats();
    doubles_and_halves();
    types();
    selection();
    if (failures)
        fprintf(stderr, "test_digest: %d failure(s)\n", failures);
    else
        printf("test_digest: digests, types and selections as expected\n");
    return failures != 0;
}
