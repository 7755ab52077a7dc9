/* Escaping and small number helpers shared by the formats (escape.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "escape.h"

void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

void xml_text(FILE *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, o);
        }
    }
}

/* A GitHub workflow command's message: %, CR and LF escaped; a property's
 * (file=, title=) also : and , (they end it). */
void gh_text(FILE *o, const char *s, int property)
{
    for (; *s; s++) {
        if (*s == '%')
            fputs("%25", o);
        else if (*s == '\r')
            fputs("%0D", o);
        else if (*s == '\n')
            fputs("%0A", o);
        else if (property && *s == ':')
            fputs("%3A", o);
        else if (property && *s == ',')
            fputs("%2C", o);
        else
            fputc(*s, o);
    }
}

void md_cell(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", o);
        else if (*s == '\n')
            fputc(' ', o);
        else if (*s == '<')
            fputs("&lt;", o);
        else
            fputc(*s, o);
    }
}

double pct_of(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* A 17-frame chain that ends in an interpreter's own functions tells a
 * reader nothing more than its first frames. */
#define WHERE_FRAMES 4
const char *where_short(const char *where, char **buf)
{
    const char *p = where;
    *buf = NULL;
    for (unsigned n = 0; n < WHERE_FRAMES && (p = strstr(p, " <- ")) != NULL; n++)
        p += 4;
    if (!p)
        return where;
    unsigned more = 1;
    for (const char *q = p; (q = strstr(q, " <- ")) != NULL; q += 4)
        more++;
    if (asprintf(buf, "%.*s <- ... (%u more frame%s in the JSON and HTML reports)", (int)(p - 4 - where), where, more,
                 more == 1 ? "" : "s") < 0) {
        *buf = NULL;
        return where;
    }
    return *buf;
}

/* Prose for a terminal: words filled to `width` columns, the first line
 * after `first`, the next ones after `hang` (a hanging indent); a word
 * longer than a line is cut where the line ends. Counts bytes: the texts
 * are ASCII but for names from the trace, which may run a line short. */
void text_wrap(FILE *o, const char *first, const char *hang, const char *text, int width)
{
    size_t fl = strlen(first);
    int col = fprintf(o, "%s%s", first, fl && first[fl - 1] != ' ' ? " " : ""), start = col;
    int hang_w = (int)strlen(hang);
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (!*p)
            break;
        int len = (int)strcspn(p, " \n");
        if (col > start && col + 1 + len > width) {
            fprintf(o, "\n%s", hang);
            col = start = hang_w;
        }
        if (col > start) {
            fputc(' ', o);
            col++;
        }
        while (len > width - col && width - col > 0) {    /* longer than a line: cut it */
            int part = width - col;
            fprintf(o, "%.*s\n%s", part, p, hang);
            p += part;
            len -= part;
            col = start = hang_w;
        }
        fprintf(o, "%.*s", len, p);
        col += len;
        p += len;
    }
    fputc('\n', o);
}

/* `s` cut to `cols` columns for a table cell ("..." at the end); into buf */
const char *text_cut(const char *s, int cols, char *buf, size_t cap)
{
    if ((int)strlen(s) <= cols || cols < 4)
        return s;
    snprintf(buf, cap, "%.*s...", cols - 3, s);
    return buf;
}
