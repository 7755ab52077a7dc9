/* MPI beside OpenCL, through the MPI profiling interface: the shim exports
 * the MPI calls a GPU program spends its time in and forwards each to its
 * PMPI_ twin (looked up once, dlsym(RTLD_NEXT)), so a program linked with
 * MPI needs no relinking, and one without MPI never reaches this file.
 *
 *   - Each call (point-to-point, waits, collectives, barriers) becomes a
 *     CLT_REC_MPI record on the calling thread: its peer, tag, bytes and the
 *     communicator's size; the writer makes it a slice (writer/mpi.c).
 *     Recorded inside windows only, like an OpenCL call that is not kept.
 *   - Clocks across hosts: right after MPI_Init and just before
 *     MPI_Finalize every rank measures its BOOTTIME clock against rank 0's
 *     by ping-pong on a duplicate of MPI_COMM_WORLD (the quickest round
 *     trip kept: the offset is within half of it), one rank after another;
 *     CLT_REC_MPI_CLOCK records carry both, and merge and the job report
 *     correct each rank linearly between them. Every rank must take part
 *     (the duplicate is collective): it runs under CLTRACE_DISABLE=1 too,
 *     so that no rank waits for one that skipped it; a job that preloads
 *     cltrace in some ranks only would wait (docs/MPI.md).
 *
 * MPI's handles are opaque and differ between implementations (Open MPI:
 * pointers; MPICH: ints): they are passed through as the registers they
 * came in, never looked into. MPI_COMM_WORLD and MPI_BYTE, needed for the
 * ping-pong, are Open MPI's exported objects where those exist, else
 * MPICH's constants. The status is given to PMPI_Get_count only; where the
 * app ignores it, a local one big enough for either stands in. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include "put.h"
#include "trace/clock.h"

typedef void *mpi_h;            /* MPI_Comm, MPI_Datatype, MPI_Op */
#define MPI_OK 0
#define MPI_ANY -1              /* MPI_ANY_SOURCE, MPI_ANY_TAG: -1 and -1 in Open MPI, -2 and -1 in MPICH */
#define STATUS_BYTES 64         /* at least MPI_Status in Open MPI (24) and MPICH (20) */
/* Round trips with rank 0, each rank's in turn: at least CLOCK_MIN, until
 * one takes CLOCK_GOOD_NS or less, CLOCK_MAX at most. Ranks that wait for
 * their turn poll (Open MPI spins): on a machine with fewer cores than
 * ranks, a round trip may wait for a core, and then only more of them
 * find a quick one (4 ranks on 2 cores: up to 1.4 ms in 16 rounds). */
#define CLOCK_MIN 8
#define CLOCK_MAX 200
#define CLOCK_GOOD_NS 20000
#define CLOCK_DONE UINT64_MAX   /* a rank's last ping: no answer wanted */
#define CLOCK_TAG 0x436c74      /* "Clt": on cltrace's own communicator anyway */

/* PMPI_name, looked up on first use (NULL: not there: the call fails as
 * MPI would without an implementation) */
static void *pmpi(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}
#define PMPI(type, name) \
    static void *c_##name; \
    type p_##name = (type)pmpi(&c_##name, "P" #name)

typedef int (*size_fn)(mpi_h, int *);
typedef int (*count_fn)(void *, mpi_h, int *);

