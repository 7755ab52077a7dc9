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
#include <limits.h>
#include <sys/uio.h>
#include "common/cache.h"
#include "symtab.h"

#define SMALL_TABLE 128      /* fewer symbols: a walk of them costs less than a sort (a table is
                              * made with about one walk: it pays from the second address) */
#define BACK_MOST 16         /* entries looked at below the closest one */

/* The table is the module's symbols where libdw read them (in place, or a
 * copy through libdw where they cannot be read in place) and, for the
 * sized ones, two arrays sorted by address: a key each (its address from
 * the module's lowest, then its index) and the highest end of it and every
 * one before it. Entries of their own (48 bytes a symbol, copied again to
 * sort them) made LLVM's table 6-7 ms of the writer's CPU on 2 cores, most
 * of it first touches of 5 MB of fresh memory (page faults on a VM). */
struct clt_symtab {
    const Elf64_Sym *sym;    /* by libdw's index */
    const char *str;         /* in place: a name at str + st_name (n_str bytes) */
    size_t n_str;
    const char **names;      /* through libdw: each symbol's name (else NULL) */
    Elf64_Sym *copy;         /* through libdw: the symbols, addresses final (freed with the table) */
    GElf_Addr bias;          /* in place: the load bias of a mapped section's symbol */
    uint64_t alloc[4];       /* in place: sections 0..255 the process maps (SHF_ALLOC) */
    uint64_t base;           /* the lowest sized symbol's address */
    unsigned bits;           /* of a key, the index's */
    uint64_t *key, *reach;   /* sorted: (address - base) << bits | index; highest end so far */
    unsigned n;
    uint64_t *sizeless;      /* addresses of named symbols without a size, sorted */
    unsigned n_sizeless;
    uint64_t shift;          /* added to reach[] and sizeless[]: a table read from disk is the load bias away */
    const void *disk;        /* that table's file, mapped: key[] to odd[] point into it */
    size_t disk_len;
    uint64_t (*odd)[2];      /* symbols outside the sections (an absolute value, a link warning): [lo, hi) */
    unsigned n_odd;
    int moved;               /* every sized symbol and label moved by bias: kept on disk (disk_write) */
};

/* Sorts n keys in place by their bits from `from` up, stably (LSD radix,
 * 11 bits a pass: its counts stay in the cache; as many passes as the
 * largest key needs: the bits below `from`, a symbol's index, are not
 * sorted on, one pass in four for LLVM's); tmp: room for n more. qsort with
 * a comparison call was a third of a large table's making (46,000 of
 * LLVM's symbols), 16-bit digits (a 512 KiB count) a quarter. */
static void radix_sort(uint64_t *k, uint64_t *tmp, size_t n, unsigned from)
{
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++)
        top |= k[i];
    for (unsigned shift = from; shift < 64 && top >> shift; shift += 11) {
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

/* Symbol i's address as libdw's: a mapped section's symbol moved by the
 * load bias, an undefined or absolute one as it is (a copy's: as libdw
 * gave it). */
static uint64_t address_of(const struct clt_symtab *t, unsigned i)
{
    const Elf64_Sym *x = &t->sym[i];
    int moved = x->st_shndx != SHN_UNDEF && x->st_shndx < 256 && (t->alloc[x->st_shndx / 64] >> (x->st_shndx % 64) & 1);
    return x->st_value + (moved ? t->bias : 0);
}

static const char *name_of(const struct clt_symtab *t, unsigned i)
{
    if (t->names)
        return t->names[i];
    return t->sym[i].st_name < t->n_str ? t->str + t->sym[i].st_name : NULL;
}

static int raw_matches(Dwfl_Module *mod, const struct clt_symtab_fns *f, const struct clt_symtab *t, int i)
{
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    const char *name = f->getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
    const Elf64_Sym *x = &t->sym[i];
    return name == name_of(t, (unsigned)i) && addr == address_of(t, (unsigned)i) && shndx == x->st_shndx &&
           sym.st_size == x->st_size && sym.st_info == x->st_info && sym.st_name == x->st_name;
}

/* The symbols where libdw read them, in place (index i is libdw's i: one
 * table, no auxiliary one), checked against libdw at 16 of them. libdw's
 * getsym_info cost ~270 instructions a symbol, 23 of the 40 million that
 * LLVM's and clang's tables took to make (a program on PoCL: its CPU
 * samples). 0: they cannot be read in place. */
static int in_place(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count, struct clt_symtab *t)
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
    for (Elf_Scn *scn = NULL; (scn = f->nextscn(elf, scn)) != NULL;) {
        if (++index >= 256 || !f->getshdr(scn, &sh))
            return 0;           /* more sections than it keeps: libdw reads them */
        if (sh.sh_flags & SHF_ALLOC)
            t->alloc[index / 64] |= 1ull << (index % 64);
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
    t->sym = d->d_buf;
    t->str = sd->d_buf;
    t->n_str = sd->d_size;
    t->bias = bias;
    for (int k = 0; k < 16; k++)          /* libdw's own answers at 16 places, the first and last among them */
        if (!raw_matches(mod, f, t, 1 + (int)((int64_t)(count - 2) * k / 15)))
            return 0;
    for (int i = 1; i < count; i++)
        if (t->sym[i].st_shndx == SHN_XINDEX)
            return 0;           /* an extended section index: libdw's to read */
    return 1;
}

/* The symbols through libdw, one by one, into a copy with final addresses. */
static int through_libdw(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count, struct clt_symtab *t)
{
    if (!(t->copy = calloc((size_t)count, sizeof *t->copy)) || !(t->names = calloc((size_t)count, sizeof *t->names)))
        return 0;
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        t->names[i] = f->getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        /* an extended index: a section all the same */
        uint16_t x = shndx >= SHN_LORESERVE && sym.st_shndx == SHN_XINDEX ? 1 : (uint16_t)shndx;
        t->copy[i] = (Elf64_Sym){ sym.st_name, sym.st_info, sym.st_other, x, addr, sym.st_size };
    }
    memset(t->alloc, 0, sizeof t->alloc);     /* addresses final: none moved */
    t->sym = t->copy;
    return 1;
}

