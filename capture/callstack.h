#ifndef CLT_CALLSTACK_H
#define CLT_CALLSTACK_H
void clt_callstack_load(void);           /* once, before recording starts */
const char *clt_callstack_source(void);  /* "libunwind" or "none" */
void clt_callstack_disable(const char *why);   /* no stacks from now on; says why once */
#endif
