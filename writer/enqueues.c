/* What an enqueue function is, as the device's slices name it: its
 * CL_COMMAND_* type, a transfer's direction, a transfer slice's name; the
 * keys of launches and transfers, and an untimed one kept on its queue until
 * estimated.c draws it. Below the parts that draw commands
 * (device_commands.c, estimated.c), the device model and the calls
 * (calls.c: an untimed transfer's arrow). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "common/bytes.h"
#include "common/map.h"
#include "device_model.h"
#include "trace/tables.h"

/* CL_COMMAND_* of an enqueue function: clEnqueueReadBufferRect -> CL_COMMAND_READ_BUFFER_RECT. */
const char *clt_dm_command_type(unsigned fn)
{
    static const char *cache[CLT_FN_COUNT];
    if (cache[fn])
        return cache[fn];
    const char *name = clt_fns[fn].name + 9;     /* after "clEnqueue" */
    char want[96] = "CL_COMMAND_";
    size_t n = strlen(want);
    for (size_t i = 0; name[i] && n + 2 < sizeof want; i++) {
        if (i && name[i] >= 'A' && name[i] <= 'Z' && !(name[i - 1] >= 'A' && name[i - 1] <= 'Z'))
            want[n++] = '_';
        want[n++] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    }
    want[n] = 0;
    const struct clt_decoder_desc *d = &clt_decoders[CLT_DEC_cl_command_type];
    for (unsigned i = 0; i < d->n; i++)
        if (strcmp(d->vals[i].name, want) == 0)
            return cache[fn] = d->vals[i].name;
    return cache[fn] = "CL_COMMAND_OTHER";
}

int clt_dm_transfer_dir(unsigned fn, const char **dir)
{
    const char *name = clt_fns[fn].name;
    *dir = strstr(name, "Read") ? "device_to_host" : strstr(name, "Write") ? "host_to_device"
         : strstr(name, "Copy") || strstr(name, "Memcpy") ? "device_to_device"
         : strstr(name, "Fill") || strstr(name, "Memfill") || strstr(name, "MemFill") ? "device" : NULL;
    return *dir != NULL;
}

/* A transfer's slice: its command and its size ("ReadBuffer 4 B", "WriteBuffer 1.5 MiB"). */
void clt_dm_transfer_name(char *out, size_t cap, const char *cmd, uint64_t bytes)
{
    char size[32];
    snprintf(out, cap, "%s %s", cmd, clt_bytes_words(bytes, size, sizeof size));
}

uint64_t clt_dm_transfer_key(unsigned fn, uint64_t bytes)
{
    return ((uint64_t)fn * 0x9E3779B97F4A7C15ull ^ bytes * 0xff51afd7ed558ccdull ^ 0x7472616e73666572ull) | 1;
}

/* A kernel object with its launch configuration, as one key */
uint64_t clt_dm_launch_key(uint64_t kernel_id, uint32_t work_dim, const uint64_t *gws, const uint64_t *lws,
                           int lws_null)
{
    uint64_t h = kernel_id * 0x9E3779B97F4A7C15ull ^ work_dim ^ (uint64_t)lws_null << 8;
    for (uint32_t i = 0; i < work_dim && i < 3; i++) {
        h = (h ^ gws[i]) * 0x100000001B3ull;
        h = (h ^ (lws_null ? 0 : lws[i])) * 0x100000001B3ull;
    }
    return h | 1;
}

/* A queue's waiting commands: pages of their own, grown by mremap. A launch
 * loop's 19,000 held at once grew by realloc, copied at each doubling into
 * fresh pages: ~1,000 of the writer's ~2,000 page faults in a PoCL loop
 * (perf, 2026-11-29). The pages move, nothing is copied; and each command
 * is 24 bytes (was 112), what its key's commands share kept once. */
