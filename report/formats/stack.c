/* A finding's whole call stack (model.h rm_stack_text: frames " <- " apart,
 * innermost first, a library frame marked "~") as structured frames, for
 * JSON ("stack") and SARIF (result.stacks, SARIF 2.1.0 section 3.44). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "report/escape/escape.h"
#include "formats.h"

/* The next frame of *p into fr; 0 at the end. */
int stack_next(const char **p, struct stack_frame *fr)
{
    const char *s = *p;
    if (!s || !*s)
        return 0;
    const char *end = strstr(s, " <- ");
    size_t n = end ? (size_t)(end - s) : strlen(s);
    *p = end ? end + 4 : s + n;
    memset(fr, 0, sizeof *fr);
    if (*s == '~') {
        fr->library = 1;
        s++;
        n--;
    }
    /* "fn (file:line)": the last " (" whose tail is "file:digits)" */
    const char *open = NULL;
    for (const char *q = s; q + 1 < s + n; q++)
        if (q[0] == ' ' && q[1] == '(')
            open = q;
    if (open && s[n - 1] == ')') {
        const char *colon = memrchr(open, ':', (size_t)(s + n - open));
        char *e;
        unsigned long line = colon ? strtoul(colon + 1, &e, 10) : 0;
        if (colon && e == s + n - 1 && colon > open + 2) {
            snprintf(fr->file, sizeof fr->file, "%.*s", (int)(colon - open - 2), open + 2);
            fr->line = (unsigned)line;
            n = (size_t)(open - s);
        }
    }
    snprintf(fr->fn, sizeof fr->fn, "%.*s", (int)n, s);
    return 1;
}

void stack_json(FILE *o, const char *full)
{
    fputs(",\"stack\":[", o);
    struct stack_frame fr;
    for (int i = 0; stack_next(&full, &fr); i++) {
        fprintf(o, "%s{\"function\":", i ? "," : "");
        json_str(o, fr.fn);
        if (fr.file[0]) {
            fputs(",\"file\":", o);
            json_str(o, fr.file);
            fprintf(o, ",\"line\":%u", fr.line);
        }
        fprintf(o, ",\"library\":%s}", fr.library ? "true" : "false");
    }
    fputc(']', o);
}
