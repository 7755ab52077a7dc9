/* cltrace tune DIR: the captured launch with every legal local size, each
 * run --repeat times (default 5) from the captured inputs, its outputs
 * checked against the captured ones, ranked by median device time.
 *
 * Legal: at most the device's and the kernel's work-group size and the
 * device's per-dimension limits; only the required size where the kernel
 * declares one (reqd_work_group_size); none when its local memory passes
 * the device's; dividing the global size in each dimension unless the
 * device (OpenCL 2.0 and later, non-uniform work-groups supported) and the
 * build (-cl-std=CL2.0 or later) allow a partial last group. With
 * --round-global each candidate's global size is rounded up to a multiple
 * of it instead, as an app that rounds its own does (only for kernels that
 * guard their index; the outputs are checked all the same).
 * The table goes to stdout (or JSON with --format json), the JSON always to
 * DIR/tune.json, where cltrace-report --tuned reads it. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "replay.h"

#define MAX_CAND 256
struct cand { size_t local[3], global[3]; int null, captured, valid, failed, tied; double min, median; };

static int add(struct cand *c, unsigned *n, const size_t *l, int null)
{
    for (unsigned i = 0; i < *n; i++)
        if (c[i].null == null && (null || !memcmp(c[i].local, l, sizeof c[i].local)))
            return (int)i;
    if (*n == MAX_CAND)
        return -1;
    memset(&c[*n], 0, sizeof c[*n]);
    if (l)
        memcpy(c[*n].local, l, sizeof c[*n].local);
    else
        c[*n].local[0] = c[*n].local[1] = c[*n].local[2] = 1;
    c[*n].null = null;
    return (int)(*n)++;
}

struct limits {
    size_t dev_max, kernel_max, item[3], reqd[3], preferred;
    cl_ulong local_mem, dev_local_mem;
    int non_uniform;
};

static void ask_limits(const struct rs_session *s, struct limits *L)
{
    memset(L, 0, sizeof *L);
    clGetDeviceInfo(s->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof L->dev_max, &L->dev_max, NULL);
    clGetDeviceInfo(s->dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof L->item, L->item, NULL);
    clGetDeviceInfo(s->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof L->dev_local_mem, &L->dev_local_mem, NULL);
    clGetKernelWorkGroupInfo(s->k, s->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof L->kernel_max, &L->kernel_max, NULL);
    clGetKernelWorkGroupInfo(s->k, s->dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof L->reqd, L->reqd, NULL);
    clGetKernelWorkGroupInfo(s->k, s->dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof L->preferred,
                             &L->preferred, NULL);
    clGetKernelWorkGroupInfo(s->k, s->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof L->local_mem, &L->local_mem, NULL);
    int v2 = strncmp(s->version, "OpenCL 1.", 9) != 0;
    cl_bool nu = v2;
    if (!strncmp(s->version, "OpenCL 3.", 9) &&
        clGetDeviceInfo(s->dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof nu, &nu, NULL) != CL_SUCCESS)
        nu = 0;
    const char *o = s->c.build_options;
    L->non_uniform = v2 && nu && (strstr(o, "-cl-std=CL2") || strstr(o, "-cl-std=CL3"));
    if (!L->kernel_max || L->kernel_max > L->dev_max)
        L->kernel_max = L->dev_max;
}

/* Sizes to try in one dimension: divisors of g (or, with a partial last
 * group allowed, powers of two and multiples of the preferred size too). */
static unsigned sizes_for(size_t g, size_t max, const struct limits *L, int divide, size_t *out, unsigned cap)
{
    unsigned n = 0;
    for (size_t v = 1; v <= max && n < cap; v++) {
        int pow2 = !(v & (v - 1)), pref = L->preferred && v % L->preferred == 0;
        if ((divide && g % v == 0) || (!divide && (pow2 || pref)))
            out[n++] = v;
    }
    return n;
}

static unsigned candidates(const struct rs_session *s, const struct limits *L, int round, struct cand *c)
{
    const struct rf_capture *cap = &s->c;
    unsigned n = 0;
    if (L->reqd[0]) {                             /* the kernel says which */
        add(c, &n, L->reqd, 0);
        return n;
    }
    if (L->dev_local_mem && L->local_mem > L->dev_local_mem)
        return 0;
    int divide = !L->non_uniform && !round;
    size_t v[3][64];
    unsigned nv[3] = { 1, 1, 1 };
    v[1][0] = v[2][0] = 1;
    for (unsigned d = 0; d < cap->work_dim; d++) {
        size_t max = L->item[d] ? L->item[d] : L->kernel_max;
        nv[d] = sizes_for(cap->global[d], max < L->kernel_max ? max : L->kernel_max, L, divide, v[d], 64);
    }
    for (unsigned x = 0; x < nv[0]; x++)
        for (unsigned y = 0; y < nv[1]; y++)
            for (unsigned z = 0; z < nv[2]; z++) {
                size_t l[3] = { v[0][x], v[1][y], v[2][z] };
                if (l[0] * l[1] * l[2] <= L->kernel_max)
                    add(c, &n, l, 0);
            }
    return n;
}