static int rank_of(const Elf64_Sym *x)
{
    int bind = GELF_ST_BIND(x->st_info);
    return bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;   /* libdw's preference */
}

/* Which symbols it keeps (sized ones: 1; labels and absolute ones: 2 and 3;
 * 0: none). No name: st_name 0; the name itself is not read here (touching
 * each one, LLVM's 3 MB of names, page by page, was most of the making): an
 * entry whose name is empty all the same is libdw's (clt_symtab_lookup). */
static int kind_of(const struct clt_symtab *t, unsigned i)
{
    const Elf64_Sym *x = &t->sym[i];
    int type = GELF_ST_TYPE(x->st_info);
    if (!x->st_name || (t->names && !t->names[i]) || x->st_shndx == SHN_UNDEF || type == STT_SECTION ||
        type == STT_FILE || type == STT_TLS)
        return 0;
    if (x->st_shndx >= SHN_LORESERVE)
        return 3;               /* an absolute value (LLVM's version, LLVM_15, at 0): libdw's at it */
    return x->st_size ? 1 : 2;  /* 2: a label, libdw's near it */
}

/* Is symbol i where the module's load put it (a mapped section's)? */
static int moved(const struct clt_symtab *t, unsigned i)
{
    unsigned x = t->sym[i].st_shndx;
    return !t->copy && x != SHN_UNDEF && x < 256 && (t->alloc[x / 64] >> (x % 64) & 1);
}

/* The sorted arrays over the symbols: 0, or -1 (no memory, a module wider
 * than a key holds). t->moved: every sized symbol and label moved by the
 * load bias, so that the table can be kept on disk. */
static int sort_symbols(struct clt_symtab *t, int count)
{
    unsigned sized = 0, sizeless = 0, odd = 0;
    t->moved = !t->copy;
    t->base = UINT64_MAX;
    for (int i = 1; i < count; i++) {
        int k = kind_of(t, (unsigned)i);
        sized += k == 1, sizeless += k == 2, odd += k == 3;
        t->moved &= (k != 1 && k != 2) || moved(t, (unsigned)i);
        if (k == 1 && address_of(t, (unsigned)i) < t->base)
            t->base = address_of(t, (unsigned)i);
    }
    t->bits = 1;
    while (t->bits < 32 && (unsigned)count >> t->bits)
        t->bits++;
    uint64_t *tmp = malloc(sizeof *tmp * (sized > sizeless ? sized : sizeless) + 1);
    if (!tmp || !(t->key = malloc(sizeof *t->key * sized + 1)) || !(t->reach = malloc(sizeof *t->reach * sized + 1)) ||
        !(t->sizeless = malloc(sizeof *t->sizeless * sizeless + 1)) || !(t->odd = malloc(sizeof *t->odd * odd + 1))) {
        free(tmp);
        return -1;
    }
    for (int i = 1; i < count; i++) {
        int k = kind_of(t, (unsigned)i);
        uint64_t at = k ? address_of(t, (unsigned)i) : 0;
        if (k == 1 && (at - t->base) >> (64 - t->bits)) {    /* a module wider than the key holds */
            free(tmp);
            return -1;
        }
        if (k == 1)
            t->key[t->n++] = (at - t->base) << t->bits | (uint64_t)i;
        else if (k == 2)
            t->sizeless[t->n_sizeless++] = at;
        else if (k == 3)
            t->odd[t->n_odd][0] = at, t->odd[t->n_odd++][1] = at + t->sym[i].st_size;
    }
    radix_sort(t->key, tmp, t->n, t->bits);     /* aliases stay in the table's order */
    radix_sort(t->sizeless, tmp, t->n_sizeless, 0);
    free(tmp);
    uint64_t reach = 0, mask = (1ull << t->bits) - 1;
    for (unsigned i = 0; i < t->n; i++) {
        uint64_t hi = (t->key[i] >> t->bits) + t->base + t->sym[t->key[i] & mask].st_size;
        t->reach[i] = reach = hi > reach ? hi : reach;
    }
    return 0;
}

