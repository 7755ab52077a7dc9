/* Objects the program never releases (seed 004's debugger shows where each
 * leaked object was made):
 *   leaks          a helper makes a scratch buffer and a kernel per call and
 *                  releases neither
 *   leaks --fixed  the helper releases both before it returns */
#include "../common/example.h"

static const char *src =
    "kernel void fill(global float *a, float v) { a[get_global_id(0)] = v; }\n";

/* One step of work: fill a scratch buffer, read back its first value. */
static float step(struct ex *e, cl_program p, float v, int release)
{
    cl_mem scratch = ex_buffer(e, CL_MEM_READ_WRITE, 65536 * sizeof(float), NULL);
    cl_kernel k = ex_kernel(p, "fill");
    CHECK(clSetKernelArg(k, 0, sizeof scratch, &scratch));
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    size_t gws = 65536, lws = 64;   /* 1024 work-groups: enough for a 132-SM GPU too */
    CHECK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &gws, &lws, 0, NULL, NULL));
    float out = 0;
    CHECK(clEnqueueReadBuffer(e->q, scratch, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL));
    if (release) {
        CHECK(clReleaseKernel(k));
        CHECK(clReleaseMemObject(scratch));
    }
    return out;
}

int main(int argc, char **argv)
{
    struct ex e;
    ex_init(&e, argc, argv);
    cl_program p = ex_build(&e, src, NULL);
    float sum = 0;
    for (int i = 0; i < 3; i++)
        sum += step(&e, p, (float)(i + 1), e.fixed);
    printf("checksum steps %.6e\n", (double)sum);
    CHECK(clReleaseProgram(p));
    ex_done(&e);
    return 0;
}