static uint64_t type_bytes(mpi_h type, int count)
{
    PMPI(size_fn, MPI_Type_size);
    int size = 0;
    if (count <= 0 || !p_MPI_Type_size || p_MPI_Type_size(type, &size) != MPI_OK || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

static int comm_size(mpi_h comm)
{
    PMPI(size_fn, MPI_Comm_size);
    int n = 0;
    return p_MPI_Comm_size && p_MPI_Comm_size(comm, &n) == MPI_OK ? n : 0;
}

/* A status the app ignores (MPI_STATUS_IGNORE: NULL in Open MPI, 1 in
 * MPICH) replaced by ours, to count what arrived. */
static void *status_of(void *app, uint8_t mine[STATUS_BYTES])
{
    return (uintptr_t)app <= 1 ? mine : app;
}

static uint64_t received(void *status, mpi_h type, uint64_t posted)
{
    PMPI(count_fn, MPI_Get_count);
    int n = 0;
    if (!p_MPI_Get_count || p_MPI_Get_count(status, type, &n) != MPI_OK || n < 0)
        return posted;
    return type_bytes(type, n);
}

static void record(unsigned kind, uint64_t t0, uint64_t t1, int rc, const uint64_t *slot, unsigned n)
{
    struct clt_thread *th = clt_enter();
    if (!th)
        return;
    int saved = errno;
    struct clt_rec *rec = clt_rec_begin(th, sizeof(struct clt_rec) + 8 * n);
    if (rec) {
        struct clt_extra x = clt_extra_init(rec, n);
        for (unsigned i = 0; i < n; i++)
            rec->arg[i] = slot[i];
        clt_rec_commit(th, rec, &x, kind, t0, t1, (uint64_t)(int64_t)rc);
    }
    errno = saved;
}

/* A call's start: 0 where it is not recorded (cltrace off, outside a
 * window): then nothing else is asked of MPI, one branch. */
static uint64_t call_start(void)
{
    return clt_is_recording() == 1 ? clt_now() : 0;
}

/* A recorded call's record: its bytes from the type (count of them; a
 * status: what arrived) and its communicator's size asked of MPI now. */
static void call_done(enum clt_mpi_fn fn, uint64_t t0, int rc, int peer, int tag, mpi_h type, int count,
                      void *status, mpi_h comm)
{
    if (!t0)
        return;
    uint64_t t1 = clt_now(), bytes = type_bytes(type, count);
    if (status && rc == MPI_OK)
        bytes = received(status, type, bytes);
    uint64_t slot[MPI_N] = { fn, (uint64_t)(int64_t)peer, (uint64_t)(int64_t)tag, bytes,
                             (uint64_t)(int64_t)(comm ? comm_size(comm) : 0) };
    record(CLT_REC_MPI, t0, t1, rc, slot, MPI_N);
}

/* ---- clocks: each rank against rank 0 ---- */

typedef int (*dup_fn)(mpi_h, mpi_h *);
typedef int (*rank_fn)(mpi_h, int *);
typedef int (*send_fn)(const void *, int, mpi_h, int, int, mpi_h);
typedef int (*recv_fn)(void *, int, mpi_h, int, int, mpi_h, void *);
typedef int (*free_fn)(mpi_h *);

static mpi_h clock_comm;

static void world_and_byte(mpi_h *world, mpi_h *byte)
{
    *world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
    *byte = dlsym(RTLD_DEFAULT, "ompi_mpi_byte");
    if (!*world || !*byte) {    /* MPICH and its ABI family */
        *world = (mpi_h)(intptr_t)0x44000000;
        *byte = (mpi_h)(intptr_t)0x4c00010d;
    }
}

static void clocks(int when)
{
    PMPI(dup_fn, MPI_Comm_dup);
    PMPI(rank_fn, MPI_Comm_rank);
    PMPI(send_fn, MPI_Send);
    PMPI(recv_fn, MPI_Recv);
    mpi_h world, byte;
    world_and_byte(&world, &byte);
    if (!p_MPI_Comm_dup || !p_MPI_Comm_rank || !p_MPI_Send || !p_MPI_Recv)
        return;
    if (!clock_comm && p_MPI_Comm_dup(world, &clock_comm) != MPI_OK)
        return;
    int rank = -1, size = comm_size(clock_comm);
    if (p_MPI_Comm_rank(clock_comm, &rank) != MPI_OK || size <= 0)
        return;
    uint8_t status[STATUS_BYTES];
    int64_t best_rtt = INT64_MAX, offset = 0;
    uint64_t at = clt_boottime_ns();
    if (rank == 0) {            /* serve each rank in turn: its pings, our time, until its last */
        best_rtt = 0;
        for (int r = 1; r < size; r++)
            for (;;) {
                uint64_t t;
                if (p_MPI_Recv(&t, 8, byte, r, CLOCK_TAG, clock_comm, status) != MPI_OK || t == CLOCK_DONE)
                    break;
                t = clt_boottime_ns();
                p_MPI_Send(&t, 8, byte, r, CLOCK_TAG, clock_comm);
            }
    } else {
        for (int i = 0; i < CLOCK_MAX && (i < CLOCK_MIN || best_rtt > CLOCK_GOOD_NS); i++) {
            uint64_t a = clt_boottime_ns(), t0;
            if (p_MPI_Send(&a, 8, byte, 0, CLOCK_TAG, clock_comm) != MPI_OK ||
                p_MPI_Recv(&t0, 8, byte, 0, CLOCK_TAG, clock_comm, status) != MPI_OK)
                return;
            uint64_t b = clt_boottime_ns();
            if ((int64_t)(b - a) < best_rtt) {
                best_rtt = (int64_t)(b - a);
                offset = (int64_t)(a + (b - a) / 2 - t0);
            }
        }
        uint64_t done = CLOCK_DONE;
        p_MPI_Send(&done, 8, byte, 0, CLOCK_TAG, clock_comm);
        at = clt_boottime_ns();
    }
    uint64_t now = clt_now();
    uint64_t slot[MCLK_N] = { (uint64_t)when, at, (uint64_t)offset, (uint64_t)best_rtt, (uint64_t)rank,
                              (uint64_t)size };
    record(CLT_REC_MPI_CLOCK, now, now, MPI_OK, slot, MCLK_N);
}

/* ---- the exported calls ---- */

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*finalize_fn)(void);

CLT_EXPORT int MPI_Init(int *argc, char ***argv)
{
    PMPI(init_fn, MPI_Init);
    /* the library's own OpenCL calls inside (hwloc's device probing) are its, not the program's */
    clt_inside = CLT_INSIDE_MPI_INIT;
    int rc = p_MPI_Init ? p_MPI_Init(argc, argv) : -1;
    clt_inside = CLT_INSIDE_NONE;
    if (rc == MPI_OK)
        clocks(0);
    return rc;
}

CLT_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    PMPI(init_thread_fn, MPI_Init_thread);
    clt_inside = CLT_INSIDE_MPI_INIT_THREAD;
    int rc = p_MPI_Init_thread ? p_MPI_Init_thread(argc, argv, required, provided) : -1;
    clt_inside = CLT_INSIDE_NONE;
    if (rc == MPI_OK)
        clocks(0);
    return rc;
}

