/* Kernels that exercise what `cltrace --capture` and `cltrace replay` must
 * handle (tests/replay.sh):
 *   replay_kernels [--bug]
 * tile      a __local argument (a work-group sum through local memory)
 * shade     an image2d_t and a sampler in, a float buffer out
 * twice     from a program created from a binary (the first program's);
 *           launched again on a sub-buffer (the second half)
 * wave      float math (sin, exp) whose last bits differ between devices
 * oob       (--bug) writes one element past its buffer's end
 * race      (--bug) work-items write one local word without a barrier
 * svm       (where the device has SVM) an SVM pointer argument
 * Each launched once; prints a checksum of each output.
 * OCL_PLATFORM picks the platform whose name contains it (default: the first). */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static const char *src =
    "kernel void tile(global const int *in, global int *out, local int *scratch) {\n"
    "    int l = get_local_id(0), g = get_global_id(0);\n"
    "    scratch[l] = in[g];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int s = 0;\n"
    "    for (int k = 0; k < (int)get_local_size(0); k++)\n"
    "        s += scratch[k];\n"
    "    out[g] = s;\n"
    "}\n"
    "kernel void shade(read_only image2d_t img, sampler_t smp, global float4 *out) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    out[y * get_global_size(0) + x] = read_imagef(img, smp, (int2)(x, y)) * 2.0f;\n"
    "}\n"
    "kernel void wave(global const float *x, global float *y) {\n"
    "    int i = get_global_id(0);\n"
    "    y[i] = sin(x[i]) * exp(x[i] * 0.01f) + x[i] / 3.0f;\n"
    "}\n"
    "kernel void oob(global const int *in, global int *out) {\n"
    "    int i = get_global_id(0);\n"
    "    out[i + 1] = in[i];\n"
    "}\n"
    "kernel void race(global int *out, local int *word) {\n"
    "    word[0] = get_local_id(0);\n"
    "    out[get_global_id(0)] = word[0];\n"
    "}\n";

static const char *src2 = "kernel void twice(global int *v) { int i = get_global_id(0); v[i] = 2 * v[i] + 1; }\n";

static cl_program build(cl_context ctx, cl_device_id dev, const char *s)
{
    cl_int e;
    cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &e);
    CHECK(e);
    if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build: %s\n", log);
        exit(1);
    }
    return p;
}

