/* Call stacks on the calling thread, addresses only (symbolized later by
 * the writer, symbols.c): read from the objects' frame information
 * (unwind.c, x86-64), else libunwind's unw_backtrace; and CLTRACE_BREAK.
 *
 * libunwind is dlopen'ed RTLD_LOCAL rather than linked: it exports
 * _Unwind_RaiseException & co. and a weak backtrace(), which, preloaded,
 * would replace the app's C++ exception unwinder and glibc's backtrace. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include "callstack.h"
#include "put.h"
#include "shim.h"
#include "unwind.h"

int (*clt_backtrace)(void **, int);
struct clt_unwinder clt_unwinder;
int clt_break_on;
__thread int clt_unwinding __attribute__((tls_model("initial-exec")));
__thread uint8_t clt_inside __attribute__((tls_model("initial-exec")));
__thread int clt_unw_cache_made __attribute__((tls_model("initial-exec")));
__thread uint64_t clt_stack_lo __attribute__((tls_model("initial-exec")));
__thread uint64_t clt_stack_hi __attribute__((tls_model("initial-exec")));

static int stacks_off;
static __thread int stack_asked __attribute__((tls_model("initial-exec")));

int clt_thread_stack(void)
{
    uint64_t lo, hi;
    if (!stack_asked) {
        stack_asked = 1;
        if (clt_stack_bounds(&lo, &hi) == 0)
            clt_stack_lo = lo, clt_stack_hi = hi;
    }
    return clt_stack_hi != 0;
}

/* The stack read here: a frame's rule from its object's frame information,
 * kept by address in the ring's table (a place seen before costs a lookup:
 * a 16-deep stack 1,270 instructions, 1,834 through unw_backtrace). 0 where
 * this cannot read it (libunwind then does it all). */
