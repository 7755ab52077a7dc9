/* cltrace-replay: a captured kernel launch (CLTRACE_CAPTURE) run again.
 *   replay DIR      run it, time it, compare its outputs with the captured
 *   tune DIR        every legal local size, checked and ranked (tune.c)
 *   replay --check  under Oclgrind's bounds, race and uninitialized checks (check.c)
 *   replay --emit-c a C file that replays it with nothing but libOpenCL (emit.c)
 * Exit: 0 the outputs are the captured ones, 1 they differ (or --check
 * found a problem), 2 it cannot be replayed (why on stderr). The `cltrace`
 * launcher runs it for `cltrace replay` and `cltrace tune`. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "replay.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace replay [--platform P] [--device D] [--local X[,Y[,Z]]] [--repeat N]\n"
               "                      [--tolerance REL[,ABS]] DIR\n"
               "       cltrace replay --check [--platform P] [--device D] DIR   (under Oclgrind)\n"
               "       cltrace replay --emit-c [-o FILE] DIR\n"
               "       cltrace replay --list\n"
               "       cltrace tune [--platform P] [--device D] [--repeat N] [--round-global]\n"
               "                    [--format text|json] DIR\n\n"
               "DIR is a folder written by cltrace --capture (CLTRACE_CAPTURE). The launch runs\n"
               "again from its captured inputs, N times (default 10) with profiling; its device\n"
               "time (min, median) is printed and the buffers it wrote are compared with the\n"
               "captured outputs: integer data exactly, float data within the tolerance (default\n"
               "relative 1e-5 plus absolute 1e-6 of the element: |got-want| <= ABS + REL*max(|got|,|want|)).\n"
               "P and D: a number (from 0, as --list prints) or part of the name; default the\n"
               "platform and device the launch was captured on, else the first.\n\n"
               "Exit: 0 same outputs, 1 they differ (--check: a problem found), 2 it cannot be\n"
               "replayed (a partial capture, no such device, the program does not build: why on stderr).\n");
}

static int list(void)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
        np = 0;
    for (unsigned p = 0; p < np && p < 16; p++) {
        char name[128] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        printf("platform %u: %s\n", p, name);
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            nd = 0;
        for (unsigned d = 0; d < nd && d < 16; d++) {
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name, name, NULL);
            printf("  device %u: %s\n", d, name);
        }
    }
    return np ? 0 : 2;
}

int rp_parse(int argc, char **argv, struct rp_args *a)
{
    memset(a, 0, sizeof *a);
    a->repeat = 10;
    a->o.rel = 1e-5;
    a->o.abs = 1e-6;
    a->format = "text";
    for (int i = 1; i < argc; i++) {
        const char *v = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES(flag) (!strcmp(v, flag) && next && (i++, 1))
        if (TAKES("--platform"))
            a->o.platform = next;
        else if (TAKES("--device"))
            a->o.device = next;
        else if (TAKES("--repeat"))
            a->repeat = (unsigned)atoi(next);
        else if (TAKES("--format"))
            a->format = next;
        else if (TAKES("-o"))
            a->out = next;
        else if (TAKES("--tolerance")) {
            char *end;
            a->o.rel = strtod(next, &end);
            a->o.abs = *end == ',' ? strtod(end + 1, &end) : 0;
            if (*end || a->o.rel < 0 || a->o.abs < 0)
                return fprintf(stderr, "cltrace replay: --tolerance REL[,ABS], two numbers >= 0\n"), -1;
        } else if (TAKES("--local")) {
            a->have_local = 1;
            a->local[0] = a->local[1] = a->local[2] = 1;
            if (sscanf(next, "%zu,%zu,%zu", &a->local[0], &a->local[1], &a->local[2]) < 1 || !a->local[0])
                return fprintf(stderr, "cltrace replay: --local X[,Y[,Z]]\n"), -1;
        } else if (!strcmp(v, "--check"))
            a->check = 1;
        else if (!strcmp(v, "--emit-c"))
            a->emit = 1;
        else if (!strcmp(v, "--round-global"))
            a->round_global = 1;
        else if (!strcmp(v, "--list"))
            a->list = 1;
        else if (!strcmp(v, "-h") || !strcmp(v, "--help"))
            return usage(stdout), 1;
        else if (v[0] == '-')
            return fprintf(stderr, "cltrace replay: unknown option %s\n", v), usage(stderr), -1;
        else if (!a->dir)
            a->dir = v;
        else
            return fprintf(stderr, "cltrace replay: one folder at a time\n"), -1;
#undef TAKES
    }
    if (!a->repeat || a->repeat > 100000)
        return fprintf(stderr, "cltrace replay: --repeat 1 to 100000\n"), -1;
    if (!a->dir && !a->list)
        return usage(stderr), -1;
    return 0;
}

/* Each output against the captured one; 1 if any differs. */
int rp_report_outputs(struct rs_session *s, const struct rs_opts *o, FILE *f)
{
    int differs = 0;
    for (unsigned i = 0; i < s->c.nargs; i++) {
        const struct rf_arg *a = &s->c.arg[i];
        if (!a->writes)
            continue;
        struct rs_diff d;
        rs_compare(s, i, o->rel, o->abs, &d);
        fprintf(f, "  arg %u (%s, %zu bytes): ", i, a->type[0] ? a->type : rf_kind_name(a->kind), a->bytes);
        if (d.identical)
            fprintf(f, "identical\n");
        else if (!d.differs)
            fprintf(f, "same within the tolerance (max error absolute %.3g, relative %.3g)\n", d.max_abs, d.max_rel);
        else if (rs_is_float(a))
            fprintf(f, "DIFFERS at %zu elements, the first [%zu]: %.9g, captured %.9g (max error absolute %.3g, "
                       "relative %.3g)\n", d.count, d.first, d.got, d.want, d.max_abs, d.max_rel);
        else
            fprintf(f, "DIFFERS at %zu elements, the first [%zu]: %.0f, captured %.0f\n", d.count, d.first, d.got,
                    d.want);
        differs |= d.differs;
    }
    return differs;
}

