/* An OpenCL 1.2 program (for a 1.2 platform such as Oclgrind): queue,
 * program, kernel, transfers, only 1.2 entry points. Prints its result.
 *   old_platform [timer]   timer: also call clGetDeviceAndHostTimer (2.1),
 *                          which ocl-icd 2.3 sends round in a loop for a 1.2
 *                          vendor: untraced it hangs, traced it fails
 *   old_platform inflight [_exit]  then launches again and returns (or
 *                          calls _exit) while the kernel runs (the
 *                          stand-in ICD with STANDIN_RUN_MS)
 *   old_platform loop N    then N times: write, kernel, blocking read (no
 *                          events), and the queue's properties as read back */
#define CL_TARGET_OPENCL_VERSION 210
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    char version[128] = "";
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 1;
    clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof version, version, NULL);
    printf("%s\n", version);
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
    const char *src = "__kernel void add(__global int *x, int k) { x[get_global_id(0)] += k; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &d, NULL, NULL, NULL))
        return 1;
    cl_kernel k = clCreateKernel(prog, "add", &err);
    int data[64];
    for (int i = 0; i < 64; i++)
        data[i] = i;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    int add = 3;
    size_t gws = 64;
    clSetKernelArg(k, 0, sizeof buf, &buf);
    clSetKernelArg(k, 1, sizeof add, &add);
    cl_event ev;
    clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, &ev);
    clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 1, &ev, NULL);
    long sum = 0;
    for (int i = 0; i < 64; i++)
        sum += data[i];
    printf("sum=%ld\n", sum);
    if (argc > 1 && strcmp(argv[1], "inflight") == 0) {
        clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, &ev);
        clFlush(q);
        printf("returns with a kernel in flight\n");
        fflush(stdout);
        if (argc > 2 && strcmp(argv[2], "_exit") == 0)
            _exit(0);
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "loop") == 0) {
        int n = atoi(argv[2]);
        for (int it = 0; it < n; it++) {
            for (int i = 0; i < 64; i++)
                data[i] = i + it;
            clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL);
            clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL);
            clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL);
            for (int i = 0; i < 64; i++)
                sum += data[i];
        }
        cl_command_queue_properties props = 0;
        clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
        cl_ulong t = 0;
        printf("loop sum=%ld properties=%lu profiling info=%d\n", sum, (unsigned long)props,
               clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL));
    }
    if (argc > 1 && strcmp(argv[1], "timer") == 0) {
        cl_ulong dt, ht;
        printf("clGetDeviceAndHostTimer: %d\n", clGetDeviceAndHostTimer(d, &dt, &ht));
    }
    clReleaseEvent(ev);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
