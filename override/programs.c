/* Programs out (CLTRACE_PROGRAMS) and in (CLTRACE_OVERRIDE,
 * CLTRACE_OVERRIDE_OPTIONS), and every program's hash in the trace.
 *
 * A program is known by the XXH3-64 hash of what the app created it from
 * (its source strings joined, its IL, or its binaries), computed when the
 * app creates it; its file name is the first kernel's name and that hash
 * (`nbody_naive-1f0c9d2e3a4b5c6d.cl`, `.spv`, `.bin`). At its first build
 * the trace gets a note (OV_PROGRAM: the hash, the file name, its kernels),
 * and with CLTRACE_PROGRAMS the file, its `.options` (the app's own build
 * options) and a line in `programs.txt` are written.
 *
 * An override replaces what the driver is given, never what is recorded:
 * the app's create call is passed the file's source (IL, binary) instead of
 * its own, when the file's name carries the program's hash, or (one file
 * without a hash in its name) when it defines the same kernels. Its build
 * gets the options of a `.options` file beside it, else the app's; then
 * CLTRACE_OVERRIDE_OPTIONS adds to them (`+`) or replaces them. The app
 * sees what its own program would give: same kernel names and arguments if
 * the edit kept them, the driver's own error codes. */
#include <CL/cl.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/digest.h"
#include "common/kernel_names.h"
#include "common/map.h"
#include "ov.h"

struct ov_host ov_host;
pthread_mutex_t ov_lock = PTHREAD_MUTEX_INITIALIZER;
const char *const ov_ext[] = { "cl", "spv", "bin" };
static const char *const kind_words[] = { "source", "IL", "binary" };

#define MAX_FILES 256
struct file {                  /* an override on disk */
    char path[PATH_MAX];
    enum ov_kind kind;
    int has_hash;
    uint64_t hash;
    struct ov_names names;     /* a source's kernels */
    unsigned matched;
};

static struct file *files;
static unsigned n_files;
static int one_file;           /* CLTRACE_OVERRIDE named a file, not a folder */
static char override_spec[PATH_MAX];
static struct clt_map progs;   /* handle -> struct ov_prog */
static int on;

/* ---- files ----------------------------------------------------------------- */

void *ov_read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap + 1);
    for (size_t got; b && (got = fread(b + len, 1, cap - len, f)) > 0;)
        if ((len += got) == cap) {
            char *nb = realloc(b, (cap *= 2) + 1);
            if (!nb)
                free(b);
            b = nb;
        }
    fclose(f);
    if (b)
        b[len] = 0;
    *n = len;
    return b;
}

int ov_write_all(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* NAME-<16 hex>.EXT: the hash; 0 when the name has none. */
static int hash_in_name(const char *path, uint64_t *hash)
{
    const char *base = strrchr(path, '/'), *dash, *dot;
    base = base ? base + 1 : path;
    if (!(dot = strrchr(base, '.')) || dot - base < 17)
        return 0;
    dash = dot - 17;
    if (*dash != '-')
        return 0;
    char hex[17];
    memcpy(hex, dash + 1, 16);
    hex[16] = 0;
    char *end;
    *hash = strtoull(hex, &end, 16);
    return *end == 0;
}

static int kind_of(const char *path, enum ov_kind *k)
{
    const char *dot = strrchr(path, '.');
    for (unsigned i = 0; dot && i < 3; i++)
        if (!strcmp(dot + 1, ov_ext[i])) {
            *k = (enum ov_kind)i;
            return 1;
        }
    return 0;
}

static void add_file(const char *path)
{
    enum ov_kind k;
    if (!kind_of(path, &k) || n_files == MAX_FILES)
        return;
    struct file *f = &files[n_files];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    f->kind = k;
    f->has_hash = hash_in_name(path, &f->hash);
    if (k == OV_K_SOURCE) {
        size_t n;
        char *src = ov_read_all(path, &n);
        if (!src) {
            ov_host.say("--override %s: %s", path, strerror(errno));
            return;
        }
        f->names.n = clt_kernel_names(src, n, f->names.v, OV_MAX_NAMES);
        free(src);
    }
    n_files++;
}

static int load_overrides(const char *spec)
{
    struct stat st;
    if (stat(spec, &st) != 0) {
        ov_host.say("--override %s: %s; nothing overridden", spec, strerror(errno));
        return -1;
    }
    files = calloc(MAX_FILES, sizeof *files);
    if (!files)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        one_file = 1;
        add_file(spec);
        if (!n_files) {
            ov_host.say("--override %s: a .cl, .spv or .bin file (or a folder of them); nothing overridden", spec);
            return -1;
        }
    }
    snprintf(override_spec, sizeof override_spec, "%s", spec);
    if (one_file)
        return 0;
    DIR *d = opendir(spec);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[PATH_MAX];
        uint64_t h;
        snprintf(path, sizeof path, "%s/%s", spec, e->d_name);
        if (hash_in_name(path, &h))   /* in a folder, only named files: NAME-HASH.EXT */
            add_file(path);
    }
    if (d)
        closedir(d);
    return 0;
}