/* ---- tables kept on disk, by build id --------------------------------------
 * LLVM's and clang's tables are 5 ms of the writer's CPU at each run of a
 * PoCL program (its CPU samples land in them, 2 cores). Made once, a table
 * whose symbols were read in place and all moved by the load bias is kept
 * in the user's cache (common/cache.h: symtab/BUILDID-COUNT.tab); a later
 * run reads it back, its addresses moved by that run's bias, and checks 16
 * of its entries against the symbols before it trusts it. */
struct disk_head { char magic[8]; uint32_t count, n, n_sizeless, n_odd, bits, zero; uint64_t base; };
static const char DISK_MAGIC[8] = "cltsym1";
static unsigned tables_made, tables_read;

static int disk_path(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count, char *path, size_t cap)
{
    const unsigned char *id;
    GElf_Addr at;
    int n = f->build_id && f->cache ? f->build_id(mod, &id, &at) : 0;
    if (n < 8 || n > 64)
        return -1;              /* no build id: a table by name could be another file's */
    char name[160];
    for (int i = 0; i < n; i++)
        snprintf(name + 2 * i, 3, "%02x", id[i]);
    snprintf(name + 2 * n, sizeof name - 2 * (size_t)n, "-%d.tab", count);
    return clt_cache_path("symtab", name, path, cap);
}

static void disk_write(const struct clt_symtab *t, Dwfl_Module *mod, const struct clt_symtab_fns *f, int count)
{
    char path[PATH_MAX];
    if (!t->moved || disk_path(mod, f, count, path, sizeof path) != 0)
        return;
    struct disk_head h = { "", (uint32_t)count, t->n, t->n_sizeless, t->n_odd, t->bits, 0, t->base - t->bias };
    memcpy(h.magic, DISK_MAGIC, sizeof h.magic);
    uint64_t *rel = malloc(sizeof *rel * (t->n + t->n_sizeless) + 1);
    if (!rel)
        return;
    for (unsigned i = 0; i < t->n; i++)
        rel[i] = t->reach[i] - t->bias;
    for (unsigned i = 0; i < t->n_sizeless; i++)
        rel[t->n + i] = t->sizeless[i] - t->bias;
    struct iovec parts[] = { { &h, sizeof h }, { t->key, sizeof *t->key * t->n },
                             { rel, sizeof *rel * (t->n + t->n_sizeless) }, { t->odd, sizeof *t->odd * t->n_odd } };
    clt_cache_write(path, parts, 4);
    free(rel);
}

/* Entry i of a table read back: its symbol sized, at the address its key says. */
static int entry_true(const struct clt_symtab *t, unsigned i, int count)
{
    unsigned index = (unsigned)(t->key[i] & ((1ull << t->bits) - 1));
    return index > 0 && index < (unsigned)count && kind_of(t, index) == 1 && moved(t, index) &&
           address_of(t, index) == (t->key[i] >> t->bits) + t->base;
}

/* The file's arrays used where they are mapped (each 8-byte aligned after the
 * 40-byte head). Copied into arrays of their own, moved by the bias, the
 * tables a PoCL launch loop reads back touched ~1.2 MB more of fresh memory,
 * ~300 page faults of the writer's (perf, 2026-11-29; ~3 us each on a VM);
 * read whole into memory of their own (2 MB for LLVM's, clang's and PoCL's),
 * 1.9 ms of the writer's 19.9 (20 runs): a lookup looks at a few pages. The
 * file could be cut short under the mapping only by hand, as the libraries
 * libdw maps for this writer could. */
