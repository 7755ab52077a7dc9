/* The reader's interning tables: iid -> string per sequence, and the
 * per-iid caches (model.c, args.c and stacks.c all use them). */
#include <stdlib.h>
#include <string.h>
#include "reader.h"

void strtab_set(struct strtab *t, uint64_t iid, const char *s, size_t len)
{
    if (iid > 1000000)
        return;                 /* absurd iid from a broken trace: ignore */
    if (iid >= t->n) {
        uint64_t n = iid + 64;
        char **g = realloc(t->s, n * sizeof *g);
        if (g)
            t->s = g;
        uint32_t *l = g ? realloc(t->len, n * sizeof *l) : NULL;
        if (!l)
            return;
        memset(g + t->n, 0, (n - t->n) * sizeof *g);
        memset(l + t->n, 0, (n - t->n) * sizeof *l);
        t->len = l;
        t->n = n;
    }
    free(t->s[iid]);
    t->s[iid] = strndup(s ? s : "", s ? len : 0);    /* an empty string may come as NULL data */
    t->len[iid] = t->s[iid] ? (uint32_t)strlen(t->s[iid]) : 0;
}

void strtab_free(struct strtab *t)
{
    for (uint64_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->len);
    t->s = NULL;
    t->len = NULL;
    t->n = 0;
}

int cache_grow(void **arr, uint64_t *n, uint64_t iid, size_t elem)
{
    if (iid > 1000000)
        return 0;
    if (iid < *n)
        return 1;
    uint64_t nn = iid + 64;
    void *g = realloc(*arr, nn * elem);
    if (!g)
        return 0;
    memset((char *)g + *n * elem, 0, (nn - *n) * elem);
    *arr = g;
    *n = nn;
    return 1;
}
