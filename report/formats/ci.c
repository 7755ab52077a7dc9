/* Findings where CI shows them: SARIF 2.1.0 (GitHub code scanning, GitLab,
 * most CI dashboards) and GitHub's workflow commands (annotations on the
 * diff). Each finding is placed at the first frame of its call stack that
 * names a source line ("main (examples/x.c:33)"), the path as the build
 * recorded it, made relative to the directory the report runs in (the
 * checkout, in CI). A finding without one (a kernel's source, the device
 * timeline) has no location. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/escape/escape.h"
#include "formats.h"

struct place { char file[PATH_MAX]; unsigned line; };

/* "a/b/../c.c" -> "a/c.c"; "./x" -> "x" (in place) */
static void tidy_path(char *p)
{
    char *seg[256], buf[PATH_MAX];
    unsigned n = 0;
    int abs = p[0] == '/';
    snprintf(buf, sizeof buf, "%s", p);
    for (char *s = strtok(buf, "/"); s && n < 256; s = strtok(NULL, "/")) {
        if (!strcmp(s, "."))
            continue;
        if (!strcmp(s, "..") && n && strcmp(seg[n - 1], ".."))
            n--;
        else
            seg[n++] = s;
    }
    size_t k = 0;
    p[0] = 0;
    if (abs)
        p[k++] = '/', p[k] = 0;
    for (unsigned i = 0; i < n; i++)
        k += (size_t)snprintf(p + k, PATH_MAX - k, "%s%s", i ? "/" : "", seg[i]);
}

/* The first "(FILE:LINE)" of a where; 0: none. */
static int place_of(const char *where, struct place *pl)
{
    for (const char *p = strchr(where, '('); p; p = strchr(p + 1, '(')) {
        const char *close = strchr(p, ')'), *colon = close ? memrchr(p, ':', (size_t)(close - p)) : NULL;
        if (!colon || colon == p + 1)
            continue;
        char *end;
        unsigned long line = strtoul(colon + 1, &end, 10);
        if (end != close || !line || colon - p - 1 >= PATH_MAX)
            continue;
        snprintf(pl->file, sizeof pl->file, "%.*s", (int)(colon - p - 1), p + 1);
        if (strchr(pl->file, ' ') || strchr(pl->file, '('))
            continue;               /* not a path: "(3 followed by a wait)" */
        pl->line = (unsigned)line;
        tidy_path(pl->file);
        char cwd[PATH_MAX];
        size_t n = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
        if (pl->file[0] == '/' && n && !strncmp(pl->file, cwd, n) && pl->file[n] == '/')
            memmove(pl->file, pl->file + n + 1, strlen(pl->file + n + 1) + 1);
        return 1;
    }
    return 0;
}

static const char *sarif_level(enum sev s)
{
    return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

static void message(FILE *o, const struct rm_model *m, const struct finding *f, void (*put)(FILE *, const char *))
{
    char *text = NULL;
    char gain[200] = "";
    if (f->gain_ns >= 0)
        snprintf(gain, sizeof gain, " Estimated gain: %.3f ms (%.1f %% of the device timeline).", f->gain_ns / 1e6,
                 finding_gain_percent(m, f));
    if (asprintf(&text, "%s: %s. Fix: %s.%s", f->where, f->numbers, f->fix, gain) < 0)
        return;
    put(o, text);
    free(text);
}

static void sarif_rules(FILE *o)
{
    fputs("\"rules\":[", o);
    for (const struct rule *r = rule_table; r->id; r++) {
        fprintf(o, "%s{\"id\":\"%s\",\"name\":\"%s\",\"shortDescription\":{\"text\":", r == rule_table ? "" : ",",
                r->id, r->id);
        json_str(o, r->id);
        fputs("},\"fullDescription\":{\"text\":", o);
        json_str(o, r->fires);
        fputs("},\"help\":{\"text\":", o);
        char *help = NULL;
        if (asprintf(&help, "Fires when %s.%s%s", r->fires, r->source[0] ? " Source: " : "", r->source) >= 0) {
            json_str(o, help);
            free(help);
        } else {
            json_str(o, r->fires);
        }
        fprintf(o, "},\"defaultConfiguration\":{\"level\":\"%s\"}}", sarif_level(r->severity));
    }
    fputc(']', o);
}

void format_sarif(FILE *o, const struct report_in *r)
{
    char cwd[PATH_MAX];
    fputs("{\"$schema\":\"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
          "\",\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"cltrace-report\",", o);
    sarif_rules(o);
    fputs("}}", o);
    if (getcwd(cwd, sizeof cwd)) {
        char *uri = NULL;
        if (asprintf(&uri, "file://%s/", cwd) >= 0) {
            fputs(",\"originalUriBaseIds\":{\"SRCROOT\":{\"uri\":", o);
            json_str(o, uri);
            fputs("}}", o);
            free(uri);
        }
    }
    fputs(",\"results\":[", o);
    for (unsigned i = 0; i < r->fs->n; i++) {
        const struct finding *f = &r->fs->v[i];
        const struct rule *rule = rule_find(f->rule);
        struct place pl;
        fprintf(o, "%s{\"ruleId\":\"%s\",\"ruleIndex\":%ld,\"level\":\"%s\",\"message\":{\"text\":", i ? "," : "",
                f->rule, rule ? (long)(rule - rule_table) : 0L, sarif_level(f->sev));
        message(o, r->m, f, json_str);
        fputc('}', o);
        if (place_of(f->where, &pl)) {
            fputs(",\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":", o);
            json_str(o, pl.file);
            fprintf(o, "%s},\"region\":{\"startLine\":%u}}}]", pl.file[0] == '/' ? "" : ",\"uriBaseId\":\"SRCROOT\"",
                    pl.line);
        }
        fputs(",\"properties\":{\"where\":", o);
        json_str(o, f->where);
        if (f->gain_ns >= 0)
            fprintf(o, ",\"estimatedGainNs\":%.0f", f->gain_ns);
        fputs("}}", o);
    }
    fputs("]}]}\n", o);
}

static void gh_message(FILE *o, const char *s)
{
    gh_text(o, s, 0);
}

void format_github(FILE *o, const struct report_in *r)
{
    for (unsigned i = 0; i < r->fs->n; i++) {
        const struct finding *f = &r->fs->v[i];
        struct place pl;
        fprintf(o, "::%s ", f->sev == SEV_ERROR ? "error" : f->sev == SEV_WARNING ? "warning" : "notice");
        if (place_of(f->where, &pl)) {
            fputs("file=", o);
            gh_text(o, pl.file, 1);
            fprintf(o, ",line=%u,", pl.line);
        }
        fputs("title=", o);
        char title[120];
        snprintf(title, sizeof title, "cltrace %s", f->rule);
        gh_text(o, title, 1);
        fputs("::", o);
        message(o, r->m, f, gh_message);
        fputc('\n', o);
    }
}
