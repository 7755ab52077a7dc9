/* A large module's symbol table sorted by address, once, for the names of
 * the frames that fall in it (symbols.c). libdw's own lookup
 * (dwfl_module_addrname) walks every symbol of the module for each address:
 * a program on PoCL has CPU samples and stacks in LLVM's and clang's code
 * (45,795 and 29,905 exported symbols), and those walks were 90 ms of the
 * writer's 105 for tests/apps/host_gap.c, all of it at exit on a loaded
 * machine, where the writer's idle priority left it none during the run.
 *
 * The table answers where the answer is plain: one sized symbol, or
 * aliases at one address (the global one, else the weak one, as libdw),
 * holds the address, and no symbol without a size lies between it and the
 * address; or none holds it and no symbol without a size lies between the
 * end of those below and the address (a static function of a stripped
 * library: libdw's walk said nothing, 5 ms each in clang's; an absolute
 * symbol, such as LLVM's version LLVM_15 at 0, is libdw's only at its own
 * address: below LLVM's lowest exported function each sample went to
 * libdw's walk of 46,000 symbols). Anything else (nested or overlapping
 * symbols of different bindings, assembly labels) is libdw's to answer, as
 * before: tests/unit/test_symtab.c checks the two agree.
 *
 * And a name as a reader wants it: demangled, without its symbol version,
 * a compiler's clone named for its function. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symtab.h"

#define SMALL_TABLE 128      /* fewer symbols: a walk of them costs less than a sort (a table is
                              * made with about one walk: it pays from the second address) */
#define BACK_MOST 16         /* entries looked at below the closest one */

struct entry {
    uint64_t lo, hi, reach;  /* reach: the highest hi of this entry and every one before it */
    const char *name;
    uint32_t index;
    uint8_t rank;            /* of its binding: global 3, weak 2, local 1 (libdw's preference) */
};

struct clt_symtab {
    struct entry *e;
    unsigned n;
    uint64_t *sizeless;      /* addresses of named symbols without a size, sorted */
    unsigned n_sizeless;
    int raw;                 /* its symbols read in place, not through libdw */
    uint64_t (*odd)[2];      /* symbols outside the sections (an absolute value, a link warning): [lo, hi) */
    unsigned n_odd;
};

/* Sorts n keys in place (LSD radix, 11 bits a pass: its counts stay in
 * the cache; as many passes as the largest key needs); tmp: room for n
 * more. qsort with a comparison call was a third of a large table's making
 * (46,000 of LLVM's symbols), 16-bit digits (a 512 KiB count) a quarter. */
static void radix_sort(uint64_t *k, uint64_t *tmp, size_t n)
{
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++)
        top |= k[i];
    for (unsigned shift = 0; shift < 64 && top >> shift; shift += 11) {
        size_t count[2049] = { 0 };
        for (size_t i = 0; i < n; i++)
            count[(k[i] >> shift & 0x7FF) + 1]++;
        for (unsigned d = 1; d <= 2048; d++)
            count[d] += count[d - 1];
        for (size_t i = 0; i < n; i++)
            tmp[count[k[i] >> shift & 0x7FF]++] = k[i];
        memcpy(k, tmp, n * sizeof *k);
    }
}

/* The entries by address, aliases in the table's order (their index, which
 * is the order they were added in): sorted as keys of address and position,
 * the address taken from the module's lowest, the position in as few bits
 * as the count needs (the fewer the key's bits, the fewer the passes). */
static int sort_entries(struct clt_symtab *t)
{
    if (t->n < 2)
        return 0;
    unsigned bits = 1;
    while (bits < 32 && t->n >> bits)
        bits++;
    uint64_t *k = malloc(2 * sizeof *k * t->n), base = UINT64_MAX, mask = (1ull << bits) - 1;
    struct entry *sorted = malloc(sizeof *sorted * t->n);
    if (!k || !sorted) {
        free(k);
        free(sorted);
        return -1;
    }
    for (unsigned i = 0; i < t->n; i++)
        base = t->e[i].lo < base ? t->e[i].lo : base;
    for (unsigned i = 0; i < t->n; i++) {
        if ((t->e[i].lo - base) >> (64 - bits)) {      /* a module wider than the key holds */
            free(k);
            free(sorted);
            return -1;
        }
        k[i] = (t->e[i].lo - base) << bits | i;
    }
    radix_sort(k, k + t->n, t->n);
    for (unsigned i = 0; i < t->n; i++)
        sorted[i] = t->e[k[i] & mask];
    free(t->e);
    t->e = sorted;
    free(k);
    return 0;
}

