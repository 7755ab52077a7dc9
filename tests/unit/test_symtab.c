/* writer/symtab.c against libdw's own lookup (dwfl_module_addrname), on
 * every module of this process with a large symbol table (the C library,
 * LLVM's where PoCL is installed, whatever argv names): the start, middle
 * and last byte of ~150 of its symbols, the byte past each, and 200
 * addresses spread over the module. Every answer the table gives is libdw's
 * (a name, or none: an address no symbol holds); the table answers 9 in 10
 * of the addresses libdw names, and 9 in 10 of all. A table whose symbols
 * were read in place (libelf) answers as one read through libdw does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "writer/symtab.h"

static const struct clt_symtab_fns fns = { dwfl_module_getsymtab, dwfl_module_getsym_info, elf_nextscn, elf_getscn,
                                           gelf_getshdr, elf_getdata };
static const struct clt_symtab_fns via_libdw = { dwfl_module_getsymtab, dwfl_module_getsym_info, NULL, NULL, NULL,
                                                 NULL };
static struct clt_map tables, tables_via_libdw;
static int failed, modules_checked, read_in_place;
static const struct clt_symtab *slow;   /* the same module's table read through libdw */

struct tally { unsigned probes, named, answered, answered_named, none, differ; };

static void probe(Dwfl_Module *mod, const struct clt_symtab *t, uint64_t at, struct tally *y)
{
    const char *ours, *theirs = dwfl_module_addrname(mod, at);
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
    if (!answered)
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
    (void)user, (void)arg;
    int count = dwfl_module_getsymtab(mod);
    struct clt_symtab *t = clt_symtab_of(&tables, mod, &fns);
    if (!t)
        return DWARF_CB_OK;         /* small: libdw answers it, as before */
    slow = clt_symtab_of(&tables_via_libdw, mod, &via_libdw);
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
    if (y.differ || y.answered_named < y.named * 9 / 10 || y.answered < y.probes * 9 / 10)
        failed = 1;
    modules_checked++;
    return DWARF_CB_OK;
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
    dwfl_getmodules(d, check_module, NULL, 0);
    clt_symtabs_free(&tables);
    clt_symtabs_free(&tables_via_libdw);
    dwfl_end(d);
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
