/* Device timeline test: `timeline DURATIONS_FILE`.
 * Commands on a profiling queue (with events the app reads itself, and
 * without events) and on a queue without profiling; transfers of several
 * kinds, kernels with a NULL local size and a __local argument. Writes the
 * durations it reads with clGetEventProfilingInfo to DURATIONS_FILE ("kind
 * ns" lines); stdout only holds what must not change under the tracer:
 * queue properties and profiling availability as the app sees them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

/* The platform whose name contains $OCL_PLATFORM (default: the first). */
static cl_platform_id pick_platform(void)
{
    cl_platform_id ps[8];
    cl_uint n = 0;
    const char *want = getenv("OCL_PLATFORM");
    CHECK(clGetPlatformIDs(8, ps, &n));
    for (cl_uint i = 0; want && i < n; i++) {
        char name[256];
        CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (strstr(name, want))
            return ps[i];
    }
    return ps[0];
}

static const char *src =
    "__kernel void scale(__global float *x, float f) { x[get_global_id(0)] *= f; }\n"
    "__kernel void sum_local(__global const float *x, __global float *out, __local float *tmp) {\n"
    "    size_t l = get_local_id(0);\n"
    "    tmp[l] = x[get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (l == 0) { float s = 0; for (size_t i = 0; i < get_local_size(0); i++) s += tmp[i];\n"
    "                  out[get_group_id(0)] = s; }\n"
    "}\n";

static FILE *durations;

static void dur(const char *kind, cl_event ev)
{
    cl_ulong s, e;
    CHECK(clWaitForEvents(1, &ev));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL));
    fprintf(durations, "%s %llu\n", kind, (unsigned long long)(e - s));
    CHECK(clReleaseEvent(ev));
}

int main(int argc, char **argv)
{
    durations = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    p = pick_platform();
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties prof_props[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
    cl_command_queue qp = clCreateCommandQueueWithProperties(ctx, d, prof_props, &err);
    CHECK(err);
    cl_command_queue qn = clCreateCommandQueueWithProperties(ctx, d, NULL, &err);  /* no profiling asked */
    CHECK(err);
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cl_command_queue qo = clCreateCommandQueue(ctx, d, 0, &err);                     /* 1.x API, none asked */
    CHECK(err);
    cl_command_queue_properties props;
    size_t n;
    cl_queue_properties arr[8];
    CHECK(clGetCommandQueueInfo(qp, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    printf("profiling queue properties: 0x%llx\n", (unsigned long long)props);
    CHECK(clGetCommandQueueInfo(qn, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    printf("plain queue properties: 0x%llx\n", (unsigned long long)props);
    CHECK(clGetCommandQueueInfo(qo, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    printf("1.x queue properties: 0x%llx\n", (unsigned long long)props);
    CHECK(clGetCommandQueueInfo(qp, CL_QUEUE_PROPERTIES_ARRAY, sizeof arr, arr, &n));
    printf("profiling queue array: %zu bytes, key 0x%llx value 0x%llx\n", n, (unsigned long long)arr[0],
           (unsigned long long)arr[1]);
    CHECK(clGetCommandQueueInfo(qn, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &n));
    printf("plain queue array: %zu bytes\n", n);

    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &d, "-cl-mad-enable", NULL, NULL));
    /* what the app reads back of its build is what it gave (the tracer may
     * build with more options, e.g. -cl-nv-verbose on NVIDIA) */
    char opts[256], *log;
    size_t log_size = 0;
    CHECK(clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts, NULL));
    CHECK(clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size));
    log = malloc(log_size + 1);
    CHECK(clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, log_size, log, NULL));
    printf("build options: '%s', build log: %zu bytes%s\n", opts, log_size, strstr(log, "ptxas") ? " (ptxas!)" : "");
    free(log);
    cl_kernel scale = clCreateKernel(prog, "scale", &err);
    CHECK(err);
    cl_kernel sum = clCreateKernel(prog, "sum_local", &err);
    CHECK(err);
    enum { N = 1 << 16, WG = 64 };
    float *host = malloc(N * sizeof *host), f = 2.0f;
    for (int i = 0; i < N; i++)
        host[i] = 1.0f;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, N / WG * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem copy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(scale, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(scale, 1, sizeof f, &f));
    CHECK(clSetKernelArg(sum, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(sum, 1, sizeof out, &out));
    CHECK(clSetKernelArg(sum, 2, WG * sizeof(float), NULL));   /* __local */

    cl_event ev;
    size_t gws = N, lws = WG;
    CHECK(clEnqueueWriteBuffer(qp, buf, CL_FALSE, 0, N * sizeof(float), host, 0, NULL, &ev));
    dur("write", ev);
    CHECK(clEnqueueNDRangeKernel(qp, scale, 1, NULL, &gws, NULL, 0, NULL, &ev));     /* NULL local size */
    dur("scale", ev);
    CHECK(clEnqueueNDRangeKernel(qp, sum, 1, NULL, &gws, &lws, 0, NULL, &ev));
    dur("sum_local", ev);
    CHECK(clEnqueueCopyBuffer(qp, buf, copy, 0, 0, N * sizeof(float), 0, NULL, &ev));
    dur("copy", ev);
    float zero = 0;
    CHECK(clEnqueueFillBuffer(qp, copy, &zero, sizeof zero, 0, N * sizeof(float), 0, NULL, &ev));
    dur("fill", ev);
    CHECK(clEnqueueReadBuffer(qp, out, CL_FALSE, 0, N / WG * sizeof(float), host, 0, NULL, &ev));
    dur("read", ev);
    float *mapped = clEnqueueMapBuffer(qp, copy, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, 4096, 0, NULL, NULL, &err);
    CHECK(err);
    mapped[0] = 1.0f;
    CHECK(clEnqueueUnmapMemObject(qp, copy, mapped, 0, NULL, NULL));
    /* no events: timed by the tracer alone */
    for (int i = 0; i < 3; i++) {
        CHECK(clEnqueueWriteBuffer(qn, buf, CL_FALSE, 0, 4096, host, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(qn, scale, 1, NULL, &gws, &lws, 0, NULL, NULL));
    }
    CHECK(clFinish(qn));
    /* an event on a queue without profiling: unavailable, as without the tracer */
    CHECK(clEnqueueNDRangeKernel(qo, scale, 1, NULL, &gws, &lws, 0, NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    cl_ulong t;
    printf("profiling on a plain queue: %d\n", clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL));
    CHECK(clReleaseEvent(ev));
    CHECK(clEnqueueReadBuffer(qp, out, CL_TRUE, 0, N / WG * sizeof(float), host, 0, NULL, NULL));
    printf("sum of group 0: %.1f\n", host[0]);
    clReleaseMemObject(buf);
    clReleaseMemObject(out);
    clReleaseMemObject(copy);
    clReleaseKernel(scale);
    clReleaseKernel(sum);
    clReleaseProgram(prog);
    clReleaseCommandQueue(qp);
    clReleaseCommandQueue(qn);
    clReleaseCommandQueue(qo);
    clReleaseContext(ctx);
    fclose(durations);
    free(host);
    return 0;
}
