/* Built stripped, the function that makes the buffer hidden: a frame with
 * no symbol at all (tests/apps/cxx_stack.cpp). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

__attribute__((noinline)) static cl_mem make(cl_context c)
{
    cl_int e;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64, NULL, &e);
    __asm__ volatile("" ::: "memory");   /* not a tail call: the frame stays */
    return m;
}

__attribute__((visibility("default"))) cl_mem hidden_make(cl_context c)
{
    cl_mem m = make(c);
    __asm__ volatile("" ::: "memory");
    return m;
}
