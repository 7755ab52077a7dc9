/* The writer's handle -> object table (a driver may reuse a handle's
 * address after a release). */
#ifndef CLT_OBJECTS_H
#define CLT_OBJECTS_H
#include <stddef.h>
#include <stdint.h>
#include "common/map.h"

/* What the writer knows of one OpenCL object (lifetime.c keeps it). */
enum clt_otype {
    CLT_O_OTHER, CLT_O_PLATFORM, CLT_O_DEVICE, CLT_O_CONTEXT, CLT_O_QUEUE, CLT_O_MEM, CLT_O_PROGRAM,
    CLT_O_KERNEL, CLT_O_EVENT, CLT_O_SAMPLER, CLT_O_COMMAND_BUFFER, CLT_O_SEMAPHORE, CLT_O_ACCELERATOR,
    CLT_O_SVM, CLT_O_USM, CLT_O_COUNT
};
#define CLT_OBJ_PARENTS 3
struct clt_obj {
    uint64_t id, handle;
    int32_t refs;           /* the app's: 1 at creation + retains - releases; -1: not counted */
    int32_t held;           /* references the runtime keeps for live objects made from this one */
    uint8_t type;           /* enum clt_otype */
    uint8_t destroyed;      /* refs and held both 0: the driver may reuse the handle */
    uint16_t create_fn;     /* enum clt_fn */
    uint32_t stack;         /* creation call stack (symbols.c), 0: none */
    int tid;
    uint64_t t_created, t_released;   /* trace ns; t_released: when refs reached 0 */
    uint64_t call_created;  /* the calls written before the one that made it */
    uint64_t size;          /* bytes, for memory objects where the call says */
    struct clt_obj *parent[CLT_OBJ_PARENTS];   /* objects this one holds a reference on */
    struct clt_obj *next_orphan;
    char name[48];          /* kernel name */
};

/* handle -> object. A handle returned by a creating call gets a fresh object
 * (and id); any other handle keeps the one it was first seen with. */
struct clt_objects {
    struct clt_map ids;
    uint64_t next_id;
    struct clt_obj *orphans;   /* replaced while still referenced: kept for the leak report */
    /* The last two handles looked up, and what they map to (NULL: none):
     * one call asks for the same handle from each model (decode, objects,
     * devices), and a loop calls on one kernel or queue. Cleared by every
     * change to the map. */
    uint64_t recent_handle[2];
    struct clt_obj *recent_obj[2];
    unsigned recent_next;      /* the one to replace: not the latest used */
    uint64_t gen;              /* moved by every change to the map or to an object's life (calls.c's memo) */
};

/* Had the app released it before a call that began at t0? */
static inline int clt_obj_released(const struct clt_obj *o, uint64_t t0)
{
    return o->refs == 0 && o->t_released <= t0;
}

uint64_t clt_objects_get(struct clt_objects *o, uint64_t handle);   /* 0 for NULL */
uint64_t clt_objects_new(struct clt_objects *o, uint64_t handle);

/* The object a handle maps to, or NULL (inline: several per call). */
static inline struct clt_obj *clt_objects_obj(struct clt_objects *o, uint64_t h)
{
    if (h == o->recent_handle[0]) {
        o->recent_next = 1;     /* the other one goes first */
        return o->recent_obj[0];
    }
    if (h == o->recent_handle[1]) {
        o->recent_next = 0;
        return o->recent_obj[1];
    }
    struct clt_obj *ob = clt_map_get(&o->ids, h);
    unsigned i = o->recent_next;
    o->recent_next = i ^ 1;
    o->recent_handle[i] = h;
    o->recent_obj[i] = ob;
    return ob;
}

static inline uint64_t clt_objects_find(struct clt_objects *o, uint64_t h)   /* 0 if unknown */
{
    struct clt_obj *ob = clt_objects_obj(o, h);
    return ob ? ob->id : 0;
}
void clt_objects_free(struct clt_objects *o);

#endif
