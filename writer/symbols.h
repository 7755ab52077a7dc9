/* Writer-thread call-stack table: return addresses -> symbolized frames ->
 * deduplicated stacks, and their Perfetto interning per sequence. */
#ifndef CLT_SYMBOLS_H
#define CLT_SYMBOLS_H
#include <stddef.h>
#include <stdint.h>
#include "objects.h"
#include "trace/cltrace.pb-c.h"

#define CLT_SYM_MAX_DEPTH 64
#define CLT_SYM_STR_MAX 512       /* an interned name's bytes, at most (emit.h: a packet's bound) */

struct clt_sym_frame {
    uint64_t pc, rel_pc;
    uint32_t fn, file, line, map;   /* string / mapping indexes + 1; 0: none */
    int ours;                       /* in libcltrace or the ICD loader */
};
struct clt_sym_mapping { uint64_t start, end; uint32_t path; };

struct clt_symbols {
    uint64_t self_base;
    struct Dwfl *dwfl;
    int dwfl_pid;
    uint64_t dwfl_gen;          /* the dynamic linker's generation it was reported at (common/loaded.h) */
    unsigned dwfl_reports;      /* the process's modules reported to libdw: a read of its whole map */
    char **strs;
    unsigned n_str, cap_str;
    struct clt_sym_frame *frames;
    unsigned n_frame, cap_frame;
    struct clt_sym_mapping *maps;
    unsigned n_map, cap_map;
    struct { uint32_t n, off; } *stacks;
    unsigned n_stack, cap_stack;
    uint32_t *stack_frames;
    unsigned n_sf, cap_sf;
    struct clt_map pc_frame, str_idx, stack_idx, base_map;   /* -> index + 1 */
    struct clt_map py_code;     /* Python code object -> function name << 32 | file (string indexes + 1) */
    struct clt_map py_frame;    /* hash of (function, file, line) -> frame index + 1 */
    struct clt_map py_line;     /* hash of (code object, its names, offset) -> line + 2 (a sample's, pylines.c) */
    struct clt_map symtabs;     /* Dwfl_Module -> its sorted symbol table (symtab.c) */
    uint64_t last_pcs[16];      /* the last call's C stack (a loop's calls share one), its id (dispatch.c) */
    unsigned last_n;
    uint32_t last_stack;
};

/* pylines.c: a sampled Python frame's line (0: none), from its code object
 * read through the kernel, once per code object (and its names: `kept`)
 * and offset; and the line of an offset in a location table (3.11, 3.12) */
uint32_t clt_py_sample_line(struct clt_map *cache, uint64_t code, uint64_t kept, uint32_t offset);
int clt_py_line_in_table(const uint8_t *table, size_t n, int firstlineno, uint32_t offset);

/* What one sequence has been sent (iids are table indexes + 1). */
struct clt_bits { uint8_t *b; unsigned cap; };
struct clt_sym_sent { struct clt_bits fn, file, mpath, map, frame, stack; };

/* Room for the interned entries one stack can need. */
struct clt_sym_scratch {
    Perfetto__Protos__InternedString strs[3 * CLT_SYM_MAX_DEPTH];
    Perfetto__Protos__InternedString *fnp[CLT_SYM_MAX_DEPTH], *filep[CLT_SYM_MAX_DEPTH], *mpathp[CLT_SYM_MAX_DEPTH];
    Perfetto__Protos__Frame frame[CLT_SYM_MAX_DEPTH], *framep[CLT_SYM_MAX_DEPTH];
    Perfetto__Protos__Mapping map[CLT_SYM_MAX_DEPTH], *mapp[CLT_SYM_MAX_DEPTH];
    uint64_t map_path_ids[CLT_SYM_MAX_DEPTH], frame_ids[CLT_SYM_MAX_DEPTH];
    Perfetto__Protos__Callstack cs, *csp[1];
    unsigned n_strs, n_fn, n_file, n_mpath, n_map, n_frame;
};

int clt_sym_init(struct clt_symbols *s);
void clt_sym_free(struct clt_symbols *s);
const char *clt_sym_source(const struct clt_symbols *s);   /* "libdw" or "dladdr" */
/* Stack index + 1 of a record's stack block (return addresses and Python
 * frames, innermost first: trace/record.h) with cltrace's and the loader's
 * own leading frames cut off; 0 if nothing is left. */
uint32_t clt_sym_stack(struct clt_symbols *s, const uint64_t *pcs, unsigned n);
uint32_t clt_sym_stack_sampled(struct clt_symbols *s, const uint64_t *pcs, unsigned n);   /* all frames kept */
/* Adds to `in` the entries of `stack` this sequence has not been sent. */
void clt_sym_add_interned(const struct clt_symbols *s, struct clt_sym_sent *sent, uint32_t stack,
                          struct clt_sym_scratch *x, Perfetto__Protos__InternedData *in);
void clt_sym_sent_reset(struct clt_sym_sent *t);
void clt_sym_sent_free(struct clt_sym_sent *t);
const char *clt_sym_top(const struct clt_symbols *s, uint32_t stack, char *buf, size_t cap);
const char *clt_sym_program_frame(const struct clt_symbols *s, uint32_t stack, char *buf, size_t cap);

#endif
