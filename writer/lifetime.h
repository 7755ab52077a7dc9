/* Object lifetimes and leaks (writer thread). See lifetime.c. */
#ifndef CLT_LIFETIME_H
#define CLT_LIFETIME_H
#include <stdint.h>
#include "emit.h"

void clt_life_init(void);
const char *clt_otype_name(unsigned type);
/* After a call's arguments are decoded: creations, retains, releases.
 * Returns the app's reference count after a retain/release, else -1. */
int64_t clt_life_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1, int tid,
                         uint32_t stack);
/* Every object the app still holds, as an instant with its creation stack. */
unsigned clt_life_emit_leaks(struct clt_writer *w, uint64_t ts, unsigned by_type[CLT_O_COUNT]);
#endif