/* "KEY=[+]OPTIONS" lines (the launcher joins its --options with newlines). */
/* ---- the program a create call makes --------------------------------------- */

static const struct file *match(uint64_t hash, const struct ov_names *names)
{
    for (unsigned i = 0; i < n_files; i++)
        if (files[i].has_hash && files[i].hash == hash)
            return &files[i];
    if (!one_file || files[0].has_hash || !names->n || files[0].names.n != names->n)
        return NULL;
    for (unsigned i = 0; i < names->n; i++) {      /* one file: the same kernels, in any order */
        unsigned j = 0;
        while (j < names->n && strcmp(files[0].names.v[j], names->v[i]))
            j++;
        if (j == names->n)
            return NULL;
    }
    return &files[0];
}

void ov_file_name(const struct ov_prog *p, char *out, size_t cap)
{
    snprintf(out, cap, "%s-%016llx.%s", p->names.n ? p->names.v[0] : "program", (unsigned long long)p->hash,
             ov_ext[p->kind]);
}

/* A new program: kept by handle (its text until written), or NULL. */
static struct ov_prog *prog_new(enum ov_kind k, void *text, size_t n)
{
    struct ov_prog *p = calloc(1, sizeof *p);
    if (!p) {
        free(text);
        return NULL;
    }
    p->kind = k;
    p->text = text;
    p->n = n;
    p->hash = clt_hash(text, n);
    if (k == OV_K_SOURCE)
        p->names.n = clt_kernel_names(text, n, p->names.v, OV_MAX_NAMES);
    if (p->names.n > OV_MAX_NAMES)
        p->names.n = OV_MAX_NAMES;
    return p;
}

static void prog_free(struct ov_prog *p)
{
    free(p->text);
    free(p->own_options);
    free(p);
}

/* Drops one reference, ov_lock held; the last frees it. */
static void prog_unref(struct ov_prog *p)
{
    if (p && --p->refs <= 0)
        prog_free(p);
}

static void prog_keep(void *handle, struct ov_prog *p)
{
    if (!handle) {
        prog_free(p);
        return;
    }
    p->refs = 1;                 /* the table's */
    pthread_mutex_lock(&ov_lock);
    prog_unref(clt_map_del(&progs, (uint64_t)(uintptr_t)handle));   /* the driver reused a released program's handle */
    if (clt_map_put(&progs, (uint64_t)(uintptr_t)handle, p) != 0)
        prog_unref(p);
    pthread_mutex_unlock(&ov_lock);
}

struct ov_prog *ov_prog_find(void *handle)
{
    pthread_mutex_lock(&ov_lock);
    struct ov_prog *p = clt_map_get(&progs, (uint64_t)(uintptr_t)handle);
    if (p)
        p->refs++;
    pthread_mutex_unlock(&ov_lock);
    return p;
}

void ov_prog_put(struct ov_prog *p)
{
    pthread_mutex_lock(&ov_lock);
    prog_unref(p);
    pthread_mutex_unlock(&ov_lock);
}

enum { I_SOURCE, I_BINARY, I_IL, I_N };
static const char *const names_of[I_N] = { "clCreateProgramWithSource", "clCreateProgramWithBinary",
                                           "clCreateProgramWithIL" };
static void *_Atomic next[I_N];
static int fn_of[I_N];
#define NEXT(i, type) ((type)__atomic_load_n(&next[i], __ATOMIC_ACQUIRE))

/* The app's program replaced by f: the program made from f (NULL and *err
 * the driver's code when it could not be), its devices the context's when
 * f is a binary. Through the entry points below this folder's: the driver
 * (this call is still the app's). */
