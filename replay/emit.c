/* cltrace replay --emit-c DIR: one C file that replays the captured launch
 * with nothing but libOpenCL and checks its outputs: what a user attaches
 * to a bug report for a driver (with the capture folder, whose files it
 * reads: `cc repro.c -lOpenCL && ./a.out DIR`). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "replay.h"

static void c_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(f, "\\%03o", (unsigned char)*s);
        else
            fputc(*s, f);
    fputc('"', f);
}

static const char prelude[] =
    "#define CL_TARGET_OPENCL_VERSION 300\n"
    "#define CL_USE_DEPRECATED_OPENCL_1_2_APIS\n"
    "#include <CL/cl.h>\n#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
    "static const char *dir = \".\";\n"
    "#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, \"%s: OpenCL error %d\\n\", #x, e_); "
    "exit(2); } } while (0)\n\n"
    "static void *load(const char *name, size_t *n)\n{\n"
    "    char path[4096];\n    snprintf(path, sizeof path, \"%s/%s\", dir, name);\n"
    "    FILE *f = fopen(path, \"rb\");\n"
    "    if (!f) { fprintf(stderr, \"%s: cannot open\\n\", path); exit(2); }\n"
    "    fseek(f, 0, SEEK_END); long len = ftell(f); rewind(f);\n"
    "    char *p = malloc((size_t)len + 1);\n"
    "    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) { fprintf(stderr, \"%s: cannot read\\n\", path); exit(2); }\n"
    "    p[len] = 0; fclose(f); if (n) *n = (size_t)len; return p;\n}\n\n"
    "/* 0 same (floats within rel + abs), 1 differ */\n"
    "static int compare(const char *what, const void *got, const void *want, size_t bytes, int fsize, double rel, double abs_)\n{\n"
    "    if (!memcmp(got, want, bytes)) { printf(\"%s: identical\\n\", what); return 0; }\n"
    "    if (fsize != 4 && fsize != 8) { printf(\"%s: DIFFERS\\n\", what); return 1; }\n"
    "    size_t n = bytes / (size_t)fsize, bad = 0, first = 0;\n"
    "    for (size_t i = 0; i < n; i++) {\n"
    "        double x = fsize == 4 ? ((const float *)got)[i] : ((const double *)got)[i];\n"
    "        double y = fsize == 4 ? ((const float *)want)[i] : ((const double *)want)[i];\n"
    "        if (x == y || (isnan(x) && isnan(y))) continue;\n"
    "        if (!(fabs(x - y) <= abs_ + rel * fmax(fabs(x), fabs(y))) && !bad++) first = i;\n"
    "    }\n"
    "    if (bad) printf(\"%s: DIFFERS at %zu elements, the first [%zu]\\n\", what, bad, first);\n"
    "    else printf(\"%s: same within the tolerance\\n\", what);\n"
    "    return bad != 0;\n}\n\n";

/* main()'s first part: the platform, a context and queue, the program built, the kernel. */
static void emit_setup(FILE *f, const struct rf_capture *c, const char *absdir)
{
    fprintf(f, "int main(int argc, char **argv)\n{\n    dir = argc > 1 ? argv[1] : ");
    c_string(f, absdir);
    fprintf(f, ";\n    cl_uint pi = argc > 2 ? (cl_uint)atoi(argv[2]) : 0, np = 0;\n"
               "    cl_platform_id plats[16];\n    CHECK(clGetPlatformIDs(16, plats, &np));\n"
               "    if (pi >= np) { fprintf(stderr, \"no platform %%u\\n\", pi); return 2; }\n"
               "    cl_device_id dev;\n    CHECK(clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));\n"
               "    cl_int e;\n    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);\n    CHECK(e);\n"
               "    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);\n    CHECK(e);\n"
               "    size_t len;\n    char *text = load(\"%s\", &len);\n", rf_program_file(c->program));
    if (c->program == RF_SOURCE)
        fprintf(f, "    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&text, &len, &e);\n");
    else if (c->program == RF_IL)
        fprintf(f, "    cl_program prog = clCreateProgramWithIL(ctx, text, len, &e);\n");
    else
        fprintf(f, "    const unsigned char *bin = (const unsigned char *)text;\n"
                   "    cl_program prog = clCreateProgramWithBinary(ctx, 1, &dev, &len, &bin, NULL, &e);\n");
    fprintf(f, "    CHECK(e);\n    if (clBuildProgram(prog, 1, &dev, ");
    c_string(f, c->build_options);
    fprintf(f, ", NULL, NULL) != CL_SUCCESS) {\n        char log[8192] = \"\";\n"
               "        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);\n"
               "        fprintf(stderr, \"build failed:\\n%%s\\n\", log);\n        return 2;\n    }\n"
               "    cl_kernel k = clCreateKernel(prog, \"%s\", &e);\n    CHECK(e);\n", c->kernel);
}

