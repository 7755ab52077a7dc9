/* A CPU sample's C frames on x86-64 from the objects' call frame
 * information (unwind.c); libunwind for whatever it does not read. */
#ifndef CLT_UNWIND_H
#define CLT_UNWIND_H
#include <stdint.h>
#include <ucontext.h>
#include "trace/samples.h"

/* The return addresses of the frames that called the interrupted one,
 * innermost first, at most max; 0: not read here (libunwind's). A stack of
 * the interrupted frame alone gives CLT_UNW_NONE. stack_lo..stack_hi: the
 * thread's stack, where the interrupted stack pointer must lie. */
#define CLT_UNW_NONE 0x80000000u
unsigned clt_unwind(const ucontext_t *uc, uint64_t *out, unsigned max, struct clt_unw_rule *rules,
                    uint64_t stack_lo, uint64_t stack_hi);
void clt_unwind_load(void);     /* at load: glibc's _dl_find_object, where it has one */
int clt_unwind_ready(void);     /* 1: this reads stacks here (x86-64, _dl_find_object) */
/* The same from the caller's own place: the return addresses of its
 * callers, innermost first (its caller's first); 0 where not read here. */
unsigned clt_unwind_here(uint64_t *out, unsigned max, struct clt_unw_rule *rules, uint64_t stack_lo,
                         uint64_t stack_hi);

/* The calling thread's stack, lo..hi (0: known). glibc's answer, except
 * for the process's first thread: glibc reads all of /proc/self/maps for
 * it (0.1-0.5 ms of a program's first OpenCL call, every traced run), this
 * reads __libc_stack_end and RLIMIT_STACK. */
int clt_stack_bounds(uint64_t *lo, uint64_t *hi);
#endif