static void *create_from(const struct file *f, void *ctx, int32_t *err)
{
    size_t n;
    void *bytes = ov_read_all(f->path, &n);
    void *made = NULL;
    if (!bytes) {
        *err = CL_INVALID_VALUE;
        return NULL;
    }
    if (f->kind == OV_K_SOURCE) {
        const char *s = bytes;
        made = NEXT(I_SOURCE, __typeof__(&clCreateProgramWithSource))(ctx, 1, &s, NULL, err);
    } else if (f->kind == OV_K_IL && next[I_IL]) {
        made = NEXT(I_IL, __typeof__(&clCreateProgramWithIL))(ctx, bytes, n, err);
    } else if (f->kind == OV_K_BINARY) {
        cl_device_id devs[16];
        size_t got = 0;
        if (OV_CL(clGetContextInfo)(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &got) == CL_SUCCESS && got) {
            cl_uint nd = (cl_uint)(got / sizeof devs[0]);
            size_t lens[16];
            const unsigned char *bins[16];
            for (cl_uint i = 0; i < nd; i++)
                lens[i] = n, bins[i] = bytes;
            made = NEXT(I_BINARY, __typeof__(&clCreateProgramWithBinary))(ctx, nd, devs, lens, bins, NULL, err);
        }
    }
    free(bytes);
    return made;
}

/* What every create interposer does once it has the app's bytes: the
 * override's program if one matches (else the app's, through make_own). */
static void *created(void *ctx, struct ov_prog *p, int32_t *err, void *(*make_own)(const void *), const void *args)
{
    const struct file *f = p ? match(p->hash, &p->names) : NULL;
    void *made = NULL;
    int32_t e = CL_SUCCESS;
    if (f && (made = create_from(f, ctx, &e))) {
        p->from = f->path;
        pthread_mutex_lock(&ov_lock);
        ((struct file *)f)->matched++;
        pthread_mutex_unlock(&ov_lock);
        char text[320];
        snprintf(text, sizeof text, "program %016llx created from %.200s instead of the app's %s",
                 (unsigned long long)p->hash, f->path, kind_words[p->kind]);
        ov_host.note(NULL, p->hash, OV_SOURCE, f->path, text);
        if (err)
            *err = CL_SUCCESS;
    } else {
        if (f) {
            char text[320];
            snprintf(text, sizeof text, "%.200s not used for program %016llx: %s", f->path, (unsigned long long)p->hash,
                     e == CL_INVALID_VALUE ? "cannot be read" : "the driver would not create a program from it");
            ov_host.say("%s; the app's own program is used", text);
            ov_host.note(NULL, p->hash, OV_FAILED, f->path, text);
        }
        made = make_own(args);
    }
    if (p)
        prog_keep(made, p);
    return made;
}

/* ---- the interposers ---------------------------------------------------------- */


struct source_args { void *ctx; uint32_t count; const char **strings; const size_t *lengths; int32_t *err; };
static void *own_source(const void *a_)
{
    const struct source_args *a = a_;
    return NEXT(I_SOURCE, __typeof__(&clCreateProgramWithSource))(a->ctx, a->count, a->strings, a->lengths, a->err);
}

static void *ov_source(void *ctx, uint32_t count, const char **strings, const size_t *lengths, int32_t *err)
{
    struct source_args a = { ctx, count, strings, lengths, err };
    if (!ov_host.apps_call(fn_of[I_SOURCE]) || !strings || !count)
        return own_source(&a);
    size_t total = 0;
    for (uint32_t i = 0; i < count; i++)
        total += strings[i] ? (lengths && lengths[i] ? lengths[i] : strlen(strings[i])) : 0;
    char *text = malloc(total + 1), *w = text;
    for (uint32_t i = 0; text && i < count; i++) {
        size_t n = strings[i] ? (lengths && lengths[i] ? lengths[i] : strlen(strings[i])) : 0;
        memcpy(w, strings[i], n);
        w += n;
    }
    if (text)
        *w = 0;
    return created(ctx, text ? prog_new(OV_K_SOURCE, text, total) : NULL, err, own_source, &a);
}

struct binary_args {
    void *ctx; uint32_t nd; const cl_device_id *devs; const size_t *lens; const unsigned char **bins;
    int32_t *status, *err;
};
static void *own_binary(const void *a_)
{
    const struct binary_args *a = a_;
    return NEXT(I_BINARY, __typeof__(&clCreateProgramWithBinary))(a->ctx, a->nd, a->devs, a->lens, a->bins,
                                                                  a->status, a->err);
}

