/* A halo exchange around a ring of ranks, each with a kernel a step on its
 * own OpenCL device (tests/jobs.sh). Rank 0 has 20 ms of host work a step.
 *   blocking: rank 0's host work, the kernel, wait for it, then MPI_Send /
 *             MPI_Recv (even ranks send first): rank 1 waits in MPI_Recv
 *             for rank 0 while its device sits idle
 *   overlap:  MPI_Irecv and MPI_Isend posted first, the kernel enqueued,
 *             rank 0's host work while it runs, then MPI_Waitall: the
 *             waits overlap the kernels (as long as a kernel outlasts the
 *             host work: ROUNDS, the second argument)
 * Then MPI_Barrier and MPI_Allreduce of a checksum. Each halo is HALO
 * floats; rank r sends to r + 1 with tag 100 + step. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (1 << 14)
#define HALO 1024
#define STEPS 5
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static const char *src =
    "__kernel void work(__global float *x, int rounds) {\n"
    "    float v = x[get_global_id(0)];\n"
    "    for (int r = 0; r < rounds; r++) v = v * 0.999f + 0.001f;\n"
    "    x[get_global_id(0)] = v;\n"
    "}\n";

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void host_work(int ms)
{
    struct timespec t = { 0, ms * 1000000L };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int overlap = argc > 1 && !strcmp(argv[1], "overlap");
    int rounds = argc > 2 ? atoi(argv[2]) : 2000;      /* the kernel's length */
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    /* OCL_DEVICE=rank: rank r on the platform's device r (mod their count), as a job with a GPU per rank */
    cl_device_id devs[16];
    cl_uint n_devs = 0;
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 16, devs, &n_devs));
    const char *pick = getenv("OCL_DEVICE");
    dev = devs[pick && !strcmp(pick, "rank") && n_devs ? (cl_uint)rank % (n_devs < 16 ? n_devs : 16) : 0];
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(p, "work", &err);
    CHECK(err);
    float *x = calloc(N, sizeof *x), in[HALO], out[HALO];
    for (int i = 0; i < N; i++)
        x[i] = (float)(rank + 1);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof *x, x, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k, 1, sizeof rounds, &rounds));
    size_t gws = N;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* the ranks start the loop together: whichever built its program first
     * would otherwise wait for the other's first message, its device idle
     * (beside two CPU hogs, 145 ms of an overlapped rank's 1.7 s) */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_ms();
    for (int s = 0; s < STEPS; s++) {
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        if (overlap) {          /* posted first; the kernel runs during rank 0's host work and the wait */
            MPI_Request r[2];
            MPI_Irecv(in, HALO, MPI_FLOAT, left, 100 + s, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(out, HALO, MPI_FLOAT, right, 100 + s, MPI_COMM_WORLD, &r[1]);
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
            CHECK(clFlush(q));
            if (rank == 0)
                host_work(20);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            CHECK(clFinish(q));
        } else {
            if (rank == 0)
                host_work(20);
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
            CHECK(clFinish(q));
            if (rank % 2 == 0) {
                MPI_Send(out, HALO, MPI_FLOAT, right, 100 + s, MPI_COMM_WORLD);
                MPI_Recv(in, HALO, MPI_FLOAT, left, 100 + s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(in, HALO, MPI_FLOAT, left, 100 + s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(out, HALO, MPI_FLOAT, right, 100 + s, MPI_COMM_WORLD);
            }
        }
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL));
    }
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, N * sizeof *x, x, 0, NULL, NULL));
    double mine = 0, all = 0;
    for (int i = 0; i < N; i++)
        mine += x[i];
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d ranks, %d steps, %.1f ms, checksum %.6e\n", overlap ? "overlap" : "blocking", size, STEPS,
               now_ms() - t0, all);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(x);
    MPI_Finalize();
    return 0;
}
