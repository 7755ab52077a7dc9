/* Object lifetimes, on the writer thread: every object the app creates,
 * its reference count as the app sees it (1 at creation, + retains,
 * - releases), the references the runtime keeps implicitly (a kernel on
 * its program, a sub-buffer on its parent, anything on its context), the
 * call stack that created it. What is still held at exit: leaks.c.
 *
 * The model is built from the records only: no handle is ever passed to
 * the driver here, so a released (or garbage) handle cannot crash it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emit.h"
#include "lifetime.h"
#include "trace/tables.h"

static const char *const type_names[CLT_O_COUNT] = {
    "other", "cl_platform_id", "cl_device_id", "cl_context", "cl_command_queue", "cl_mem", "cl_program",
    "cl_kernel", "cl_event", "cl_sampler", "cl_command_buffer_khr", "cl_semaphore_khr",
    "cl_accelerator_intel", "svm_pointer", "usm_pointer",
};

const char *clt_otype_name(unsigned t) { return t < CLT_O_COUNT ? type_names[t] : "other"; }

static uint8_t type_of(const char *cl_type)
{
    if (!cl_type)
        return CLT_O_OTHER;
    for (unsigned t = 1; t < CLT_O_COUNT; t++)
        if (strcmp(type_names[t], cl_type) == 0)
            return (uint8_t)t;
    return CLT_O_OTHER;
}

/* What each command does to lifetimes, from its name and cl.xml types. */
enum { OP_NONE, OP_RETAIN, OP_RELEASE, OP_FREE_PTR, OP_FREE_PTRS };
static uint8_t op_of[CLT_FN_COUNT], made_type[CLT_FN_COUNT];
static int8_t ptr_param[CLT_FN_COUNT];   /* OP_FREE_PTR(S): which parameter */
/* a creating function's errcode_ret (-1: none) and its parameters that
 * return handles (a bit each): found once, not at each of a loop's calls */
static int8_t errcode_param[CLT_FN_COUNT];
static uint32_t out_params[CLT_FN_COUNT];

static int param_named(unsigned fn, const char *name)
{
    for (unsigned i = 0; i < clt_fns[fn].n_params; i++)
        if (strcmp(clt_fns[fn].params[i].name, name) == 0)
            return (int)i;
    return -1;
}

static clt_context_released_fn *context_released;

void clt_life_init(clt_context_released_fn *on_context_released)
{
    context_released = on_context_released;
    for (unsigned f = 0; f < CLT_FN_COUNT; f++) {
        const struct clt_fn_desc *fd = &clt_fns[f];
        if (strncmp(fd->name, "clRetain", 8) == 0)
            op_of[f] = OP_RETAIN;
        else if (strncmp(fd->name, "clRelease", 9) == 0)
            op_of[f] = OP_RELEASE;
        else if (strcmp(fd->name, "clSVMFree") == 0 || strcmp(fd->name, "clSVMFreeARM") == 0 ||
                 strcmp(fd->name, "clMemFreeINTEL") == 0 || strcmp(fd->name, "clMemBlockingFreeINTEL") == 0)
            op_of[f] = OP_FREE_PTR, ptr_param[f] = (int8_t)(param_named(f, "svm_pointer") >= 0
                                                             ? param_named(f, "svm_pointer") : param_named(f, "ptr"));
        else if (strncmp(fd->name, "clEnqueueSVMFree", 16) == 0)
            op_of[f] = OP_FREE_PTRS, ptr_param[f] = (int8_t)param_named(f, "svm_pointers");
        if (op_of[f] >= OP_FREE_PTR && (ptr_param[f] < 0 ||
            fd->params[ptr_param[f]].kind != (op_of[f] == OP_FREE_PTR ? CLT_K_PTR : CLT_K_ARR)))
            op_of[f] = OP_NONE;   /* recorded as an address only: nothing to read */
        errcode_param[f] = -1;
        for (unsigned i = 0; i < fd->n_params && i < 32; i++) {
            if (fd->params[i].kind == CLT_K_ERRCODE && errcode_param[f] < 0)
                errcode_param[f] = (int8_t)i;
            if (fd->params[i].kind == CLT_K_OUT_HANDLE || fd->params[i].kind == CLT_K_OUT_HARR)
                out_params[f] |= 1u << i;
        }
        if (!(fd->flags & CLT_F_CREATES))
            continue;
        if (fd->ret == CLT_R_HANDLE)
            made_type[f] = type_of(fd->ret_type);
        else if (strncmp(fd->name, "clSVMAlloc", 10) == 0)
            made_type[f] = CLT_O_SVM;
        else if (strstr(fd->name, "MemAllocINTEL"))
            made_type[f] = CLT_O_USM;
        for (unsigned i = 0; i < fd->n_params && !made_type[f]; i++)
            if (fd->params[i].kind == CLT_K_OUT_HANDLE || fd->params[i].kind == CLT_K_OUT_HARR)
                made_type[f] = type_of(fd->params[i].handle_type);
    }
}

