/* The wait lists and blocking calls a queue timed by callbacks must take as
 * the driver would (capture/cbtime.c holds each timed command by an event of
 * cltrace's own): a launch behind the app's own user event, set after it was
 * enqueued; a launch behind 20 events (more than cltrace holds: its
 * callbacks set late); an out-of-order queue's launch, then a blocking map
 * and a blocking read with the app's event, whose profiling the app asks
 * for (its queue has none: the driver's answer, as untraced). Prints what
 * the app sees; the same untraced and traced. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

#define N 1024
#define CHECK(x) do { cl_int e_ = (x); if (e_) { printf("%s: %d\n", #x, e_); return 1; } } while (0)

static const char *src = "kernel void add(global int *a, int v) { a[get_global_id(0)] += v; }";

static long sum(const int *a)
{
    long s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    return s;
}

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &p, NULL));
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &err);
    CHECK(err);
    cl_queue_properties ooo[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };
    cl_command_queue qo = clCreateCommandQueueWithProperties(c, d, ooo, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &d, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "add", &err);
    CHECK(err);
    static int host[N];
    cl_mem buf = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    CHECK(err);
    size_t gws = N;
    int one = 1;
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k, 1, sizeof one, &one));

    /* 1. behind the app's user event, set once the launch is enqueued */
    cl_event gate = clCreateUserEvent(c, &err), done;
    CHECK(err);
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 1, &gate, &done));
    cl_int st = 0;
    CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    printf("held by the app's event: %s\n", st > CL_RUNNING ? "not started" : "started");
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &done));

    /* 2. behind 20 events */
    cl_event many[20];
    for (int i = 0; i < 20; i++)
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &many[i]));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 20, many, NULL));

    /* 3. out of order, then a blocking map and a blocking read */
    cl_event o;
    CHECK(clEnqueueNDRangeKernel(qo, k, 1, NULL, &gws, NULL, 0, NULL, &o));
    CHECK(clFinish(q));
    int *m = clEnqueueMapBuffer(qo, buf, CL_TRUE, CL_MAP_READ, 0, sizeof host, 1, &o, NULL, &err);
    CHECK(err);
    printf("mapped sum %ld\n", sum(m));
    CHECK(clEnqueueUnmapMemObject(qo, buf, m, 0, NULL, NULL));
    CHECK(clFinish(qo));
    cl_event r;
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, &r));
    cl_ulong t = 0;
    printf("read sum %ld, its profiling: %d\n", sum(host),
           clGetEventProfilingInfo(r, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL));
    clReleaseEvent(r);
    clReleaseEvent(o);
    for (int i = 0; i < 20; i++)
        clReleaseEvent(many[i]);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(qo);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    return 0;
}
