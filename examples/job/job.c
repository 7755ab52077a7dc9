/* A job of several ranks, one of them slow: each rank runs the same two
 * kernels, but rank 2 gives `work` eight times as much to do (an uneven
 * domain split). Run it under a launcher that numbers ranks, e.g.
 *   mpirun -n 4 cltrace -o job/ -- build/examples/job
 *   cltrace-report job/          -> slowest rank 2, kernel work
 * The rank comes from the launcher's environment (OMPI_COMM_WORLD_RANK,
 * PMI_RANK, PMIX_RANK, SLURM_PROCID), so it needs no MPI library to build;
 * each rank prints its checksum. */
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
    printf("rank %d: ", rank);
    ex_checksum("x", host, N);
    free(host);
    clReleaseMemObject(x);
    clReleaseKernel(work);
    clReleaseKernel(halo);
    clReleaseProgram(p);
    ex_done(&e);
    return 0;
}
