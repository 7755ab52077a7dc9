/* The loaded object (the program or a shared library) an address lies in. */
#ifndef CLT_LOADED_H
#define CLT_LOADED_H
#include <stdint.h>

/* Its loaded segments' lowest start and highest end; 0: in none. */
int clt_loaded_range(uint64_t addr, uint64_t *lo, uint64_t *hi);

/* glibc's _dl_find_object (2.35 on: lock-free, async-signal-safe), looked
 * up once; NULL in a C library without it. The first call asks dlsym: make
 * it outside a signal handler (capture/unwind.c does at load). */
struct dl_find_object;
typedef int (*clt_find_object_fn)(void *, struct dl_find_object *);
clt_find_object_fn clt_loaded_find_object(void);
#endif
