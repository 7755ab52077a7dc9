/* The capture folder's manifest: written by the shim, read by the replay. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "manifest.h"

static const char *const kinds[] = { "unset", "buffer", "scalar", "local", "image", "sampler", "null",
                                     "not_captured" };
static const char *const programs[] = { "source", "il", "binary" };
static const char *const program_files[] = { "program.cl", "program.il", "program.bin" };

const char *rf_program_file(enum rf_program p) { return program_files[p]; }
const char *rf_kind_name(enum rf_kind k) { return kinds[k]; }

static int has_in(const struct rf_arg *a)
{
    return a->kind == RF_BUFFER || a->kind == RF_IMAGE || a->kind == RF_SCALAR;
}

int rf_write(const char *dir, const struct rf_capture *c)
{
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof tmp, "%s/manifest.tmp", dir);
    snprintf(path, sizeof path, "%s/manifest", dir);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "cltrace-capture %u\nkernel %s\nlaunch %" PRIu64 "\ncommand %" PRIu64 "\n", RF_VERSION, c->kernel,
            c->launch_n, c->cmd_n);
    fprintf(f, "platform %s\ndevice %s\ndevice_version %s\ndriver_version %s\n", c->platform, c->device,
            c->device_version, c->driver_version);
    fprintf(f, "program %s\nbuild_options %s\nwork_dim %u\n", programs[c->program], c->build_options, c->work_dim);
    fprintf(f, "offset %zu %zu %zu\nglobal %zu %zu %zu\n", c->offset[0], c->offset[1], c->offset[2], c->global[0],
            c->global[1], c->global[2]);
    if (c->local_null)
        fprintf(f, "local none\n");
    else
        fprintf(f, "local %zu %zu %zu\n", c->local[0], c->local[1], c->local[2]);
    fprintf(f, "args %u\n", c->nargs);
    for (unsigned i = 0; i < c->nargs; i++) {
        const struct rf_arg *a = &c->arg[i];
        fprintf(f, "arg %u %s bytes=%zu", i, kinds[a->kind], a->bytes);
        if (a->kind == RF_BUFFER || a->kind == RF_IMAGE)
            fprintf(f, " flags=0x%" PRIx64 " writes=%d", a->flags, a->writes);
        if (a->sub)
            fprintf(f, " sub_offset=%zu", a->sub_offset);
        if (a->kind == RF_IMAGE)
            fprintf(f, " image=0x%x order=0x%x data_type=0x%x width=%zu height=%zu depth=%zu array=%zu", a->image_type,
                    a->order, a->data_type, a->width, a->height, a->depth, a->array_size);
        if (a->kind == RF_SAMPLER)
            fprintf(f, " normalized=%u addressing=0x%x filter=0x%x", a->normalized, a->addressing, a->filter);
        if (a->kind == RF_NOT_CAPTURED)
            fprintf(f, " why=%s", a->why);
        fprintf(f, " type=%s\n", a->type);
    }
    fprintf(f, "end\n");
    int bad = ferror(f);
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    int e = errno;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        e = bad ? e : errno;
        unlink(tmp);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

int rf_write_file(const char *dir, const char *name, const void *bytes, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, (const char *)bytes + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            close(fd);
            unlink(path);
            errno = e;
            return -1;
        }
        done += (size_t)w;
    }
    return close(fd);
}

void *rf_read_file(const char *dir, const char *name, size_t n, char *err, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if ((size_t)st.st_size != n) {
        snprintf(err, cap, "%s: %lld bytes, the manifest says %zu (a partial capture?)", path,
                 (long long)st.st_size, n);
        return NULL;
    }
    char *p = malloc(n ? n : 1);
    FILE *f = fopen(path, "rb");
    if (!p || !f || fread(p, 1, n, f) != n) {
        snprintf(err, cap, "%s: cannot read it", path);
        free(p);
        p = NULL;
    }
    if (f)
        fclose(f);
    return p;
}

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* "key=value" in the words of an arg line: its value, or NULL. */
static const char *kv(char *const *words, unsigned n, const char *key)
{
    size_t len = strlen(key);
    for (unsigned i = 0; i < n; i++)
        if (!strncmp(words[i], key, len) && words[i][len] == '=')
            return words[i] + len + 1;
    return NULL;
}

