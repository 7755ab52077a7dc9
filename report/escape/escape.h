/* What every format shares below it: escaping a string for JSON, XML/HTML,
 * a Markdown table cell and a GitHub workflow command, a share in percent,
 * a call stack cut and prose wrapped for a person's screen. Knows nothing
 * of the model. */
#ifndef CLT_REPORT_ESCAPE_H
#define CLT_REPORT_ESCAPE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void json_str(FILE *o, const char *s);       /* "..." with \" \\ \u00XX */
void xml_text(FILE *o, const char *s);       /* &lt; &gt; &amp; &quot; &#39;; control characters dropped */
void md_cell(FILE *o, const char *s);        /* | escaped, newlines as spaces, < as &lt; */
void gh_text(FILE *o, const char *s, int property);   /* a GitHub workflow command's: %XX for % CR LF (and : ,) */
double pct_of(uint64_t part, uint64_t whole);   /* 100 * part / whole; 0 when whole is 0 */
/* A "where" for a terminal or a CI summary: its first 4 frames (innermost
 * first: where the call was made), the rest counted; JSON and HTML keep the
 * whole stack. Returns `where` itself or *buf (malloc'd; free it). */
const char *where_short(const char *where, char **buf);
/* Prose wrapped at word boundaries to `width` columns: `first` before the
 * first line, `hang` before the others. */
void text_wrap(FILE *o, const char *first, const char *hang, const char *text, int width);
/* `s` cut to `cols` columns ("..." last) for a table's cell: s, or buf. */
const char *text_cut(const char *s, int cols, char *buf, size_t cap);
#define TEXT_COLS 100

#endif