/* The symbols where libdw read them, in place (index i is libdw's i: one
 * table, no auxiliary one), checked against libdw at three of them.
 * libdw's getsym_info cost ~270 instructions a symbol, 23 of the 40 million
 * that LLVM's and clang's tables took to make (a program on PoCL: its CPU
 * samples). 0: ask libdw for each. */
struct raw {
    const Elf64_Sym *sym;
    const char *str;
    size_t n_str;
    GElf_Addr bias;
    uint64_t alloc[4];       /* sections 0..255 the process maps (SHF_ALLOC): their symbols moved by bias */
};

/* Symbol i: its name (NULL: none), address, section and the symbol; the
 * address as libdw's: a mapped section's symbol moved by the load bias, an
 * undefined or absolute one as it is. */
static const char *symbol(Dwfl_Module *mod, const struct clt_symtab_fns *f, const struct raw *r, int i,
                          GElf_Sym *sym, GElf_Addr *addr, GElf_Word *shndx)
{
    if (!r->sym)
        return f->getsym_info(mod, i, sym, addr, shndx, NULL, NULL);
    const Elf64_Sym *x = &r->sym[i];
    *sym = (GElf_Sym){ x->st_name, x->st_info, x->st_other, x->st_shndx, x->st_value, x->st_size };
    *shndx = x->st_shndx;
    int moved = x->st_shndx != SHN_UNDEF && x->st_shndx < 256 && (r->alloc[x->st_shndx / 64] >> (x->st_shndx % 64) & 1);
    *addr = x->st_value + (moved ? r->bias : 0);
    return x->st_name < r->n_str ? r->str + x->st_name : NULL;
}

static int raw_matches(Dwfl_Module *mod, const struct clt_symtab_fns *f, const struct raw *r, int i)
{
    GElf_Sym a, b;
    GElf_Addr at_a, at_b;
    GElf_Word x_a, x_b;
    const char *name = f->getsym_info(mod, i, &a, &at_a, &x_a, NULL, NULL);
    const char *mine = symbol(mod, f, r, i, &b, &at_b, &x_b);
    return name == mine && at_a == at_b && x_a == x_b && a.st_size == b.st_size && a.st_info == b.st_info &&
           a.st_name == b.st_name;
}

static int raw_symbols(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count, struct raw *r)
{
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    Elf *elf = NULL;
    Dwarf_Addr bias = 0;
    GElf_Shdr sh;
    if (!f->nextscn || !f->getsym_info(mod, 1, &sym, &addr, &shndx, &elf, &bias) || !elf)
        return 0;
    Elf_Scn *table = NULL;
    unsigned index = 0;
    memset(r, 0, sizeof *r);
    for (Elf_Scn *scn = NULL; (scn = f->nextscn(elf, scn)) != NULL;) {
        if (++index >= 256 || !f->getshdr(scn, &sh))
            return 0;           /* more sections than it keeps: libdw reads them */
        if (sh.sh_flags & SHF_ALLOC)
            r->alloc[index / 64] |= 1ull << (index % 64);
        if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && sh.sh_entsize == sizeof(Elf64_Sym) &&
            sh.sh_size / sizeof(Elf64_Sym) == (uint64_t)count && !table)
            table = scn;
    }
    Elf_Data *d = table && f->getshdr(table, &sh) ? f->getdata(table, NULL) : NULL, *sd = NULL;
    Elf_Scn *strs = d ? f->getscn(elf, sh.sh_link) : NULL;
    if (strs)
        sd = f->getdata(strs, NULL);
    if (!d || !sd || !d->d_buf || !sd->d_buf || d->d_size < (size_t)count * sizeof(Elf64_Sym))
        return 0;
    r->sym = d->d_buf;
    r->str = sd->d_buf;
    r->n_str = sd->d_size;
    r->bias = bias;
    for (int k = 0; k < 16; k++)          /* libdw's own answers at 16 places, the first and last among them */
        if (!raw_matches(mod, f, r, 1 + (int)((int64_t)(count - 2) * k / 15)))
            return 0;
    return 1;
}

