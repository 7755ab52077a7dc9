/* Kernel-source hints (heuristics, labelled as such): a light scan of each
 * program's OpenCL C source, as cltrace recorded it, for the access patterns
 * seed 001 warns about. Not a compiler: comments are skipped, the preprocessor
 * is not run, an index is judged by the tokens in its brackets.
 *
 * - strided-access: a __global array indexed by something that grows with
 *   get_global_id(0)/get_local_id(0) times a factor (neighbouring work-items
 *   touch words far apart: one transaction each instead of one per warp).
 * - redundant-global-reads: inside a loop, a __global array indexed by
 *   something that does not vary along dimension 0 (every work-item of a row
 *   re-reads the same words from global memory: stage them in __local).
 * - double-literals: 1.0 instead of 1.0f in code without `double`. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "common/map.h"

#define MAX_TOK 8192
#define MAX_VARS 64
enum { T_IDENT, T_NUM, T_PUNCT, T_GID0 };   /* T_GID0: get_global_id(0) or get_local_id(0) */

struct tok { const char *p; unsigned len, line; int kind; };
struct scan {
    struct tok t[MAX_TOK];
    unsigned n;
    char names[MAX_VARS][48];     /* variables that vary along dimension 0 */
    unsigned strided[MAX_VARS];   /* ...and whether they are multiplied */
    unsigned n_vars;
};

static int is(const struct tok *t, const char *s)
{
    return t->len == strlen(s) && !strncmp(t->p, s, t->len);
}

/* Comments become spaces; newlines stay, so lines keep their numbers. */
static char *strip_comments(const char *src)
{
    char *o = strdup(src);
    if (!o)
        return NULL;
    for (char *p = o; *p; p++) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
            if (!*p)
                break;
        } else if (p[0] == '/' && p[1] == '*') {
            *p++ = ' ';
            *p = ' ';
            while (p[1] && !(p[1] == '*' && p[2] == '/')) {
                p++;
                if (*p != '\n')
                    *p = ' ';
            }
            if (p[1]) {
                p[1] = p[2] = ' ';
                p += 2;
            }
        }
    }
    return o;
}

static void tokenize(struct scan *s, const char *src)
{
    unsigned line = 1;
    s->n = 0;
    for (const char *p = src; *p && s->n < MAX_TOK;) {
        if (*p == '\n') {
            line++;
            p++;
            continue;
        }
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        struct tok *t = &s->t[s->n++];
        t->p = p;
        t->line = line;
        if (isalpha((unsigned char)*p) || *p == '_') {
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            t->kind = T_IDENT;
        } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
            while (isalnum((unsigned char)*p) || *p == '.' ||
                   ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E') && p[-2] != 'x'))
                p++;
            t->kind = T_NUM;
        } else {
            p++;
            t->kind = T_PUNCT;
        }
        t->len = (unsigned)(p - t->p);
        /* get_global_id ( 0 ) -> one token */
        if (t->kind == T_IDENT && (is(t, "get_global_id") || is(t, "get_local_id"))) {
            const char *q = p;
            while (isspace((unsigned char)*q))
                q++;
            if (*q == '(') {
                q++;
                while (isspace((unsigned char)*q))
                    q++;
                if (*q == '0') {
                    q++;
                    while (isspace((unsigned char)*q))
                        q++;
                    if (*q == ')') {
                        t->kind = T_GID0;
                        t->len = (unsigned)(q + 1 - t->p);
                        p = q + 1;
                    }
                }
            }
        }
    }
}

static int var_index(const struct scan *s, const struct tok *t)
{
    if (t->kind != T_IDENT)
        return -1;
    for (unsigned i = 0; i < s->n_vars; i++)
        if (strlen(s->names[i]) == t->len && !strncmp(s->names[i], t->p, t->len))
            return (int)i;
    return -1;
}

static int varies(const struct scan *s, const struct tok *t) { return t->kind == T_GID0 || var_index(s, t) >= 0; }

/* Is token i a factor of a product with something other than 1? */
static int multiplied(const struct scan *s, unsigned i, unsigned lo, unsigned hi)
{
    const struct tok *t = s->t;
    if (i + 2 < hi && is(&t[i + 1], "*") && !is(&t[i + 2], "1"))
        return 1;
    if (i >= lo + 2 && is(&t[i - 1], "*") && !is(&t[i - 2], "1"))
        return 1;
    return 0;
}

/* Tokens [lo, hi): 2 strided, 1 varies along dimension 0, 0 neither. */
static int classify(const struct scan *s, unsigned lo, unsigned hi)
{
    int r = 0;
    for (unsigned i = lo; i < hi; i++) {
        if (!varies(s, &s->t[i]))
            continue;
        int v = var_index(s, &s->t[i]);
        if ((v >= 0 && s->strided[v]) || multiplied(s, i, lo, hi))
            return 2;
        r = 1;
    }
    return r;
}

