/* Python frames in call stacks (python.c): for programs CPython 3.11 or
 * 3.12 runs; nothing is asked of a process without Python. */
#ifndef CLT_PYTHON_H
#define CLT_PYTHON_H
#include <stddef.h>
#include <stdint.h>
#include "trace/record.h"

extern int clt_py_on;            /* a supported CPython runs here: stacks carry its frames */

void clt_py_load(void);          /* once, at the process's first recorded call */
/* The stack block of a record (trace/record.h): the return addresses `pcs`
 * (innermost first) with each run of the eval loop replaced by its Python
 * frames, at most `room` words into dst. Returns the words written. */
unsigned clt_py_stack(struct clt_py_seen *seen, struct clt_py_line *lines, uint64_t *dst, unsigned room,
                      const uint64_t *pcs, unsigned n_pcs);
/* The same from a signal handler on the thread (a CPU sample): the frame it
 * stopped in checked readable first (the rest of the chain is live); each
 * frame's instruction offset for its line (CLT_PY_AT). */
unsigned clt_py_stack_sampled(struct clt_py_seen *seen, uint64_t *dst, unsigned room, const uint64_t *pcs,
                              unsigned n_pcs);
#endif
