/* ICD loader layer mode: OPENCL_LAYERS=/path/libcltrace.so. The loader then
 * sends every call through our dispatch table, also the calls of apps that
 * dlopen libOpenCL and dlsym every function (hashcat), which a preload alone
 * never sees.
 *
 * The layer's dispatch table is made of the same wrappers the preload
 * exports; each command's next step (clt_real_tab) becomes the loader's
 * target dispatch entry. So with preload and layer both active, a call is
 * still recorded once: the exported wrapper records it and goes straight to
 * the next layer, without passing through the loader (and us) again. */
#include <string.h>
#include "shim.h"
#include "trace/tables.h"

#define CL_LAYER_API_VERSION_ 0x4240
#define CL_LAYER_NAME_ 0x4241
#define CL_LAYER_API_VERSION_100_ 100
#define CL_INVALID_VALUE_ (-30)

static int32_t info_out(const void *v, size_t n, size_t size, void *value, size_t *size_ret)
{
    if (value && size < n)
        return CL_INVALID_VALUE_;
    if (value)
        memcpy(value, v, n);
    if (size_ret)
        *size_ret = n;
    return 0;
}

CLT_EXPORT int32_t CLT_CALL clGetLayerInfo(uint32_t param_name, size_t param_value_size, void *param_value,
                                           size_t *param_value_size_ret)
{
    static const uint32_t version = CL_LAYER_API_VERSION_100_;
    static const char name[] = "cltrace";
    if (param_name == CL_LAYER_API_VERSION_)
        return info_out(&version, sizeof version, param_value_size, param_value, param_value_size_ret);
    if (param_name == CL_LAYER_NAME_)
        return info_out(name, sizeof name, param_value_size, param_value, param_value_size_ret);
    return CL_INVALID_VALUE_;
}

CLT_EXPORT int32_t CLT_CALL clInitLayer(uint32_t num_entries, const void *target_dispatch,
                                        uint32_t *num_entries_ret, const void **layer_dispatch_ret)
{
    static void *dispatch[512];
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret)
        return CL_INVALID_VALUE_;
    uint32_t n = num_entries < clt_icd_dispatch_len ? num_entries : clt_icd_dispatch_len;
    const void *const *target = target_dispatch;
    for (uint32_t i = 0; i < n; i++) {
        int id = clt_icd_dispatch[i];
        void *next = (void *)target[i];
        if (id >= 0 && next) {
            __atomic_store_n(&clt_real_tab[id], clt_interpose((unsigned)id, next), __ATOMIC_RELEASE);
            dispatch[i] = clt_ext_table[id].wrapper;
        } else {
            dispatch[i] = next;        /* a slot we do not know: pass through */
        }
    }
    *num_entries_ret = n;
    *layer_dispatch_ret = dispatch;
    return 0;
}