static void hint(struct rm_model *m, const char *rule, uint64_t program, const char *kernel, unsigned line,
                 const struct tok *from, const struct tok *to, const char *what)
{
    for (unsigned i = 0; i < m->n_hints; i++)    /* one per rule and kernel: the first place */
        if (m->hints[i].program == program && !strcmp(m->hints[i].rule, rule) && !strcmp(m->hints[i].kernel, kernel)) {
            m->hints[i].count++;
            return;
        }
    if (m->n_hints >= 256 || clt_grow(&m->hints, m->n_hints, &m->cap_hints, sizeof *m->hints, 16) != 0)
        return;
    struct rm_hint *h = &m->hints[m->n_hints++];
    memset(h, 0, sizeof *h);
    snprintf(h->rule, sizeof h->rule, "%s", rule);
    snprintf(h->kernel, sizeof h->kernel, "%s", kernel);
    h->program = program;
    h->line = line;
    h->count = 1;
    size_t n = 0;
    for (const struct tok *t = from; t <= to && n + t->len + 2 < sizeof h->code; t++) {
        memcpy(h->code + n, t->p, t->len);
        n += t->len;
    }
    h->code[n] = 0;
    snprintf(h->what, sizeof h->what, "%s", what);
}

/* A declaration or assignment, x = expr ; at token i: what x now holds. */
static void assignment(struct scan *s, unsigned i, unsigned e)
{
    struct tok *t = s->t;
    if (t[i].kind != T_IDENT || i + 1 >= e || !is(&t[i + 1], "=") || (i + 2 < e && is(&t[i + 2], "=")))
        return;
    unsigned j = i + 2;
    while (j < e && !is(&t[j], ";") && !is(&t[j], ","))
        j++;
    int c = classify(s, i + 2, j);
    int v = var_index(s, &t[i]);
    if (c && v < 0 && s->n_vars < MAX_VARS && t[i].len < 48) {
        memcpy(s->names[s->n_vars], t[i].p, t[i].len);
        s->names[s->n_vars][t[i].len] = 0;
        s->strided[s->n_vars++] = c == 2;
    } else if (v >= 0) {
        s->strided[v] = c == 2;
    }
}

/* 2.0 or 1e3, not 2.0f, 0x1.0p3 or 1.5h */
static int is_double_literal(const struct tok *t)
{
    const char *p = t->p;
    int fp = 0, hex = t->len > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    for (unsigned k = 0; k < t->len && !hex; k++)
        fp |= p[k] == '.' || p[k] == 'e' || p[k] == 'E';
    char last = p[t->len - 1];
    return fp && !hex && last != 'f' && last != 'F' && last != 'h' && last != 'H';
}

/* One kernel: tokens [b, e) of its body; globals: its __global parameters. */
static void scan_kernel(struct rm_model *m, struct scan *s, uint64_t program, const char *name, unsigned b,
                        unsigned e, char globals[][48], unsigned n_globals, int has_double)
{
    struct tok *t = s->t;
    s->n_vars = 0;
    int loop_at[64] = {0};      /* brace depth -> the block is a loop body */
    int depth = 0, pending_loop = 0, stmt_loop = 0;
    unsigned paren = 0;
    for (unsigned i = b; i < e; i++) {
        if (is(&t[i], "for") || is(&t[i], "while")) {
            pending_loop = 1;
            paren = 0;
        }
        if (pending_loop && is(&t[i], "("))
            paren++;
        if (pending_loop && is(&t[i], ")") && paren && --paren == 0) {
            pending_loop = 0;
            if (i + 1 < e && !is(&t[i + 1], "{"))
                stmt_loop = 1;     /* a loop body without braces: up to the next ';' */
            else if (depth + 1 < 64)
                loop_at[depth + 1] = 1;
            continue;
        }
        if (is(&t[i], "{") && depth + 1 < 64) {
            depth++;
            if (!loop_at[depth])
                loop_at[depth] = loop_at[depth - 1] ? 2 : 0;   /* inside a loop too */
        } else if (is(&t[i], "}") && depth > 0) {
            loop_at[depth--] = 0;
        } else if (is(&t[i], ";")) {
            stmt_loop = 0;
        }
        int in_loop = stmt_loop || (depth < 64 && loop_at[depth]);
        assignment(s, i, e);
        /* a global array access: g [ index ] */
        if (t[i].kind == T_IDENT && i + 1 < e && is(&t[i + 1], "[")) {
            int global = 0;
            for (unsigned g = 0; g < n_globals && !global; g++)
                global = strlen(globals[g]) == t[i].len && !strncmp(globals[g], t[i].p, t[i].len);
            if (!global)
                continue;
            unsigned j = i + 2, nest = 1;
            while (j < e && nest) {
                if (is(&t[j], "["))
                    nest++;
                else if (is(&t[j], "]"))
                    nest--;
                j++;
            }
            int c = classify(s, i + 2, j - 1);
            if (c == 2)
                hint(m, "strided-access", program, name, t[i].line, &t[i], &t[j - 1],
                     "index grows with the work-item id times a factor");
            else if (c == 0 && in_loop)
                hint(m, "redundant-global-reads", program, name, t[i].line, &t[i], &t[j - 1],
                     "index inside a loop does not vary along dimension 0");
        }
        if (t[i].kind == T_NUM && !has_double && is_double_literal(&t[i]))
            hint(m, "double-literals", program, name, t[i].line, &t[i], &t[i],
                 "a double-precision literal in float code");
    }
}

