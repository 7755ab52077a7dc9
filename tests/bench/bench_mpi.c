/* make bench: what cltrace adds to an MPI call and to MPI_Init and
 * MPI_Finalize (the clock measurement). Two ranks ping-pong 8 bytes N
 * times (MPI_Send, MPI_Recv: four calls a round trip); rank 0 prints the
 * wall ns a round trip and the ms MPI_Init and MPI_Finalize took. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    double t0 = now_ns();
    MPI_Init(&argc, &argv);
    double init_ms = (now_ns() - t0) / 1e6;
    int rank, n = argc > 1 ? atoi(argv[1]) : 100000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 0, best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double a = now_ns();
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                MPI_Send(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double per = (now_ns() - a) / n;
        best = per < best ? per : best;
    }
    t0 = now_ns();
    MPI_Finalize();
    double fin_ms = (now_ns() - t0) / 1e6;
    if (rank == 0)
        printf("round_trip_ns %.0f init_ms %.3f finalize_ms %.3f\n", best, init_ms, fin_ms);
    return 0;
}
