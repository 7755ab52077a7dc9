/* Object lifetimes and leaks (writer thread). See lifetime.c and leaks.c. */
#ifndef CLT_LIFETIME_H
#define CLT_LIFETIME_H
#include <stdint.h>
#include "emit.h"

/* on_context_released: told when the app releases a context for good, before
 * its objects go (leaks.c names what it still held there: the model does not
 * call up to its report) */
struct clt_obj;
typedef void clt_context_released_fn(struct clt_writer *w, const struct clt_obj *ctx, uint64_t ts);
void clt_life_init(clt_context_released_fn *on_context_released);
const char *clt_otype_name(unsigned type);
/* After a call's arguments are decoded: creations, retains, releases.
 * Returns the app's reference count after a retain/release, else -1. */
int64_t clt_life_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1, int tid,
                         uint32_t stack);

/* What one creation site (call stack) made and released over the run, and
 * when (counted in the program's OpenCL calls: a loop's iterations, whatever
 * their time); at exit, what it still holds. */
struct clt_site_count {
    uint32_t made, released;
    uint64_t first;                    /* the calls written before its first creation */
    uint32_t held;                     /* at exit: still held by the app */
    uint64_t held_first, held_last;    /* the calls before the first and latest of those were made */
};
struct clt_site_count *clt_life_site(uint32_t stack);   /* NULL: no stack, or none made there */

/* leaks.c: what the app still holds, classed as a memory checker would. */
enum clt_leak_class {
    CLT_LEAK_STILL_HELD,       /* its context is held to the end, or the last of a site that releases the others */
    CLT_LEAK_GROWING,          /* its site holds 2 or more, made across the run: a leak in a loop */
    CLT_LEAK_DEFINITELY_LOST,  /* the app released what it belongs to (context, program, queue) */
};
struct clt_leak_counts {
    unsigned by_type[CLT_O_COUNT];
    unsigned by_class[3];
};
/* Every object the app still holds, as an instant with its creation stack
 * and class: w->leaks and w->leaks_serious counted, the leaks said. */
void clt_life_emit_leaks(struct clt_writer *w, uint64_t ts);
/* The app released a context (its count reached 0): the objects it still
 * holds there, as "held at context release" instants. */
void clt_leaks_context_released(struct clt_writer *w, const struct clt_obj *ctx, uint64_t ts);
#endif
