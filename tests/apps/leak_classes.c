/* One program per leak class (tests/report_parts.sh, checks.py leak_class):
 *   leak_classes lost    makes a context, queue, program and kernel, two
 *                        buffers in a helper, launches with an event, then
 *                        releases its queue, program and context and exits,
 *                        forgetting both buffers, the kernel and the event:
 *                        definitely lost
 *   leak_classes loop    makes a buffer every iteration and never releases
 *                        it: growing with the run
 *   leak_classes last    reallocates its buffer every iteration, releasing
 *                        the one before; the last is held at exit: still held
 *   leak_classes cache   a library-style cache: a program per key, built on
 *                        first use, used for the rest of the run, held to
 *                        the end with its context: still held
 * Every mode but lost keeps its context, queue and work to the end, and
 * does real work each iteration (a write and a launch). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static const char *src = "kernel void twice(global float *a) { a[get_global_id(0)] *= 2.0f; }";
static cl_device_id dev;
static cl_context ctx;
static cl_command_queue q;

static NOINLINE cl_program build(const char *options)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, options, NULL, NULL));
    return p;
}

static NOINLINE cl_mem make_buffers(cl_mem *second)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    *second = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    return m;
}

static NOINLINE cl_mem grow_site(void)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CHECK(err);
    return m;
}

static NOINLINE cl_mem frame_site(void)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 2048, NULL, &err);
    CHECK(err);
    return m;
}

/* The cache: one program per key, built the first time the key is asked for. */
static NOINLINE cl_program cached_program(int key)
{
    static cl_program cache[4];
    static const char *const options[4] = { "", "-cl-mad-enable", "-cl-fast-relaxed-math", "-cl-no-signed-zeros" };
    if (!cache[key])
        cache[key] = build(options[key]);
    return cache[key];
}

/* One iteration's work: a write and a launch of `k` on `buf`. */
static void work(cl_kernel k, cl_mem buf)
{
    float data[256] = { 1 };
    size_t n = 256;
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
}

static void lost(void)
{
    cl_int err;
    cl_program p = build(NULL);
    cl_kernel k = clCreateKernel(p, "twice", &err);
    CHECK(err);
    cl_mem b2, b1 = make_buffers(&b2);
    cl_event ev;
    size_t n = 1024;
    CHECK(clSetKernelArg(k, 0, sizeof b1, &b1));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev));
    CHECK(clFinish(q));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseContext(ctx));
    printf("lost: 2 buffers, a kernel and an event\n");
}

static void iterate(const char *mode)
{
    cl_int err;
    cl_program p = build(NULL);
    cl_kernel k = clCreateKernel(p, "twice", &err);
    CHECK(err);
    cl_mem frame = NULL, keep = frame_site();
    int iterations = 24;
    for (int i = 0; i < iterations; i++) {
        cl_mem buf = keep;
        if (!strcmp(mode, "loop"))
            buf = grow_site();                  /* never released */
        else if (!strcmp(mode, "last")) {
            if (frame)
                CHECK(clReleaseMemObject(frame));
            buf = frame = frame_site();         /* the last one is held at exit */
        } else {
            cl_program cp = cached_program(i < 4 ? i : i % 4);
            (void)cp;
        }
        work(k, buf);
    }
    CHECK(clReleaseMemObject(keep));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    printf("%s: %d iterations\n", mode, iterations);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cl_platform_id plat;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    if (!strcmp(mode, "lost"))
        lost();
    else if (!strcmp(mode, "loop") || !strcmp(mode, "last") || !strcmp(mode, "cache"))
        iterate(mode);
    else {
        fprintf(stderr, "usage: leak_classes lost|loop|last|cache\n");
        return 2;
    }
    return 0;
}
