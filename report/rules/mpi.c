/* mpi-wait-idle-device: a rank that waits for MPI messages while its device
 * sits idle. The model sweeps the rank's MPI calls against its device's
 * busy spans (model/mpi.c); the waits a non-blocking call could overlap are
 * those that stop the rank for a message (MPI_Send, MPI_Ssend, MPI_Recv,
 * MPI_Sendrecv, MPI_Wait, MPI_Waitall). Posted early (MPI_Irecv, MPI_Isend)
 * with the next kernel enqueued before the wait, each step takes the
 * longer of the two instead of their sum: the gain is the idle wait, at
 * most the kernel time there is to run meanwhile. */
#include <stdio.h>
#include <string.h>
#include "rules.h"

#define MIN_WAIT_NS 1000000     /* 1 ms of idle waiting */
#define MIN_SHARE 0.05          /* of the device's span */

void rules_mpi(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    const struct rm_mpi *x = &m->mpi;
    uint64_t span = rm_timeline_span(&m->tl);
    if (!x->calls || x->wait_idle_ns < MIN_WAIT_NS || !span || x->wait_idle_ns < MIN_SHARE * (double)span)
        return;
    char calls[200] = "";
    for (unsigned i = 0; i < x->n_fns; i++) {
        size_t n = strlen(calls);
        if (n < sizeof calls - 48)
            snprintf(calls + n, sizeof calls - n, "%s%s %llu x %.3f ms", n ? ", " : "", x->fns[i].name,
                     (unsigned long long)x->fns[i].calls, x->fns[i].ns / 1e6);
    }
    struct finding *f = finding_add(out, "mpi-wait-idle-device", SEV_WARNING, -1);
    if (m->mpi_traces > 1)
        finding_set(&f->where, "%u ranks' MPI waits, summed (each rank's: the job section)", m->mpi_traces);
    else if (m->mpi_clock[0].have || m->mpi_clock[1].have)
        finding_set(&f->where, "rank %d (%s): its MPI waits", m->mpi_rank, m->host[0] ? m->host : "?");
    else
        finding_set(&f->where, "its MPI waits");
    finding_set(&f->numbers, "the device sat idle %.3f ms (%.0f %% of its %.3f ms) while the rank waited in MPI "
                "for messages; in MPI %.3f ms in all, the device busy %.3f ms of it (%s)", x->wait_idle_ns / 1e6,
                100.0 * (double)x->wait_idle_ns / (double)span, span / 1e6, x->in_mpi_ns / 1e6, x->busy_ns / 1e6,
                calls);
    finding_set(&f->fix, "overlap the exchange with the kernel: post MPI_Irecv and MPI_Isend first, enqueue the "
                "next kernel (and clFlush), then MPI_Wait/MPI_Waitall, and wait for the device after that");
    finding_host(m, f);
    uint64_t gain = x->wait_idle_ns < m->tl.kernel_ns ? x->wait_idle_ns : m->tl.kernel_ns;
    f->gain_ns = (double)gain;
    finding_set(&f->gain_method, "the idle wait, at most the kernel time there is to run meanwhile (%.3f ms): each "
                "step takes the longer of the wait and the kernel instead of their sum", m->tl.kernel_ns / 1e6);
}