static int disk_read(struct clt_symtab *t, Dwfl_Module *mod, const struct clt_symtab_fns *f, int count)
{
    char path[PATH_MAX];
    size_t len;
    const struct disk_head *h = disk_path(mod, f, count, path, sizeof path) == 0 ? clt_cache_map(path, &len, 1u << 28)
                                                                                : NULL;
    int ok = h && len >= sizeof *h && !memcmp(h->magic, DISK_MAGIC, sizeof h->magic) && h->count == (uint32_t)count &&
             h->n <= (uint32_t)count && h->n_sizeless <= (uint32_t)count && h->n_odd <= (uint32_t)count &&
             h->bits > 0 && h->bits < 32 && !h->zero &&
             len == sizeof *h + 8 * (2 * (size_t)h->n + h->n_sizeless + 2 * (size_t)h->n_odd);
    if (!ok) {
        clt_cache_unmap(h, h ? len : 0);
        return 0;
    }
    uint64_t *w = (uint64_t *)(uintptr_t)(h + 1);     /* read only: a table read back is never written */
    t->n = h->n, t->n_sizeless = h->n_sizeless, t->n_odd = h->n_odd, t->bits = h->bits;
    t->base = h->base + t->bias;
    t->key = w;
    t->reach = w + t->n;
    t->sizeless = w + 2 * (size_t)t->n;
    t->odd = (uint64_t(*)[2])(w + 2 * (size_t)t->n + t->n_sizeless);
    t->shift = t->bias;
    t->disk = h;
    t->disk_len = len;
    for (unsigned k = 0; ok && t->n && k < 16; k++)
        ok = entry_true(t, (unsigned)((uint64_t)(t->n - 1) * k / 15), count);
    return ok;
}

static struct clt_symtab *make(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count)
{
    struct clt_symtab *t = calloc(1, sizeof *t);
    if (t && in_place(mod, f, count, t)) {
        if (disk_read(t, mod, f, count)) {
            tables_read++;
            return t;
        }
        clt_cache_unmap(t->disk, t->disk_len);   /* none, or not trusted: made */
        t->key = t->reach = t->sizeless = NULL;
        t->odd = NULL;
        t->disk = NULL;
        t->disk_len = 0;
        t->n = t->n_sizeless = t->n_odd = 0;
        t->shift = 0;
    } else if (t) {
        memset(t, 0, sizeof *t);
        if (!through_libdw(mod, f, count, t)) {
            clt_symtab_free(t);
            return NULL;
        }
    }
    if (!t || sort_symbols(t, count) != 0) {
        clt_symtab_free(t);
        return NULL;
    }
    tables_made++;
    disk_write(t, mod, f, count);
    return t;
}

void clt_symtab_counts(unsigned *made, unsigned *read)
{
    *made = tables_made;
    *read = tables_read;
}

int clt_symtab_read_in_place(const struct clt_symtab *t)
{
    return t && !t->copy;
}

static uint64_t lo_of(const struct clt_symtab *t, long i)
{
    return (t->key[i] >> t->bits) + t->base;
}

/* The last entry at or below `at`; -1: none */
static long closest(const struct clt_symtab *t, uint64_t at)
{
    long lo = 0, hi = (long)t->n - 1, found = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (lo_of(t, mid) <= at) {
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
        if (t->sizeless[mid] + t->shift < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n_sizeless && t->sizeless[lo] + t->shift <= at;
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
    *name = NULL;
    if (!t)
        return 0;
    uint64_t reach = i < 0 ? 0 : t->reach[i] + t->shift, mask = (1ull << t->bits) - 1;
    if (reach <= at)   /* none holds it: a label since the last end would be libdw's answer */
        return !odd_holds(t, at, &reach) && !sizeless_between(t, reach, at);
    long best = -1;
    unsigned best_index = 0;
    for (long k = 0; i >= 0 && t->reach[i] + t->shift > at; i--, k++) {
        unsigned index = (unsigned)(t->key[i] & mask);
        uint64_t lo = lo_of(t, i);
        if (k == BACK_MOST)
            return 0;
        if (at >= lo + t->sym[index].st_size)
            continue;
        if (best >= 0 && lo != lo_of(t, best))
            return 0;              /* nested symbols: libdw's order of search decides */
        /* aliases at one place: libdw's the global one, else the weak one,
         * and of equals the first in the table */
        int r = rank_of(&t->sym[index]), rb = best >= 0 ? rank_of(&t->sym[best_index]) : 0;
        if (best < 0 || r > rb || (r == rb && index < best_index))
            best = i, best_index = index;
    }
    const char *n = best >= 0 ? name_of(t, best_index) : NULL;
    if (!n || !n[0] || sizeless_between(t, lo_of(t, best), at))
        return 0;
    *name = n;
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
    if (!t->disk) {
        free(t->key);
        free(t->reach);
        free(t->sizeless);
        free(t->odd);
    }
    clt_cache_unmap(t->disk, t->disk_len);
    free(t->copy);
    free(t->names);
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