static struct clt_symtab *make(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count)
{
    struct clt_symtab *t = calloc(1, sizeof *t);
    struct raw r = { 0 };
    if (!t || !(t->e = malloc(sizeof *t->e * (size_t)count)) ||
        !(t->sizeless = malloc(2 * sizeof *t->sizeless * (size_t)count)) ||
        !(t->odd = malloc(sizeof *t->odd * (size_t)count))) {
        clt_symtab_free(t);
        return NULL;
    }
    if (!raw_symbols(mod, f, count, &r))
        memset(&r, 0, sizeof r);
    t->raw = r.sym != NULL;
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = symbol(mod, f, &r, i, &sym, &addr, &shndx);
        int type = GELF_ST_TYPE(sym.st_info);
        /* no name: st_name 0. The name itself is not read here: touching
         * each one was most of the making (LLVM's 3 MB of names, page by
         * page); an entry whose name is empty all the same is libdw's
         * (clt_symtab_lookup). An extended section index: libdw's to read */
        if (r.sym && shndx == SHN_XINDEX) {
            clt_symtab_free(t);
            return NULL;
        }
        if (!name || !sym.st_name || shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS)
            continue;
        if (shndx >= SHN_LORESERVE) {     /* an absolute value (LLVM's version, LLVM_15, at 0): libdw's at it */
            t->odd[t->n_odd][0] = addr;
            t->odd[t->n_odd++][1] = addr + sym.st_size;
            continue;
        }
        if (!sym.st_size) {               /* a label: libdw's near it */
            t->sizeless[t->n_sizeless++] = addr;
            continue;
        }
        int bind = GELF_ST_BIND(sym.st_info);
        t->e[t->n++] = (struct entry){ addr, addr + sym.st_size, 0, name, (uint32_t)i,
                                       (uint8_t)(bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1) };
    }
    if (sort_entries(t) != 0) {
        clt_symtab_free(t);
        return NULL;
    }
    radix_sort(t->sizeless, t->sizeless + t->n_sizeless, t->n_sizeless);
    uint64_t reach = 0;
    for (unsigned i = 0; i < t->n; i++)
        t->e[i].reach = reach = t->e[i].hi > reach ? t->e[i].hi : reach;
    return t;
}

int clt_symtab_read_in_place(const struct clt_symtab *t)
{
    return t && t->raw;
}

