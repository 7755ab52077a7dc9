/* The plugin tests/apps/fakempi.c loads in MPI_Init: it asks each device
 * something the device does not have (a failing clGetDeviceInfo). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

void probe_devices(void)
{
    cl_platform_id p;
    cl_device_id d;
    char buf[64];
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return;
    clGetDeviceInfo(d, 0x4037, sizeof buf, buf, NULL);   /* an extension's query this device lacks */
}
