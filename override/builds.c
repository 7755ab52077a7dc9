/* Builds (override.h): a program's build options changed by its override's
 * `.options` file and by CLTRACE_OVERRIDE_OPTIONS; at a program's first
 * build its note for the trace (the hash, the file name, its kernels), and
 * with CLTRACE_PROGRAMS its file, its `.options` (the app's own) and a line
 * in `programs.txt`; a build an override broke: its log said. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/map.h"
#include "ov.h"

#define MAX_RULES 16
struct rule { char key[128], opts[512]; int add; unsigned matched; };
static struct rule rules[MAX_RULES];
static unsigned n_rules;
static char programs_dir[PATH_MAX - 128];

enum { I_BUILD, I_COMPILE, I_INFO, I_N };
static const char *const names_of[I_N] = { "clBuildProgram", "clCompileProgram", "clGetProgramBuildInfo" };
static void *_Atomic next[I_N];
static int fn_of[I_N];
#define NEXT(i, type) ((type)__atomic_load_n(&next[i], __ATOMIC_ACQUIRE))

int ov_rules_load(const char *spec, char *err, size_t cap)
{
    char copy[8192];
    snprintf(copy, sizeof copy, "%s", spec);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(l, '=');
        if (!eq || eq == l) {
            snprintf(err, cap, "--options %.100s: KERNEL=OPTIONS, HASH=OPTIONS or *=OPTIONS (+OPTIONS adds)", l);
            n_rules = 0;
            return -1;
        }
        if (n_rules == MAX_RULES) {
            snprintf(err, cap, "--options: at most %d", MAX_RULES);
            n_rules = 0;
            return -1;
        }
        struct rule *r = &rules[n_rules++];
        snprintf(r->key, sizeof r->key, "%.*s", (int)(eq - l), l);
        r->add = eq[1] == '+';
        snprintf(r->opts, sizeof r->opts, "%s", eq + 1 + r->add);
    }
    return 0;
}

/* ---- builds ---------------------------------------------------------------------- */

static int rule_matches(const struct rule *r, const struct ov_prog *p)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)p->hash);
    if (!strcmp(r->key, "*") || !strcmp(r->key, hex))
        return 1;
    for (unsigned i = 0; i < p->names.n; i++)
        if (!fnmatch(r->key, p->names.v[i], 0))
            return 1;
    return 0;
}

/* The app's own options: cltrace's -cl-kernel-arg-info taken off. */
static void apps_options(const char *passed, char *out, size_t cap)
{
    snprintf(out, cap, "%s", passed ? passed : "");
    size_t n = strlen(out), k = strlen("-cl-kernel-arg-info");
    if (ov_host.adds_arg_info() && n >= k && !strcmp(out + n - k, "-cl-kernel-arg-info")) {
        out[n - k] = 0;
        while (n > k && out[n - k - 1] == ' ')
            out[--n - k] = 0;
    }
}

/* The options the driver gets (malloc'd; NULL: the app's), *why what changed them. */
static char *options_for(struct ov_prog *p, const char *app, char *why, size_t cap)
{
    char *o = NULL;
    why[0] = 0;
    if (p->from) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", p->from);
        char *dot = strrchr(path, '.');
        size_t n;
        if (dot && (size_t)(dot - path) + 9 < sizeof path && (strcpy(dot, ".options"), (o = ov_read_all(path, &n)))) {
            for (char *s = o; *s; s++)
                *s = *s == '\n' || *s == '\r' ? ' ' : *s;
            for (size_t k = strlen(o); k && o[k - 1] == ' '; k--)
                o[k - 1] = 0;
            char own[1024];
            apps_options(app, own, sizeof own);
            if (!strcmp(o, own)) {          /* the app's own options: nothing changed */
                free(o);
                o = NULL;
            }
            if (o && app && strstr(app, "-cl-kernel-arg-info") && !strstr(o, "-cl-kernel-arg-info") &&
                ov_host.adds_arg_info()) {   /* cltrace's own addition stays */
                char *w = malloc(strlen(o) + 24);
                if (w)
                    sprintf(w, "%s -cl-kernel-arg-info", o);
                free(o);
                o = w;
            }
            if (o)
                snprintf(why, cap, "%.200s", path);
        }
    }
    for (unsigned i = 0; i < n_rules; i++) {
        if (!rule_matches(&rules[i], p))
            continue;
        const char *base = o ? o : app ? app : "";
        char *w = malloc(strlen(base) + strlen(rules[i].opts) + 2);
        if (!w)
            break;
        if (rules[i].add)
            sprintf(w, "%s%s%s", base, base[0] ? " " : "", rules[i].opts);
        else
            strcpy(w, rules[i].opts);
        if (!rules[i].add && app && strstr(app, "-cl-kernel-arg-info") && ov_host.adds_arg_info() &&
            !strstr(w, "-cl-kernel-arg-info")) {
            char *x = malloc(strlen(w) + 24);
            if (x)
                sprintf(x, "%s -cl-kernel-arg-info", w);
            free(w);
            w = x;
        }
        free(o);
        o = w;
        rules[i].matched++;
        size_t k = strlen(why);
        snprintf(why + k, cap - k, "%s--options %s=%s%s", k ? ", " : "", rules[i].key, rules[i].add ? "+" : "",
                 rules[i].opts);
    }
    return o;
}

