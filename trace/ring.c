/* The state both sides of the rings share (trace/ring.h). */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "trace/ring.h"

int clt_active;
struct clt_thread *_Atomic clt_threads;
int clt_stacks_recorded;
_Atomic uint64_t clt_collector_cpu_ns;
_Atomic uint64_t clt_paced_wait_ticks;
_Atomic uint64_t clt_collected_paused, clt_collected_forced, clt_collected_exit;
_Atomic uint64_t clt_budget_spent_ns, clt_budget_price_ns;
_Atomic uint64_t clt_writer_command_ns, clt_writer_commands;

/* The writer calls this after giving room back: wake a waiting producer. */
void clt_ring_wake(struct clt_thread *th)
{
    if (__atomic_load_n(&th->waiting, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&th->wake_seq, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &th->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}