static int replay(const struct rp_args *a)
{
    struct rs_session s;
    char err[6000];
    if (rs_open(&s, a->dir, &a->o, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace replay: %s: %s\n", a->dir, err);
        rs_close(&s);
        return 2;
    }
    const struct rf_capture *c = &s.c;
    const size_t *local = a->have_local ? a->local : c->local;
    int null = a->have_local ? 0 : c->local_null;
    char l[64], cl[64], g[64];
    rs_say_local(l, sizeof l, c->work_dim, local, null);
    rs_say_local(cl, sizeof cl, c->work_dim, c->local, c->local_null);
    rs_say_local(g, sizeof g, c->work_dim, c->global, 0);
    printf("replay of %s launch %llu (captured on %s / %s: global %s, local %s)\n", c->kernel,
           (unsigned long long)c->launch_n, c->platform, c->device, g, cl);
    printf("  on %s / %s: global %s, local %s, %u runs\n", s.platform, s.device, g, l, a->repeat);
    double *t = calloc(a->repeat, sizeof *t);
    int rc = !t ? 2 : rs_run(&s, local, null, a->repeat, t, err, sizeof err) ? 2 : 0;
    if (rc) {
        fprintf(stderr, "cltrace replay: %s: %s\n", a->dir, t ? err : "no memory");
    } else {
        double med = rs_median(t, a->repeat);
        printf("  device time: min %.3f us, median %.3f us\n", t[0] / 1e3, med / 1e3);
        rc = rp_report_outputs(&s, &a->o, stdout);
        printf("  float data compared within relative %g plus absolute %g (--tolerance)\n", a->o.rel, a->o.abs);
        printf("result: %s\n", rc ? "the outputs DIFFER from the captured ones" : "the outputs are the captured ones");
    }
    free(t);
    rs_close(&s);
    return rc;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "replay") && strcmp(cmd, "tune")) {
        fprintf(stderr, "usage: cltrace-replay replay|tune ... (run by cltrace replay, cltrace tune)\n");
        return 2;
    }
    struct rp_args a;
    int p = rp_parse(argc - 1, argv + 1, &a);
    if (p)
        return p > 0 ? 0 : 2;
    if (a.list)
        return list();
    if (!strcmp(cmd, "tune"))
        return rp_tune(&a);
    if (a.check)
        return rp_check(&a, argv[0]);
    if (a.emit)
        return rp_emit_c(&a);
    return replay(&a);
}
