/* `cltrace-report --tuned DIR...`: what `cltrace tune` measured for a
 * captured launch (DIR/tune.json), kept in the model for the work-group
 * rules to quote beside their estimate. The file is tune's own (one
 * candidate a line, replay/tune.c); anything else is refused. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "model.h"

/* "key": "value" on this line: value into out. */
static int str_field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *s = strstr(line, pat);
    if (!s)
        return 0;
    s += strlen(pat);
    size_t n = strcspn(s, "\"");
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), s);
    return 1;
}

/* "key": [a, b] or null: 1 read (null sets *null), 0 absent. */
static int local_field(const char *line, const char *key, uint64_t *l, int *null)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *s = strstr(line, pat);
    if (!s)
        return 0;
    s += strlen(pat);
    l[0] = l[1] = l[2] = 1;
    *null = !strncmp(s, "null", 4);
    if (*null)
        return 1;
    if (*s != '[')
        return 0;
    char *end;
    for (int d = 0; d < 3 && *s != ']'; d++) {
        l[d] = strtoull(s + 1, &end, 10);
        s = end;
    }
    return 1;
}

static double num_field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *s = strstr(line, pat);
    return s ? strtod(s + strlen(pat), NULL) : -1;
}

int rm_tuned_read(struct rm_model *m, const char *path, char *err, unsigned cap)
{
    char file[1200];
    struct stat st;
    snprintf(file, sizeof file, "%s%s", path, stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? "/tune.json" : "");
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(err, cap, "%s: no tune result (run cltrace tune on the capture first)", file);
        return -1;
    }
    if (m->n_tuned == RM_MAX_TUNED) {
        fclose(f);
        snprintf(err, cap, "%s: more than %d tune results", file, RM_MAX_TUNED);
        return -1;
    }
    struct rm_tuned t;
    memset(&t, 0, sizeof t);
    enum { MAX_CAND = 256 };
    static struct rm_tune_cand cand[MAX_CAND];
    char line[2048];
    int is_tune = 0, best = -1, captured = -1, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "\"cltrace_tune\": 1"))
            is_tune = 1;
        str_field(line, "kernel", t.kernel, sizeof t.kernel);
        str_field(line, "device", t.device, sizeof t.device);
        if (strstr(line, "\"best\": "))
            best = (int)num_field(line, "best");
        if (strstr(line, "\"captured\": ") && !strstr(line, "\"local\""))
            captured = (int)num_field(line, "captured");
        if (!strncmp(line, "    {\"local\"", 12)) {   /* a candidate */
            uint64_t l[3] = { 1, 1, 1 };
            int null = 0;
            local_field(line, "local", l, &null);
            double med = num_field(line, "median_ns");
            if (n < MAX_CAND) {
                memcpy(cand[n].local, l, sizeof l);
                cand[n].null = null;
                cand[n].median_ns = med;
            }
            n++;
        }
    }
    fclose(f);
    if (!is_tune || !t.kernel[0] || best < 0 || captured < 0 || best >= n || captured >= n ||
        best >= MAX_CAND || captured >= MAX_CAND) {
        snprintf(err, cap, "%s: not a cltrace tune result (or one with no valid local size)", file);
        return -1;
    }
    t.best = cand[best];
    t.captured = cand[captured];
    m->tuned[m->n_tuned++] = t;
    return 0;
}
