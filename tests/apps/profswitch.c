/* A driver that writes down each switch of a queue's profiling: loaded as
 * CLTRACE_LIBRARY, it appends '+' (on) or '-' (off) to the file named by
 * PROFSWITCH_LOG for each clSetCommandQueueProperty that switches
 * CL_QUEUE_PROFILING_ENABLE, and hands the call to the queue's own driver
 * (the ICD dispatch table every queue starts with: not by name, which would
 * find cltrace's); every other function cltrace looks up in it is the
 * OpenCL loader's, which it links. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS   /* clSetCommandQueueProperty; cl_icd.h's table */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS   /* names every command: quiet where the headers */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS   /* are not the system's (-Werror) */
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

cl_int clSetCommandQueueProperty(cl_command_queue q, cl_command_queue_properties props, cl_bool enable,
                                 cl_command_queue_properties *old)
{
    const cl_icd_dispatch *d = q ? *(const cl_icd_dispatch *const *)q : NULL;
    if (!d || !d->clSetCommandQueueProperty)
        return CL_INVALID_COMMAND_QUEUE;
    cl_int r = d->clSetCommandQueueProperty(q, props, enable, old);
    const char *path = getenv("PROFSWITCH_LOG");
    int fd = path && r == CL_SUCCESS && (props & CL_QUEUE_PROFILING_ENABLE) ?
             open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    if (fd >= 0) {
        (void)!write(fd, enable ? "+" : "-", 1);
        close(fd);
    }
    return r;
}