/* Argument i: its buffer, image, value, local size, NULL or sampler, set on the kernel. */
static void emit_arg(FILE *f, const struct rf_capture *c, unsigned i)
{
    const struct rf_arg *r = &c->arg[i];
    cl_mem_flags access = r->flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY);
    fprintf(f, "    /* arg %u: %s %s */\n", i, rf_kind_name(r->kind), r->type);
    switch (r->kind) {
    case RF_BUFFER:
        fprintf(f, "    void *in%u = load(\"arg%u.in\", NULL);\n"
                   "    cl_mem m%u = clCreateBuffer(ctx, 0x%llx | CL_MEM_COPY_HOST_PTR, %zu, in%u, &e);\n    CHECK(e);\n"
                   "    CHECK(clSetKernelArg(k, %u, sizeof m%u, &m%u));\n",
                i, i, i, (unsigned long long)access, r->bytes, i, i, i, i);
        break;
    case RF_IMAGE:
        fprintf(f, "    void *in%u = load(\"arg%u.in\", NULL);\n"
                   "    cl_image_format fmt%u = { 0x%x, 0x%x };\n    cl_image_desc d%u;\n"
                   "    memset(&d%u, 0, sizeof d%u);\n    d%u.image_type = 0x%x; d%u.image_width = %zu; "
                   "d%u.image_height = %zu; d%u.image_depth = %zu; d%u.image_array_size = %zu;\n"
                   "    cl_mem m%u = clCreateImage(ctx, 0x%llx | CL_MEM_COPY_HOST_PTR, &fmt%u, &d%u, in%u, &e);\n"
                   "    CHECK(e);\n    CHECK(clSetKernelArg(k, %u, sizeof m%u, &m%u));\n",
                i, i, i, r->order, r->data_type, i, i, i, i, r->image_type, i, r->width, i, r->height, i,
                r->depth, i, r->array_size, i, (unsigned long long)access, i, i, i, i, i, i);
        break;
    case RF_SCALAR:
        fprintf(f, "    void *in%u = load(\"arg%u.in\", NULL);\n    CHECK(clSetKernelArg(k, %u, %zu, in%u));\n",
                i, i, i, r->bytes, i);
        break;
    case RF_LOCAL:
        fprintf(f, "    CHECK(clSetKernelArg(k, %u, %zu, NULL));\n", i, r->bytes);
        break;
    case RF_NULL:
        fprintf(f, "    CHECK(clSetKernelArg(k, %u, sizeof(cl_mem), NULL));\n", i);
        break;
    case RF_SAMPLER:
        fprintf(f, "    cl_sampler s%u = clCreateSampler(ctx, %u, 0x%x, 0x%x, &e);\n    CHECK(e);\n"
                   "    CHECK(clSetKernelArg(k, %u, sizeof s%u, &s%u));\n",
                i, r->normalized, r->addressing, r->filter, i, i, i);
        break;
    default:
        break;
    }
}

