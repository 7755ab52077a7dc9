/* A captured launch made again (session.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "session.h"

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return 2;
}

/* want: a number (an index) or part of a name, case ignored; NULL: exact
 * (the captured name) else 0. The index chosen, or -1. */
static int pick(const char *want, const char *captured, char names[][128], unsigned n)
{
    if (!want) {
        for (unsigned i = 0; i < n; i++)
            if (!strcmp(names[i], captured))
                return (int)i;
        return n ? 0 : -1;
    }
    char *end;
    long idx = strtol(want, &end, 10);
    if (*want && !*end)
        return idx >= 0 && idx < (long)n ? (int)idx : -1;
    for (unsigned i = 0; i < n; i++)
        if (strcasestr(names[i], want))
            return (int)i;
    return -1;
}

static int choose_device(struct rs_session *s, const struct rs_opts *o, char *err, size_t cap)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np)
        return fail(err, cap, "no OpenCL platform here");
    np = np > 16 ? 16 : np;
    char names[16][128];
    for (unsigned i = 0; i < np; i++)
        if (clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof names[i], names[i], NULL) != CL_SUCCESS)
            names[i][0] = 0;
    int p = pick(o->platform, s->c.platform, names, np);
    if (p < 0)
        return fail(err, cap, "no platform %s here", o->platform);
    s->plat = plats[p];
    snprintf(s->platform, sizeof s->platform, "%s", names[p]);
    cl_device_id devs[16];
    cl_uint nd = 0;
    if (clGetDeviceIDs(s->plat, CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS || !nd)
        return fail(err, cap, "platform %s has no device", s->platform);
    nd = nd > 16 ? 16 : nd;
    for (unsigned i = 0; i < nd; i++)
        if (clGetDeviceInfo(devs[i], CL_DEVICE_NAME, sizeof names[i], names[i], NULL) != CL_SUCCESS)
            names[i][0] = 0;
    int d = pick(o->device, s->c.device, names, nd);
    if (d < 0)
        return fail(err, cap, "no device %s on platform %s", o->device, s->platform);
    s->dev = devs[d];
    snprintf(s->device, sizeof s->device, "%s", names[d]);
    clGetDeviceInfo(s->dev, CL_DEVICE_VERSION, sizeof s->version, s->version, NULL);
    return 0;
}

static int build(struct rs_session *s, char *err, size_t cap)
{
    const struct rf_capture *c = &s->c;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", s->dir, rf_program_file(c->program));
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, cap, "%s: cannot open it", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(text);
        return fail(err, cap, "%s: cannot read it", path);
    }
    fclose(f);
    text[n] = 0;
    cl_int e = CL_SUCCESS, st = CL_SUCCESS;
    size_t len = (size_t)n;
    const unsigned char *bin = (const unsigned char *)text;
    if (c->program == RF_SOURCE)
        s->prog = clCreateProgramWithSource(s->ctx, 1, (const char **)&text, &len, &e);
    else if (c->program == RF_IL)
        s->prog = clCreateProgramWithIL(s->ctx, text, len, &e);
    else
        s->prog = clCreateProgramWithBinary(s->ctx, 1, &s->dev, &len, &bin, &st, &e);
    free(text);
    if (e != CL_SUCCESS || st != CL_SUCCESS)
        return fail(err, cap, "the program (%s) is not taken by %s / %s (OpenCL error %d)%s",
                    rf_program_file(c->program), s->platform, s->device, e ? e : st,
                    c->program == RF_BINARY ? ": a binary runs only on the device it was built for" : "");
    e = clBuildProgram(s->prog, 1, &s->dev, c->build_options, NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(s->prog, s->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return fail(err, cap, "the program does not build on %s / %s (OpenCL error %d):\n%s", s->platform, s->device,
                    e, log);
    }
    s->k = clCreateKernel(s->prog, c->kernel, &e);
    if (e != CL_SUCCESS)
        return fail(err, cap, "no kernel %s in the program (OpenCL error %d)", c->kernel, e);
    return 0;
}

static cl_image_desc image_desc(const struct rf_arg *a)
{
    cl_image_desc d;
    memset(&d, 0, sizeof d);
    d.image_type = a->image_type;
    d.image_width = a->width;
    d.image_height = a->height;
    d.image_depth = a->depth;
    d.image_array_size = a->array_size;
    return d;
}

