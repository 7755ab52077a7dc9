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

/* A path as the build recorded it, tidied, relative to the directory the
 * report runs in (the checkout, in CI) where it lies inside it. */
static void relative(char *file)
{
    rm_tidy_path(file);
    char cwd[PATH_MAX];
    size_t n = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
    if (file[0] == '/' && n && !strncmp(file, cwd, n) && file[n] == '/')
        memmove(file, file + n + 1, strlen(file + n + 1) + 1);
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
        relative(pl->file);
        return 1;
    }
    return 0;
}

static void sarif_artifact(FILE *o, const char *file, unsigned line)
{
    fputs("\"physicalLocation\":{\"artifactLocation\":{\"uri\":", o);
    json_str(o, file);
    fprintf(o, "%s},\"region\":{\"startLine\":%u}}", file[0] == '/' ? "" : ",\"uriBaseId\":\"SRCROOT\"", line);
}

/* result.stacks (SARIF 2.1.0 section 3.44): the whole call stack, innermost
 * frame first, each library frame (pyopencl, the interpreter, libc) marked
 * in its properties; the result's location is the program's frame. */
static void sarif_stack(FILE *o, const char *full)
{
    fputs(",\"stacks\":[{\"message\":{\"text\":\"call stack\"},\"frames\":[", o);
    struct stack_frame fr;
    for (int i = 0; stack_next(&full, &fr); i++) {
        fprintf(o, "%s{\"location\":{", i ? "," : "");
        if (fr.file[0] && fr.line) {
            relative(fr.file);
            sarif_artifact(o, fr.file, fr.line);
            fputc(',', o);
        }
        fputs("\"logicalLocations\":[{\"name\":", o);
        json_str(o, fr.fn);
        fprintf(o, "}]},\"properties\":{\"library\":%s}}", fr.library ? "true" : "false");
    }
    fputs("]}]", o);
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
        snprintf(gain, sizeof gain, " Estimated gain: %.3f ms (%.1f %% %s).", f->gain_ns / 1e6,
                 finding_gain_percent(m, f), finding_gain_basis(m));
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
            fputs(",\"locations\":[{", o);
            sarif_artifact(o, pl.file, pl.line);
            fputs("}]", o);
        }
        if (f->stack)
            sarif_stack(o, f->stack);
        fputs(",\"properties\":{\"where\":", o);
        json_str(o, f->where);
        if (f->library)
            fputs(",\"byLibrary\":true", o);
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
