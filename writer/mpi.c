/* MPI calls (capture/mpi.c records) as Perfetto slices on the calling
 * thread's track, on the writer's sequence with explicit tracks as the
 * program's ranges are (marks.c): named by the call ("MPI_Recv"), category
 * "mpi", with the peer, tag, bytes and the communicator's size; and this
 * rank's clock against rank 0's, which the footer states:
 *   cltrace.mpi.rank, cltrace.mpi.size
 *   cltrace.mpi.init_at_ns, .init_offset_ns, .init_rtt_ns   (MPI_Init)
 *   cltrace.mpi.final_at_ns, .final_offset_ns, .final_rtt_ns (MPI_Finalize)
 * offset: this rank's BOOTTIME minus rank 0's (ns), within rtt / 2; merge
 * and the job report correct each rank linearly between the two. */
#include "emit.h"
#include "trace/record.h"


static const char *const names[CLT_MPI_COUNT] = {
    "MPI_Send", "MPI_Ssend", "MPI_Isend", "MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Wait", "MPI_Waitall",
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall", "MPI_Gather",
    "MPI_Scatter",
};

void clt_mpi_emit(struct clt_writer *w, uint64_t track, const struct clt_rec *rec)
{
    if (rec->arg[MPI_FN] >= CLT_MPI_COUNT || rec->size < sizeof *rec + 8 * MPI_N)
        return;
    Perfetto__Protos__DebugAnnotation a[5], *ap[5];
    unsigned na = 0;
    int64_t peer = (int64_t)rec->arg[MPI_PEER], tag = (int64_t)rec->arg[MPI_TAG];
    if (peer >= 0)
        A_INT("peer", peer);
    if (tag >= 0)
        A_INT("tag", tag);
    if (rec->arg[MPI_BYTES])
        A_UINT("bytes", rec->arg[MPI_BYTES]);
    if (rec->arg[MPI_COMM_SIZE])
        A_INT("comm_size", (int64_t)rec->arg[MPI_COMM_SIZE]);
    if ((int64_t)rec->ret != 0)
        A_INT("error", (int64_t)rec->ret);
    clt_put_own_slice(w, track, clt_clock_to_ns(&w->clock, rec->t0), clt_clock_to_ns(&w->clock, rec->t1),
                      names[rec->arg[MPI_FN]], "mpi", ap, na, NULL);
    w->mpi_calls++;
}

void clt_mpi_clock(struct clt_writer *w, const struct clt_rec *rec)
{
    uint64_t when = rec->arg[MCLK_WHEN];
    if (when > 1 || rec->size < sizeof *rec + 8 * MCLK_N)
        return;
    w->mpi_clock[when].have = 1;
    w->mpi_clock[when].at = rec->arg[MCLK_AT];
    w->mpi_clock[when].offset = (int64_t)rec->arg[MCLK_OFFSET];
    w->mpi_clock[when].rtt = rec->arg[MCLK_RTT];
    w->mpi_rank = (int)rec->arg[MCLK_RANK];
    w->mpi_size = (int)rec->arg[MCLK_SIZE];
}

void clt_mpi_attrs(const struct clt_writer *w, struct clt_attrs *a)
{
    static const char *const key[2][3] = {
        { "cltrace.mpi.init_at_ns", "cltrace.mpi.init_offset_ns", "cltrace.mpi.init_rtt_ns" },
        { "cltrace.mpi.final_at_ns", "cltrace.mpi.final_offset_ns", "cltrace.mpi.final_rtt_ns" },
    };
    if (!w->mpi_clock[0].have && !w->mpi_clock[1].have && !w->mpi_calls)
        return;                 /* no MPI: nothing said */
    clt_attr_int(a, "cltrace.mpi.calls", (int64_t)w->mpi_calls);
    if (!w->mpi_clock[0].have && !w->mpi_clock[1].have)
        return;
    clt_attr_int(a, "cltrace.mpi.rank", w->mpi_rank);
    clt_attr_int(a, "cltrace.mpi.size", w->mpi_size);
    for (int i = 0; i < 2; i++)
        if (w->mpi_clock[i].have) {
            clt_attr_int(a, key[i][0], (int64_t)w->mpi_clock[i].at);
            clt_attr_int(a, key[i][1], w->mpi_clock[i].offset);
            clt_attr_int(a, key[i][2], (int64_t)w->mpi_clock[i].rtt);
        }
}
