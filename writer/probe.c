/* A device's probe results (`cltrace probe`, common/probe_file.h) into the
 * trace, as attributes cltrace.probe.N.<key> (N: the device's index), when
 * the writer first learns the device's name: before its first transfer, so
 * the report knows what "small" means on it before it meets one. */
#include <stdio.h>
#include <stdlib.h>
#include "emit.h"
#include "common/probe_file.h"

uint64_t clt_probe_put(struct clt_writer *w, unsigned index, const char *device_name)
{
    static struct clt_probe p;          /* the writer thread only */
    static struct clt_attrs a;
    if (clt_probe_load(device_name, &p) != 0)
        return 0;
    a.n = 0;
    for (unsigned i = 0; i < p.n; i++) {
        char key[64];         /* copied by clt_attr_str; the value stays in p until the put */
        snprintf(key, sizeof key, "cltrace.probe.%u.%s", index, p.key[i]);
        clt_attr_str(&a, key, p.val[i]);
    }
    clt_attrs_put(w, &a);
    const char *price = clt_probe_get(&p, "profiling_price_ns");
    double ns = price ? strtod(price, NULL) : 0;
    return ns > 0 && ns < 1e6 ? (uint64_t)(ns + 0.5) : 0;
}
