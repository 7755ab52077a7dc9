/* A device left mostly idle (seed 001: at least as many work-groups as
 * compute units, better several each):
 *   underfill          the work in a quarter as many work-groups of 256 as
 *                      the device has compute units (1 on a small CPU):
 *                      each work-item loops over many tasks
 *   underfill --fixed  the same tasks in 4 work-groups per compute unit
 * Each task is the same arithmetic in both (4 independent multiply-add
 * chains, so a compute unit is busy with one group), so both print the
 * same results; the kernel is bound by arithmetic, so its time goes with
 * the share of compute units it keeps busy. */
#include "../common/example.h"

static const char *src =
    "kernel void burn(global float *out, int tasks, int steps) {\n"
    "    for (int t = get_global_id(0); t < tasks; t += get_global_size(0)) {\n"
    "        float a = t * 1e-6f, b = a + 0.25f, c = a + 0.5f, d = a + 0.75f;\n"
    "        for (int k = 0; k < steps; k++) {\n"
    "            a = a * 0.9999f + 0.0001f;\n"
    "            b = b * 0.9999f + 0.0001f;\n"
    "            c = c * 0.9999f + 0.0001f;\n"
    "            d = d * 0.9999f + 0.0001f;\n"
    "        }\n"
    "        out[t] = a + b + c + d;\n"
    "    }\n"
    "}\n";

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    cl_uint cus = 1;
    CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
    const size_t local = 256;
    const int tasks = (int)(4 * cus * local * 4), steps = 1024;
    size_t groups = e.fixed ? 4 * (size_t)cus : (cus / 4 ? cus / 4 : 1);
    size_t global = groups * local;
    cl_program p = ex_build(&e, src, "-cl-mad-enable");
    cl_kernel k = ex_kernel(p, "burn");
    cl_mem out = ex_buffer(&e, CL_MEM_WRITE_ONLY, sizeof(float) * (size_t)tasks, NULL);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof tasks, &tasks));
    CHECK(clSetKernelArg(k, 2, sizeof steps, &steps));
    for (int r = 0; r < 5; r++)
        CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    float *h = malloc(sizeof(float) * (size_t)tasks);
    CHECK(clEnqueueReadBuffer(e.q, out, CL_TRUE, 0, sizeof(float) * (size_t)tasks, h, 0, NULL, NULL));
    ex_checksum("out", h, (size_t)tasks);
    free(h);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
    ex_done(&e);
    return 0;
}
