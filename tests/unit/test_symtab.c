/* writer/symtab.c against libdw's own lookup (dwfl_module_addrname), on
 * every module of this process with a large symbol table (the C library,
 * LLVM's where PoCL is installed, whatever argv names): the start, middle
 * and last byte of ~150 of its symbols, the byte past each, and 200
 * addresses spread over the module. Every answer the table gives is libdw's
 * (a name, or none: an address no symbol holds); the table answers 9 in 10
 * of the addresses libdw names, and 9 in 10 of all. A table whose symbols
 * were read in place (libelf) answers as one read through libdw does; one
 * read back from the cache (a fresh XDG_CACHE_HOME) as the one made; a
 * cached table cut short is not trusted, but made again. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "writer/symtab.h"

static const struct clt_symtab_fns fns = { dwfl_module_getsymtab, dwfl_module_getsym_info, elf_nextscn, elf_getscn,
                                           gelf_getshdr, elf_getdata, dwfl_module_build_id, 1 };
static const struct clt_symtab_fns via_libdw = { dwfl_module_getsymtab, dwfl_module_getsym_info, NULL, NULL, NULL,
                                                 NULL, NULL, 0 };
static struct clt_map tables_via_libdw;
static int failed, modules_checked, read_in_place;
static const struct clt_symtab *slow;   /* the same module's table read through libdw, or as first made */
static struct clt_map *first;           /* after the first pass: its tables, libdw not asked again */

struct tally { unsigned probes, named, answered, answered_named, none, differ; };

static void probe(Dwfl_Module *mod, const struct clt_symtab *t, uint64_t at, struct tally *y)
{
    const char *ours, *theirs = first ? NULL : dwfl_module_addrname(mod, at);
    int answered = clt_symtab_lookup(t, at, &ours);
    const char *slow_name;
    int slow_answered = clt_symtab_lookup(slow, at, &slow_name);
    if (slow_answered != answered || (answered && slow_name != ours)) {
        if (y->differ++ < 5)
            fprintf(stderr, "  %#lx: read in place %s, through libdw %s\n", (unsigned long)at,
                    answered ? ours ? ours : "(nothing)" : "(libdw's)",
                    slow_answered ? slow_name ? slow_name : "(nothing)" : "(libdw's)");
    }
    y->probes++;
    y->named += theirs != NULL;
    if (!answered || first)
        return;
    y->answered++;
    y->answered_named += theirs != NULL;
    y->none += !ours;
    if (!ours != !theirs || (ours && strcmp(ours, theirs) != 0)) {
        if (y->differ++ < 5)
            fprintf(stderr, "  %#lx: the table says %s, libdw %s\n", (unsigned long)at, ours ? ours : "(nothing)",
                    theirs ? theirs : "(nothing)");
    }
}

static int check_module(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr start, void *arg)
{
    (void)user;
    int count = dwfl_module_getsymtab(mod);
    struct clt_symtab *t = clt_symtab_of(arg, mod, &fns);
    if (!t)
        return DWARF_CB_OK;         /* small: libdw answers it, as before */
    slow = first ? clt_symtab_of(first, mod, &fns) : clt_symtab_of(&tables_via_libdw, mod, &via_libdw);
    read_in_place += clt_symtab_read_in_place(t);
    Dwarf_Addr lo, hi;
    dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
    struct tally y = { 0, 0, 0, 0, 0, 0 };
    int step = count / 150 > 0 ? count / 150 : 1;
    for (int i = 1; i < count; i += step) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *n = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        if (!n || !sym.st_size || shndx == SHN_UNDEF)
            continue;
        probe(mod, t, addr, &y);
        probe(mod, t, addr + sym.st_size / 2, &y);
        probe(mod, t, addr + sym.st_size - 1, &y);
        probe(mod, t, addr + sym.st_size, &y);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200 && hi > lo; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        probe(mod, t, lo + x % (hi - lo), &y);
    }
    (void)start;
    printf("symtab: %s (%d symbols%s): %u addresses, %u named by libdw; the table answers %u (%u of them "
           "none), %u differ\n", name, count, clt_symtab_read_in_place(t) ? ", read in place" : "", y.probes, y.named,
           y.answered, y.none, y.differ);
    /* the share answered, on the large tables the writer makes them for (this
     * program's own 148 symbols, many of them labels, are over SMALL_TABLE) */
    int few = !first && count >= 1000 && (y.answered_named < y.named * 9 / 10 || y.answered < y.probes * 9 / 10);
    if (y.differ || few) {
        printf("symtab: %s: %s\n", name, y.differ ? "answers differ" : "under 9 in 10 answered");
        failed = 1;
    }
    modules_checked++;
    return DWARF_CB_OK;
}