CLT_EXPORT int MPI_Finalize(void)
{
    PMPI(finalize_fn, MPI_Finalize);
    PMPI(free_fn, MPI_Comm_free);
    clocks(1);
    if (clock_comm && p_MPI_Comm_free)
        p_MPI_Comm_free(&clock_comm);
    clt_inside = CLT_INSIDE_MPI_FINALIZE;
    int rc = p_MPI_Finalize ? p_MPI_Finalize() : -1;
    clt_inside = CLT_INSIDE_NONE;
    return rc;
}

#define SEND_LIKE(Name, FN)                                                                           \
    CLT_EXPORT int Name(const void *buf, int count, mpi_h type, int dest, int tag, mpi_h comm)          \
    {                                                                                                 \
        PMPI(send_fn, Name);                                                                          \
        uint64_t t0 = call_start();                                                                      \
        int rc = p_##Name ? p_##Name(buf, count, type, dest, tag, comm) : -1;                         \
        call_done(FN, t0, rc, dest, tag, type, count, NULL, comm);                              \
        return rc;                                                                                    \
    }
SEND_LIKE(MPI_Send, CLT_MPI_SEND)
SEND_LIKE(MPI_Ssend, CLT_MPI_SSEND)

typedef int (*ipost_fn)(const void *, int, mpi_h, int, int, mpi_h, void *);
/* MPI_Isend, MPI_Irecv: posted, not done (MPI_Wait/MPI_Waitall wait for them) */
#define POST_LIKE(Name, FN)                                                                            \
    CLT_EXPORT int Name(const void *buf, int count, mpi_h type, int peer, int tag, mpi_h comm, void *req) \
    {                                                                                                  \
        PMPI(ipost_fn, Name);                                                                          \
        uint64_t t0 = call_start();                                                                       \
        int rc = p_##Name ? p_##Name(buf, count, type, peer, tag, comm, req) : -1;                     \
        call_done(FN, t0, rc, peer, tag, type, count, NULL, comm);                               \
        return rc;                                                                                     \
    }
POST_LIKE(MPI_Isend, CLT_MPI_ISEND)
POST_LIKE(MPI_Irecv, CLT_MPI_IRECV)

CLT_EXPORT int MPI_Recv(void *buf, int count, mpi_h type, int source, int tag, mpi_h comm, void *status)
{
    PMPI(recv_fn, MPI_Recv);
    uint8_t mine[STATUS_BYTES];
    uint64_t t0 = call_start();
    void *st = t0 ? status_of(status, mine) : status;
    int rc = p_MPI_Recv ? p_MPI_Recv(buf, count, type, source, tag, comm, st) : -1;
    call_done(CLT_MPI_RECV, t0, rc, source, tag, type, count, st, comm);
    return rc;
}

typedef int (*sendrecv_fn)(const void *, int, mpi_h, int, int, void *, int, mpi_h, int, int, mpi_h, void *);
CLT_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, mpi_h stype, int dest, int stag, void *rbuf, int rcount,
                            mpi_h rtype, int source, int rtag, mpi_h comm, void *status)
{
    PMPI(sendrecv_fn, MPI_Sendrecv);
    uint64_t t0 = call_start();
    int rc = p_MPI_Sendrecv ? p_MPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                                             comm, status) : -1;
    call_done(CLT_MPI_SENDRECV, t0, rc, dest, stag, stype, scount, NULL, comm);     /* the bytes it sent */
    return rc;
}

typedef int (*wait_fn)(void *, void *);
typedef int (*waitall_fn)(int, void *, void *);
CLT_EXPORT int MPI_Wait(void *req, void *status)
{
    PMPI(wait_fn, MPI_Wait);
    uint64_t t0 = call_start();
    int rc = p_MPI_Wait ? p_MPI_Wait(req, status) : -1;
    call_done(CLT_MPI_WAIT, t0, rc, MPI_ANY, MPI_ANY, NULL, 0, NULL, NULL);
    return rc;
}