static long sum_int(const int *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

int main(int argc, char **argv)
{
    int bug = argc > 1 && !strcmp(argv[1], "--bug");
    cl_platform_id plats[8];
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(8, plats, &np));
    const char *want = getenv("OCL_PLATFORM");
    cl_platform_id plat = plats[0];
    for (cl_uint i = 0; want && i < np; i++) {
        char name[128] = "";
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, want))
            plat = plats[i];
    }
    cl_device_id dev;
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    CHECK(e);
    cl_program p = build(ctx, dev, src);
    int in[N], out[N + 1];
    float x[N], y[N], pix[4 * 16 * 8], shaded[4 * 16 * 8];
    for (int i = 0; i < N; i++)
        in[i] = i * 7 % 13, x[i] = (float)i * 0.37f;
    for (int i = 0; i < 4 * 16 * 8; i++)
        pix[i] = (float)(i % 17) / 16.0f;
    cl_mem din = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &e);
    CHECK(e);
    cl_mem dout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY | CL_MEM_HOST_READ_ONLY, sizeof out, NULL, &e);
    CHECK(e);
    size_t g = N, l = 32;

    cl_kernel tile = clCreateKernel(p, "tile", &e);
    CHECK(e);
    CHECK(clSetKernelArg(tile, 0, sizeof din, &din));
    CHECK(clSetKernelArg(tile, 1, sizeof dout, &dout));
    CHECK(clSetKernelArg(tile, 2, l * sizeof(int), NULL));
    CHECK(clEnqueueNDRangeKernel(q, tile, 1, NULL, &g, &l, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dout, CL_TRUE, 0, sizeof(int) * N, out, 0, NULL, NULL));
    printf("tile %ld\n", sum_int(out, N));

    cl_image_format fmt = { CL_RGBA, CL_FLOAT };
    cl_image_desc desc = { .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16, .image_height = 8 };
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, &desc, pix, &e);
    CHECK(e);
    cl_sampler smp = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &e);
    CHECK(e);
    cl_mem dshade = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof shaded, NULL, &e);
    CHECK(e);
    cl_kernel shade = clCreateKernel(p, "shade", &e);
    CHECK(e);
    CHECK(clSetKernelArg(shade, 0, sizeof img, &img));
    CHECK(clSetKernelArg(shade, 1, sizeof smp, &smp));
    CHECK(clSetKernelArg(shade, 2, sizeof dshade, &dshade));
    size_t g2[2] = { 16, 8 };
    CHECK(clEnqueueNDRangeKernel(q, shade, 2, NULL, g2, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dshade, CL_TRUE, 0, sizeof shaded, shaded, 0, NULL, NULL));
    double s = 0;
    for (int i = 0; i < 4 * 16 * 8; i++)
        s += shaded[i];
    printf("shade %.3f\n", s);

    /* a program from the binary of another */
    cl_program p2 = build(ctx, dev, src2);
    size_t bin_size = 0;
    CHECK(clGetProgramInfo(p2, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL));
    unsigned char *bin = malloc(bin_size);
    CHECK(clGetProgramInfo(p2, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    cl_int st;
    cl_program pb = clCreateProgramWithBinary(ctx, 1, &dev, &bin_size, (const unsigned char **)&bin, &st, &e);
    CHECK(e);
    CHECK(clBuildProgram(pb, 1, &dev, "", NULL, NULL));
    cl_kernel twice = clCreateKernel(pb, "twice", &e);
    CHECK(e);
    cl_mem dv = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof in, in, &e);
    CHECK(e);
    CHECK(clSetKernelArg(twice, 0, sizeof dv, &dv));
    CHECK(clEnqueueNDRangeKernel(q, twice, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dv, CL_TRUE, 0, sizeof in, out, 0, NULL, NULL));
    printf("twice %ld\n", sum_int(out, N));
    cl_uint align_bits = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    size_t half = sizeof in / 2, align = align_bits / 8;
    if (align && half % align == 0) {      /* a sub-buffer at an offset the device allows */
        cl_buffer_region region = { half, half };
        cl_mem sub = clCreateSubBuffer(dv, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
        CHECK(e);
        size_t gh = N / 2;
        CHECK(clSetKernelArg(twice, 0, sizeof sub, &sub));
        CHECK(clEnqueueNDRangeKernel(q, twice, 1, NULL, &gh, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, dv, CL_TRUE, 0, sizeof in, out, 0, NULL, NULL));
        printf("twice on a sub-buffer %ld\n", sum_int(out, N));
    }

    cl_mem dx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &e);
    CHECK(e);
    cl_mem dy = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, sizeof y, NULL, &e);
    CHECK(e);
    cl_kernel wave = clCreateKernel(p, "wave", &e);
    CHECK(e);
    CHECK(clSetKernelArg(wave, 0, sizeof dx, &dx));
    CHECK(clSetKernelArg(wave, 1, sizeof dy, &dy));
    CHECK(clEnqueueNDRangeKernel(q, wave, 1, NULL, &g, &l, 0, NULL, NULL));
    CHECK(clFinish(q));
    printf("wave done\n");

    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) == CL_SUCCESS &&
        (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        const char *s3 = "kernel void svm(global int *v) { v[get_global_id(0)] += 3; }";
        cl_program p3 = build(ctx, dev, s3);
        cl_kernel ks = clCreateKernel(p3, "svm", &e);
        CHECK(e);
        int *sv = clSVMAlloc(ctx, CL_MEM_READ_WRITE, sizeof in, 0);
        if (sv) {
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, sv, in, sizeof in, 0, NULL, NULL));
            CHECK(clSetKernelArgSVMPointer(ks, 0, sv));
            CHECK(clEnqueueNDRangeKernel(q, ks, 1, NULL, &g, NULL, 0, NULL, NULL));
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, out, sv, sizeof in, 0, NULL, NULL));
            printf("svm %ld\n", sum_int(out, N));
            clSVMFree(ctx, sv);
        }
    }

    if (bug) {
        cl_mem small = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int) * N, NULL, &e);
        CHECK(e);
        cl_kernel oob = clCreateKernel(p, "oob", &e);
        CHECK(e);
        CHECK(clSetKernelArg(oob, 0, sizeof din, &din));
        CHECK(clSetKernelArg(oob, 1, sizeof small, &small));
        CHECK(clEnqueueNDRangeKernel(q, oob, 1, NULL, &g, &l, 0, NULL, NULL));
        cl_kernel race = clCreateKernel(p, "race", &e);
        CHECK(e);
        CHECK(clSetKernelArg(race, 0, sizeof small, &small));
        CHECK(clSetKernelArg(race, 1, sizeof(int), NULL));
        CHECK(clEnqueueNDRangeKernel(q, race, 1, NULL, &g, &l, 0, NULL, NULL));
        CHECK(clFinish(q));
        printf("bugs run\n");
    }
    CHECK(clFinish(q));
    return 0;
}
