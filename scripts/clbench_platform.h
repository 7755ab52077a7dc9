/* The measuring programs of scripts/ (evcollect.c, profq.c, clockprobe.c):
 * the platform whose name contains $CLBENCH_PLATFORM (default: the first). */
#ifndef CLBENCH_PLATFORM_H
#define CLBENCH_PLATFORM_H
#include <stdlib.h>
#include <string.h>

static cl_platform_id clbench_platform(void)
{
    const char *want = getenv("CLBENCH_PLATFORM");
    cl_platform_id ps[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, ps, &np) != CL_SUCCESS || !np) {
        fprintf(stderr, "no OpenCL platform\n");
        exit(1);
    }
    cl_platform_id p = ps[0];
    for (cl_uint i = 0; want && i < np; i++) {
        char nm[128];
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof nm, nm, NULL);
        if (strstr(nm, want))
            p = ps[i];
    }
    return p;
}

#endif