static int counted(const struct clt_obj *o) { return o && o->refs >= 0; }

/* Refs and implicit references both gone: drop the references it held. */
static void maybe_destroy(struct clt_obj *o)
{
    while (o && !o->destroyed && o->refs == 0 && o->held <= 0) {
        o->destroyed = 1;
        struct clt_obj *up[CLT_OBJ_PARENTS];
        memcpy(up, o->parent, sizeof up);
        memset(o->parent, 0, sizeof o->parent);
        for (unsigned i = 1; i < CLT_OBJ_PARENTS; i++)
            if (up[i]) {
                up[i]->held--;
                maybe_destroy(up[i]);
            }
        o = up[0];
        if (o)
            o->held--;
    }
}

static void hold(struct clt_obj *child, struct clt_obj *parent)
{
    if (!counted(parent) || parent == child)
        return;
    for (unsigned i = 0; i < CLT_OBJ_PARENTS; i++)
        if (!child->parent[i]) {
            child->parent[i] = parent;
            parent->held++;
            return;
        }
}

/* Bytes per pixel of a cl_image_format (order in the low 32 bits, type in
 * the high); 0 if unknown. */
static uint64_t pixel_bytes(uint64_t format)
{
    uint32_t order = (uint32_t)format, type = (uint32_t)(format >> 32);
    static const uint8_t channels[] = { 1, 1, 2, 2, 3, 4, 4, 4, 1, 1, 1, 2, 3, 1, 1 };   /* CL_R 0x10B0.. */
    static const uint8_t size[] = { 1, 2, 1, 2, 0, 0, 0, 1, 2, 4, 1, 2, 4, 2, 4 };        /* CL_SNORM_INT8 0x10D0.. */
    if (type == 0x10D4 || type == 0x10D5)
        return 2;                      /* packed 565 / 555 */
    if (type == 0x10D6)
        return 4;                      /* packed 101010 */
    unsigned c = order >= 0x10B0 && order < 0x10B0 + sizeof channels ? channels[order - 0x10B0]
               : order >= 0x10C1 && order <= 0x10C3 ? 4 : 0;   /* sRGBA, sBGRA, ABGR */
    unsigned b = type >= 0x10D0 && type < 0x10D0 + sizeof size ? size[type - 0x10D0] : 0;
    return (uint64_t)c * b;
}

/* What a memory object occupies, from its creation call: size, a
 * sub-buffer's region, an image's extent times its pixel size. */
