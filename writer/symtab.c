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
 * address. Anything else (nested or overlapping
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

#define SMALL_TABLE 2000     /* fewer symbols: libdw's walk costs less than a sort */
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
};

static int by_address(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static struct clt_symtab *make(Dwfl_Module *mod, const struct clt_symtab_fns *f, int count)
{
    struct clt_symtab *t = calloc(1, sizeof *t);
    if (!t || !(t->e = malloc(sizeof *t->e * (size_t)count)) ||
        !(t->sizeless = malloc(sizeof *t->sizeless * (size_t)count))) {
        clt_symtab_free(t);
        return NULL;
    }
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = f->getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !name[0] || shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS)
            continue;
        if (!sym.st_size || shndx >= SHN_LORESERVE) {     /* a label, an absolute value: libdw's near them */
            t->sizeless[t->n_sizeless++] = addr;
            continue;
        }
        int bind = GELF_ST_BIND(sym.st_info);
        t->e[t->n++] = (struct entry){ addr, addr + sym.st_size, 0, name, (uint32_t)i,
                                       (uint8_t)(bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1) };
    }
    qsort(t->e, t->n, sizeof *t->e, by_address);
    qsort(t->sizeless, t->n_sizeless, sizeof *t->sizeless, by_value);
    uint64_t reach = 0;
    for (unsigned i = 0; i < t->n; i++)
        t->e[i].reach = reach = t->e[i].hi > reach ? t->e[i].hi : reach;
    return t;
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

/* The name of the symbol that holds `at`, where the table alone says it
 * plainly; NULL: libdw's to answer. */
const char *clt_symtab_name(const struct clt_symtab *t, uint64_t at)
{
    long i = t ? closest(t, at) : -1;
    const struct entry *best = NULL;
    for (long k = 0; i >= 0 && t->e[i].reach > at; i--, k++) {
        const struct entry *e = &t->e[i];
        if (k == BACK_MOST)
            return NULL;
        if (at >= e->hi)
            continue;
        if (best && e->lo != best->lo)
            return NULL;           /* nested symbols: libdw's order of search decides */
        /* aliases at one place: libdw's the global one, else the weak one,
         * and of equals the first in the table */
        if (!best || e->rank > best->rank || (e->rank == best->rank && e->index < best->index))
            best = e;
    }
    if (!best || sizeless_between(t, best->lo, at))
        return NULL;
    return best->name;
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