static void json_local(FILE *f, const char *key, unsigned dim, const size_t *l, int null)
{
    if (null) {
        fprintf(f, "\"%s\": null", key);
        return;
    }
    fprintf(f, "\"%s\": [", key);
    for (unsigned d = 0; d < dim; d++)
        fprintf(f, "%s%zu", d ? ", " : "", l[d]);
    fprintf(f, "]");
}

static void write_json(FILE *f, const struct rs_session *s, const struct limits *L, const struct cand *c,
                       unsigned n, int best, int captured, int round)
{
    const struct rf_capture *k = &s->c;
    fprintf(f, "{\n  \"cltrace_tune\": 1,\n  \"kernel\": \"%s\",\n  \"launch\": %llu,\n  \"platform\": \"%s\",\n"
               "  \"device\": \"%s\",\n  \"work_dim\": %u,\n  ", k->kernel, (unsigned long long)k->launch_n,
            s->platform, s->device, k->work_dim);
    json_local(f, "global", k->work_dim, k->global, 0);
    fprintf(f, ",\n  ");
    json_local(f, "captured_local", k->work_dim, k->local, k->local_null);
    fprintf(f, ",\n  \"round_global\": %s,\n  \"preferred_multiple\": %zu,\n  \"max_work_group_size\": %zu,\n",
            round ? "true" : "false", L->preferred, L->kernel_max);
    fprintf(f, "  \"candidates\": [\n");
    for (unsigned i = 0; i < n; i++) {
        fprintf(f, "    {");
        json_local(f, "local", k->work_dim, c[i].local, c[i].null);
        fprintf(f, ", ");
        json_local(f, "global", k->work_dim, c[i].global, 0);
        fprintf(f, ", \"captured\": %s, \"valid\": %s, \"failed\": %s, \"tied\": %s, \"min_ns\": %.0f, "
                   "\"median_ns\": %.0f}%s\n", c[i].captured ? "true" : "false", c[i].valid ? "true" : "false",
                c[i].failed ? "true" : "false", c[i].tied ? "true" : "false", c[i].min, c[i].median,
                i + 1 < n ? "," : "");
    }
    fprintf(f, "  ],\n  \"best\": %d,\n  \"captured\": %d", best, captured);
    if (best >= 0 && captured >= 0 && c[best].median > 0)
        fprintf(f, ",\n  \"speedup\": %.4f", c[captured].median / c[best].median);
    fprintf(f, "\n}\n");
}

static int by_median(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->valid != y->valid)
        return y->valid - x->valid;
    return x->median < y->median ? -1 : x->median > y->median;
}

/* The size to name, from candidates ranked by median: the fastest, unless
 * others tie with it (their least time at or under its median: at a few runs
 * each, no faster than noise: `tied`). Among those, the captured size (nothing
 * to change), else the fastest multiple of the preferred size, else the
 * fastest. A CPU device runs most sizes within a few % of each other, where
 * the fastest by median is any of them from run to run: local 1 or 4 named
 * by chance would be a wrong fix. -1 when no size ran valid. */
static int pick_best(struct cand *c, unsigned n, size_t preferred)
{
    if (!n || !c[0].valid)
        return -1;
    int captured = -1, multiple = -1;
    unsigned tied = 0;
    for (unsigned i = 0; i < n && c[i].valid; i++) {
        if (c[i].min > c[0].median)
            continue;
        c[i].tied = 1;
        tied++;
        if (c[i].captured && captured < 0)
            captured = (int)i;
        if (!c[i].null && preferred > 1 && c[i].local[0] % preferred == 0 && multiple < 0)
            multiple = (int)i;
    }
    c[0].tied = tied > 1;
    return captured >= 0 ? captured : multiple >= 0 ? multiple : 0;
}

/* Each candidate run `repeat` times: its median and least time, and whether
 * every output matched the captured one (the global size rounded up to it
 * with --round-global). */
static void run_candidates(struct rs_session *s, const struct rp_args *a, struct cand *c, unsigned n,
                           unsigned repeat)
{
    char err[6000];
    double *t = calloc(repeat, sizeof *t);
    const struct rf_capture saved = s->c;
    for (unsigned i = 0; t && i < n; i++) {
        for (unsigned d = 0; d < 3; d++) {
            size_t g = saved.global[d], l = c[i].null ? 1 : c[i].local[d];
            s->c.global[d] = a->round_global && !c[i].captured ? (g + l - 1) / l * l : g;
            c[i].global[d] = s->c.global[d];
        }
        if (rs_run(s, c[i].local, c[i].null, repeat, t, err, sizeof err) != 0) {
            c[i].failed = 1;
        } else {
            c[i].median = rs_median(t, repeat);
            c[i].min = t[0];
            c[i].valid = 1;
            for (unsigned j = 0; j < saved.nargs; j++) {
                struct rs_diff d;
                if (!saved.arg[j].writes)
                    continue;
                rs_compare(s, j, a->o.rel, a->o.abs, &d);
                c[i].valid &= !d.differs;
            }
        }
        s->c = saved;
    }
    free(t);
}

