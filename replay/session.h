/* A captured launch made again on a device: the program built, the
 * arguments set from the capture, the launch run and its outputs compared
 * with the captured ones. replay.c, tune.c and check.c each drive one. */
#ifndef RS_SESSION_H
#define RS_SESSION_H
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS    /* clCreateSampler: 1.2 platforms have only it */
#include <CL/cl.h>
#include <stdio.h>
#include "replay/folder/manifest.h"

struct rs_opts {
    const char *platform, *device;     /* a number (from 0) or part of the name; NULL: as captured, else the first */
    double rel, abs;                   /* float tolerance */
};

struct rs_session {
    char dir[1024];
    struct rf_capture c;
    cl_platform_id plat;
    cl_device_id dev;
    char platform[128], device[128], version[96];
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem mem[RF_MAX_ARGS];
    cl_sampler smp[RF_MAX_ARGS];
    void *in[RF_MAX_ARGS], *expect[RF_MAX_ARGS], *got[RF_MAX_ARGS];
};

/* 0 ready; 2 it cannot be replayed here (why in err). */
int rs_open(struct rs_session *s, const char *dir, const struct rs_opts *o, char *err, size_t cap);
void rs_close(struct rs_session *s);
/* Run it `repeat` times with the given local size (local_null: the
 * driver's), each from the captured inputs; each run's device time in ns
 * into times[]. 0, or the OpenCL error (err says where). */
int rs_run(struct rs_session *s, const size_t *local, int local_null, unsigned repeat, double *times, char *err,
           size_t cap);

/* The outputs of the last run against the captured ones. */
struct rs_diff {
    int differs;                        /* beyond the tolerance (floats) or at all (the rest) */
    int identical;                      /* bit for bit */
    double max_abs, max_rel;
    size_t first, count;                /* first differing element (beyond the tolerance), how many */
    double got, want;                   /* at first */
};
void rs_compare(struct rs_session *s, unsigned arg, double rel, double abs, struct rs_diff *d);
int rs_is_float(const struct rf_arg *a);   /* compared under the tolerance */
double rs_median(double *v, unsigned n);   /* sorts v */
void rs_say_local(char *buf, size_t cap, unsigned dim, const size_t *l, int null);

#endif
