/* cltrace try [change] [--runs N] [--tolerance X] [--format F] [--keep DIR]
 * -- program [args...]: the program run as it is and with the change,
 * interleaved (as it is first in odd pairs, second in even ones, so a
 * machine warming up or slowing down weighs on both), each run under
 * cltrace with fingerprints of the kernels the change touches and of what
 * the app reads back; then the verdict (compare.c, print.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/kernel_names.h"
#include "try.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace try [--override FILE|DIR] [--options KERNEL=OPTS]... [--local KERNEL=X[,Y[,Z]]]...\n"
               "                  [--runs N] [--warmup N] [--tolerance REL[,ABS]] [--format text|json|markdown]\n"
               "                  [--keep DIR] [--] program [args...]\n\n"
               "Runs the program as it is and with the change, N times each, interleaved (default 3), each\n"
               "under cltrace with fingerprints of the kernels the change touches and of the buffers the\n"
               "program reads back, and prints the verdict first: device time per kernel and for the run,\n"
               "and wall time, before -> after with the runs' spread; whether the results are identical,\n"
               "within the tolerance, or diverge (the first differing command); both exit statuses.\n\n"
               "The change (as cltrace takes it; cltrace --help says more):\n"
               "  --override FILE|DIR     the program's source from FILE (write it out first with\n"
               "                          cltrace --programs DIR -- program; edit; keep its kernels' names)\n"
               "  --options KERNEL=OPTS   build options (+OPTS adds to the program's)\n"
               "  --local KERNEL=X[,Y[,Z]]  the local size of KERNEL's launches\n\n"
               "  --runs N          pairs of runs (default 3, at most %d)\n"
               "  --warmup N        pairs run first and not measured (default 1): caches of compiled\n"
               "                    kernels filled for both\n"
               "  --tolerance REL[,ABS]  float results within this count as the same answer\n"
               "  --format F        text (default), json (verdict, kernels, wall, results, runs), markdown\n"
               "  --keep DIR        keep each run's traces and output in DIR (default: a temporary folder,\n"
               "                    removed)\n\n"
               "Exit status: 0 not slower and the same answer; 1 slower, or a different answer;\n"
               "2 could not try (the change matched nothing or did not build, the program failed).\n",
            TRY_MAX_RUNS);
}

/* dst += sep v (no sep when dst is empty); what does not fit whole is left out. */
static void append(char *dst, size_t cap, const char *sep, const char *v)
{
    size_t n = strlen(dst), a = n ? strlen(sep) : 0, b = strlen(v);
    if (n + a + b + 1 > cap)
        return;
    memcpy(dst + n, sep, a);
    memcpy(dst + n + a, v, b + 1);
}

/* The kernels an override file (or a folder's .cl files) defines; -1 when
 * some cannot be told (IL, binaries): then every kernel is fingerprinted. */
static int override_kernels(const char *path, char *spec, size_t cap, unsigned *n)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;               /* the shim says so; the runs show it */
    const char *dot = strrchr(path, '.');
    if (S_ISDIR(st.st_mode) || !dot || strcmp(dot, ".cl") != 0)
        return -1;
    FILE *f = fopen(path, "rb");
    char *src = malloc(1 << 20);
    size_t len = f && src ? fread(src, 1, (1 << 20) - 1, f) : 0;
    if (f)
        fclose(f);
    char names[16][CLT_KERNEL_NAME_MAX];
    unsigned k = src ? clt_kernel_names(src, len, names, 16) : 0;
    free(src);
    if (k > 12)
        return -1;
    for (unsigned i = 0; i < k; i++, (*n)++)
        append(spec, cap, ",", names[i]);
    return 0;
}

/* Which commands each run fingerprints: the kernels the change may touch,
 * and what the app reads back. */
