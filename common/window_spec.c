/* CLTRACE_WINDOW's spelling (window_spec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "window_spec.h"

int clt_duration_parse(const char *s, uint64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    static const struct { const char *unit; double ns; } units[] = {
        { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
    };
    for (unsigned i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            *ns = (uint64_t)(v * units[i].ns + 0.5);
            return 0;
        }
    return -1;
}

/* "TIME" or "Ncalls": 1 time, 2 calls, -1 neither. */
static int amount(const char *s, uint64_t *v)
{
    char *end;
    if (clt_duration_parse(s, v) == 0)
        return 1;
    unsigned long long n = strtoull(s, &end, 10);
    if (end != s && s[0] != '-' && strcmp(end, "calls") == 0) {
        *v = n;
        return 2;
    }
    return -1;
}

static int one(char *item, struct clt_window_spec *w, char *err, unsigned errlen)
{
    memset(w, 0, sizeof *w);
    char *plus = strchr(item, '+');
    if (strncmp(item, "kernel:", 7) == 0) {       /* a glob may hold '+': the length is after the last */
        plus = strrchr(item, '+');
        if (plus && amount(plus + 1, &w->len) < 0)
            plus = NULL;
    }
    if (plus) {
        *plus = 0;
        int k = amount(plus + 1, &w->len);
        if (k < 0 || w->len == 0) {
            snprintf(err, errlen, "'%s': a length is a duration (10s, 250ms, 2m) or a count (500calls)", plus + 1);
            return -1;
        }
        w->len_kind = k == 1 ? CLT_FOR_TIME : CLT_FOR_CALLS;
    }
    if (strncmp(item, "kernel:", 7) == 0) {
        if (!item[7] || strlen(item + 7) >= sizeof w->glob) {
            snprintf(err, errlen, "'%s': kernel: needs a kernel name (a glob, under 96 bytes)", item);
            return -1;
        }
        w->at = CLT_AT_KERNEL;
        snprintf(w->glob, sizeof w->glob, "%s", item + 7);
        return 0;
    }
    if (strcmp(item, "manual") == 0) {
        w->at = CLT_AT_MANUAL;
        return 0;
    }
    int k = amount(item, &w->start);
    if (k < 0) {
        snprintf(err, errlen, "'%s': a start is a duration (60s), a count (1000calls), kernel:NAME or manual", item);
        return -1;
    }
    w->at = k == 1 ? CLT_AT_TIME : CLT_AT_CALLS;
    return 0;
}

int clt_windows_parse(const char *spec, const char *every, struct clt_windows *ws, char *err, unsigned errlen)
{
    memset(ws, 0, sizeof *ws);
    char copy[1024];
    if (!spec || !*spec || strlen(spec) >= sizeof copy) {
        snprintf(err, errlen, "empty or longer than 1023 bytes");
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", spec);
    for (char *save = NULL, *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (ws->n == CLT_WINDOWS_MAX) {
            snprintf(err, errlen, "at most %d windows", CLT_WINDOWS_MAX);
            return -1;
        }
        struct clt_window_spec *w = &ws->w[ws->n];
        if (one(it, w, err, errlen) != 0)
            return -1;
        if (ws->n && w->at == CLT_AT_TIME && ws->w[ws->n - 1].at == CLT_AT_TIME &&
            w->start < ws->w[ws->n - 1].start) {
            snprintf(err, errlen, "windows open in the order given: %s starts before the one before it", it);
            return -1;
        }
        if (w->at == CLT_AT_CALLS || w->at == CLT_AT_KERNEL || w->len_kind == CLT_FOR_CALLS)
            ws->counts = 1;
        ws->n++;
    }
    if (!ws->n) {
        snprintf(err, errlen, "no window in '%s'", spec);
        return -1;
    }
    if (every && *every) {
        if (clt_duration_parse(every, &ws->every_ns) != 0 || ws->every_ns == 0) {
            snprintf(err, errlen, "every '%s': not a duration (600s, 10m)", every);
            return -1;
        }
        for (unsigned i = 0; i < ws->n; i++)
            if (ws->w[i].at != CLT_AT_TIME || ws->w[i].len_kind != CLT_FOR_TIME ||
                ws->w[i].start + ws->w[i].len > ws->every_ns + ws->w[0].start) {
                snprintf(err, errlen, "a list repeated every %s holds timed windows (START+LENGTH in time) "
                         "that end before the next round starts", every);
                return -1;
            }
    }
    return 0;
}
