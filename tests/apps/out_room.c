/* Arrays with room for more handles than the driver writes, the room
 * filled with what could pass for handles (an app's memory as it was): the
 * trace holds the handles the driver wrote and makes no objects of the
 * rest, whether the app asks how many there are or passes NULL for the
 * count. Prints how many it got. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    cl_platform_id ps[8];
    cl_device_id ds[16];
    cl_uint np = 0, nd = 0;
    cl_int err;
    memset(ps, 0x5a, sizeof ps);
    memset(ds, 0x5b, sizeof ds);
    if (clGetPlatformIDs(8, ps, &np) || clGetDeviceIDs(ps[0], CL_DEVICE_TYPE_ALL, 16, ds, &nd))
        return 1;
    cl_platform_id ps2[8];          /* again, the count not asked for */
    cl_device_id ds2[16];
    memset(ps2, 0x5c, sizeof ps2);
    memset(ds2, 0x5d, sizeof ds2);
    if (clGetPlatformIDs(8, ps2, NULL) || clGetDeviceIDs(ps2[0], CL_DEVICE_TYPE_ALL, 16, ds2, NULL) ||
        clGetPlatformIDs(8, NULL, NULL) != CL_INVALID_VALUE)
        return 1;
    cl_context c = clCreateContext(NULL, 1, ds, NULL, NULL, &err);
    if (err)
        return 1;
    clReleaseContext(c);
    printf("%u platforms, %u devices\n", np, nd);
    return 0;
}
