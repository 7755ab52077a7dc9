/* A device command's fingerprints (read by args.c) into the model, with what
 * the slice says of the command: its name, launch configuration, arguments,
 * queue, #N; in enqueue order; described in words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "describe.h"
#include "reader.h"

void rm_fp_keep(struct rm_model *m, struct open_slice *o)
{
    struct rm_fpcmd *c = o->fpc;
    o->fpc = NULL;
    if (!c)
        return;
    if (m->n_fpcmds == m->cap_fpcmds) {
        unsigned cap = m->cap_fpcmds ? 2 * m->cap_fpcmds : 256;
        struct rm_fpcmd *v = realloc(m->fpcmds, cap * sizeof *v);
        if (!v) {
            free(c);
            return;
        }
        m->fpcmds = v;
        m->cap_fpcmds = cap;
    }
    snprintf(c->name, sizeof c->name, "%s", o->name);
    snprintf(c->command_type, sizeof c->command_type, "%s", o->type);
    c->ts = o->ts;
    c->cmd_n = o->fp_cmd;
    c->launch_n = o->fp_launch;
    c->queue = o->queue;
    c->work_dim = o->k.work_dim;
    memcpy(c->gws, o->k.gws, sizeof c->gws);
    memcpy(c->lws, o->k.lws, sizeof c->lws);
    c->local_null = o->k.local_null;
    c->n_args = o->n_kargs;
    memcpy(c->args, o->kargs, sizeof c->args);
    c->site = o->site > 0 ? o->site : 0;
    m->fpcmds[m->n_fpcmds++] = *c;
    free(c);
}

static int by_cmd_n(const void *a, const void *b)
{
    const struct rm_fpcmd *x = *(const struct rm_fpcmd *const *)a, *y = *(const struct rm_fpcmd *const *)b;
    return x->cmd_n < y->cmd_n ? -1 : x->cmd_n > y->cmd_n;
}

const struct rm_fpcmd **rm_fp_order(const struct rm_model *m)
{
    const struct rm_fpcmd **v = malloc((m->n_fpcmds ? m->n_fpcmds : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (unsigned i = 0; i < m->n_fpcmds; i++)
        v[i] = &m->fpcmds[i];
    qsort(v, m->n_fpcmds, sizeof *v, by_cmd_n);
    return v;
}

void rm_fpcmd_describe(const struct rm_fpcmd *c, char *buf, size_t cap)
{
    if (!c->work_dim) {
        snprintf(buf, cap, "%s %llu (#%llu)", c->command_type[0] ? c->command_type : c->name,
                 (unsigned long long)c->launch_n, (unsigned long long)c->cmd_n);
        return;
    }
    char g[64] = "", l[64] = "";
    for (unsigned i = 0; i < c->work_dim && i < 3; i++) {
        size_t gn = strlen(g), ln = strlen(l);
        snprintf(g + gn, sizeof g - gn, "%s%llu", i ? "x" : "", (unsigned long long)c->gws[i]);
        snprintf(l + ln, sizeof l - ln, "%s%llu", i ? "x" : "", (unsigned long long)c->lws[i]);
    }
    snprintf(buf, cap, "kernel `%s` launch %llu (#%llu, global %s, local %s)", c->name,
             (unsigned long long)c->launch_n, (unsigned long long)c->cmd_n, g, c->local_null ? "NULL" : l);
}

const char *rm_fpcmd_site(const struct rm_model *m, const struct rm_fpcmd *c)
{
    return c->site > 0 && (unsigned)c->site <= m->n_sites ? m->sites[c->site - 1].site : "";
}

void rm_fp_buffer_describe(const struct rm_model *m, const struct rm_fp *f, char *buf, size_t cap)
{
    char arg[64];
    if (f->arg >= 0)
        snprintf(arg, sizeof arg, "arg %lld, ", (long long)f->arg);
    else if (f->offset)
        snprintf(arg, sizeof arg, "written from byte %llu, ", (unsigned long long)f->offset);
    else
        arg[0] = 0;
    const char *site = f->site > 0 && (unsigned)f->site <= m->n_sites ? m->sites[f->site - 1].site : "";
    snprintf(buf, cap, "buffer %llu (%s%s, %llu bytes%s%s)", (unsigned long long)f->buffer, arg, f->type,
             (unsigned long long)f->bytes, site[0] ? ", created at " : "", site);
}
