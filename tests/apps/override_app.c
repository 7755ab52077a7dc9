/* What an override must leave as it was (tests/try.sh): a program from
 * source built with the app's options, its kernels' names and argument
 * info as the driver reports them, an error code the app provokes, and a
 * second program created from a binary; every answer printed.
 *   override_app [scale]   scale: the source program's factor (default 3)
 * The binary: OVERRIDE_APP_BINARY's file when it exists (as an app ships
 * one), else built here (and written there, when named). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)
#define N 1024

static const char *src =
    "kernel void scale(global float *v, float s) { int i = get_global_id(0); v[i] = v[i] * s; }\n"
    "kernel void shift(global float *v, const int by) { int i = get_global_id(0); v[i] = v[i] + (float)by; }\n";
static const char *src2 = "kernel void twice(global int *v) { int i = get_global_id(0); v[i] = 2 * v[i] + 1; }\n";

static void arg_info(cl_kernel k, const char *name)
{
    cl_uint n = 0;
    CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL));
    printf("kernel %s: %u arguments\n", name, n);
    for (cl_uint i = 0; i < n; i++) {
        char an[64] = "", tn[64] = "";
        cl_int e1 = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof an, an, NULL);
        cl_int e2 = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof tn, tn, NULL);
        printf("  arg %u: name %s (%d), type %s (%d)\n", i, e1 ? "-" : an, e1, e2 ? "-" : tn, e2);
    }
}

int main(int argc, char **argv)
{
    float s = argc > 1 ? (float)atof(argv[1]) : 3.0f;
    cl_platform_id plat;
    cl_device_id dev;
    cl_int e;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    CHECK(e);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(p, 1, &dev, "-cl-mad-enable", NULL, NULL));
    char names[256] = "", opts[256] = "";
    CHECK(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL));
    CHECK(clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts, NULL));
    printf("kernels %s, options '%s'\n", names, opts);
    cl_kernel bad = clCreateKernel(p, "no_such_kernel", &e);
    printf("clCreateKernel(no_such_kernel): %d %s\n", e, bad ? "a kernel" : "NULL");
    cl_kernel k = clCreateKernel(p, "scale", &e), k2 = clCreateKernel(p, "shift", &e);
    CHECK(e);
    arg_info(k, "scale");
    arg_info(k2, "shift");
    float v[N];
    for (int i = 0; i < N; i++)
        v[i] = (float)i * 0.5f;
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &e);
    CHECK(e);
    int by = 7;
    size_t g = N;
    CHECK(clSetKernelArg(k, 0, sizeof b, &b));
    CHECK(clSetKernelArg(k, 1, sizeof s, &s));
    CHECK(clSetKernelArg(k2, 0, sizeof b, &b));
    CHECK(clSetKernelArg(k2, 1, sizeof by, &by));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(q, k2, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL));
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += v[i];
    printf("sum %.1f\n", sum);
    /* a program from a binary: a file's, else the one built here */
    const char *bin_file = getenv("OVERRIDE_APP_BINARY");
    size_t bin_size = 0;
    unsigned char *bin = NULL;
    FILE *bf = bin_file ? fopen(bin_file, "rb") : NULL;
    cl_program p2 = NULL;
    if (bf) {
        bin = malloc(1 << 22);
        bin_size = fread(bin, 1, 1 << 22, bf);
        fclose(bf);
    } else {
        p2 = clCreateProgramWithSource(ctx, 1, &src2, NULL, &e);
        CHECK(e);
        CHECK(clBuildProgram(p2, 1, &dev, NULL, NULL, NULL));
        CHECK(clGetProgramInfo(p2, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL));
        bin = malloc(bin_size);
        CHECK(clGetProgramInfo(p2, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
        if (bin_file && (bf = fopen(bin_file, "wb"))) {
            fwrite(bin, 1, bin_size, bf);
            fclose(bf);
        }
    }
    cl_int st = -1;
    cl_program pb = clCreateProgramWithBinary(ctx, 1, &dev, &bin_size, (const unsigned char **)&bin, &st, &e);
    CHECK(e);
    printf("binary status %d\n", st);
    CHECK(clBuildProgram(pb, 1, &dev, NULL, NULL, NULL));
    cl_kernel t = clCreateKernel(pb, "twice", &e);
    CHECK(e);
    int w[N];
    for (int i = 0; i < N; i++)
        w[i] = i;
    cl_mem bw = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof w, w, &e);
    CHECK(e);
    CHECK(clSetKernelArg(t, 0, sizeof bw, &bw));
    CHECK(clEnqueueNDRangeKernel(q, t, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bw, CL_TRUE, 0, sizeof w, w, 0, NULL, NULL));
    long ws = 0;
    for (int i = 0; i < N; i++)
        ws += w[i];
    printf("twice %ld\n", ws);
    clReleaseMemObject(b);
    clReleaseMemObject(bw);
    clReleaseKernel(k);
    clReleaseKernel(k2);
    clReleaseKernel(t);
    clReleaseProgram(p);
    if (p2)
        clReleaseProgram(p2);
    clReleaseProgram(pb);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(bin);
    return 0;
}
