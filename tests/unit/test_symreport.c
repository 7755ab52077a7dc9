/* The symbolizer reads the process's map again only where the dynamic
 * linker loaded or unloaded something since (writer/symbols.c module_of):
 * addresses in no module (a JIT's code, a driver's) each read all of it,
 * 1.4 M instructions for PoCL's 1,100 mappings. Checked: the first frame
 * reports the process once; 64 addresses in an anonymous page add no
 * report; a library loaded afterwards is found, with one report, and named.
 * Argument: a shared library nothing else loads (with a symbol "cxx_lib_call"
 * or any exported function: its first dynamic symbol is asked for). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "writer/symbols.h"
#include "check.h"

/* What symbols.c asks of the rest of the writer, none of it used here: its
 * threads' priority, a Python line, a string's check. */
int clt_own_raise(void) { return 0; }
void clt_own_lower(int raised) { (void)raised; }
uint32_t clt_py_sample_line(struct clt_map *cache, uint64_t code, uint64_t kept, uint32_t offset)
{
    (void)cache, (void)code, (void)kept, (void)offset;
    return 0;
}
int clt_utf8_text(const char *s) { (void)s; return 1; }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_symreport LIBRARY.so SYMBOL\n");
        return 2;
    }
    struct clt_symbols s;
    clt_sym_init(&s);
    if (strcmp(clt_sym_source(&s), "libdw") != 0) {
        printf("symbolizer reports: skipped (no libdw)\n");
        return 0;
    }
    uint64_t pc = (uint64_t)(uintptr_t)main + 4;
    clt_sym_stack_sampled(&s, &pc, 1);
    CHECK(s.dwfl_reports == 1, "the first frame: %u reports, not 1", s.dwfl_reports);

    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED, "mmap");
    for (unsigned i = 0; page != MAP_FAILED && i < 64; i++) {
        uint64_t jit = (uint64_t)(uintptr_t)page + 16 + 32 * i;
        clt_sym_stack_sampled(&s, &jit, 1);
    }
    CHECK(s.dwfl_reports == 1, "64 addresses in no module: %u reports, not 1", s.dwfl_reports);

    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void *fn = h ? dlsym(h, argv[2]) : NULL;
    CHECK(fn != NULL, "%s in %s: %s", argv[2], argv[1], dlerror());
    if (fn) {
        uint64_t in_lib = (uint64_t)(uintptr_t)fn + 1;
        uint32_t st = clt_sym_stack_sampled(&s, &in_lib, 1);
        char top[256];
        const char *name = clt_sym_top(&s, st, top, sizeof top);
        CHECK(s.dwfl_reports == 2, "a library loaded since: %u reports, not 2", s.dwfl_reports);
        CHECK(name && strstr(name, argv[2]) != NULL, "its function named '%s', not %s", name ? name : "(none)",
              argv[2]);
    }
    clt_sym_free(&s);
    if (failures)
        fprintf(stderr, "%d failed\n", failures);
    else
        printf("symbolizer reports: once, again only for a library loaded since\n");
    return failures != 0;
}
