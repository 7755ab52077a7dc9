/* OpenCL called from inside OpenCL: a build's notify callback makes a kernel
 * (and fails to make one that does not exist); an event's completion
 * callback asks the event (and fails on a bad query). Its stacks run through
 * the shim's own frames: the trace must still open (every mapping whole). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <unistd.h>

static const char *src = "__kernel void k(__global int *x) { x[get_global_id(0)] += 1; }";
static volatile int events_done;

static void CL_CALLBACK built(cl_program p, void *user)
{
    (void)user;
    cl_int e1, e2;
    cl_kernel k = clCreateKernel(p, "k", &e1);
    cl_kernel none = clCreateKernel(p, "no_such_kernel", &e2);    /* fails, inside the build */
    printf("notify: k %d, no_such_kernel %d\n", e1, e2);
    if (k)
        clReleaseKernel(k);
    if (none)
        clReleaseKernel(none);
}

static void CL_CALLBACK done(cl_event ev, cl_int status, void *user)
{
    (void)user;
    cl_int st = 0;
    cl_int ok = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    cl_int bad = clGetEventInfo(ev, 0x7fff, sizeof st, &st, NULL);          /* fails, in the callback */
    printf("callback: status %d, query %d, bad query %d\n", status, ok, bad);
    fflush(stdout);
    events_done = 1;
}

int main(void)
{
    cl_platform_id pl;
    cl_device_id d;
    cl_int e;
    if (clGetPlatformIDs(1, &pl, NULL) || clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 1;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    clBuildProgram(p, 1, &d, "", built, NULL);
    cl_kernel k = clCreateKernel(p, "k", &e);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &e);
    clSetKernelArg(k, 0, sizeof b, &b);
    size_t n = 64;
    cl_event ev;
    clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev);
    clSetEventCallback(ev, CL_COMPLETE, done, NULL);
    clFinish(q);
    for (int i = 0; i < 200 && !events_done; i++)
        usleep(5000);
    clReleaseEvent(ev);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    return events_done ? 0 : 2;
}
