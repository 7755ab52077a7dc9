/* A buffer made, and kept, in a function whose name is 3,072 bytes of
 * UTF-8 ("aé" 1,024 times): its creation stack names that frame. The
 * trace keeps the first 512 bytes or fewer, cut where a character starts
 * (writer/symbols.c), so that a stack's packet fits the writer's buffer.
 * Prints the buffer's creation status. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define N1 aé
#define N2 CAT(N1, N1)
#define N3 CAT(N2, N2)
#define N4 CAT(N3, N3)
#define N5 CAT(N4, N4)
#define N6 CAT(N5, N5)
#define N7 CAT(N6, N6)
#define N8 CAT(N7, N7)
#define N9 CAT(N8, N8)
#define N10 CAT(N9, N9)
#define N11 CAT(N10, N10)

__attribute__((noinline)) static cl_mem N11(cl_context ctx, cl_int *err)
{
    return clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, err);
}

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int err = clGetPlatformIDs(1, &p, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context ctx = err == CL_SUCCESS ? clCreateContext(NULL, 1, &d, NULL, NULL, &err) : NULL;
    cl_mem buf = ctx ? N11(ctx, &err) : NULL;
    printf("buffer %s (%d)\n", buf ? "made" : "not made", err);
    return buf ? 0 : 1;
}