static void image_region(const struct rf_arg *a, size_t *r)
{
    r[0] = a->width;
    r[1] = a->height ? a->height : 1;
    r[2] = a->depth ? a->depth : 1;
    if (a->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        r[1] = a->array_size;
    else if (a->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        r[2] = a->array_size;
}

static int set_args(struct rs_session *s, char *err, size_t cap)
{
    const struct rf_capture *c = &s->c;
    char name[32];
    for (unsigned i = 0; i < c->nargs; i++) {
        const struct rf_arg *a = &c->arg[i];
        cl_int e = CL_SUCCESS;
        cl_mem_flags access = a->flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY);
        if (a->kind == RF_NOT_CAPTURED)
            return fail(err, cap, "argument %u was not captured: %s", i, a->why);
        if (a->kind == RF_BUFFER || a->kind == RF_IMAGE || a->kind == RF_SCALAR) {
            if (!(s->in[i] = rf_read_file(s->dir, (snprintf(name, sizeof name, "arg%u.in", i), name), a->bytes, err,
                                          cap)))
                return 2;
        }
        if (a->writes &&
            !(s->expect[i] = rf_read_file(s->dir, (snprintf(name, sizeof name, "arg%u.out", i), name), a->bytes,
                                          err, cap)))
            return 2;
        switch (a->kind) {
        case RF_BUFFER:
            s->mem[i] = clCreateBuffer(s->ctx, access | CL_MEM_COPY_HOST_PTR, a->bytes, s->in[i], &e);
            if (!e)
                e = clSetKernelArg(s->k, i, sizeof(cl_mem), &s->mem[i]);
            break;
        case RF_IMAGE: {
            cl_image_format fmt = { a->order, a->data_type };
            cl_image_desc d = image_desc(a);
            s->mem[i] = clCreateImage(s->ctx, access | CL_MEM_COPY_HOST_PTR, &fmt, &d, s->in[i], &e);
            if (!e)
                e = clSetKernelArg(s->k, i, sizeof(cl_mem), &s->mem[i]);
            break;
        }
        case RF_SCALAR:
            e = clSetKernelArg(s->k, i, a->bytes, s->in[i]);
            break;
        case RF_LOCAL:
            e = clSetKernelArg(s->k, i, a->bytes, NULL);
            break;
        case RF_NULL:
            e = clSetKernelArg(s->k, i, sizeof(cl_mem), NULL);
            break;
        case RF_SAMPLER:
            s->smp[i] = clCreateSampler(s->ctx, a->normalized, a->addressing, a->filter, &e);
            if (!e)
                e = clSetKernelArg(s->k, i, sizeof(cl_sampler), &s->smp[i]);
            break;
        default:
            break;
        }
        if (e != CL_SUCCESS)
            return fail(err, cap, "argument %u (%s %s): OpenCL error %d", i, rf_kind_name(a->kind), a->type, e);
    }
    return 0;
}

int rs_open(struct rs_session *s, const char *dir, const struct rs_opts *o, char *err, size_t cap)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    if (rf_read(dir, &s->c, err, cap) != 0)
        return 2;
    int rc = choose_device(s, o, err, cap);
    if (rc)
        return rc;
    cl_int e = CL_SUCCESS;
    s->ctx = clCreateContext(NULL, 1, &s->dev, NULL, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(err, cap, "no context on %s (OpenCL error %d)", s->device, e);
    s->q = clCreateCommandQueue(s->ctx, s->dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS)
        return fail(err, cap, "no profiling queue on %s (OpenCL error %d)", s->device, e);
    if ((rc = build(s, err, cap)) || (rc = set_args(s, err, cap)))
        return rc;
    return 0;
}

void rs_close(struct rs_session *s)
{
    for (unsigned i = 0; i < RF_MAX_ARGS; i++) {
        if (s->mem[i])
            clReleaseMemObject(s->mem[i]);
        if (s->smp[i])
            clReleaseSampler(s->smp[i]);
        free(s->in[i]);
        free(s->expect[i]);
        free(s->got[i]);
    }
    if (s->k)
        clReleaseKernel(s->k);
    if (s->prog)
        clReleaseProgram(s->prog);
    if (s->q)
        clReleaseCommandQueue(s->q);
    if (s->ctx)
        clReleaseContext(s->ctx);
    memset(s, 0, sizeof *s);
}

/* Argument i's buffer or image from host (to_device) or into it. */
static cl_int move(struct rs_session *s, unsigned i, int to_device, void *host)
{
    const struct rf_arg *a = &s->c.arg[i];
    size_t origin[3] = { 0, 0, 0 }, region[3];
    if (a->kind == RF_BUFFER)
        return to_device ? clEnqueueWriteBuffer(s->q, s->mem[i], CL_FALSE, 0, a->bytes, host, 0, NULL, NULL)
                         : clEnqueueReadBuffer(s->q, s->mem[i], CL_TRUE, 0, a->bytes, host, 0, NULL, NULL);
    image_region(a, region);
    return to_device ? clEnqueueWriteImage(s->q, s->mem[i], CL_FALSE, origin, region, 0, 0, host, 0, NULL, NULL)
                     : clEnqueueReadImage(s->q, s->mem[i], CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL);
}

/* What the kernel may write, back to its captured inputs. */
static cl_int reset(struct rs_session *s)
{
    for (unsigned i = 0; i < s->c.nargs; i++) {
        cl_int e = s->c.arg[i].writes ? move(s, i, 1, s->in[i]) : CL_SUCCESS;
        if (e != CL_SUCCESS)
            return e;
    }
    return clFinish(s->q);
}

static cl_int read_outputs(struct rs_session *s)
{
    for (unsigned i = 0; i < s->c.nargs; i++) {
        const struct rf_arg *a = &s->c.arg[i];
        if (!a->writes)
            continue;
        if (!s->got[i] && !(s->got[i] = malloc(a->bytes ? a->bytes : 1)))
            return CL_OUT_OF_HOST_MEMORY;
        cl_int e = move(s, i, 0, s->got[i]);
        if (e != CL_SUCCESS)
            return e;
    }
    return CL_SUCCESS;
}

int rs_run(struct rs_session *s, const size_t *local, int local_null, unsigned repeat, double *times, char *err,
           size_t cap)
{
    const struct rf_capture *c = &s->c;
    for (unsigned r = 0; r < repeat; r++) {
        cl_int e = reset(s);
        if (e != CL_SUCCESS) {
            snprintf(err, cap, "restoring the inputs: OpenCL error %d", e);
            return e;
        }
        cl_event ev = NULL;
        e = clEnqueueNDRangeKernel(s->q, s->k, c->work_dim, c->offset, c->global, local_null ? NULL : local, 0, NULL,
                                   &ev);
        if (e != CL_SUCCESS) {
            snprintf(err, cap, "the launch: OpenCL error %d", e);
            return e;
        }
        cl_ulong t0 = 0, t1 = 0;
        e = clWaitForEvents(1, &ev);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        clReleaseEvent(ev);
        if (e != CL_SUCCESS) {
            snprintf(err, cap, "the kernel failed while it ran: OpenCL error %d", e);
            return e;
        }
        times[r] = t1 > t0 ? (double)(t1 - t0) : 0;
    }
    cl_int e = read_outputs(s);
    if (e != CL_SUCCESS)
        snprintf(err, cap, "reading the outputs: OpenCL error %d", e);
    return e;
}

int rs_is_float(const struct rf_arg *a)
{
    if (a->kind == RF_IMAGE)
        return a->data_type == CL_FLOAT || a->data_type == CL_HALF_FLOAT;
    char kind;
    unsigned size;
    rf_elem_of(a->type, &kind, &size);
    return kind == 'f';
}

static double half_to_double(uint16_t h)
{
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h >> 15 ? -v : v;
}

void rs_compare(struct rs_session *s, unsigned i, double rel, double abs_tol, struct rs_diff *d)
{
    const struct rf_arg *a = &s->c.arg[i];
    const unsigned char *got = s->got[i], *want = s->expect[i];
    memset(d, 0, sizeof *d);
    d->identical = !memcmp(got, want, a->bytes);
    if (d->identical)
        return;
    char kind = 'i';
    unsigned size = 1;
    if (a->kind == RF_IMAGE)
        kind = rs_is_float(a) ? 'f' : 'i', size = a->data_type == CL_HALF_FLOAT ? 2 : 4;
    else
        rf_elem_of(a->type, &kind, &size);
    size_t n = a->bytes / size;
    for (size_t k = 0; k < n; k++) {
        double x, y;
        if (kind != 'f') {
            if (!memcmp(got + k * size, want + k * size, size))
                continue;
            x = y = 0;
            for (unsigned b = size; b-- > 0;) {       /* little-endian, as the data */
                x = x * 256 + got[k * size + b];
                y = y * 256 + want[k * size + b];
            }
            if (!d->count++)
                d->first = k, d->got = x, d->want = y;
            d->differs = 1;
            continue;
        }
        if (size == 4) {
            float fx, fy;
            memcpy(&fx, got + k * 4, 4);
            memcpy(&fy, want + k * 4, 4);
            x = fx, y = fy;
        } else if (size == 8) {
            memcpy(&x, got + k * 8, 8);
            memcpy(&y, want + k * 8, 8);
        } else {
            uint16_t hx, hy;
            memcpy(&hx, got + k * 2, 2);
            memcpy(&hy, want + k * 2, 2);
            x = half_to_double(hx), y = half_to_double(hy);
        }
        if ((isnan(x) && isnan(y)) || x == y)
            continue;
        double diff = fabs(x - y), scale = fmax(fabs(x), fabs(y));
        double r = scale > 0 ? diff / scale : 0;
        if (isnan(diff))
            diff = r = INFINITY;
        d->max_abs = fmax(d->max_abs, diff);
        d->max_rel = fmax(d->max_rel, r);
        if (diff > abs_tol + rel * scale) {
            if (!d->count++)
                d->first = k, d->got = x, d->want = y;
            d->differs = 1;
        }
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double rs_median(double *v, unsigned n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void rs_say_local(char *buf, size_t cap, unsigned dim, const size_t *l, int null)
{
    if (null) {
        snprintf(buf, cap, "the driver's");
        return;
    }
    if (dim == 1)
        snprintf(buf, cap, "%zu", l[0]);
    else if (dim == 2)
        snprintf(buf, cap, "%zux%zu", l[0], l[1]);
    else
        snprintf(buf, cap, "%zux%zux%zu", l[0], l[1], l[2]);
}
