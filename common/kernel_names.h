/* The kernels an OpenCL C source defines, read without a compiler: what
 * `cltrace --override FILE` matches a program by, and what names a
 * program's file (`cltrace --programs`). */
#ifndef CLT_KERNEL_NAMES_H
#define CLT_KERNEL_NAMES_H
#include <stddef.h>

#define CLT_KERNEL_NAME_MAX 64
/* Each `kernel` / `__kernel` function of src (n bytes), in order, into
 * names (at most max); comments, strings and preprocessor lines skipped.
 * Returns how many were found (it may exceed max: only max are written). */
unsigned clt_kernel_names(const char *src, size_t n, char (*names)[CLT_KERNEL_NAME_MAX], unsigned max);

#endif