static void fingerprint_spec(const struct try_opts *o, char *spec, size_t cap)
{
    unsigned n = 0;
    int every = 0;
    spec[0] = 0;
    if (o->override)
        every |= override_kernels(o->override, spec, cap, &n) != 0;
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", o->local ? o->local : "");
    for (char *save = NULL, *it = strtok_r(copy, ";", &save); it; it = strtok_r(NULL, ";", &save), n++) {
        char *eq = strrchr(it, '=');
        if (eq)
            *eq = 0;
        append(spec, cap, ",", it);
    }
    snprintf(copy, sizeof copy, "%s", o->options ? o->options : "");
    for (char *save = NULL, *it = strtok_r(copy, "\n", &save); it; it = strtok_r(NULL, "\n", &save), n++) {
        char *eq = strchr(it, '=');
        if (eq)
            *eq = 0;
        every |= strlen(it) == 16 || !strcmp(it, "*");     /* a hash, or every program: its kernels unknown here */
        append(spec, cap, ",", it);
    }
    if (every || n > 14)
        snprintf(spec, cap, "all");
    else
        append(spec, cap, ",", "clEnqueueReadBuffer");
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void add_env(const char **slot, char *store, size_t cap, const char *sep, const char *v)
{
    append(store, cap, sep, v);
    *slot = store;
}

/* The options into o (the change's flags kept as the user gave them);
 * the program's index in argv; -1 after --help; -2 wrong (said). */
static int read_options(int argc, char **argv, struct try_opts *o, const char **keep)
{
    static char locals[2048], options[4096];
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!v) {
            fprintf(stderr, "cltrace try: %s needs a value\n", a);
            return -2;
        } else if (!strcmp(a, "--override")) {
            o->override = v;
        } else if (!strcmp(a, "--local")) {
            add_env(&o->local, locals, sizeof locals, ";", v);
        } else if (!strcmp(a, "--options")) {
            add_env(&o->options, options, sizeof options, "\n", v);
        } else if (!strcmp(a, "--runs")) {
            o->runs = (unsigned)atoi(v);
        } else if (!strcmp(a, "--warmup")) {
            o->warmup = (unsigned)atoi(v);
        } else if (!strcmp(a, "--tolerance")) {
            o->tolerance = v;
        } else if (!strcmp(a, "--format")) {
            o->format = v;
        } else if (!strcmp(a, "--keep")) {
            *keep = v;
        } else {
            fprintf(stderr, "cltrace try: unknown option %s\n", a);
            usage(stderr);
            return -2;
        }
        if (strcmp(a, "--runs") && strcmp(a, "--warmup") && strcmp(a, "--tolerance") && strcmp(a, "--format") &&
            strcmp(a, "--keep"))
            append(o->change, sizeof o->change, " ", a), append(o->change, sizeof o->change, " ", v);
        i++;
    }
    return i;
}

/* The runs' folder: --keep's, or a new one under TMPDIR. 0, or 2 said. */
static int work_folder(struct try_opts *o, const char *keep)
{
    if (keep) {
        snprintf(o->work, sizeof o->work, "%s", keep);
        if (mkdir(o->work, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "cltrace try: --keep %s: %s\n", keep, strerror(errno));
            return 2;
        }
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(o->work, sizeof o->work, "%s/cltrace-try.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(o->work)) {
        fprintf(stderr, "cltrace try: %s: %s\n", o->work, strerror(errno));
        return 2;
    }
    return 0;
}

/* Warm-up pairs (not measured: caches of compiled kernels filled), then the
 * runs, as it is and with the change interleaved, each pair's order swapped. */
static void run_all(const struct try_opts *o, const char *spec, struct try_result *res)
{
    for (unsigned r = 0; r < o->warmup && r < 4; r++) {
        struct try_run w;
        try_run_once(o, AS_IS, 90 + r, spec, &w);
        try_run_once(o, CHANGED, 90 + r, spec, &w);
    }
    for (unsigned r = 0; r < o->runs; r++) {
        int first = r % 2 ? CHANGED : AS_IS;
        for (int k = 0; k < 2; k++) {
            int which = k ? !first : first;
            if (try_run_once(o, which, r, spec, &res->run[which][r]) != 0) {
                res->exit = 2;
                snprintf(res->could_not, sizeof res->could_not, "the program could not be run under cltrace");
                return;
            }
        }
    }
}

int main(int argc, char **argv)
{
    static struct try_opts o;
    static struct try_result res;
    const char *keep = NULL;
    o.runs = 3;
    o.warmup = 1;
    o.format = "text";
    int i = read_options(argc, argv, &o, &keep);
    if (i < 0)
        return i == -1 ? 0 : 2;
    if (i >= argc || !o.change[0] || o.runs < 1 || o.runs > TRY_MAX_RUNS ||
        (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "markdown"))) {
        fprintf(stderr, "cltrace try: %s\n", i >= argc ? "no program to run" : !o.change[0]
                ? "nothing to try: give --override, --options or --local"
                : o.runs < 1 || o.runs > TRY_MAX_RUNS ? "--runs: 1 to 20" : "--format: text, json or markdown");
        usage(stderr);
        return 2;
    }
    o.argv = argv + i;
    struct stat st;
    if (o.override && stat(o.override, &st) != 0) {
        fprintf(stderr, "cltrace try: --override %s: %s\n", o.override, strerror(errno));
        return 2;
    }
    if (work_folder(&o, keep) != 0)
        return 2;
    char spec[1024];
    fingerprint_spec(&o, spec, sizeof spec);
    res.runs = o.runs;
    run_all(&o, spec, &res);
    if (!res.could_not[0])
        try_compare(&o, &res);
    try_print(&o, &res);
    if (!keep)
        nftw(o.work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return res.exit;
}