static void write_out(struct ov_prog *p, const char *file, const char *options)
{
    char path[PATH_MAX], kernels[1024] = "";
    for (unsigned i = 0, k = 0; i < p->names.n && k < sizeof kernels - 70; i++)
        k += (size_t)snprintf(kernels + k, sizeof kernels - k, "%s%s", i ? " " : "", p->names.v[i]);
    snprintf(path, sizeof path, "%s/%s", programs_dir, file);
    struct stat st;
    if (stat(path, &st) == 0)       /* the same program again (its hash names it) */
        return;
    int bad = ov_write_all(path, p->text, p->n);
    char *dot = strrchr(path, '.');
    strcpy(dot, ".options");
    char line[1100];
    snprintf(line, sizeof line, "%s\n", options);
    bad |= ov_write_all(path, line, strlen(line));
    snprintf(path, sizeof path, "%s/programs.txt", programs_dir);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s\tkernels: %s\toptions: %s\n", file, kernels[0] ? kernels : "?", options[0] ? options : "none");
        bad |= fclose(f) != 0;
    }
    if (bad)
        ov_host.say("programs: %s/%s not written: %s", programs_dir, file, strerror(errno));
    else
        ov_host.say("program %s written to %s/%s (kernels: %s)", p->names.n ? p->names.v[0] : "?", programs_dir,
                    file, kernels[0] ? kernels : "?");
}

/* Kernel names from the driver, where the text gave none (IL, binaries). */
static void names_from_driver(struct ov_prog *p, void *program)
{
    char buf[2048];
    if (p->names.n || OV_CL(clGetProgramInfo)(program, CL_PROGRAM_KERNEL_NAMES, sizeof buf, buf, NULL) != CL_SUCCESS)
        return;
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t && p->names.n < OV_MAX_NAMES;
         t = strtok_r(NULL, ";", &save))
        snprintf(p->names.v[p->names.n++], CLT_KERNEL_NAME_MAX, "%s", t);
}

