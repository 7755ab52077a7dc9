/* N threads calling OpenCL at once: `threads THREADS CALLS [--fake]
 * [--spin S]`. Real mode (PoCL): each thread makes its own kernel and sets
 * its argument CALLS times. Fake mode (vendor = the fake library): no
 * setup, a made-up kernel handle. --spin: S more threads computing, no
 * OpenCL, until the calling threads are done (an app that wants every CPU).
 * Prints how many calls each thread made. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int calls, fake;
static cl_program prog;
static _Atomic int done;

static void *spinner(void *arg)
{
    volatile unsigned long x = 0;
    while (!__atomic_load_n(&done, __ATOMIC_RELAXED))
        x++;
    (void)arg;
    return NULL;
}

static void *worker(void *arg)
{
    long made = 0;
    cl_kernel k = (cl_kernel)(uintptr_t)0x1000;
    cl_int err = CL_SUCCESS;
    if (!fake) {
        k = clCreateKernel(prog, "k", &err);
        made++;
        if (err != CL_SUCCESS)
            return (void *)-1L;
    }
    for (int i = 0; i < calls; i++) {
        cl_int v = i;
        clSetKernelArg(k, 0, sizeof v, &v);
        made++;
    }
    if (!fake) {
        clReleaseKernel(k);
        made++;
    }
    *(long *)arg = made;
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 8;
    calls = argc > 2 ? atoi(argv[2]) : 10000;
    int spin = 0;
    for (int i = 3; i < argc; i++) {
        fake |= strcmp(argv[i], "--fake") == 0;
        if (strcmp(argv[i], "--spin") == 0 && i + 1 < argc)
            spin = atoi(argv[++i]);
    }
    long setup = 0;
    cl_context ctx = NULL;
    if (!fake) {
        cl_platform_id p;
        cl_device_id d;
        cl_int err;
        const char *src = "__kernel void k(int x) {}";
        clGetPlatformIDs(1, &p, NULL);
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
        ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
        prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (clBuildProgram(prog, 1, &d, NULL, NULL, NULL) != CL_SUCCESS)
            return 1;
        setup = 5;
    }
    pthread_t t[64], spinners[64];
    long made[64] = { 0 };
    if (nthreads > 64)
        nthreads = 64;
    for (int i = 0; i < spin && i < 64; i++)
        pthread_create(&spinners[i], NULL, spinner, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, &made[i]);
    long total = setup;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        total += made[i];
    }
    __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < spin && i < 64; i++)
        pthread_join(spinners[i], NULL);
    if (!fake) {
        clReleaseProgram(prog);
        clReleaseContext(ctx);
        total += 2;
    }
    printf("threads=%d calls=%ld\n", nthreads, total);
    return 0;
}
