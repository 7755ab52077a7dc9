/* A hash map and growable arrays: the only containers cltrace uses. */
#ifndef CLT_MAP_H
#define CLT_MAP_H
#include <stddef.h>
#include <stdint.h>

/* u64 key (non-zero) -> pointer. */
struct clt_map {
    uint64_t *keys;
    void **vals;
    uint64_t cap, used;
};

/* The slot of key: where it is, or the empty slot where it would go
 * (linear probing). Inline with clt_map_get: the writer looks up a handle
 * or two on every call. */
static inline uint64_t clt_map_slot(const struct clt_map *m, uint64_t k)
{
    uint64_t x = k * 0x9E3779B97F4A7C15ull;
    uint64_t i = (x ^ (x >> 29)) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* A key for bytes (FNV-1a, never 0): strings interned through the map
 * compare their text on a hit, a collision being possible. */
static inline uint64_t clt_hash_bytes(const void *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
    return h | 1;
}

static inline void *clt_map_get(const struct clt_map *m, uint64_t k)
{
    if (!k || !m->cap)
        return NULL;
    uint64_t s = clt_map_slot(m, k);
    return m->keys[s] ? m->vals[s] : NULL;
}
int clt_map_put(struct clt_map *m, uint64_t key, void *val);   /* 0 ok, -1 out of memory */
void *clt_map_del(struct clt_map *m, uint64_t key);           /* the value removed, or NULL */
void clt_map_free(struct clt_map *m);
void clt_map_free_vals(struct clt_map *m);                    /* each value free()d, then the map */

/* Room for element n of the array *arr of *cap elements: doubles it (from
 * `first`) when full. 0 ok; -1 out of memory, the array unchanged. */
int clt_grow(void *arr, unsigned n, unsigned *cap, size_t elem, unsigned first);

#endif
