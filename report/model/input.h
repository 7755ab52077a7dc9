/* input.c: a trace's bytes, mapped and (gzip) inflated as a stream into a
 * window; packets handed out in place. */
#ifndef CLT_REPORT_INPUT_H
#define CLT_REPORT_INPUT_H
#include <stddef.h>
#include <stdint.h>

struct inflate_state;
struct rm_in {
    const uint8_t *map;         /* the file */
    size_t map_len, in_pos;     /* the compressed bytes inflated so far */
    size_t dropped;             /* those whose pages were given back */
    int gz, eof, salvaged;      /* salvaged: the stream cut short or damaged, read as far as it went */
    uint8_t *out;               /* inflated bytes (raw: the file itself) */
    size_t out_len, out_pos, out_cap;
    struct inflate_state *z;        /* ISA-L's inflate */
};
int rm_in_open(struct rm_in *s, int fd);       /* 0 ok; -1 (fd left open) */
void rm_in_close(struct rm_in *s);
const uint8_t *rm_in_take_slow(struct rm_in *s, size_t n);
/* The next n bytes, in place (valid until the next take); NULL: the trace
 * ends before them. */
static inline const uint8_t *rm_in_take(struct rm_in *s, size_t n)
{
    if (s->out_len - s->out_pos >= n) {
        const uint8_t *p = s->out + s->out_pos;
        s->out_pos += n;
        return p;
    }
    return rm_in_take_slow(s, n);
}
/* The next byte; -1 at the end. */
static inline int rm_in_byte(struct rm_in *s)
{
    const uint8_t *p = rm_in_take(s, 1);
    return p ? *p : -1;
}

#endif
