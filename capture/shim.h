/* What the capture side's parts share: configuration, the library lookups,
 * the writer they start. */
#ifndef CLT_SHIM_H
#define CLT_SHIM_H
#include "common/config.h"
#include "put.h"
#include "fingerprint.h"
#include "writer/writer.h"

/* capture/generated/clt_wrappers.c: every wrapper by name, the loader's
 * dispatch-table order */
struct clt_ext_entry { const char *name; void *wrapper; };
extern const struct clt_ext_entry clt_ext_table[];   /* indexed by enum clt_fn */
extern const unsigned clt_ext_table_len;
extern const int16_t clt_icd_dispatch[];              /* loader dispatch slot -> clt_fn, -1 */
extern const unsigned clt_icd_dispatch_len;
const struct clt_ext_entry *clt_ext_find(const char *name);   /* a command's wrapper by name, NULL */

int clt_is_self(const void *addr);           /* addr lies in libcltrace.so */
void clt_app_library(void *handle);
void clt_sample_load(void);                  /* sample.c: CLTRACE_SAMPLE, at load */          /* dlsym.c: the OpenCL library the app dlopen'ed */

#endif
