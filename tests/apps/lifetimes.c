/* Object lifetimes under cltrace (tests/run.sh, checks.py lifetimes).
 *   lifetimes leak      makes one object of each type the device supports and
 *                       releases none; prints "expect <type> <function>"
 *   lifetimes clean     makes the same objects and releases every one
 *   lifetimes implicit  releases parents before children (program before
 *                       kernel, buffer before sub-buffer, context first), uses
 *                       a released program the kernel still keeps alive, and
 *                       prints the reference counts the driver reports
 *   lifetimes errors    invalid values, invalid handles, a failed build;
 *                       prints "error <function> <code>" for each
 *   lifetimes classify  leaks of two classes: a context made once and held
 *                       to the end (still held), and over a loop of 8,
 *                       buffers never released (grow_site) and buffers
 *                       released on one path but not the other (path_site),
 *                       both growing with the run
 * Each object is made in a function of its own, so the creation stacks in
 * the trace can be checked for the app's function. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static cl_platform_id plat;
static cl_device_id dev;
static const char *src = "kernel void twice(global float *a) { a[get_global_id(0)] *= 2.0f; }";

static void expect(const char *type, const char *fn) { printf("expect %s %s\n", type, fn); }

static NOINLINE cl_context make_context(void)
{
    cl_int err;
    cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    expect("cl_context", __func__);
    return c;
}

static NOINLINE cl_command_queue make_queue(cl_context c)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(c, dev, NULL, &err);
    CHECK(err);
    expect("cl_command_queue", __func__);
    return q;
}

static NOINLINE cl_mem make_buffer(cl_context c)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    expect("cl_mem", __func__);
    return m;
}

static NOINLINE cl_mem make_sub_buffer(cl_mem parent)
{
    cl_int err;
    cl_buffer_region r = { 0, 1024 };
    cl_mem m = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    CHECK(err);
    expect("cl_mem", __func__);
    return m;
}

static NOINLINE cl_mem make_image(cl_context c)
{
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    if (!images)
        return NULL;
    cl_int err;
    cl_image_format f = { CL_RGBA, CL_UNORM_INT8 };
    cl_image_desc d;
    memset(&d, 0, sizeof d);
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = d.image_height = 16;
    cl_mem m = clCreateImage(c, CL_MEM_READ_ONLY, &f, &d, NULL, &err);
    CHECK(err);
    expect("cl_mem", __func__);
    return m;
}

static NOINLINE cl_mem make_pipe(cl_context c)
{
    cl_bool pipes = CL_FALSE;
    if (clGetDeviceInfo(dev, CL_DEVICE_PIPE_SUPPORT, sizeof pipes, &pipes, NULL) != CL_SUCCESS || !pipes)
        return NULL;
    cl_int err;
    cl_mem m = clCreatePipe(c, 0, 4, 16, NULL, &err);
    CHECK(err);
    expect("cl_mem", __func__);
    return m;
}

static NOINLINE cl_sampler make_sampler(cl_context c)
{
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    if (!images)
        return NULL;
    cl_int err;
    cl_sampler_properties props[] = { CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, CL_SAMPLER_ADDRESSING_MODE,
                                      CL_ADDRESS_CLAMP, CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0 };
    cl_sampler s = clCreateSamplerWithProperties(c, props, &err);
    CHECK(err);
    expect("cl_sampler", __func__);
    return s;
}

static NOINLINE cl_program make_program(cl_context c)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, NULL, NULL, NULL));
    expect("cl_program", __func__);
    return p;
}

static NOINLINE cl_kernel make_kernel(cl_program p)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, "twice", &err);
    CHECK(err);
    expect("cl_kernel", __func__);
    return k;
}

static NOINLINE cl_event make_user_event(cl_context c)
{
    cl_int err;
    cl_event e = clCreateUserEvent(c, &err);
    CHECK(err);
    CHECK(clSetUserEventStatus(e, CL_COMPLETE));
    expect("cl_event", __func__);
    return e;
}

static NOINLINE cl_event make_command_event(cl_command_queue q, cl_kernel k, cl_mem m)
{
    cl_event e;
    size_t n = 1024;
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &e));
    CHECK(clWaitForEvents(1, &e));
    expect("cl_event", __func__);
    return e;
}

static NOINLINE void *make_svm(cl_context c)
{
    cl_device_svm_capabilities caps = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) != CL_SUCCESS || !caps)
        return NULL;
    void *p = clSVMAlloc(c, CL_MEM_READ_WRITE, 4096, 0);
    if (p)
        expect("svm_pointer", __func__);
    return p;
}

static NOINLINE cl_device_id make_sub_device(void)
{
    cl_uint max = 0;
    clGetDeviceInfo(dev, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max, &max, NULL);
    if (max < 2)
        return NULL;
    cl_device_partition_property props[] = { CL_DEVICE_PARTITION_EQUALLY, 1, 0 };
    cl_device_id sub[64];
    cl_uint n = 0;
    if (clCreateSubDevices(dev, props, 1, sub, &n) != CL_SUCCESS || n < 1)
        return NULL;
    expect("cl_device_id", __func__);
    return sub[0];
}

struct objects {
    cl_context c;
    cl_command_queue q;
    cl_mem buf, sub, img, pipe;
    cl_sampler smp;
    cl_program prog;
    cl_kernel k;
    cl_event uev, cev;
    void *svm;
    cl_device_id subdev;
};

static void make_all(struct objects *o)
{
    o->c = make_context();
    o->q = make_queue(o->c);
    o->buf = make_buffer(o->c);
    o->sub = make_sub_buffer(o->buf);
    o->img = make_image(o->c);
    o->pipe = make_pipe(o->c);
    o->smp = make_sampler(o->c);
    o->prog = make_program(o->c);
    o->k = make_kernel(o->prog);
    o->uev = make_user_event(o->c);
    o->cev = make_command_event(o->q, o->k, o->buf);
    o->svm = make_svm(o->c);
    o->subdev = make_sub_device();
}

static void release_all(struct objects *o)
{
    CHECK(clReleaseEvent(o->cev));
    CHECK(clReleaseEvent(o->uev));
    CHECK(clReleaseKernel(o->k));
    CHECK(clReleaseProgram(o->prog));
    if (o->smp)
        CHECK(clReleaseSampler(o->smp));
    if (o->pipe)
        CHECK(clReleaseMemObject(o->pipe));
    if (o->img)
        CHECK(clReleaseMemObject(o->img));
    CHECK(clReleaseMemObject(o->sub));
    CHECK(clReleaseMemObject(o->buf));
    if (o->svm)
        clSVMFree(o->c, o->svm);
    CHECK(clReleaseCommandQueue(o->q));
    CHECK(clReleaseContext(o->c));
    if (o->subdev)
        CHECK(clReleaseDevice(o->subdev));
}

static cl_uint mem_refs(cl_mem m)
{
    cl_uint n = 0;
    CHECK(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL));
    return n;
}

static void implicit(void)
{
    cl_context c = make_context();
    cl_command_queue q = make_queue(c);
    cl_mem buf = make_buffer(c);
    cl_mem sub = make_sub_buffer(buf);
    cl_program prog = make_program(c);
    cl_kernel k = make_kernel(prog);
    /* the counts the app sees, after each retain and release */
    CHECK(clRetainMemObject(sub));
    printf("refcount %u\n", mem_refs(sub));
    CHECK(clRetainMemObject(sub));
    printf("refcount %u\n", mem_refs(sub));
    CHECK(clReleaseMemObject(sub));
    printf("refcount %u\n", mem_refs(sub));
    CHECK(clReleaseMemObject(sub));
    printf("refcount %u\n", mem_refs(sub));
    /* parents first: legal, the runtime keeps them for their children */
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseContext(c));
    /* a handle the app released, still alive through the kernel: flagged */
    cl_uint n = 0;
    printf("use after release %d\n", clGetProgramInfo(prog, CL_PROGRAM_REFERENCE_COUNT, sizeof n, &n, NULL));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(sub));
    CHECK(clReleaseCommandQueue(q));
}

