/* A job of several MPI ranks, one of them slow: each rank runs the same two
 * kernels, but rank 2 gives `work` eight times as much to do (an uneven
 * domain split); the ranks then sum their results with MPI_Allreduce.
 *   mpirun -n 4 cltrace -o job/ -- build/examples/job
 *   cltrace-report job/          -> slowest rank 2, kernel work
 * Built with mpicc where Open MPI's headers are installed (WITH_MPI);
 * without them it takes its rank from the launcher's environment
 * (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID) and skips the
 * sum. With OCL_DEVICE=rank each rank takes device rank % count (one GPU
 * per rank). Each rank prints its checksum. */
#ifdef WITH_MPI
#include <mpi.h>
#endif
#include "../common/example.h"

static const char *src =
    "__kernel void work(__global float *x, int rounds) {\n"
    "    int i = get_global_id(0);\n"
    "    float v = x[i];\n"
    "    for (int r = 0; r < rounds; r++)\n"
    "        v = v * 0.999f + 0.001f;\n"
    "    x[i] = v;\n"
    "}\n"
    "__kernel void halo(__global float *x) { x[get_global_id(0)] += 1.0f; }\n";

static int rank_of_launcher(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID" };
    for (unsigned i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return atoi(getenv(vars[i]));
    return 0;
}

int main(int argc, char **argv)
{
    enum { N = 1 << 16, STEPS = 4 };
#ifdef WITH_MPI
    MPI_Init(&argc, &argv);
#endif
    int rank = rank_of_launcher();
    int rounds = rank == 2 ? 8 * 500 : 500;         /* rank 2: eight times the work */
    struct ex e;
    ex_init(&e, argc, argv);
    cl_program p = ex_build(&e, src, NULL);
    cl_kernel work = ex_kernel(p, "work"), halo = ex_kernel(p, "halo");
    float *host = calloc(N, sizeof *host);
    cl_mem x = ex_buffer(&e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof(float), host);
    size_t gws = N, lws = 64;
    CHECK(clSetKernelArg(work, 0, sizeof x, &x));
    CHECK(clSetKernelArg(work, 1, sizeof rounds, &rounds));
    CHECK(clSetKernelArg(halo, 0, sizeof x, &x));
    for (int s = 0; s < STEPS; s++) {
        CHECK(clEnqueueNDRangeKernel(e.q, work, 1, NULL, &gws, &lws, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(e.q, halo, 1, NULL, &gws, &lws, 0, NULL, NULL));
    }
    CHECK(clEnqueueReadBuffer(e.q, x, CL_TRUE, 0, N * sizeof(float), host, 0, NULL, NULL));
    cl_device_id devs[16];
    cl_uint nd = 0, di = 0;
    clGetDeviceIDs(e.plat, CL_DEVICE_TYPE_ALL, 16, devs, &nd);
    while (di < nd && di < 16 && devs[di] != e.dev)
        di++;
    printf("rank %d (device %u of %u): ", rank, di, nd);
    ex_checksum("x", host, N);
#ifdef WITH_MPI
    double mine = 0, all = 0;
    for (int i = 0; i < N; i++)
        mine += host[i];
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("job: sum over the ranks %.6e\n", all);
#endif
    free(host);
    clReleaseMemObject(x);
    clReleaseKernel(work);
    clReleaseKernel(halo);
    clReleaseProgram(p);
    ex_done(&e);
#ifdef WITH_MPI
    MPI_Finalize();
#endif
    return 0;
}
