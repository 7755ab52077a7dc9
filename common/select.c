/* The spelling of common/select.h, read and matched. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "map.h"
#include "select.h"

static int number(const char *p, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || *end || v == 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_item(const char *it, struct clt_select *s, char *err, unsigned errlen)
{
    if (!strcmp(it, "all") || !strcmp(it, "1")) {
        s->all = 1;
        return 0;
    }
    if (!strncmp(it, "count=", 6)) {
        if (number(it + 6, &s->limit) == 0)
            return 0;
        snprintf(err, errlen, "'%s': count= takes a number from 1", it);
        return -1;
    }
    if (s->n >= CLT_SELECT_MAX) {
        snprintf(err, errlen, "more than %d items", CLT_SELECT_MAX);
        return -1;
    }
    struct clt_select_item *x = &s->item[s->n];
    memset(x, 0, sizeof *x);
    if (it[0] == '#') {
        x->hash_n = 1;
        if (number(it + 1, &x->nth) == 0) {
            s->n++;
            return 0;
        }
        snprintf(err, errlen, "'%s': #N takes a command number from 1", it);
        return -1;
    }
    const char *at = strrchr(it, '@');
    size_t len = at ? (size_t)(at - it) : strlen(it);
    if (len == 0 || len >= sizeof x->glob) {
        snprintf(err, errlen, "'%s': a kernel name (or glob) of 1 to %zu characters", it, sizeof x->glob - 1);
        return -1;
    }
    if (at && number(at + 1, &x->nth) != 0) {
        snprintf(err, errlen, "'%s': NAME@N takes a launch number from 1", it);
        return -1;
    }
    memcpy(x->glob, it, len);
    x->glob[len] = 0;
    s->n++;
    return 0;
}

int clt_select_parse(const char *spec, struct clt_select *s, char *err, unsigned errlen)
{
    memset(s, 0, sizeof *s);
    if (!spec || !*spec) {
        s->all = 1;
        return 0;
    }
    char buf[1024];
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    strcpy(buf, spec);
    char *save = NULL;
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
        if (parse_item(it, s, err, errlen) != 0)
            return -1;
    if (!s->n)
        s->all = 1;       /* only a count: every command, up to it */
    return 0;
}

int clt_select_take(struct clt_select *s, const char *name, uint64_t launch_n, uint64_t cmd_n)
{
    if (s->limit && s->taken >= s->limit)
        return 0;
    int take = s->all;
    for (unsigned i = 0; i < s->n && !take; i++) {
        const struct clt_select_item *x = &s->item[i];
        if (x->hash_n)
            take = cmd_n == x->nth;
        else
            take = fnmatch(x->glob, name ? name : "", 0) == 0 && (!x->nth || x->nth == launch_n);
    }
    if (take)
        s->taken++;
    return take;
}

uint64_t clt_name_counts_next(struct clt_name_counts *c, const char *name)
{
    for (unsigned i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].name, name))
            return ++c->v[i].n;
    if (clt_grow(&c->v, c->n, &c->cap, sizeof *c->v, 32) != 0)
        return 0;
    snprintf(c->v[c->n].name, sizeof c->v[c->n].name, "%s", name);
    c->v[c->n].n = 1;
    return c->v[c->n++].n;
}
