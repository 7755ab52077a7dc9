/* A driver that gives no profiling data for a map, as NVIDIA's does for a
 * write-invalidate one: loaded as CLTRACE_LIBRARY, it answers
 * clGetEventProfilingInfo for a map's event with
 * CL_PROFILING_INFO_NOT_AVAILABLE and hands every other query to the
 * event's own driver (the ICD dispatch table every event starts with: not
 * by name, which would find cltrace's); every other function cltrace looks
 * up in it is the OpenCL loader's, which it links. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS   /* cl_icd.h's table names every command: quiet */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS   /* where the headers are not the system's (-Werror) */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_icd.h>

cl_int clGetEventProfilingInfo(cl_event ev, cl_profiling_info what, size_t size, void *value, size_t *size_ret)
{
    const cl_icd_dispatch *d = ev ? *(const cl_icd_dispatch *const *)ev : NULL;
    cl_command_type type = 0;
    if (!d)
        return CL_INVALID_EVENT;
    if (d->clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
        type == CL_COMMAND_MAP_BUFFER)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    return d->clGetEventProfilingInfo(ev, what, size, value, size_ret);
}
