/* Enum, bitfield and error-code names from the generated tables. */
#include <stdio.h>
#include <string.h>
#include "tables.h"

const char *clt_error_name(int32_t code)
{
    for (unsigned i = 0; i < clt_n_errors; i++)
        if (clt_errors[i].value == code)
            return clt_errors[i].name;
    return NULL;
}

int clt_enum_index(unsigned dec, uint64_t v)
{
    const struct clt_decoder_desc *d = &clt_decoders[dec];
    unsigned lo = 0, hi = d->n;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (d->vals[mid].value < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->n && d->vals[lo].value == v ? (int)lo : -1;
}

const char *clt_enum_name(unsigned dec, uint64_t v)
{
    int i = dec && dec < CLT_DEC_COUNT ? clt_enum_index(dec, v) : -1;
    return i < 0 ? NULL : clt_decoders[dec].vals[i].name;
}

char *clt_bitfield_str(unsigned dec, uint64_t v, char *buf, unsigned cap)
{
    const struct clt_decoder_desc *d = &clt_decoders[dec];
    size_t n = 0;
    buf[0] = 0;
    int exact = clt_enum_index(dec, v);     /* a named mask: CL_DEVICE_TYPE_ALL */
    if (v == 0 || exact >= 0) {
        snprintf(buf, cap, "%s", exact >= 0 ? d->vals[exact].name : "0");
        return buf;
    }
    uint64_t rest = v;
    for (unsigned i = 0; i < d->n && rest; i++) {
        uint64_t bit = d->vals[i].value;
        if (bit && (bit & (bit - 1)) == 0 && (rest & bit)) {
            int w = snprintf(buf + n, cap - n, "%s%s", n ? "|" : "", d->vals[i].name);
            if (w < 0 || (size_t)w >= cap - n)
                break;
            n += (size_t)w;
            rest &= ~bit;
        }
    }
    if (rest && n < cap)
        snprintf(buf + n, cap - n, "%s0x%llx", n ? "|" : "", (unsigned long long)rest);
    return buf;
}
