#ifndef CLT_CALLSTACK_H
#define CLT_CALLSTACK_H
void clt_callstack_load(void);           /* once, before recording starts */
/* libunwind loaded where cltrace loads it only when a stack needs it: on
 * the collector's thread, for the CPU samples' stacks cltrace cannot read */
void clt_callstack_libunwind(void);
void clt_callstack_disable(const char *why);   /* no stacks from now on; says why once */
#endif