static NOINLINE void errors(void)
{
    cl_int err;
    cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    clCreateBuffer(c, CL_MEM_READ_WRITE, 0, NULL, &err);
    printf("error clCreateBuffer %d\n", err);
    printf("error clRetainMemObject %d\n", clRetainMemObject(NULL));
    printf("error clGetContextInfo %d\n", clGetContextInfo(c, 0x7777, 0, NULL, NULL));
    const char *bad = "kernel void broken(global float *a) { a[0] = ; }";
    cl_program p = clCreateProgramWithSource(c, 1, &bad, NULL, &err);
    CHECK(err);
    printf("error clBuildProgram %d\n", clBuildProgram(p, 1, &dev, NULL, NULL, NULL));
    cl_program good = clCreateProgramWithSource(c, 1, &src, NULL, &err);
    CHECK(clBuildProgram(good, 1, &dev, NULL, NULL, NULL));
    clCreateKernel(good, "no_such_kernel", &err);
    printf("error clCreateKernel %d\n", err);
    CHECK(clReleaseProgram(good));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseContext(c));
}

static NOINLINE cl_mem grow_site(cl_context c)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 256, NULL, &err);
    CHECK(err);
    return m;
}

static NOINLINE cl_mem path_site(cl_context c)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 512, NULL, &err);
    CHECK(err);
    return m;
}

static void classify(void)
{
    cl_context c = make_context();
    for (int i = 0; i < 8; i++) {
        grow_site(c);                       /* never released */
        cl_mem m = path_site(c);
        if (i % 2 == 0)                     /* the other path forgets */
            CHECK(clReleaseMemObject(m));
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    struct objects o;
    memset(&o, 0, sizeof o);
    if (strcmp(mode, "leak") == 0) {
        make_all(&o);
    } else if (strcmp(mode, "clean") == 0) {
        make_all(&o);
        release_all(&o);
    } else if (strcmp(mode, "implicit") == 0) {
        implicit();
    } else if (strcmp(mode, "errors") == 0) {
        errors();
    } else if (strcmp(mode, "classify") == 0) {
        classify();
    } else {
        fprintf(stderr, "usage: lifetimes leak|clean|implicit|errors|classify\n");
        return 2;
    }
    return 0;
}