static struct clt_est *est_grow(struct clt_est *old, unsigned old_cap, unsigned cap)
{
    size_t was = (size_t)old_cap * sizeof *old, want = (size_t)cap * sizeof *old;
    void *p = old ? mremap(old, was, want, MREMAP_MAYMOVE)
                  : mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void clt_est_free(struct clt_queue *q)
{
    if (q->est)
        munmap(q->est, (size_t)q->cap_est * sizeof *q->est);
    q->est = NULL;
    q->cap_est = q->n_est = q->est_first = 0;
}

static struct clt_est *push(struct clt_queue *q)
{
    if (q->n_est == q->cap_est && q->est_first && q->est_first >= q->n_est / 2) {   /* half drawn: to the front */
        memmove(q->est, q->est + q->est_first, (q->n_est - q->est_first) * sizeof *q->est);
        q->n_est -= q->est_first;
        q->est_first = 0;
    }
    if (q->n_est == q->cap_est) {
        unsigned cap = q->cap_est ? q->cap_est * 2 : 512;       /* 12 KiB: whole pages */
        struct clt_est *e = cap <= 1u << 20 ? est_grow(q->est, q->cap_est, cap) : NULL;
        if (!e)
            return NULL;
        q->est = e;
        q->cap_est = cap;
    }
    return memset(&q->est[q->n_est++], 0, sizeof *q->est);
}

/* The shapes by key: as many as the configurations and transfer sizes the
 * run left untimed (each had 16 timed first) */
static struct clt_map shapes;

const struct clt_est_shape *clt_est_shape(uint64_t key)
{
    return clt_map_get(&shapes, key);
}

static void shape_keep(uint64_t key, const struct clt_est_shape *s)
{
    struct clt_est_shape *x;
    if (clt_map_get(&shapes, key) || !(x = malloc(sizeof *x)))
        return;
    *x = *s;
    if (clt_map_put(&shapes, key, x) != 0)
        free(x);
}

void clt_est_shapes_forget(void)
{
    clt_map_free_vals(&shapes);
}

void clt_est_push_launch(struct clt_queue *q, uint64_t h0, uint64_t kernel_id, uint32_t work_dim, const uint64_t *gws,
                         const uint64_t *lws, uint32_t lws_null, uint64_t flow)
{
    uint64_t key = clt_dm_launch_key(kernel_id, work_dim, gws, lws, (int)lws_null);
    struct clt_est *e = push(q);
    if (!e)
        return;
    *e = (struct clt_est){ h0, key, flow };
    if (!clt_map_get(&shapes, key)) {
        struct clt_est_shape s = { kernel_id, work_dim, lws_null, { 0 }, { 0 }, CLT_FN_clEnqueueNDRangeKernel, NULL, 0 };
        memcpy(s.gws, gws, sizeof s.gws);
        memcpy(s.lws, lws, sizeof s.lws);
        shape_keep(key, &s);
    }
}

void clt_est_push_transfer(struct clt_queue *q, uint64_t h0, unsigned fn, const char *dir, uint64_t bytes,
                           uint64_t flow)
{
    uint64_t key = clt_dm_transfer_key(fn, bytes);
    struct clt_est *e = push(q);
    if (!e)
        return;
    *e = (struct clt_est){ h0, key, flow };
    shape_keep(key, &(struct clt_est_shape){ .fn = fn, .dir = dir, .bytes = bytes });
}

/* inline: memcmp's call was a quarter of an untimed launch's count */
static int same3(const uint64_t a[3], const uint64_t b[3])
{
    return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]));
}

void clt_dm_untimed_launch(struct clt_devmodel *m, struct clt_untimed *u, const char *name)
{
    /* the name copied only for a new entry: formatted at each of a loop's
     * 18,500 untimed launches it was a tenth of the writer's time. A loop
     * repeats one entry: tried first, and the name compared only where
     * another kernel object of it was launched */
    for (unsigned j = 0; j < m->n_untimed; j++) {
        unsigned i = j ? j - (j <= m->untimed_last) : m->untimed_last;
        struct clt_untimed *x = &m->untimed_launches[i];
        if (x->work_dim == u->work_dim && x->lws_null == u->lws_null && same3(x->gws, u->gws) &&
            same3(x->lws, u->lws) && (x->kern == u->kern || !strcmp(x->name, name))) {
            x->count++;
            x->kern = u->kern;
            m->untimed_last = i;
            return;
        }
    }
    if (m->n_untimed < CLT_MAX_UNTIMED) {
        snprintf(u->name, sizeof u->name, "%s", name);
        u->count = 1;
        m->untimed_last = m->n_untimed;
        m->untimed_launches[m->n_untimed++] = *u;
    } else {
        m->untimed_other++;
    }
}
