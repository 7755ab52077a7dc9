/* A hash map from non-zero u64 keys to pointers (open addressing, grown at
 * half full), and growable arrays. */
#include <stdlib.h>
#include <string.h>
#include "map.h"

int clt_map_put(struct clt_map *m, uint64_t k, void *v)
{
    if (!k)
        return -1;
    if ((m->used + 1) * 2 > m->cap) {
        uint64_t ncap = m->cap ? m->cap * 2 : 256;
        struct clt_map n = { calloc(ncap, 8), calloc(ncap, sizeof(void *)), ncap, 0 };
        if (!n.keys || !n.vals) {
            free(n.keys);
            free(n.vals);
            return -1;
        }
        for (uint64_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                uint64_t s = clt_map_slot(&n, m->keys[i]);
                n.keys[s] = m->keys[i];
                n.vals[s] = m->vals[i];
                n.used++;
            }
        free(m->keys);
        free(m->vals);
        *m = n;
    }
    uint64_t s = clt_map_slot(m, k);
    if (!m->keys[s]) {
        m->keys[s] = k;
        m->used++;
    }
    m->vals[s] = v;
    return 0;
}

/* Linear probing: close the hole by moving later entries of the run back. */
void *clt_map_del(struct clt_map *m, uint64_t k)
{
    if (!k || !m->cap)
        return NULL;
    uint64_t i = clt_map_slot(m, k);
    if (!m->keys[i])
        return NULL;
    void *v = m->vals[i];
    m->keys[i] = 0;
    m->used--;
    for (uint64_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        uint64_t key = m->keys[j];
        void *val = m->vals[j];
        m->keys[j] = 0;
        m->used--;
        uint64_t s = clt_map_slot(m, key);
        m->keys[s] = key;
        m->vals[s] = val;
        m->used++;
    }
    return v;
}

void clt_map_free_vals(struct clt_map *m)
{
    for (uint64_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            free(m->vals[i]);
    clt_map_free(m);
}

void clt_map_free(struct clt_map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->used = 0;
}

int clt_grow(void *arr, unsigned n, unsigned *cap, size_t elem, unsigned first)
{
    if (n < *cap)
        return 0;
    unsigned ncap = *cap ? 2 * *cap : first;
    void *g = realloc(*(void **)arr, (size_t)ncap * elem);
    if (!g)
        return -1;
    *(void **)arr = g;
    *cap = ncap;
    return 0;
}

