/* The handle -> object table (common/map.h underneath). */
#include <stdlib.h>
#include <string.h>
#include "objects.h"

/* The map changes: what was looked up lately may map elsewhere now. */
static void forget_recent(struct clt_objects *o)
{
    o->gen++;
    memset(o->recent_handle, 0, sizeof o->recent_handle);
    memset(o->recent_obj, 0, sizeof o->recent_obj);
}

static uint64_t put(struct clt_objects *o, uint64_t h, int fresh)
{
    if (!h)
        return 0;
    struct clt_obj *old = clt_objects_obj(o, h);
    if (old && !fresh)
        return old->id;
    forget_recent(o);
    struct clt_obj *ob = calloc(1, sizeof *ob);
    if (!ob)
        return ++o->next_id;       /* out of memory: ids stay unique */
    ob->id = ++o->next_id;
    ob->handle = h;
    ob->refs = -1;
    if (clt_map_put(&o->ids, h, ob) != 0) {
        free(ob);
        return o->next_id;
    }
    if (old) {
        /* The driver handed the address out again, so the old object is gone
         * -- unless the model still counts it (a lost record): keep it. */
        if (old->destroyed || old->refs < 0) {
            free(old);
        } else {
            old->next_orphan = o->orphans;
            o->orphans = old;
        }
    }
    return ob->id;
}

uint64_t clt_objects_get(struct clt_objects *o, uint64_t h) { return put(o, h, 0); }
uint64_t clt_objects_new(struct clt_objects *o, uint64_t h) { return put(o, h, 1); }

void clt_objects_free(struct clt_objects *o)
{
    clt_map_free_vals(&o->ids);
    while (o->orphans) {
        struct clt_obj *n = o->orphans->next_orphan;
        free(o->orphans);
        o->orphans = n;
    }
    forget_recent(o);
}
