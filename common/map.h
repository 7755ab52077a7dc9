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
void *clt_map_get(const struct clt_map *m, uint64_t key);
int clt_map_put(struct clt_map *m, uint64_t key, void *val);   /* 0 ok, -1 out of memory */
void *clt_map_del(struct clt_map *m, uint64_t key);           /* the value removed, or NULL */
void clt_map_free(struct clt_map *m);

/* Room for element n of the array *arr of *cap elements: doubles it (from
 * `first`) when full. 0 ok; -1 out of memory, the array unchanged. */
int clt_grow(void *arr, unsigned n, unsigned *cap, size_t elem, unsigned first);

#endif
