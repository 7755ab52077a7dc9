/* The loaded object an address lies in (common/loaded.c): its start and
 * file name as dladdr says them, for a system library, the program itself
 * and a library the test loads; none for an address in no object; and the
 * name a copy that outlives the object (a CPU sample's frame may be named
 * after the app unloaded its library: a pointer into glibc's link map
 * then read freed memory). Argument: a shared library nothing else loads. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include "common/loaded.h"
#include "check.h"

static void same_as_dladdr(const void *at, const char *what)
{
    Dl_info di;
    uint64_t start = 0;
    char name[PATH_MAX] = "unset";
    CHECK(dladdr(at, &di) != 0, "%s: dladdr finds no object", what);
    CHECK(clt_loaded_object((uint64_t)(uintptr_t)at, &start, name, sizeof name) == 1, "%s: not found", what);
    CHECK(start == (uint64_t)(uintptr_t)di.dli_fbase, "%s: start %#llx, dladdr's %p", what,
          (unsigned long long)start, di.dli_fbase);
    /* dladdr names the main program by its command; its link map by "" */
    int main_program = strcmp(what, "main") == 0;
    CHECK(main_program ? name[0] == 0 : strcmp(name, di.dli_fname) == 0, "%s: name '%s', dladdr's '%s'", what,
          name, di.dli_fname);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_loaded LIBRARY.so\n");
        return 2;
    }
    double (*cosine)(double) = cos;
    same_as_dladdr((const void *)cosine, "libm's cos");
    same_as_dladdr((const void *)main, "main");

    /* the generation moves with a load and an unload, and with nothing else
     * (the symbolizer reads the process's whole map again only then) */
    uint64_t gen0 = clt_loaded_generation();
    CHECK(clt_loaded_generation() == gen0, "the generation moved with nothing loaded");
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen %s: %s", argv[1], dlerror());
    uint64_t gen1 = clt_loaded_generation();
    CHECK(!h || gen1 != gen0, "a library loaded: the generation did not move");
    if (h) {
        struct link_map *lm = NULL;
        dlinfo(h, RTLD_DI_LINKMAP, &lm);
        const void *inside = lm ? (const void *)lm->l_ld : NULL;   /* its dynamic section */
        same_as_dladdr(inside, "the loaded library");
        uint64_t start;
        char name[PATH_MAX];
        clt_loaded_object((uint64_t)(uintptr_t)inside, &start, name, sizeof name);
        char kept[PATH_MAX];
        strcpy(kept, name);
        dlclose(h);
        CHECK(clt_loaded_generation() != gen1, "a library unloaded: the generation did not move");
        CHECK(strcmp(name, kept) == 0 && strstr(name, "/") != NULL, "the name after dlclose: '%s'", name);
        CHECK(clt_loaded_object((uint64_t)(uintptr_t)inside, &start, name, sizeof name) == 0,
              "an unloaded library's address still found, in '%s'", name);
    }

    void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t start = 0;
    char name[16];
    CHECK(clt_loaded_object((uint64_t)(uintptr_t)page, &start, name, sizeof name) == 0, "an anonymous page found");
    /* a name longer than the room is cut, never overrun */
    CHECK(clt_loaded_object((uint64_t)(uintptr_t)(const void *)cosine, &start, name, 4) == 1 && strlen(name) == 3,
          "a name cut to 3 bytes: '%s'", name);
    CHECK(clt_loaded_object((uint64_t)(uintptr_t)(const void *)cosine, &start, name, 0) == 0, "no room: found");
    if (failures)
        fprintf(stderr, "%d failed\n", failures);
    else
        printf("loaded objects: as dladdr says, names kept past dlclose, loads counted\n");
    return failures != 0;
}
