/* The loaded object an address lies in, from the dynamic linker's list of
 * program headers: no file read, no lock of ours (the shim's Python frames
 * and the writer's mappings both ask). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include "loaded.h"

clt_find_object_fn clt_loaded_find_object(void)
{
    static clt_find_object_fn find;
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&find, (clt_find_object_fn)dlsym(RTLD_DEFAULT, "_dl_find_object"), __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&find, __ATOMIC_RELAXED);
}

struct want { uint64_t addr, lo, hi; char *name; size_t cap; };

/* Called under the dynamic linker's lock of its list (dlclose takes it to
 * take an object out): the name is copied before the object can go. */
static int one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct want *w = arg;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            uint64_t start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            uint64_t end = start + info->dlpi_phdr[i].p_memsz;
            lo = start < lo ? start : lo;
            hi = end > hi ? end : hi;
        }
    if (w->addr < (lo & ~(uint64_t)4095) || w->addr >= hi)
        return 0;
    w->lo = lo;
    w->hi = hi;
    if (w->cap) {
        const char *n = info->dlpi_name ? info->dlpi_name : "";
        size_t len = strnlen(n, w->cap - 1);
        memcpy(w->name, n, len);
        w->name[len] = 0;
    }
    return 1;
}

int clt_loaded_range(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    struct want w = { addr, 0, 0, NULL, 0 };
    if (!dl_iterate_phdr(one, &w))
        return 0;
    *lo = w.lo;
    *hi = w.hi;
    return 1;
}

int clt_loaded_object(uint64_t addr, uint64_t *start, char *name, size_t cap)
{
    struct want w = { addr, 0, 0, name, cap };
    if (!cap || !dl_iterate_phdr(one, &w))
        return 0;
    *start = w.lo & ~(uint64_t)4095;
    return 1;
}

/* The first entry carries the counts for the whole list (glibc 2.4 on:
 * where the entry is too old to hold them, every call reads as a change). */
static int counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    uint64_t *gen = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *gen = (uint64_t)info->dlpi_adds << 32 ^ (uint64_t)info->dlpi_subs;
    return 1;
}

uint64_t clt_loaded_generation(void)
{
    static _Atomic uint64_t unknown;
    uint64_t gen = UINT64_MAX;
    dl_iterate_phdr(counts, &gen);
    return gen == UINT64_MAX ? UINT64_MAX - 1 - __atomic_fetch_add(&unknown, 1, __ATOMIC_RELAXED) : gen;
}