static uint64_t mem_bytes(const struct clt_rec *rec, const struct clt_fn_desc *fd)
{
    uint64_t size = 0, pix = 0, dim[4] = { 0, 1, 1, 1 };   /* width, height, depth, array */
    for (unsigned i = 0; i < fd->n_params; i++) {
        const struct clt_param *p = &fd->params[i];
        if (rec->raw_mask & (1u << i))
            continue;
        const uint64_t *words = (const uint64_t *)((const uint8_t *)rec + (rec->arg[i] >> 32));
        if (p->kind == CLT_K_VAL && !strcmp(p->name, "size"))
            size = rec->arg[i];
        else if (p->kind == CLT_K_VAL && !strcmp(p->name, "image_width"))
            dim[0] = rec->arg[i];
        else if (p->kind == CLT_K_VAL && !strcmp(p->name, "image_height"))
            dim[1] = rec->arg[i] ? rec->arg[i] : 1;
        else if (p->kind == CLT_K_VAL && !strcmp(p->name, "image_depth"))
            dim[2] = rec->arg[i] ? rec->arg[i] : 1;
        else if (p->kind == CLT_K_WORDS && !strcmp(p->name, "buffer_create_info"))
            size = words[1];                          /* cl_buffer_region {origin, size} */
        else if (p->kind == CLT_K_WORDS && !strcmp(p->name, "image_format"))
            pix = pixel_bytes(words[0]);
        else if (p->kind == CLT_K_WORDS && !strcmp(p->name, "image_desc"))
            for (unsigned k = 0; k < 4; k++)          /* {type, width, height, depth, array_size, ...} */
                dim[k] = k && !words[k + 1] ? 1 : words[k + 1];
    }
    if (!size && dim[0] && pix)
        size = dim[0] * dim[1] * dim[2] * dim[3] * pix;
    return size;
}

/* Objects made and released per creation site (call stack), so that a leak
 * can say whether its site leaks every time, or only on some path, and
 * whether what it holds grew over the run (leaks.c). */
static struct clt_map site_counts;

struct clt_site_count *clt_life_site(uint32_t stack)
{
    return stack ? clt_map_get(&site_counts, stack) : NULL;
}

