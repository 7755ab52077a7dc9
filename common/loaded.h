/* The loaded object (the program or a shared library) an address lies in. */
#ifndef CLT_LOADED_H
#define CLT_LOADED_H
#include <stdint.h>

/* Its loaded segments' lowest start and highest end; 0: in none. */
int clt_loaded_range(uint64_t addr, uint64_t *lo, uint64_t *hi);
#endif