static void *ov_binary(void *ctx, uint32_t nd, const cl_device_id *devs, const size_t *lens,
                       const unsigned char **bins, int32_t *status, int32_t *err)
{
    struct binary_args a = { ctx, nd, devs, lens, bins, status, err };
    if (!ov_host.apps_call(fn_of[I_BINARY]) || !nd || !lens || !bins)
        return own_binary(&a);
    size_t total = 0;
    for (uint32_t i = 0; i < nd; i++)
        total += bins[i] ? lens[i] : 0;
    unsigned char *text = malloc(total ? total : 1), *w = text;
    for (uint32_t i = 0; text && i < nd; i++)
        if (bins[i])
            memcpy(w, bins[i], lens[i]), w += lens[i];
    struct ov_prog *p = text ? prog_new(OV_K_BINARY, text, total) : NULL;
    if (p && bins[0])               /* the file holds the first device's */
        p->n = lens[0];
    void *made = created(ctx, p, err, own_binary, &a);
    if (p && p->from && status)    /* made from the override: each device's binary "loaded" */
        for (uint32_t i = 0; i < nd; i++)
            status[i] = CL_SUCCESS;
    return made;
}

struct il_args { void *ctx; const void *il; size_t len; int32_t *err; };
static void *own_il(const void *a_)
{
    const struct il_args *a = a_;
    return NEXT(I_IL, __typeof__(&clCreateProgramWithIL))(a->ctx, a->il, a->len, a->err);
}

static void *ov_il(void *ctx, const void *il, size_t len, int32_t *err)
{
    struct il_args a = { ctx, il, len, err };
    if (!ov_host.apps_call(fn_of[I_IL]) || !il || !len)
        return own_il(&a);
    void *text = malloc(len);
    if (text)
        memcpy(text, il, len);
    return created(ctx, text ? prog_new(OV_K_IL, text, len) : NULL, err, own_il, &a);
}

/* ---- load, interpose, exit ------------------------------------------------------- */

void ov_load(const struct ov_options *o, const struct ov_host *host)
{
    ov_host = *host;
    for (unsigned i = 0; i < I_N; i++)
        fn_of[i] = ov_host.fn_id(names_of[i]);
    char err[256];
    ov_builds_load(o->programs);
    if (o->override && o->override[0])
        load_overrides(o->override);
    if (o->options && o->options[0] && ov_rules_load(o->options, err, sizeof err) != 0)
        ov_host.say("%s; no options changed", err);
    if (o->local && o->local[0] && ov_local_load(o->local, err, sizeof err) != 0)
        ov_host.say("%s; no local size set", err);
    on = 1;
}

void *ov_stand_in(const char *fn, void *real, unsigned n, const char *const *names, void *const *with,
                  void *_Atomic *next_of)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(fn, names[i])) {
            if (real == with[i])      /* set again through another route: ours already */
                return real;
            __atomic_store_n(&next_of[i], real, __ATOMIC_RELEASE);
            return with[i];
        }
    return NULL;
}

void *ov_interpose(const char *fn, void *real)
{
    static void *const with[I_N] = { (void *)ov_source, (void *)ov_binary, (void *)ov_il };
    if (!on || !real)
        return real;
    void *mine = ov_stand_in(fn, real, I_N, names_of, with, next);
    return mine ? mine : ov_builds_interpose(fn, ov_local_interpose(fn, real));
}

void ov_programs_exit(void)
{
    if (!override_spec[0])
        return;
    unsigned matched = 0;
    for (unsigned i = 0; i < n_files; i++)
        matched += files[i].matched;
    if (!matched) {
        char text[PATH_MAX + 160];
        snprintf(text, sizeof text, "--override %.200s matched none of the programs the app created%s", override_spec,
                 one_file ? " (by its hash in the file name, else by the same kernel names)"
                          : " (a file NAME-HASH.cl matches the program of that hash)");
        ov_host.note(NULL, 0, OV_FAILED, override_spec, text);
        ov_host.say("%s", text);
    }
}

void ov_exit(void)
{
    if (!on)
        return;
    ov_programs_exit();
    ov_rules_exit();
    ov_local_exit();
}

void ov_forget(void)
{
    pthread_mutex_init(&ov_lock, NULL);
}