/* Every table in the cache made 8 bytes shorter. */
static void cut_short(const char *cache)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "for f in %s/cltrace/symtab/*.tab; do truncate -s -8 \"$f\"; done", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "symtab: cannot cut the cached tables short\n");
}

int main(int argc, char **argv)
{
    const char *libs[] = { "libLLVM-15.so.1", "libstdc++.so.6" };
    for (unsigned i = 0; i < sizeof libs / sizeof libs[0]; i++)
        dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
    for (int i = 1; i < argc; i++)
        if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL))
            fprintf(stderr, "%s: %s\n", argv[i], dlerror());
    static char *debuginfo_path;
    static const Dwfl_Callbacks cb = { .find_elf = dwfl_linux_proc_find_elf,
                                       .find_debuginfo = dwfl_standard_find_debuginfo,
                                       .debuginfo_path = &debuginfo_path };
    unsetenv("DEBUGINFOD_URLS");
    Dwfl *d = dwfl_begin(&cb);
    if (!d || dwfl_linux_proc_report(d, getpid()) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
        fprintf(stderr, "symtab: libdw cannot read this process\n");
        return 1;
    }
    char cache[] = "/tmp/cltrace-symtab-XXXXXX";
    if (!mkdtemp(cache)) {
        perror("symtab: mkdtemp");
        return 1;
    }
    setenv("XDG_CACHE_HOME", cache, 1);
    static struct clt_map made, read_back, made_again;
    unsigned n_made[3], n_read[3];
    dwfl_getmodules(d, check_module, &made, 0);          /* made, kept in the cache */
    clt_symtab_counts(&n_made[0], &n_read[0]);
    first = &made;
    printf("symtab: the same modules, their tables read back from the cache, against those made\n");
    dwfl_getmodules(d, check_module, &read_back, 0);
    clt_symtab_counts(&n_made[1], &n_read[1]);
    cut_short(cache);
    printf("symtab: the same, each cached table cut short by 8 bytes\n");
    dwfl_getmodules(d, check_module, &made_again, 0);
    clt_symtab_counts(&n_made[2], &n_read[2]);
    printf("symtab: tables made %u, read back %u; read back %u, made %u; cut short: made %u, read %u\n", n_made[0],
           n_read[0], n_read[1] - n_read[0], n_made[1] - n_made[0], n_made[2] - n_made[1], n_read[2] - n_read[1]);
    unsigned read2 = n_read[1] - n_read[0], made2 = n_made[1] - n_made[0];   /* made: no build id, or not moved */
    if (n_read[0] || !read2 || n_read[2] != n_read[1] || n_made[2] - n_made[1] != read2 + made2) {
        printf("symtab: the cache was not used as it should be (above)\n");
        failed = 1;
    }
    clt_symtabs_free(&made), clt_symtabs_free(&read_back), clt_symtabs_free(&made_again);
    clt_symtabs_free(&tables_via_libdw);
    dwfl_end(d);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", cache);
    if (system(rm) != 0)
        fprintf(stderr, "symtab: %s left\n", cache);
    if (!modules_checked) {
        fprintf(stderr, "symtab: no module with a large symbol table\n");
        return 1;
    }
    if (!read_in_place) {
        printf("symtab: no module's table was read in place (libelf's functions unused)\n");
        failed = 1;
    }
    if (failed)         /* the verdict last: a failing test's last line says why */
        printf("symtab: a module's table answered an address otherwise than libdw, or under 9 in 10 (above)\n");
    return failed;
}
