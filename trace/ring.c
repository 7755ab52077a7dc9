/* The state both sides of the rings share (trace/ring.h). */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "trace/ring.h"

int clt_active;
struct clt_thread *_Atomic clt_threads;
int clt_stacks_recorded;
struct clt_shared_counts clt_shared;

/* The writer calls this after giving room back: wake a waiting producer. */
void clt_ring_wake(struct clt_thread *th)
{
    if (__atomic_load_n(&th->waiting, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&th->wake_seq, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &th->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}