static void build_failed(struct ov_prog *p, void *program, const cl_device_id *devs, uint32_t nd, int32_t r,
                         const char *file)
{
    cl_device_id dev = nd && devs ? devs[0] : NULL;
    if (!dev)
        OV_CL(clGetProgramInfo)(program, CL_PROGRAM_DEVICES, sizeof dev, &dev, NULL);
    char log[4096] = "", first[200] = "";
    OV_CL(clGetProgramBuildInfo)(program, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    const char *s = log;
    while (*s == '\n' || *s == ' ')
        s++;
    snprintf(first, sizeof first, "%.*s", (int)strcspn(s, "\n"), s);
    char text[320];
    snprintf(text, sizeof text, "%.120s did not build (error %d): %.150s", p->from ? p->from : file, r,
             first[0] ? first : "no build log");
    ov_host.note(program, p->hash, OV_FAILED, p->from ? p->from : file, text);
    ov_host.say("%s; its build log:\n%s", text, log[0] ? log : "(empty)");
}

static void built(void *program, const cl_device_id *devs, uint32_t nd, const char *passed, const char *used,
                  const char *why, int32_t r, int async)
{
    struct ov_prog *p = ov_prog_find(program);
    pthread_mutex_lock(&ov_lock);
    int first = p && !p->built++;
    pthread_mutex_unlock(&ov_lock);
    if (!p)
        return;
    if (r == CL_SUCCESS && !async)
        names_from_driver(p, program);
    char file[CLT_KERNEL_NAME_MAX + 32], options[1024], text[320];
    ov_file_name(p, file, sizeof file);
    apps_options(passed, options, sizeof options);
    if (first) {
        size_t k = (size_t)snprintf(text, sizeof text, "%u kernel%s:", p->names.n, p->names.n == 1 ? "" : "s");
        for (unsigned i = 0; i < p->names.n && k < sizeof text - 70; i++)
            k += (size_t)snprintf(text + k, sizeof text - k, " %s", p->names.v[i]);
        ov_host.note(program, p->hash, OV_PROGRAM, file, text);
        if (programs_dir[0] && p->text)
            write_out(p, file, options);
        free(p->text);
        p->text = NULL;
    }
    if (used) {
        char *own = strdup(options);
        pthread_mutex_lock(&ov_lock);
        free(p->own_options);
        p->own_options = own;
        pthread_mutex_unlock(&ov_lock);
        snprintf(text, sizeof text, "build options '%.100s' instead of '%.80s' (%.100s)", used, options, why);
        ov_host.note(program, p->hash, OV_OPTIONS, file, text);
    }
    if (r != CL_SUCCESS && !async && (p->from || used))
        build_failed(p, program, devs, nd, r, file);
    ov_prog_put(p);
}

static int32_t ov_build(void *program, uint32_t nd, const cl_device_id *devs, const char *options,
                        void (*notify)(cl_program, void *), void *ud)
{
    if (!ov_host.apps_call(fn_of[I_BUILD]))
        return NEXT(I_BUILD, __typeof__(&clBuildProgram))(program, nd, devs, options, notify, ud);
    struct ov_prog *p = ov_prog_find(program);
    char why[512];
    char *use = p ? options_for(p, options, why, sizeof why) : NULL;
    int32_t r = NEXT(I_BUILD, __typeof__(&clBuildProgram))(program, nd, devs, use ? use : options, notify, ud);
    built(program, devs, nd, options, use, why, r, notify != NULL);
    free(use);
    if (p)
        ov_prog_put(p);
    return r;
}

static int32_t ov_compile(void *program, uint32_t nd, const cl_device_id *devs, const char *options, uint32_t nh,
                          const cl_program *headers, const char **hnames, void (*notify)(cl_program, void *), void *ud)
{
    typedef __typeof__(&clCompileProgram) compile_t;
    if (!ov_host.apps_call(fn_of[I_COMPILE]))
        return NEXT(I_COMPILE, compile_t)(program, nd, devs, options, nh, headers, hnames, notify, ud);
    struct ov_prog *p = ov_prog_find(program);
    char why[512];
    char *use = p ? options_for(p, options, why, sizeof why) : NULL;
    int32_t r = NEXT(I_COMPILE, compile_t)(program, nd, devs, use ? use : options, nh, headers, hnames, notify, ud);
    built(program, devs, nd, options, use, why, r, notify != NULL);
    free(use);
    if (p)
        ov_prog_put(p);
    return r;
}


/* The app reading its program's build options back gets its own, not
 * those the override gave the driver. */
static int32_t ov_build_info(void *program, cl_device_id dev, cl_program_build_info what, size_t size, void *value,
                             size_t *size_ret)
{
    typedef __typeof__(&clGetProgramBuildInfo) info_t;
    struct ov_prog *p = what == CL_PROGRAM_BUILD_OPTIONS && ov_host.apps_call(fn_of[I_INFO]) ? ov_prog_find(program)
                                                                                             : NULL;
    char own[1024];
    pthread_mutex_lock(&ov_lock);
    int mine = p && p->own_options;
    if (mine)
        snprintf(own, sizeof own, "%s", p->own_options);
    pthread_mutex_unlock(&ov_lock);
    if (p)
        ov_prog_put(p);
    if (!mine)
        return NEXT(I_INFO, info_t)(program, dev, what, size, value, size_ret);
    int32_t r = NEXT(I_INFO, info_t)(program, dev, what, 0, NULL, NULL);   /* the driver's checks, its errors */
    if (r != CL_SUCCESS)
        return r;
    size_t n = strlen(own) + 1;
    if (value && size < n)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, own, n);
    if (size_ret)
        *size_ret = n;
    return CL_SUCCESS;
}

/* ---- load, interpose, exit ------------------------------------------------------- */

void ov_builds_load(const char *dir)
{
    for (unsigned i = 0; i < I_N; i++)
        fn_of[i] = ov_host.fn_id(names_of[i]);
    if (!dir || !dir[0])
        return;
    snprintf(programs_dir, sizeof programs_dir, "%s", dir);
    if (mkdir(programs_dir, 0755) != 0 && errno != EEXIST) {
        ov_host.say("--programs %s: %s; no programs written", programs_dir, strerror(errno));
        programs_dir[0] = 0;
    }
}

void *ov_builds_interpose(const char *fn, void *real)
{
    static void *const with[I_N] = { (void *)ov_build, (void *)ov_compile, (void *)ov_build_info };
    void *mine = ov_stand_in(fn, real, I_N, names_of, with, next);
    return mine ? mine : real;
}

void ov_rules_exit(void)
{
    for (unsigned i = 0; i < n_rules; i++)
        if (!rules[i].matched) {
            char text[320];
            snprintf(text, sizeof text, "--options %.100s=...: no program built with a kernel or hash %.100s",
                     rules[i].key, rules[i].key);
            ov_host.note(NULL, 0, OV_FAILED, "", text);
            ov_host.say("%s", text);
        }
}
