/* Programs that load OpenCL at run time: dlopen("libOpenCL.so.1") (or a
 * full path, or dlmopen into a namespace of its own) and dlsym for every
 * function -- hashcat, clew-style wrappers, Python's ctypes, vision
 * libraries. A preload alone never sees those calls, so the shim exports
 * dlsym itself:
 *
 *   - dlsym(RTLD_DEFAULT or RTLD_NEXT, name) jumps straight to the C
 *     library's dlsym with the caller's return address untouched: both
 *     handles are resolved relative to the caller (its namespace, the object
 *     after it), and a lookup in the global scope finds our preloaded
 *     exports anyway.
 *   - dlsym(handle, "cl...") from a program or library that is not itself
 *     an OpenCL implementation (a loader, an ICD), resolving to something
 *     outside cltrace: the caller gets our wrapper for that command, and the
 *     wrapper's next step becomes the function it asked for (if no other
 *     route set one before). So each call is recorded once, whichever way it
 *     came: linked, looked up, the loader's layer, an extension lookup.
 *   - everything else: the C library's answer, unchanged; dlerror() says
 *     what it would have said, and errno is kept.
 *
 * The loader's own dlsym calls (its vendors' clIcdGetPlatformIDsKHR, layers'
 * clInitLayer) are left alone: their caller exports clGetPlatformIDs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "callstack.h"
#include "shim.h"
#include "trace/tables.h"

typedef void *(*dlsym_fn)(void *, const char *);

/* Read by the trampoline below; 0 until the first call resolves it. */
__attribute__((visibility("hidden"))) dlsym_fn clt_libc_dlsym;
__attribute__((visibility("hidden"))) dlsym_fn clt_dlsym_resolve(void);
__attribute__((visibility("hidden"), used)) void *clt_dlsym_handle(void *handle, const char *name);

/* The resolver is assembly too: sanitizer runtimes look up their interceptors
 * with dlsym(RTLD_NEXT) before any constructor runs (from .preinit_array),
 * when instrumented C code must not run yet. It asks the C library for the
 * dlsym after ours: dlvsym(RTLD_NEXT, "dlsym", GLIBC_2.34, else 2.2.5). */
#if defined(__x86_64__)
/* dlsym(handle, name): RTLD_DEFAULT (0) and RTLD_NEXT (-1) tail-jump to the C
 * library, so its caller-relative lookups see the app's caller, not us. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"
        "    je 1f\n"
        "    testq %rdi, %rdi\n"
        "    jne clt_dlsym_handle\n"
        "1:  movq clt_libc_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jne 2f\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call clt_dlsym_resolve\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "2:  jmp *%rax\n"
        ".size dlsym, .-dlsym\n"
        "\n"
        ".type clt_dlsym_resolve, @function\n"
        "clt_dlsym_resolve:\n"
        "    subq $8, %rsp\n"
        "    movq $-1, %rdi\n"
        "    leaq .Lclt_dlsym_name(%rip), %rsi\n"
        "    leaq .Lclt_glibc_234(%rip), %rdx\n"
        "    call dlvsym@PLT\n"
        "    testq %rax, %rax\n"
        "    jne 3f\n"
        "    movq $-1, %rdi\n"
        "    leaq .Lclt_dlsym_name(%rip), %rsi\n"
        "    leaq .Lclt_glibc_225(%rip), %rdx\n"
        "    call dlvsym@PLT\n"
        "3:  movq %rax, clt_libc_dlsym(%rip)\n"
        "    addq $8, %rsp\n"
        "    ret\n"
        ".size clt_dlsym_resolve, .-clt_dlsym_resolve\n"
        ".section .rodata\n"
        ".Lclt_dlsym_name: .string \"dlsym\"\n"
        ".Lclt_glibc_234: .string \"GLIBC_2.34\"\n"
        ".Lclt_glibc_225: .string \"GLIBC_2.2.5\"\n"
        ".text\n");
#define CLT_HAVE_DLSYM 1
#elif defined(__aarch64__)
/* The same on arm64: the caller's return address is x30 (lr), untouched by
 * the tail branch; saved around the one-time resolve. GLIBC_2.17 is the
 * oldest symbol version there. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        "dlsym:\n"
        "    cmn x0, #1\n"
        "    b.eq 1f\n"
        "    cbz x0, 1f\n"
        "    b clt_dlsym_handle\n"
        "1:  adrp x16, clt_libc_dlsym\n"
        "    ldr x16, [x16, :lo12:clt_libc_dlsym]\n"
        "    cbnz x16, 2f\n"
        "    stp x0, x1, [sp, #-32]!\n"
        "    str x30, [sp, #16]\n"
        "    bl clt_dlsym_resolve\n"
        "    mov x16, x0\n"
        "    ldr x30, [sp, #16]\n"
        "    ldp x0, x1, [sp], #32\n"
        "2:  br x16\n"
        ".size dlsym, .-dlsym\n"
        "\n"
        ".type clt_dlsym_resolve, %function\n"
        "clt_dlsym_resolve:\n"
        "    stp x29, x30, [sp, #-16]!\n"
        "    mov x29, sp\n"
        "    mov x0, #-1\n"
        "    adrp x1, .Lclt_dlsym_name\n"
        "    add x1, x1, :lo12:.Lclt_dlsym_name\n"
        "    adrp x2, .Lclt_glibc_234\n"
        "    add x2, x2, :lo12:.Lclt_glibc_234\n"
        "    bl dlvsym\n"
        "    cbnz x0, 3f\n"
        "    mov x0, #-1\n"
        "    adrp x1, .Lclt_dlsym_name\n"
        "    add x1, x1, :lo12:.Lclt_dlsym_name\n"
        "    adrp x2, .Lclt_glibc_217\n"
        "    add x2, x2, :lo12:.Lclt_glibc_217\n"
        "    bl dlvsym\n"
        "3:  adrp x16, clt_libc_dlsym\n"
        "    str x0, [x16, :lo12:clt_libc_dlsym]\n"
        "    ldp x29, x30, [sp], #16\n"
        "    ret\n"
        ".size clt_dlsym_resolve, .-clt_dlsym_resolve\n"
        ".section .rodata\n"
        ".Lclt_dlsym_name: .string \"dlsym\"\n"
        ".Lclt_glibc_234: .string \"GLIBC_2.34\"\n"
        ".Lclt_glibc_217: .string \"GLIBC_2.17\"\n"
        ".text\n");
#define CLT_HAVE_DLSYM 1
#endif
/* (other architectures: no dlsym export; run-time-loaded OpenCL is traced
 * through the loader's layer, OPENCL_LAYERS; clt_dlsym_handle is unused) */

