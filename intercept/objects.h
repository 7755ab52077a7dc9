/* Writer-thread tables. Handle -> object id: a handle returned by a
 * creating call gets a fresh id (the driver may reuse an address after a
 * release); any other handle keeps the id it was first seen with. */
#ifndef CLT_OBJECTS_H
#define CLT_OBJECTS_H
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

struct clt_objects {
    struct clt_map ids;
    uint64_t next_id;
};

uint64_t clt_objects_get(struct clt_objects *o, uint64_t handle);   /* 0 for NULL */
uint64_t clt_objects_new(struct clt_objects *o, uint64_t handle);
uint64_t clt_objects_find(const struct clt_objects *o, uint64_t handle);  /* 0 if unknown */
void clt_objects_free(struct clt_objects *o);

#endif