static int parse_arg(char *line, struct rf_capture *c, char *err, size_t cap)
{
    char *type = strstr(line, " type=");    /* the rest of the line: a type may hold spaces */
    if (!type)
        return fail(err, cap, "an arg line without type=");
    *type = 0;
    type += 6;
    char *why = strstr(line, " why=");
    if (why)
        *why = 0, why += 5;
    char *words[24];
    unsigned n = 0;
    for (char *s = strtok(line, " "); s && n < 24; s = strtok(NULL, " "))
        words[n++] = s;
    unsigned i = n >= 3 ? (unsigned)strtoul(words[1], NULL, 10) : RF_MAX_ARGS;
    if (i >= c->nargs)
        return fail(err, cap, "arg %s: past the %u arguments", n > 1 ? words[1] : "?", c->nargs);
    struct rf_arg *a = &c->arg[i];
    unsigned k = 0;
    while (k < sizeof kinds / sizeof kinds[0] && strcmp(kinds[k], words[2]))
        k++;
    if (k == sizeof kinds / sizeof kinds[0] || k == RF_UNSET)
        return fail(err, cap, "arg %u: unknown kind %s", i, words[2]);
    a->kind = (enum rf_kind)k;
    snprintf(a->type, sizeof a->type, "%s", type);
    snprintf(a->why, sizeof a->why, "%s", why ? why : "");
    const char *v;
#define NUM(field, key, base) \
    if ((v = kv(words, n, key))) \
        a->field = (__typeof__(a->field))strtoull(v, NULL, base);
    NUM(bytes, "bytes", 10) NUM(flags, "flags", 16) NUM(writes, "writes", 10) NUM(image_type, "image", 16)
    NUM(order, "order", 16) NUM(data_type, "data_type", 16) NUM(width, "width", 10) NUM(height, "height", 10)
    NUM(depth, "depth", 10) NUM(array_size, "array", 10) NUM(normalized, "normalized", 10)
    NUM(addressing, "addressing", 16) NUM(filter, "filter", 16) NUM(sub_offset, "sub_offset", 10)
    a->sub = kv(words, n, "sub_offset") != NULL;
#undef NUM
    return 0;
}

/* One manifest line after the first: KEY REST into c (0), or why not. */
static int read_line(char *line, const char *rest, struct rf_capture *c, const char *where, int *ended, char *err,
                     size_t cap)
{
#define STR(key, field) else if (!strcmp(line, key)) snprintf(c->field, sizeof c->field, "%s", rest);
    if (0) {
    }
    STR("kernel", kernel) STR("platform", platform) STR("device", device) STR("device_version", device_version)
    STR("driver_version", driver_version) STR("build_options", build_options)
    else if (!strcmp(line, "launch")) c->launch_n = strtoull(rest, NULL, 10);
    else if (!strcmp(line, "command")) c->cmd_n = strtoull(rest, NULL, 10);
    else if (!strcmp(line, "work_dim")) c->work_dim = (unsigned)atoi(rest);
    else if (!strcmp(line, "program")) {
        unsigned p = 0;
        while (p < 3 && strcmp(programs[p], rest))
            p++;
        c->program = (enum rf_program)p;
        if (p == 3)
            return fail(err, cap, "%s: unknown program kind %s", where, rest);
    } else if (!strcmp(line, "offset") || !strcmp(line, "global") || !strcmp(line, "local")) {
        size_t *to = line[0] == 'o' ? c->offset : line[0] == 'g' ? c->global : c->local;
        if (line[0] == 'l' && !strcmp(rest, "none"))
            c->local_null = 1;
        else if (sscanf(rest, "%zu %zu %zu", &to[0], &to[1], &to[2]) != 3)
            return fail(err, cap, "%s: %s needs three numbers", where, line);
    } else if (!strcmp(line, "args")) {
        c->nargs = (unsigned)atoi(rest);
        if (c->nargs > RF_MAX_ARGS)
            return fail(err, cap, "%s: %u arguments, at most %d", where, c->nargs, RF_MAX_ARGS);
    } else if (!strcmp(line, "arg")) {
        char copy[4096];
        snprintf(copy, sizeof copy, "arg %s", rest);
        char why[512];
        if (parse_arg(copy, c, why, sizeof why) != 0)
            return fail(err, cap, "%s: %s", where, why);
    } else if (!strcmp(line, "end"))
        *ended = 1;
    /* other keys: a later minor version's, ignored */
#undef STR
    return 0;
}

