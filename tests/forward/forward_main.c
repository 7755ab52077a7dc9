/* Calls every wrapper of the preloaded shim, which forwards to the fake
 * vendor library (CLTRACE_LIBRARY); checks every argument and return value
 * arrives unchanged, for core exports and extension lookups alike.
 *   LD_PRELOAD=libcltrace.so CLTRACE_LIBRARY=libfakecl.so forward_check libfakecl.so */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include "forward_check.h"

struct fake_log *fake, *fake_hist;
unsigned *fake_n;
int64_t *fake_ret_int_p;
uint64_t *fake_ret_ptr_p;
unsigned failures;
int32_t errslot[4];
uint8_t arena[16][512];

static int in_shim(void *p)
{
    Dl_info di;
    return p && dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "libcltrace");
}

int main(int argc, char **argv)
{
    void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!lib) {
        fprintf(stderr, "usage: forward_check path/to/libfakecl.so (%s)\n", dlerror());
        return 2;
    }
    fake_hist = dlsym(lib, "fake_hist");
    fake_n = dlsym(lib, "fake_n");
    fake_ret_int_p = dlsym(lib, "fake_ret_int");
    fake_ret_ptr_p = dlsym(lib, "fake_ret_ptr");
    typedef void *(*getext_t)(void *, const char *);
    getext_t getext = (getext_t)dlsym(RTLD_DEFAULT, "clGetExtensionFunctionAddressForPlatform");
    if (!in_shim((void *)getext)) {
        fprintf(stderr, "forward: the shim is not preloaded\n");
        return 2;
    }
    unsigned checked = 0, core = 0, ext = 0;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: success, non-NULL handles; pass 1: an error, NULL handles,
         * NULL errcode_ret */
        *fake_ret_int_p = pass ? -30 : 0;
        *fake_ret_ptr_p = pass ? 0 : 0x5150;
        for (unsigned i = 0; i < fwd_n_cases; i++) {
            const struct fwd_case *c = &fwd_cases[i];
            void *fp;
            if (c->core) {
                fp = dlsym(RTLD_DEFAULT, c->name);
            } else {
                reset_arena();
                fp = getext((void *)0x77, c->name);
                expect_fn("clGetExtensionFunctionAddressForPlatform", 2);
                if (fake->args[0] != 0x77 || strcmp((const char *)fake->args[1], c->name) != 0)
                    fail(c->name, "lookup not forwarded", 0, 0, 0);
            }
            if (!in_shim(fp)) {
                fail(c->name, c->core ? "export missing from the shim" : "lookup did not give the shim's wrapper",
                     0, (uint64_t)(uintptr_t)fp, 0);
                continue;
            }
            c->check(fp, pass);
            checked++;
            core += pass == 0 && c->core;
            ext += pass == 0 && !c->core;
        }
    }
    /* An unknown name is passed through (and recorded). */
    reset_arena();
    void *unknown = getext((void *)0x77, "clNoSuchFunctionCLTRACE");
    expect_fn("clGetExtensionFunctionAddressForPlatform", 2);
    if (unknown != NULL || !fake->n || strcmp((const char *)fake->args[1], "clNoSuchFunctionCLTRACE") != 0)
        fail("clGetExtensionFunctionAddressForPlatform", "unknown name", 0, (uint64_t)(uintptr_t)unknown, 0);
    printf("forward: %u calls checked (%u core exports, %u extension lookups, 2 passes), %u failures\n",
           checked, core, ext, failures);
    return failures ? 1 : 0;
}