/* The last entry at or below `at`; -1: none */
static long closest(const struct clt_symtab *t, uint64_t at)
{
    long lo = 0, hi = (long)t->n - 1, found = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (t->e[mid].lo <= at) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static int sizeless_between(const struct clt_symtab *t, uint64_t from, uint64_t at)
{
    unsigned lo = 0, hi = t->n_sizeless;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (t->sizeless[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n_sizeless && t->sizeless[lo] <= at;
}

/* libdw takes an absolute symbol where it holds `at` or stands at it; below
 * `at` its end, as any symbol's, bounds where a label can answer (*reach). */
static int odd_holds(const struct clt_symtab *t, uint64_t at, uint64_t *reach)
{
    for (unsigned i = 0; i < t->n_odd; i++) {
        if (t->odd[i][0] == at || (t->odd[i][0] <= at && at < t->odd[i][1]))
            return 1;
        if (t->odd[i][0] <= at && t->odd[i][1] > *reach)
            *reach = t->odd[i][1];
    }
    return 0;
}

/* The name of the symbol that holds `at` (*name; NULL: none does), where
 * the table alone says it plainly: 1; 0: libdw's to answer. */
int clt_symtab_lookup(const struct clt_symtab *t, uint64_t at, const char **name)
{
    long i = t ? closest(t, at) : -1;
    const struct entry *best = NULL;
    *name = NULL;
    if (!t)
        return 0;
    uint64_t reach = i < 0 ? 0 : t->e[i].reach;
    if (reach <= at)   /* none holds it: a label since the last end would be libdw's answer */
        return !odd_holds(t, at, &reach) && !sizeless_between(t, reach, at);
    for (long k = 0; i >= 0 && t->e[i].reach > at; i--, k++) {
        const struct entry *e = &t->e[i];
        if (k == BACK_MOST)
            return 0;
        if (at >= e->hi)
            continue;
        if (best && e->lo != best->lo)
            return 0;              /* nested symbols: libdw's order of search decides */
        /* aliases at one place: libdw's the global one, else the weak one,
         * and of equals the first in the table */
        if (!best || e->rank > best->rank || (e->rank == best->rank && e->index < best->index))
            best = e;
    }
    if (!best || !best->name[0] || sizeless_between(t, best->lo, at))
        return 0;
    *name = best->name;
    return 1;
}

struct clt_symtab *clt_symtab_of(struct clt_map *tables, Dwfl_Module *mod, const struct clt_symtab_fns *f)
{
    uint64_t key = (uint64_t)(uintptr_t)mod;
    void *got = clt_map_get(tables, key);
    if (got)
        return got == (void *)tables ? NULL : got;    /* the map itself: a module libdw answers */
    int count = f->getsymtab(mod);
    struct clt_symtab *t = count >= SMALL_TABLE ? make(mod, f, count) : NULL;
    if (clt_map_put(tables, key, t ? (void *)t : (void *)tables) != 0) {
        clt_symtab_free(t);
        return NULL;
    }
    return t;
}

void clt_symtab_free(struct clt_symtab *t)
{
    if (!t)
        return;
    free(t->e);
    free(t->sizeless);
    free(t->odd);
    free(t);
}

void clt_symtabs_free(struct clt_map *tables)
{
    for (size_t i = 0; tables->keys && i < tables->cap; i++)
        if (tables->keys[i] && tables->vals[i] != (void *)tables)
            clt_symtab_free(tables->vals[i]);
    clt_map_free(tables);
}

/* A function's name as a reader wants it, into out (cap bytes) where it
 * must change: the symbol version dropped (memcpy@@GLIBC_2.14), GCC's
 * clones named for their function (launch.constprop.0.isra.0, f.part.1,
 * f.cold); without a symbol, where it is, as a person would look it up
 * (addr2line -e file+offset). */
const char *clt_symtab_readable(const char *fn, const char *file, uint64_t base, uint64_t pc, char *out, size_t cap)
{
    const char *at_sign = fn ? strchr(fn, '@') : NULL;
    if (at_sign && at_sign > fn && (size_t)(at_sign - fn) < cap) {
        memmove(out, fn, (size_t)(at_sign - fn));
        out[at_sign - fn] = 0;
        fn = out;
    }
    static const char *const clone[] = { ".constprop.", ".isra.", ".part.", ".cold", NULL };
    for (unsigned k = 0; fn && clone[k]; k++) {
        const char *c = strstr(fn, clone[k]);
        if (c && c > fn && (size_t)(c - fn) < cap) {
            memmove(out, fn, (size_t)(c - fn));
            out[c - fn] = 0;
            fn = out;
        }
    }
    if (fn)
        return fn;
    if (base && *file)
        snprintf(out, cap, "%s+0x%llx", file, (unsigned long long)(pc - 1 - base));
    else
        snprintf(out, cap, "0x%llx", (unsigned long long)pc);
    return out;
}

/* A C++ name as people read it (cv::UMat::create(int, int const*, ...)),
 * with the C++ runtime's own demangler: the program's if it has one, else
 * loaded privately. NULL: not a mangled name, or no demangler. */
char *clt_symtab_demangle(const char *name)
{
    typedef char *(*demangle_t)(const char *, char *, size_t *, int *);
    static demangle_t fn;
    static int tried;
    if (strncmp(name, "_Z", 2) != 0)
        return NULL;
    if (!tried) {
        tried = 1;
        fn = (demangle_t)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        void *h = fn ? NULL : dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h)
            fn = (demangle_t)dlsym(h, "__cxa_demangle");
    }
    int status = -1;
    char *out = fn ? fn(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}
