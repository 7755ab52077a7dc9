/* A buffer's fingerprint: a hash of its bytes (XXH3, 64 bits) and, for
 * floating-point data, what a wrong answer shows first: NaN, infinities,
 * denormals, the range and sum of the finite values. */
#ifndef CLT_DIGEST_H
#define CLT_DIGEST_H
#include <stddef.h>
#include <stdint.h>

enum clt_elem { CLT_ELEM_BYTES, CLT_ELEM_HALF, CLT_ELEM_FLOAT, CLT_ELEM_DOUBLE, CLT_ELEM_N };
extern const char *const clt_elem_names[CLT_ELEM_N];   /* "bytes", "half", "float", "double" */

struct clt_digest {
    uint64_t hash;
    uint64_t nan, pos_inf, neg_inf, denormal;
    uint64_t first_nonfinite;     /* element index; UINT64_MAX: none */
    double min, max, sum;         /* of the finite elements (0 when none) */
};

/* The element type of an OpenCL C type name ("float*", "__global float4 *",
 * "double16*"): its scalar, or bytes. */
enum clt_elem clt_elem_of(const char *type_name);
void clt_digest(const void *data, size_t bytes, enum clt_elem elem, struct clt_digest *d);
/* XXH3-64 of bytes: a program's identity (cltrace --programs, --override). */
uint64_t clt_hash(const void *data, size_t bytes);

#endif
