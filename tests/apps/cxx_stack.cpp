// A C++ program whose leaked buffer is made inside a namespaced member
// function, and one made in a stripped library's hidden function: the report
// must show the first demangled and the second as library+offset.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <cstdio>

extern "C" cl_mem hidden_make(cl_context c);   // tests/apps/cxx_lib.c, stripped

namespace vision {
struct Mat {
    static cl_mem create(cl_context c, int n)
    {
        cl_int e;
        return clCreateBuffer(c, CL_MEM_READ_WRITE, (size_t)n, nullptr, &e);
    }
};
}

int main()
{
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    clGetPlatformIDs(1, &p, nullptr);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
    cl_context c = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
    cl_mem m = vision::Mat::create(c, 1024), h = hidden_make(c);
    std::printf("%d %d\n", m != nullptr, h != nullptr);
    clReleaseContext(c);
    return 0;
}