/* Every file the manifest names is there, whole. */
static int files_whole(const char *dir, const struct rf_capture *c, char *err, size_t cap)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rf_program_file(c->program));
    if (stat(path, &st) != 0)
        return fail(err, cap, "%s: missing (a partial capture?)", path);
    for (unsigned i = 0; i < c->nargs; i++) {
        const struct rf_arg *a = &c->arg[i];
        for (int out = 0; out < 2; out++) {
            if (out ? !a->writes : !has_in(a))
                continue;
            snprintf(path, sizeof path, "%s/arg%u.%s", dir, i, out ? "out" : "in");
            if (stat(path, &st) != 0)
                return fail(err, cap, "%s: missing (a partial capture?)", path);
            if ((size_t)st.st_size != a->bytes)
                return fail(err, cap, "%s: %lld bytes, the manifest says %zu (a partial capture?)", path,
                            (long long)st.st_size, a->bytes);
        }
    }
    return 0;
}

int rf_read(const char *dir, struct rf_capture *c, char *err, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest", dir);
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return fail(err, cap, "%s: not a capture folder (%s)", dir, strerror(errno));
        return fail(err, cap, "%s: no manifest (a partial capture: the program stopped while it was written)", dir);
    }
    char line[4096], where[4200];
    int version = 0, ended = 0, lineno = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        char *sp = strchr(line, ' ');
        const char *rest = sp ? sp + 1 : "";
        if (sp)
            *sp = 0;
        if (lineno == 1) {
            if (strcmp(line, "cltrace-capture") || (version = atoi(rest)) < 1)
                rc = fail(err, cap, "%s: not a cltrace capture manifest", path);
            else if (version > RF_VERSION)
                rc = fail(err, cap, "%s: version %d; this cltrace reads up to %d", path, version, RF_VERSION);
            c->version = (unsigned)version;
            continue;
        }
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        rc = read_line(line, rest, c, where, &ended, err, cap);
    }
    fclose(f);
    if (rc)
        return rc;
    if (!ended)
        return fail(err, cap, "%s: cut short (no end line)", path);
    if (!c->kernel[0] || c->work_dim < 1 || c->work_dim > 3)
        return fail(err, cap, "%s: no kernel name or a work_dim not 1-3", path);
    for (unsigned i = 0; i < c->nargs; i++)
        if (c->arg[i].kind == RF_UNSET)
            return fail(err, cap, "%s: argument %u missing", path, i);
    return files_whole(dir, c, err, cap);
}

void rf_elem_of(const char *type, char *kind, unsigned *size)
{
    static const struct { const char *name; char kind; unsigned size; } t[] = {
        { "half", 'f', 2 }, { "float", 'f', 4 }, { "double", 'f', 8 }, { "char", 'i', 1 }, { "uchar", 'i', 1 },
        { "short", 'i', 2 }, { "ushort", 'i', 2 }, { "int", 'i', 4 }, { "uint", 'i', 4 }, { "long", 'i', 8 },
        { "ulong", 'i', 8 }, { "unsigned char", 'i', 1 }, { "unsigned short", 'i', 2 }, { "unsigned int", 'i', 4 },
        { "unsigned long", 'i', 8 },
    };
    *kind = 'i';
    *size = 1;
    const char *s = type;
    while (!strncmp(s, "const ", 6) || !strncmp(s, "__global ", 9) || !strncmp(s, "global ", 7))
        s = strchr(s, ' ') + 1;
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n = strlen(t[i].name);
        if (!strncmp(s, t[i].name, n) && (s[n] == '*' || s[n] == ' ' || (s[n] >= '1' && s[n] <= '9') || !s[n])) {
            *kind = t[i].kind;
            *size = t[i].size;
            return;
        }
    }
}