static struct clt_site_count *site_of(uint32_t stack, int create)
{
    struct clt_site_count *c = clt_life_site(stack);
    if (!c && stack && create && (c = calloc(1, sizeof *c)) != NULL && clt_map_put(&site_counts, stack, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static void created(struct clt_writer *w, const struct clt_rec *rec, struct clt_obj *o, uint64_t t0,
                    int tid, uint32_t stack)
{
    struct clt_site_count *sc = site_of(stack, 1);
    w->objs.gen++;      /* made, held or let go: what a call's handles decode to may change (calls.c) */
    if (sc)
        sc->first = sc->made++ ? sc->first : w->calls;
    unsigned fn = rec->fn;
    const struct clt_fn_desc *fd = &clt_fns[fn];
    o->type = made_type[fn];
    o->refs = 1;
    o->create_fn = (uint16_t)fn;
    o->stack = stack;
    o->tid = tid;
    o->t_created = t0;
    o->call_created = w->calls;
    o->size = mem_bytes(rec, fd);
    for (unsigned i = 0; i < fd->n_params; i++) {
        const struct clt_param *p = &fd->params[i];
        if (rec->raw_mask & (1u << i))
            continue;
        if (p->kind == CLT_K_STR && strcmp(p->name, "kernel_name") == 0) {
            size_t n = rec->arg[i] & 0xFFFFFFFFu;
            clt_text(o->name, (const uint8_t *)rec + (rec->arg[i] >> 32), n < sizeof o->name ? n : sizeof o->name - 1,
                     0, '?');
        } else if (p->kind == CLT_K_HANDLE) {
            /* The runtime's references: a kernel holds its program (a clone,
             * its source's program); an event its queue; the rest whatever
             * they were made from (context, parent buffer, device). */
            struct clt_obj *src = clt_objects_obj(&w->objs, rec->arg[i]);
            if (!src || src == o)
                continue;
            uint8_t st = src->type;
            if (o->type == CLT_O_KERNEL)
                hold(o, st == CLT_O_PROGRAM ? src : st == CLT_O_KERNEL ? src->parent[0] : NULL);
            else if (o->type == CLT_O_EVENT)
                hold(o, st == CLT_O_QUEUE || st == CLT_O_CONTEXT ? src : NULL);
            else if (st == CLT_O_CONTEXT || st == CLT_O_QUEUE || st == CLT_O_MEM || st == CLT_O_PROGRAM ||
                     st == CLT_O_DEVICE || st == CLT_O_COMMAND_BUFFER)
                hold(o, src);
        }
    }
}

static void released(struct clt_writer *w, struct clt_obj *o, int delta, uint64_t t1)
{
    if (!counted(o) || o->destroyed)
        return;
    w->objs.gen++;
    o->refs += delta;
    if (o->refs <= 0) {
        o->refs = 0;
        o->t_released = t1;
        struct clt_site_count *sc = site_of(o->stack, 0);
        if (sc)
            sc->released++;
        if (o->type == CLT_O_CONTEXT)
            context_released(w, o, t1);
        maybe_destroy(o);
    }
}

int64_t clt_life_on_call(struct clt_writer *w, const struct clt_rec *rec, uint64_t t0, uint64_t t1, int tid,
                         uint32_t stack)
{
    unsigned fn = rec->fn;
    if (!made_type[fn] && !op_of[fn])
        return -1;      /* most calls: nothing to do with lifetimes */
    const struct clt_fn_desc *fd = &clt_fns[fn];
    int ok = fd->ret == CLT_R_ERR ? (int32_t)rec->ret == 0 : fd->ret == CLT_R_VOID || rec->ret != 0;
    if (errcode_param[fn] >= 0 && (int32_t)rec->arg[errcode_param[fn]] != 0)
        ok = 0;                 /* failed creations report through errcode_ret */
    if (!ok)
        return -1;
    if (made_type[fn]) {
        if (made_type[fn] == CLT_O_SVM || made_type[fn] == CLT_O_USM || fd->ret == CLT_R_HANDLE) {
            if (fd->ret == CLT_R_PTR)
                clt_objects_new(&w->objs, rec->ret);
            struct clt_obj *o = clt_objects_obj(&w->objs, rec->ret);
            if (o)
                created(w, rec, o, t0, tid, stack);
        }
        for (uint32_t left = out_params[fn] & ~rec->raw_mask; left; left &= left - 1) {
            unsigned i = (unsigned)__builtin_ctz(left);
            const struct clt_param *p = &fd->params[i];
            if (p->kind == CLT_K_OUT_HANDLE) {
                struct clt_obj *o = clt_objects_obj(&w->objs, rec->arg[i]);
                if (o)
                    created(w, rec, o, t0, tid, stack);
            } else if (p->kind == CLT_K_OUT_HARR) {
                unsigned n = (unsigned)(rec->arg[i] & 0xFFFFFFFFu);
                const uint64_t *h = (const uint64_t *)((const uint8_t *)rec + (rec->arg[i] >> 32));
                for (unsigned k = 0; k < n && k < CLT_MAX_ARRAY; k++) {
                    struct clt_obj *o = clt_objects_obj(&w->objs, h[k]);
                    if (o)
                        created(w, rec, o, t0, tid, stack);
                }
            }
        }
        return -1;
    }
    switch (op_of[fn]) {
    case OP_RETAIN:
    case OP_RELEASE: {
        struct clt_obj *o = fd->n_params ? clt_objects_obj(&w->objs, rec->arg[0]) : NULL;
        if (!counted(o))
            return -1;
        if (op_of[fn] == OP_RETAIN && !o->destroyed)
            o->refs++, w->objs.gen++;
        else
            released(w, o, -1, t1);
        return o->refs;
    }
    case OP_FREE_PTR:
        if (ptr_param[fn] >= 0)
            released(w, clt_objects_obj(&w->objs, rec->arg[ptr_param[fn]]), -1, t1);
        return -1;
    case OP_FREE_PTRS:
        if (ptr_param[fn] >= 0 && !(rec->raw_mask & (1u << ptr_param[fn]))) {
            uint64_t v = rec->arg[ptr_param[fn]];
            const uint64_t *p = (const uint64_t *)((const uint8_t *)rec + (v >> 32));
            for (unsigned k = 0; k < (v & 0xFFFFFFFFu) && k < CLT_MAX_ARRAY; k++)
                released(w, clt_objects_obj(&w->objs, p[k]), -1, t1);
        }
        return -1;
    }
    return -1;
}

