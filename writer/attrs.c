/* Trace attributes gathered before they are written (clt_attrs_put,
 * encode.c): filling the table only, so that the parts below the encoder
 * (the file's full-disk note, the own threads' facts) can say theirs; the
 * command line (cltrace.cmdline). */
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "emit.h"

void clt_attr_int(struct clt_attrs *a, const char *key, int64_t v)
{
    if (a->n == CLT_MAX_ATTRS)
        return;
    Perfetto__Protos__TraceAttributes__Attribute *x = &a->attr[a->n];
    perfetto__protos__trace_attributes__attribute__init(x);
    snprintf(a->key[a->n], sizeof a->key[a->n], "%s", key);
    x->key = a->key[a->n];
    x->value_case = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_LONG_VALUE;
    x->long_value = v;
    a->ptr[a->n++] = x;
}

void clt_attr_str(struct clt_attrs *a, const char *key, const char *v)
{
    if (a->n == CLT_MAX_ATTRS)
        return;
    clt_attr_int(a, key, 0);
    Perfetto__Protos__TraceAttributes__Attribute *x = &a->attr[a->n - 1];
    x->value_case = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE;
    x->string_value = (char *)v;
}

/* The process's command line, each argument shell-quoted where it must be
 * (0: not readable). */
int clt_command_line(char *out, size_t cap)
{
    char raw[1024];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, raw, sizeof raw - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    raw[n] = 0;
    size_t k = 0;
    for (const char *a = raw; a < raw + n && k + 4 < cap; a += strlen(a) + 1) {
        int plain = *a != 0;
        for (const char *c = a; *c && plain; c++)
            plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%", *c) != NULL;
        k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? " " : "", plain ? "" : "'");
        for (const char *c = a; *c && k + 6 < cap; c++)
            k += (size_t)(*c == '\'' ? snprintf(out + k, cap - k, "'\\''") : snprintf(out + k, cap - k, "%c", *c));
        if (!plain && k + 2 < cap)
            out[k++] = '\'', out[k] = 0;
    }
    return 1;
}
