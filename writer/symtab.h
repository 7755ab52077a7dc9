/* Symbols' names for the writer's frames (symbols.c): a large module's
 * symbol table sorted by address, kept by module (symtab.c); a name as a
 * reader wants it. */
#ifndef CLT_SYMTAB_H
#define CLT_SYMTAB_H
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdint.h>
#include "common/map.h"

/* libdw's functions it reads the table with (libdw is dlopen'ed: symbols.c);
 * libelf's, to read the symbols in place (NULL: through libdw, one by one) */
struct clt_symtab_fns {
    int (*getsymtab)(Dwfl_Module *);
    const char *(*getsym_info)(Dwfl_Module *, int, GElf_Sym *, GElf_Addr *, GElf_Word *, Elf **, Dwarf_Addr *);
    Elf_Scn *(*nextscn)(Elf *, Elf_Scn *);
    Elf_Scn *(*getscn)(Elf *, size_t);
    GElf_Shdr *(*getshdr)(Elf_Scn *, GElf_Shdr *);
    Elf_Data *(*getdata)(Elf_Scn *, Elf_Data *);
    /* a table kept in the user's cache by the module's build id (NULL, 0: none) */
    int (*build_id)(Dwfl_Module *, const unsigned char **, GElf_Addr *);
    int cache;
};

struct clt_symtab;
/* mod's table, made the first time it is asked for, kept in `tables` (by
 * module); NULL: a module small enough for libdw's own lookup */
struct clt_symtab *clt_symtab_of(struct clt_map *tables, Dwfl_Module *mod, const struct clt_symtab_fns *f);
/* the name of the symbol that holds `at` (an address of the process) in
 * *name, NULL where none does: 1; 0 where the table alone does not say it
 * plainly: ask libdw */
int clt_symtab_lookup(const struct clt_symtab *t, uint64_t at, const char **name);
void clt_symtab_free(struct clt_symtab *t);
int clt_symtab_read_in_place(const struct clt_symtab *t);   /* 1: its symbols read where libdw had them */
void clt_symtab_counts(unsigned *made, unsigned *read);     /* tables made, and read from the cache, so far */
void clt_symtabs_free(struct clt_map *tables);      /* every table kept, and the map */

/* A function's name as a reader wants it, into out (cap bytes) where it
 * must change (the symbol version dropped, GCC's clones named for their
 * function); without a name, where it is (file+offset). */
const char *clt_symtab_readable(const char *fn, const char *file, uint64_t base, uint64_t pc, char *out, size_t cap);
char *clt_symtab_demangle(const char *name);   /* malloc'ed; NULL: not a C++ name, or no demangler */
#endif
