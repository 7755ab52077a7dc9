/* The state both sides of the CPU samples share (trace/samples.h). */
#include "trace/samples.h"

struct clt_sbuf *_Atomic clt_sbufs[CLT_SBUF_MAX];
_Atomic unsigned clt_sbufs_used;
_Atomic uint64_t clt_sample_period_ns;
