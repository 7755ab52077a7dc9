/* The traces a command names: files, and the traces in a folder (a job's),
 * in name order. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/map.h"
#include "paths.h"

static int push(struct rm_paths *ps, const char *p)
{
    if (clt_grow(&ps->p, ps->n, &ps->cap, sizeof *ps->p, 16) != 0 || !(ps->p[ps->n] = strdup(p)))
        return -1;
    ps->n++;
    return 0;
}

static int is_trace_name(const struct dirent *d)
{
    const char *dot = strstr(d->d_name, ".pftrace");
    return dot && (!strcmp(dot, ".pftrace") || !strcmp(dot, ".pftrace.gz"));
}

int rm_paths_add(struct rm_paths *ps, const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return push(ps, p);        /* an unreadable file says so when it is read */
    struct dirent **list;
    int n = scandir(p, &list, is_trace_name, alphasort);
    if (n < 0) {
        fprintf(stderr, "cltrace-report: %s: cannot read the folder\n", p);
        return -1;
    }
    if (n == 0)
        fprintf(stderr, "cltrace-report: %s: no traces in it\n", p);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", p, list[i]->d_name);
        rc |= push(ps, full);
        free(list[i]);
    }
    free(list);
    return rc;
}

void rm_paths_free(struct rm_paths *ps)
{
    for (unsigned i = 0; i < ps->n; i++)
        free(ps->p[i]);
    free(ps->p);
    memset(ps, 0, sizeof *ps);
}