/* The launch, then each output read back and compared with the captured one. */
static void emit_launch_and_compare(FILE *f, const struct rf_capture *c, const struct rp_args *a)
{
    fprintf(f, "    size_t offset[3] = { %zu, %zu, %zu }, global[3] = { %zu, %zu, %zu };\n", c->offset[0], c->offset[1],
            c->offset[2], c->global[0], c->global[1], c->global[2]);
    if (!c->local_null)
        fprintf(f, "    size_t local[3] = { %zu, %zu, %zu };\n", c->local[0], c->local[1], c->local[2]);
    fprintf(f, "    CHECK(clEnqueueNDRangeKernel(q, k, %u, offset, global, %s, 0, NULL, NULL));\n    CHECK(clFinish(q));\n"
               "    int differ = 0;\n", c->work_dim, c->local_null ? "NULL" : "local");
    for (unsigned i = 0; i < c->nargs; i++) {
        const struct rf_arg *r = &c->arg[i];
        if (!r->writes)
            continue;
        char kind;
        unsigned size;
        rf_elem_of(r->type, &kind, &size);
        int fsize = r->kind == RF_IMAGE ? (r->data_type == CL_FLOAT ? 4 : 0) : kind == 'f' ? (int)size : 0;
        fprintf(f, "    {\n        void *want = load(\"arg%u.out\", NULL), *got = malloc(%zu);\n", i, r->bytes);
        if (r->kind == RF_BUFFER)
            fprintf(f, "        CHECK(clEnqueueReadBuffer(q, m%u, CL_TRUE, 0, %zu, got, 0, NULL, NULL));\n", i, r->bytes);
        else
            fprintf(f, "        size_t o[3] = { 0, 0, 0 }, r[3] = { %zu, %zu, %zu };\n"
                       "        CHECK(clEnqueueReadImage(q, m%u, CL_TRUE, o, r, 0, 0, got, 0, NULL, NULL));\n",
                    r->width, r->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? r->array_size : r->height ? r->height : 1,
                    r->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? r->array_size : r->depth ? r->depth : 1, i);
        fprintf(f, "        differ |= compare(\"arg %u\", got, want, %zu, %d, %g, %g);\n    }\n", i, r->bytes, fsize,
                a->o.rel, a->o.abs);
    }
    fprintf(f, "    printf(\"%%s\\n\", differ ? \"the outputs DIFFER from the captured ones\" : "
               "\"the outputs are the captured ones\");\n    return differ;\n}\n");
}

int rp_emit_c(const struct rp_args *a)
{
    struct rf_capture c;
    char err[1024];
    if (rf_read(a->dir, &c, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace replay --emit-c: %s\n", err);
        return 2;
    }
    for (unsigned i = 0; i < c.nargs; i++)
        if (c.arg[i].kind == RF_NOT_CAPTURED) {
            fprintf(stderr, "cltrace replay --emit-c: argument %u was not captured: %s\n", i, c.arg[i].why);
            return 2;
        }
    FILE *f = a->out ? fopen(a->out, "w") : stdout;
    if (!f) {
        perror(a->out);
        return 2;
    }
    char absdir[4096];
    if (!realpath(a->dir, absdir))
        snprintf(absdir, sizeof absdir, "%s", a->dir);
    fprintf(f, "/* Replays kernel %s, launch %llu, captured by cltrace on %s / %s (%s).\n"
               " *   cc this.c -lOpenCL -lm && ./a.out [CAPTURE-DIR] [PLATFORM-INDEX]\n"
               " * Exit 0: the outputs are the captured ones; 1: they differ; 2: it cannot run. */\n",
            c.kernel, (unsigned long long)c.launch_n, c.platform, c.device, c.driver_version);
    fputs(prelude, f);
    emit_setup(f, &c, absdir);
    for (unsigned i = 0; i < c.nargs; i++)
        emit_arg(f, &c, i);
    emit_launch_and_compare(f, &c, a);
    if (f != stdout && fclose(f) != 0) {
        perror(a->out);
        return 2;
    }
    if (a->out)
        fprintf(stderr, "cltrace replay: wrote %s (cc %s -lOpenCL -lm)\n", a->out, a->out);
    return 0;
}