void rm_scan_source(struct rm_model *m, uint64_t program, const char *source)
{
    char *src = strip_comments(source);
    struct scan *s = calloc(1, sizeof *s);
    if (!src || !s) {
        free(src);
        free(s);
        return;
    }
    tokenize(s, src);
    /* float arithmetic that -cl-mad-enable / -cl-fast-relaxed-math speed up:
     * math built-ins, or a multiply accumulated (sum += a * b) */
    static const char *const math[] = { "sqrt", "rsqrt", "exp", "log", "sin", "cos", "pow", "native_sqrt",
                                        "native_rsqrt", "native_exp", "native_sin", "native_cos", NULL };
    int has_double = 0, has_float = 0, heavy = 0, accumulating = 0;
    for (unsigned i = 0; i < s->n; i++) {
        const struct tok *t = &s->t[i];
        has_double |= is(t, "double") || is(t, "double2") || is(t, "double4");
        has_float |= t->kind == T_IDENT && !strncmp(t->p, "float", 5);
        for (unsigned k = 0; math[k] && t->kind == T_IDENT; k++)
            heavy |= is(t, math[k]);
        if (is(t, "+") && i + 1 < s->n && is(&s->t[i + 1], "="))
            accumulating = 1;
        else if (is(t, ";"))
            accumulating = 0;
        else if (accumulating && is(t, "*"))
            heavy = 1;
    }
    struct rm_program *pg = rm_program(m, program);
    if (pg)
        pg->uses_float = has_float && heavy;
    for (unsigned i = 0; i + 3 < s->n; i++) {
        if (!is(&s->t[i], "kernel") && !is(&s->t[i], "__kernel"))
            continue;
        unsigned j = i + 1;
        while (j < s->n && !is(&s->t[j], "("))
            j++;
        if (j >= s->n || j == i + 1)
            continue;
        char name[64];
        unsigned nl = s->t[j - 1].len < sizeof name - 1 ? s->t[j - 1].len : sizeof name - 1;
        memcpy(name, s->t[j - 1].p, nl);
        name[nl] = 0;
        /* parameters: the names of __global pointers */
        char globals[32][48];
        unsigned n_globals = 0, k = j + 1, depth = 1;
        int is_global = 0;
        for (; k < s->n && depth; k++) {
            if (is(&s->t[k], "("))
                depth++;
            else if (is(&s->t[k], ")"))
                depth--;
            if (is(&s->t[k], "global") || is(&s->t[k], "__global"))
                is_global = 1;
            if ((is(&s->t[k], ",") || (is(&s->t[k], ")") && !depth)) && is_global) {
                const struct tok *id = &s->t[k - 1];
                if (id->kind == T_IDENT && id->len < 48 && n_globals < 32) {
                    memcpy(globals[n_globals], id->p, id->len);
                    globals[n_globals++][id->len] = 0;
                }
                is_global = 0;
            } else if (is(&s->t[k], ",")) {
                is_global = 0;
            }
        }
        while (k < s->n && !is(&s->t[k], "{"))
            k++;
        unsigned body = k + 1, end = body;
        for (depth = 1; end < s->n && depth; end++) {
            if (is(&s->t[end], "{"))
                depth++;
            else if (is(&s->t[end], "}"))
                depth--;
        }
        scan_kernel(m, s, program, name, body, end, globals, n_globals, has_double);
        i = end > i ? end - 1 : i;
    }
    free(s);
    free(src);
}

struct rm_program *rm_program(struct rm_model *m, uint64_t id)
{
    for (unsigned i = 0; i < m->n_programs; i++)
        if (m->programs[i].id == id)
            return &m->programs[i];
    if (m->n_programs >= 4096 || clt_grow(&m->programs, m->n_programs, &m->cap_programs, sizeof *m->programs, 8))
        return NULL;
    struct rm_program *p = &m->programs[m->n_programs++];
    memset(p, 0, sizeof *p);
    p->id = id;
    return p;
}
