/* The host keeps the device idle: each step's input built on the CPU
 * (prepare_batch, ~8 ms) before a short kernel, waited for. The CPU samples
 * must name prepare_batch for most of the device's idle time; the loop's
 * CPU time, as the thread's clock counts it, is printed to check theirs.
 *   host_gap [STEPS] */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4096
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s: %d\n", #x, e_); exit(1); } } while (0)

static const char *src = "__kernel void scale(__global float *x) { x[get_global_id(0)] *= 2.0f; }";

static volatile double sink;

static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) static void prepare_batch(float *x, int step)
{
    double acc = 0;
    for (int r = 0; r < 300; r++)
        for (int i = 0; i < N; i++) {
            acc += (double)(i ^ r ^ step) * 1e-9;
            x[i] = (float)acc;
        }
    sink = acc;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(p, "scale", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    float *x = malloc(N * sizeof *x);
    size_t gws = N;
    double cpu0 = thread_cpu_ms();
    for (int s = 0; s < steps; s++) {
        prepare_batch(x, s);
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, N * sizeof *x, x, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
    }
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, N * sizeof *x, x, 0, NULL, NULL));
    double loop_cpu_ms = thread_cpu_ms() - cpu0;
    printf("host_gap: %d steps, x[1] = %g\n", steps, x[1]);
    printf("host_gap: the loop's CPU time %.1f ms\n", loop_cpu_ms);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(x);
    return 0;
}