CLT_EXPORT int MPI_Waitall(int n, void *reqs, void *statuses)
{
    PMPI(waitall_fn, MPI_Waitall);
    uint64_t t0 = call_start();
    int rc = p_MPI_Waitall ? p_MPI_Waitall(n, reqs, statuses) : -1;
    call_done(CLT_MPI_WAITALL, t0, rc, MPI_ANY, MPI_ANY, NULL, 0, NULL, NULL);
    return rc;
}

typedef int (*barrier_fn)(mpi_h);
typedef int (*bcast_fn)(void *, int, mpi_h, int, mpi_h);
typedef int (*reduce_fn)(const void *, void *, int, mpi_h, mpi_h, int, mpi_h);
typedef int (*allreduce_fn)(const void *, void *, int, mpi_h, mpi_h, mpi_h);
typedef int (*gather_fn)(const void *, int, mpi_h, void *, int, mpi_h, int, mpi_h);
typedef int (*allgather_fn)(const void *, int, mpi_h, void *, int, mpi_h, mpi_h);

CLT_EXPORT int MPI_Barrier(mpi_h comm)
{
    PMPI(barrier_fn, MPI_Barrier);
    uint64_t t0 = call_start();
    int rc = p_MPI_Barrier ? p_MPI_Barrier(comm) : -1;
    call_done(CLT_MPI_BARRIER, t0, rc, MPI_ANY, MPI_ANY, NULL, 0, NULL, comm);
    return rc;
}

CLT_EXPORT int MPI_Bcast(void *buf, int count, mpi_h type, int root, mpi_h comm)
{
    PMPI(bcast_fn, MPI_Bcast);
    uint64_t t0 = call_start();
    int rc = p_MPI_Bcast ? p_MPI_Bcast(buf, count, type, root, comm) : -1;
    call_done(CLT_MPI_BCAST, t0, rc, root, MPI_ANY, type, count, NULL, comm);
    return rc;
}

CLT_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, mpi_h type, mpi_h op, int root, mpi_h comm)
{
    PMPI(reduce_fn, MPI_Reduce);
    uint64_t t0 = call_start();
    int rc = p_MPI_Reduce ? p_MPI_Reduce(sbuf, rbuf, count, type, op, root, comm) : -1;
    call_done(CLT_MPI_REDUCE, t0, rc, root, MPI_ANY, type, count, NULL, comm);
    return rc;
}

CLT_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, mpi_h type, mpi_h op, mpi_h comm)
{
    PMPI(allreduce_fn, MPI_Allreduce);
    uint64_t t0 = call_start();
    int rc = p_MPI_Allreduce ? p_MPI_Allreduce(sbuf, rbuf, count, type, op, comm) : -1;
    call_done(CLT_MPI_ALLREDUCE, t0, rc, MPI_ANY, MPI_ANY, type, count, NULL, comm);
    return rc;
}

#define ALL_LIKE(Name, FN)                                                                             \
    CLT_EXPORT int Name(const void *sbuf, int scount, mpi_h stype, void *rbuf, int rcount, mpi_h rtype,  \
                        mpi_h comm)                                                                    \
    {                                                                                                  \
        PMPI(allgather_fn, Name);                                                                      \
        uint64_t t0 = call_start();                                                                       \
        int rc = p_##Name ? p_##Name(sbuf, scount, stype, rbuf, rcount, rtype, comm) : -1;             \
        call_done(FN, t0, rc, MPI_ANY, MPI_ANY, stype, scount, NULL, comm);                      \
        return rc;                                                                                     \
    }
ALL_LIKE(MPI_Allgather, CLT_MPI_ALLGATHER)
ALL_LIKE(MPI_Alltoall, CLT_MPI_ALLTOALL)

#define ROOTED(Name, FN)                                                                               \
    CLT_EXPORT int Name(const void *sbuf, int scount, mpi_h stype, void *rbuf, int rcount, mpi_h rtype,  \
                        int root, mpi_h comm)                                                          \
    {                                                                                                  \
        PMPI(gather_fn, Name);                                                                         \
        uint64_t t0 = call_start();                                                                       \
        int rc = p_##Name ? p_##Name(sbuf, scount, stype, rbuf, rcount, rtype, root, comm) : -1;       \
        call_done(FN, t0, rc, root, MPI_ANY, stype, scount, NULL, comm);                         \
        return rc;                                                                                     \
    }
ROOTED(MPI_Gather, CLT_MPI_GATHER)
ROOTED(MPI_Scatter, CLT_MPI_SCATTER)
