/* kernel_names.h. A token scan, not a parse: `kernel` or `__kernel`, then
 * the last identifier before the first `(` that is not an attribute's
 * (`__attribute__((reqd_work_group_size(64,1,1)))` is skipped whole). A
 * kernel made by a macro is not seen; a program's kernel names then come
 * from the driver (CL_PROGRAM_KERNEL_NAMES) where it matters. */
#include <ctype.h>
#include <string.h>
#include "kernel_names.h"

struct scan { const char *s; size_t n, i; };

/* The next identifier or single character; comments, strings, character
 * literals and preprocessor lines skipped. 0: the end. */
static size_t next_token(struct scan *c, const char **tok)
{
    while (c->i < c->n) {
        char ch = c->s[c->i];
        if (isspace((unsigned char)ch)) {
            c->i++;
        } else if (ch == '/' && c->i + 1 < c->n && c->s[c->i + 1] == '/') {
            while (c->i < c->n && c->s[c->i] != '\n')
                c->i++;
        } else if (ch == '/' && c->i + 1 < c->n && c->s[c->i + 1] == '*') {
            c->i += 2;
            while (c->i + 1 < c->n && !(c->s[c->i] == '*' && c->s[c->i + 1] == '/'))
                c->i++;
            c->i += 2;
        } else if (ch == '#' ) {          /* a preprocessor line, continuations included */
            while (c->i < c->n && !(c->s[c->i] == '\n' && c->s[c->i - 1] != '\\'))
                c->i++;
        } else if (ch == '"' || ch == '\'') {
            for (c->i++; c->i < c->n && c->s[c->i] != ch; c->i++)
                if (c->s[c->i] == '\\')
                    c->i++;
            c->i++;
        } else if (isalpha((unsigned char)ch) || ch == '_') {
            size_t b = c->i;
            while (c->i < c->n && (isalnum((unsigned char)c->s[c->i]) || c->s[c->i] == '_'))
                c->i++;
            *tok = c->s + b;
            return c->i - b;
        } else {
            *tok = c->s + c->i++;
            return 1;
        }
    }
    return 0;
}

static int is(const char *tok, size_t len, const char *word)
{
    return len == strlen(word) && !memcmp(tok, word, len);
}

/* After `__attribute__`: its balanced parentheses. */
static void skip_parens(struct scan *c)
{
    const char *t;
    size_t len;
    int depth = 0;
    while ((len = next_token(c, &t))) {
        if (len == 1 && *t == '(')
            depth++;
        else if (len == 1 && *t == ')' && --depth <= 0)
            return;
    }
}

unsigned clt_kernel_names(const char *src, size_t n, char (*names)[CLT_KERNEL_NAME_MAX], unsigned max)
{
    struct scan c = { src, n, 0 };
    const char *t;
    size_t len;
    unsigned found = 0;
    while ((len = next_token(&c, &t))) {
        if (!is(t, len, "kernel") && !is(t, len, "__kernel"))
            continue;
        const char *last = NULL;
        size_t last_len = 0;
        while ((len = next_token(&c, &t))) {
            if (is(t, len, "__attribute__")) {
                skip_parens(&c);
            } else if (len == 1 && *t == '(') {
                break;
            } else if (len == 1 && (*t == ';' || *t == '{' || *t == '}')) {
                last = NULL;              /* not a function */
                break;
            } else if (isalpha((unsigned char)*t) || *t == '_') {
                last = t, last_len = len;
            }
        }
        if (!last)
            continue;
        if (found < max) {
            size_t k = last_len < CLT_KERNEL_NAME_MAX - 1 ? last_len : CLT_KERNEL_NAME_MAX - 1;
            memcpy(names[found], last, k);
            names[found][k] = 0;
        }
        found++;
    }
    return found;
}