static int own_stack(struct clt_thread *th, uint64_t *d)
{
    if (!th || !clt_thread_stack())
        return 0;
    if (!th->unw_rules) {
        void *m = mmap(NULL, sizeof(struct clt_unw_rule) * CLT_UNW_RULES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 0;
        th->unw_rules = m;
    }
    unsigned n = clt_unwind_here(d, CLT_STACK_DEPTH, th->unw_rules, clt_stack_lo, clt_stack_hi);
    return n == CLT_UNW_NONE ? 0 : (int)n;
}

/* libunwind walking the stack of a process whose OpenCL driver lives in a
 * dlmopen namespace (a second C library) broke NVIDIA's driver there (crashes,
 * failed builds; without the walk the same program runs): calls are still
 * traced, without call stacks. */
void clt_callstack_disable(const char *why)
{
    if (__atomic_exchange_n(&stacks_off, 1, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&clt_backtrace, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&clt_stacks_recorded, 0, __ATOMIC_RELEASE);
    clt_msg("%s: no call stacks in this trace", why);
}

static pthread_once_t libunwind_once = PTHREAD_ONCE_INIT;

/* libunwind: with cltrace's own reader (unwind.c, x86-64) on the
 * collector's thread or at the first stack that reader cannot read (its
 * dlopen was ~0.2 ms of the first OpenCL call); elsewhere at once. Its first walk here,
 * not in a CPU sample's handler: its global state made before a handler
 * can find it (the step is published last). */
static void libunwind_load(void)
{
    int raised = clt_own_raise();     /* on the collector: the dynamic linker's lock, which the app may want */
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "unw_backtrace") : NULL;
    if (!f) {
        clt_own_lower(raised);
        clt_msg(clt_unwind_ready() ? "libunwind not found: the call stacks cltrace cannot read itself are left out"
                                   : "libunwind not found: no call stacks in the trace");
        return;
    }
#if defined(__x86_64__)
#define UNW_ARCH "x86_64"
#else
#define UNW_ARCH "aarch64"
#endif
    void *init = dlsym(h, "_UL" UNW_ARCH "_init_local2"), *get = dlsym(h, "_UL" UNW_ARCH "_get_reg");
    void *step = dlsym(h, "_UL" UNW_ARCH "_step");
    if (init && get && step) {      /* a CPU sample's: from the signal frame, one frame at a time */
        uint64_t cursor[264];       /* libunwind's cursor: UNW_TDEP_CURSOR_LEN words, 127 on x86-64, 250 on arm64 */
        ucontext_t uc;
        clt_unwinder.init = (int (*)(void *, void *, int))init;
        clt_unwinder.get_reg = (int (*)(void *, int, uint64_t *))get;
        if (getcontext(&uc) == 0 && clt_unwinder.init(cursor, &uc, 0) >= 0)
            ((int (*)(void *))step)(cursor);
        __atomic_store_n(&clt_unwinder.step, (int (*)(void *))step, __ATOMIC_RELEASE);
    }
    clt_own_lower(raised);    /* after its first walk: libunwind reads the loaded objects' list */
    if (!__atomic_load_n(&stacks_off, __ATOMIC_ACQUIRE))
        __atomic_store_n(&clt_backtrace, (int (*)(void **, int))f, __ATOMIC_RELEASE);
}

void clt_callstack_load(void)
{
    const char *b = clt_cfg.BREAK;
    clt_break_on = (strstr(b, "error") ? 1 : 0) | (strstr(b, "leak") ? 2 : 0) | (strcmp(b, "all") == 0 ? 3 : 0) |
                   (clt_cfg.RING_MB[0] && strstr(clt_cfg.SNAPSHOT_ON, "error") ? CLT_SNAP_ON_ERROR : 0);
    if (__atomic_load_n(&stacks_off, __ATOMIC_ACQUIRE))
        return;
    clt_unwind_load();
    if (!clt_unwind_ready())
        pthread_once(&libunwind_once, libunwind_load);
    if (!__atomic_load_n(&stacks_off, __ATOMIC_ACQUIRE))
        __atomic_store_n(&clt_stacks_recorded, clt_unwind_ready() || clt_backtrace, __ATOMIC_RELEASE);
}

void clt_callstack_libunwind(void)
{
    if (__atomic_load_n(&clt_stacks_recorded, __ATOMIC_ACQUIRE))
        pthread_once(&libunwind_once, libunwind_load);
}

/* The call stack into a record (put.h). */
uint8_t *clt_put_stack(struct clt_thread *th, uint8_t *p, int failed, const void *site)
{
    int saved = errno;
    uint64_t *d = (uint64_t *)p;
    int n;
    if (site) {
        d[0] = (uint64_t)(uintptr_t)site;
        n = 1;
    } else {
        int on = __atomic_load_n(&clt_stacks_recorded, __ATOMIC_ACQUIRE);
        n = on ? own_stack(th, d) : 0;
        if (!n && on && !clt_backtrace)
            pthread_once(&libunwind_once, libunwind_load);
        clt_unwinding = 1;          /* a CPU sample meanwhile leaves libunwind alone */
        if (!n && on && clt_backtrace)
            n = clt_backtrace((void **)d, CLT_STACK_DEPTH), clt_unw_cache_made = 1;
        clt_unwinding = 0;
        if (n < 0)
            n = 0;
    }
    if (CLT_UNLIKELY(__atomic_load_n(&clt_py_on, __ATOMIC_ACQUIRE)))
        n = (int)clt_py_restack(th, d, (unsigned)n, CLT_STACK_RESERVE);
    d[n] = (uint64_t)n | (uint64_t)clt_inside << 32;
    if (CLT_UNLIKELY(failed && (clt_break_on & (1 | CLT_SNAP_ON_ERROR))))
        clt_call_failed();
    errno = saved;
    return p + 8 * ((size_t)n + 1);
}

/* A call failed, and CLTRACE_BREAK=error or CLTRACE_SNAPSHOT_ON=error asked
 * to know: a snapshot of the flight recorder (the first time, not waited
 * for: the writer writes it with this call in it), a stop in the debugger. */
void clt_call_failed(void)
{
    static int snapped;
    if ((clt_break_on & CLT_SNAP_ON_ERROR) && !__atomic_exchange_n(&snapped, 1, __ATOMIC_ACQ_REL))
        clt_writer_snapshot("the first failing call", 0);
    if (clt_break_on & 1)
        clt_break_if_debugged();
}

/* A debugger attached: /proc/self/status says TracerPid != 0 */
int clt_debugger_attached(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    int tracer = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "TracerPid:", 10)) {
            tracer = atoi(line + 10);
            break;
        }
    if (f)
        fclose(f);
    return tracer > 0;
}

/* Without a debugger SIGTRAP would kill the app, so nothing happens (the
 * trace has it all). */
void clt_break_if_debugged(void)
{
    if (clt_debugger_attached())
        raise(SIGTRAP);
}
