/* Kernels made each way a program can make them (clCreateKernel,
 * clCreateKernelsInProgram, clCloneKernel where the platform has it), each
 * launched once on a queue with profiling, then the same kernel on a
 * second queue: prints, per launch, the kernel's name and its work-group
 * facts as the driver gives them (cltrace asks them when a kernel is made,
 * capture/hooks.c, and records them at its first launch on each queue;
 * tests/checks.py compares the trace's with these). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_) { printf("%s: %d\n", #x, e_); return 1; } } while (0)

static const char *src = "kernel void twice(global int *a) { a[get_global_id(0)] *= 2; }\n"
                         "kernel void plus(global int *a) { a[get_global_id(0)] += 1; }\n";

static int launch(cl_command_queue q, cl_kernel k, cl_device_id d, cl_mem buf)
{
    char name[64] = "";
    size_t wg = 0, mult = 0, gws = 256;
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL));
    CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof mult, &mult, NULL));
    printf("%s %zu %zu\n", name, wg, mult);
    return 0;
}

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    char version[128] = "";
    CHECK(clGetPlatformIDs(1, &p, NULL));
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    CHECK(clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof version, version, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties props[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
    cl_command_queue q1 = clCreateCommandQueueWithProperties(c, d, props, &err);
    CHECK(err);
    cl_command_queue q2 = clCreateCommandQueueWithProperties(c, d, props, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &d, "", NULL, NULL));
    cl_mem buf = clCreateBuffer(c, CL_MEM_READ_WRITE, 256 * sizeof(int), NULL, &err);
    CHECK(err);
    cl_kernel made = clCreateKernel(prog, "twice", &err), all[8];
    CHECK(err);
    /* room for 8, 2 made, no count asked: the rest of the array is not the driver's to write (junk) */
    for (int i = 0; i < 8; i++)
        all[i] = (cl_kernel)(uintptr_t)(0x10 + i);
    CHECK(clCreateKernelsInProgram(prog, 8, all, NULL));
    size_t n = 0;
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, NULL));
    cl_kernel plus = NULL;
    for (size_t i = 0; i < n; i++) {
        char name[64] = "";
        CHECK(clGetKernelInfo(all[i], CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL));
        if (!strcmp(name, "plus"))
            plus = all[i];
    }
    if (!plus) {
        printf("no kernel plus\n");
        return 1;
    }
    /* clCloneKernel is OpenCL 2.1: a platform without it clones nothing */
    int major = 0, minor = 0;
    cl_kernel clone = NULL;
    if (sscanf(version, "OpenCL %d.%d", &major, &minor) == 2 && major * 10 + minor >= 21) {
        clone = clCloneKernel(made, &err);
        CHECK(err);
    }
    CHECK(launch(q1, made, d, buf) || launch(q1, plus, d, buf) || (clone && launch(q1, clone, d, buf)) ||
          launch(q2, made, d, buf));
    printf("kernels launched: %d\n", clone ? 4 : 3);
    clReleaseKernel(made);
    for (size_t i = 0; i < n; i++)
        clReleaseKernel(all[i]);
    if (clone)
        clReleaseKernel(clone);
    clReleaseMemObject(buf);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q1);
    clReleaseCommandQueue(q2);
    clReleaseContext(c);
    return 0;
}
