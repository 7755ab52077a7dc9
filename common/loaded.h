/* The loaded object (the program or a shared library) an address lies in. */
#ifndef CLT_LOADED_H
#define CLT_LOADED_H
#include <stddef.h>
#include <stdint.h>

/* Its loaded segments' lowest start and highest end; 0: in none. */
int clt_loaded_range(uint64_t addr, uint64_t *lo, uint64_t *hi);

/* Where its mapping starts (the page of its lowest segment, as dladdr's
 * dli_fbase) and its file's name ("" for the main program), copied into
 * name while the dynamic linker holds its list: a name read from the
 * object's link map later may have been freed by a dlclose meanwhile.
 * 1 found, 0 in none. Not from a signal handler (it takes a lock). */
int clt_loaded_object(uint64_t addr, uint64_t *start, char *name, size_t cap);

/* The dynamic linker's loads and unloads so far: unchanged, no object came
 * or went since it was last read (an address in none of them is in none
 * still). Each call differs where the C library does not count them. */
uint64_t clt_loaded_generation(void);

/* glibc's _dl_find_object (2.35 on: lock-free, async-signal-safe), looked
 * up once; NULL in a C library without it. The first call asks dlsym: make
 * it outside a signal handler (capture/unwind.c does at load). */
struct dl_find_object;
typedef int (*clt_find_object_fn)(void *, struct dl_find_object *);
clt_find_object_fn clt_loaded_find_object(void);
#endif