#ifdef CLT_HAVE_DLSYM
/* The object holding an address, as (base, has clGetPlatformIDs). The answer
 * per object is cached: dlsym is rare but some programs look up hundreds. */
static int is_opencl_implementation(const void *addr)
{
    static struct { void *base; int impl; } cache[32];
    static unsigned n_cache;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    Dl_info di;
    if (!dladdr(addr, &di) || !di.dli_fname)
        return 0;
    int impl = -1;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < n_cache && impl < 0; i++)
        if (cache[i].base == di.dli_fbase)
            impl = cache[i].impl;
    pthread_mutex_unlock(&lock);
    if (impl >= 0)
        return impl;
    /* A handle of the object itself (already loaded: RTLD_NOLOAD cannot
     * fail for it), then its own definition of clGetPlatformIDs. Each dl*
     * call resets dlerror's state, which the app's successful dlsym had
     * left empty; dlerror() below empties it again. */
    impl = 0;
    void *h = dlopen(di.dli_fname[0] ? di.dli_fname : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        void *p = clt_libc_dlsym(h, "clGetPlatformIDs");
        Dl_info pi;
        impl = p && dladdr(p, &pi) && pi.dli_fbase == di.dli_fbase;
        dlclose(h);
    }
    (void)dlerror();
    pthread_mutex_lock(&lock);
    if (n_cache < 32) {
        cache[n_cache].base = di.dli_fbase;
        cache[n_cache++].impl = impl;
    }
    pthread_mutex_unlock(&lock);
    return impl;
}

/* The library an app's lookup resolved into stays loaded while cltrace may
 * call it: a reference of cltrace's own, in the app's namespace, taken the
 * first time (and never given back). The app's dlclose drops only the app's:
 * hashcat dlcloses libOpenCL at its end, and the loader's unload took PoCL
 * with it while cltrace's collector still asked it about the last commands
 * (a jump into unmapped code: 1 run in 4 beside two CPU hogs, every run of
 * tests/apps/dlopen_app unload). The driver's own teardown then runs at exit,
 * after cltrace's threads have stopped calling it (life.c). */
static void keep_loaded(const void *p, Lmid_t ns)
{
    static const void *kept[8];
    static unsigned n_kept;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    Dl_info di;
    if (!dladdr(p, &di) || !di.dli_fname || !di.dli_fname[0])
        return;
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < n_kept && kept[i] != di.dli_fbase)
        i++;
    if (i == n_kept && n_kept < 8 && dlmopen(ns, di.dli_fname, RTLD_LAZY | RTLD_NOLOAD))
        kept[n_kept++] = di.dli_fbase;
    pthread_mutex_unlock(&lock);
}

void *clt_dlsym_handle(void *handle, const char *name)
{
    const void *caller = __builtin_return_address(0);
    dlsym_fn real = __atomic_load_n(&clt_libc_dlsym, __ATOMIC_ACQUIRE);
    if (!real && !(real = clt_dlsym_resolve()))
        return NULL;
    void *p = real(handle, name);
    if (!p || !name || name[0] != 'c' || name[1] != 'l')
        return p;
    int saved = errno;
    const struct clt_ext_entry *e = clt_ext_find(name);
    if (e && !clt_is_self(p) && !clt_is_self(caller) && !is_opencl_implementation(caller)) {
        unsigned fn = (unsigned)(e - clt_ext_table);
        void *cur = NULL, *step = clt_interpose(fn, p);
        /* The first route to set the next step keeps it: a layer's target
         * dispatch, or the library the app is linked with, is the same
         * command of the same platforms. */
        if (!__atomic_compare_exchange_n(&clt_real_tab[fn], &cur, step, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
            cur == CLT_REAL_ABSENT)
            __atomic_compare_exchange_n(&clt_real_tab[fn], &cur, step, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        Lmid_t ns = LM_ID_BASE;
        if (dlinfo(handle, RTLD_DI_LMID, &ns) == 0 && ns != LM_ID_BASE)
            clt_callstack_disable("OpenCL loaded into a dlmopen namespace");
        keep_loaded(p, ns);
        (void)dlerror();
        clt_app_library(handle);
        p = e->wrapper;
    }
    errno = saved;
    return p;
}
#endif