/* The table: each local size's times, the best against the captured one. */
static void print_tune(const struct rs_session *s, const struct rp_args *a, const struct limits *L,
                       const struct cand *c, unsigned n, unsigned repeat, int best, const struct cand *cap)
{
    const struct rf_capture *k = &s->c;
    char l[64], g[64];
    rs_say_local(g, sizeof g, k->work_dim, k->global, 0);
    printf("tune of %s launch %llu on %s / %s: global %s, %u local sizes, %u runs each\n", k->kernel,
           (unsigned long long)k->launch_n, s->platform, s->device, g, n, repeat);
    printf("  limits: work-group %zu, preferred multiple %zu%s%s\n", L->kernel_max, L->preferred,
           L->reqd[0] ? ", required by the kernel" : "",
           a->round_global ? "; global rounded up to each local size (--round-global)"
           : L->non_uniform ? "; a partial last group allowed" : "; each divides the global size");
    printf("  %-16s %14s %14s  %s\n", "local", "median (us)", "min (us)", "");
    for (unsigned i = 0; i < n; i++) {
        rs_say_local(l, sizeof l, k->work_dim, c[i].local, c[i].null);
        printf("  %-16s ", l);
        if (c[i].failed)
            printf("%14s %14s  %s\n", "-", "-", "the launch failed");
        else
            printf("%14.3f %14.3f  %s%s%s\n", c[i].median / 1e3, c[i].min / 1e3,
                   c[i].valid ? "" : "WRONG OUTPUT ", c[i].tied ? "tied " : "", c[i].captured ? "(captured)" : "");
    }
    unsigned tied = 0;
    for (unsigned i = 0; i < n; i++)
        tied += (unsigned)c[i].tied;
    if (best < 0 || cap->median <= 0)
        return;
    char cl[64];
    rs_say_local(l, sizeof l, k->work_dim, c[best].local, c[best].null);
    rs_say_local(cl, sizeof cl, k->work_dim, cap->local, cap->null);
    if (c[best].captured)
        printf("best: keep local %s: no local size measurably faster (%u tie within noise, each one's least "
               "time at or under the fastest's median, %.3f us)\n", cl, tied, c[0].median / 1e3);
    else
        printf("best: local %s, %.3f us against %.3f us captured (local %s): %.2fx%s\n", l, c[best].median / 1e3,
               cap->median / 1e3, cl, cap->median / c[best].median,
               best > 0 ? " (the fastest multiple of the preferred size among those tied within noise)" : "");
}

int rp_tune(const struct rp_args *a)
{
    struct rs_session s;
    char err[6000];
    if (rs_open(&s, a->dir, &a->o, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace tune: %s: %s\n", a->dir, err);
        rs_close(&s);
        return 2;
    }
    const struct rf_capture *k = &s.c;
    unsigned repeat = a->repeat == 10 ? 5 : a->repeat;   /* 10 is replay's default */
    struct limits L;
    ask_limits(&s, &L);
    static struct cand c[MAX_CAND];
    unsigned n = candidates(&s, &L, a->round_global, c);
    int cap_i = add(c, &n, k->local_null ? NULL : k->local, k->local_null);
    add(c, &n, NULL, 1);                          /* the driver's choice */
    if (!n || cap_i < 0) {
        fprintf(stderr, "cltrace tune: %s: no legal local size (the kernel's local memory %llu bytes, the "
                        "device's %llu)\n", a->dir, (unsigned long long)L.local_mem,
                (unsigned long long)L.dev_local_mem);
        rs_close(&s);
        return 2;
    }
    c[cap_i].captured = 1;
    run_candidates(&s, a, c, n, repeat);
    struct cand cap = c[cap_i];
    qsort(c, n, sizeof c[0], by_median);
    int best = pick_best(c, n, L.preferred), ci = -1;
    for (unsigned i = 0; i < n; i++)
        if (c[i].captured)
            ci = (int)i;
    char path[1200];
    snprintf(path, sizeof path, "%s/tune.json", a->dir);
    FILE *jf = fopen(path, "w");
    if (jf) {
        write_json(jf, &s, &L, c, n, best, ci, a->round_global);
        fclose(jf);
    }
    if (!strcmp(a->format, "json")) {
        write_json(stdout, &s, &L, c, n, best, ci, a->round_global);
    } else {
        print_tune(&s, a, &L, c, n, repeat, best, &cap);
        printf("(JSON: %s%s)\n", path, jf ? "" : " could not be written");
    }
    rs_close(&s);
    return best >= 0 ? 0 : 1;
}
