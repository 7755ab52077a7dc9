/* Each rule family on a small model built here (no trace): the findings it
 * makes, their severity and numbers, and what it leaves alone; then the
 * table (every family listed, ids unique) and the ranking. The seeds'
 * worked numbers are in test_occupancy.c and test_source.c; whole traces in
 * rule_vectors.py and report_golden.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/rules/rules.h"
#include "check.h"

static const struct thresholds th = THRESHOLDS_DEFAULT;

/* A rule's family, found through the table (as the report runs it). */
static rule_family_fn *family(const char *id)
{
    const struct rule *r = rule_find(id);
    if (!r) {
        fprintf(stderr, "FAIL: rule %s not in the table\n", id);
        exit(1);
    }
    return r->family;
}

/* finding i is RULE at SEV and its numbers hold TEXT */
static void expect(const struct findings *fs, unsigned i, const char *rule, enum sev sev, const char *text)
{
    CHECK(i < fs->n, "finding %u of %u (%s)", i, fs->n, rule);
    if (i >= fs->n)
        return;
    const struct finding *f = &fs->v[i];
    CHECK(!strcmp(f->rule, rule), "finding %u is %s, not %s", i, f->rule, rule);
    CHECK(f->sev == sev, "%s: severity %s, not %s", rule, sev_name[f->sev], sev_name[sev]);
    CHECK(strstr(f->numbers, text) || strstr(f->where, text), "%s: \"%s\" not in \"%s\" / \"%s\"", rule, text,
          f->numbers, f->where);
    CHECK(f->fix[0], "%s: no fix", rule);
    CHECK(f->gain_ns >= 0 || f->gain_method[0] || !strcmp(rule, "small-transfers"),
          "%s: neither a gain nor why there is none", rule);
}

static struct rm_model empty_model(void)
{
    static struct rm_model m;
    memset(&m, 0, sizeof m);
    return m;
}

static void dropped_and_errors(void)
{
    struct rm_model m = empty_model();
    struct findings fs = { 0 };
    family("dropped-calls")(&m, &th, &fs);
    CHECK(fs.n == 0, "dropped-calls on a whole trace");
    m.dropped_calls = 42;
    family("dropped-calls")(&m, &th, &fs);
    expect(&fs, 0, "dropped-calls", SEV_WARNING, "42 calls not recorded");
    struct rm_error e = { "clBuildProgram", "CL_BUILD_PROGRAM_FAILURE", 3, "main (app.c:12)", -1, "", 0 };
    struct rm_uar u = { "clSetKernelArg", "loop (app.c:40)", 2 };
    m.errors = &e, m.n_errors = 1, m.uars = &u, m.n_uars = 1;
    family("api-errors")(&m, &th, &fs);
    expect(&fs, 1, "api-errors", SEV_ERROR, "3 call(s) returned CL_BUILD_PROGRAM_FAILURE");
    CHECK(strstr(fs.v[1].where, "called from main (app.c:12)") != NULL, "api-errors where: %s", fs.v[1].where);
    family("use-after-release")(&m, &th, &fs);
    expect(&fs, 2, "use-after-release", SEV_ERROR, "2 call(s) on a handle the app had already released");
    findings_free(&fs);
}

static void leaks(void)
{
    struct rm_model m = empty_model();
    /* classed by the writer (writer/leaks.c): the class decides the severity */
    struct rm_leak c[3] = {
        { .type = "cl_mem", .created_by = "clCreateBuffer", .site = "make_buffers (app.c:20)", .count = 2,
          .bytes = 2048, .site_made = 2, .leak_class = RM_LEAK_DEFINITELY_LOST,
          .why = "the app released its cl_context (object 1) while it stayed alive" },
        { .type = "cl_kernel", .created_by = "clCreateKernel", .kernel = "k", .site = "loop (app.c:30)", .count = 8,
          .site_made = 8, .leak_class = RM_LEAK_GROWING, .why = "its call site holds 8 of the 8 it made" },
        { .type = "cl_mem", .created_by = "clCreateBuffer", .site = "frame (lib.c:9)", .count = 1, .site_made = 5,
          .site_released = 4, .leak_class = RM_LEAK_STILL_HELD, .why = "the latest of its call site" },
    };
    m.leaks = c, m.n_leaks = 3;
    struct findings fs = { 0 };
    family("leaks")(&m, &th, &fs);
    expect(&fs, 0, "leaks", SEV_ERROR, "2 object(s) definitely lost at exit, 2048 bytes: the app released its cl_context");
    CHECK(fs.v[0].class_id && !strcmp(fs.v[0].class_id, "definitely_lost"), "class of a lost buffer");
    CHECK(strstr(fs.v[0].fix, "clReleaseMemObject") != NULL, "leak fix: %s", fs.v[0].fix);
    expect(&fs, 1, "leaks", SEV_ERROR, "8 object(s) still held at exit, growing with the run");
    CHECK(strstr(fs.v[1].where, "cl_kernel \"k\"") != NULL, "leak where: %s", fs.v[1].where);
    expect(&fs, 2, "leaks", SEV_INFO, "1 object(s) still held at exit (still reachable): the latest");
    CHECK(!strcmp(fs.v[2].class_id, "still_held") && strstr(fs.v[2].class_why, "latest"), "still held's why");
    findings_free(&fs);
    /* a trace without classes (an older cltrace): judged by its site's counts */
    struct rm_leak l[3] = {
        { "cl_mem", "clCreateBuffer", "", "helper (app.c:20)", 4, 4096, 5, 1, 0, RM_LEAK_UNKNOWN, "", 0 },
        { "cl_context", "clCreateContext", "", "init (lib.c:3)", 1, 0, 1, 0, 1, RM_LEAK_UNKNOWN, "", 0 },
        { "cl_kernel", "clCreateKernel", "k", "loop (app.c:30)", 8, 0, 8, 0, 0, RM_LEAK_UNKNOWN, "", 0 },
    };
    m.leaks = l, m.n_leaks = 3;
    family("leaks")(&m, &th, &fs);
    expect(&fs, 0, "leaks", SEV_ERROR, "this site made 5 and released 1: a path that does not release");
    expect(&fs, 1, "leaks", SEV_INFO, "made once and held to the end");
    expect(&fs, 2, "leaks", SEV_ERROR, "this site made 8 and released none: grows with the run");
    CHECK(!fs.v[0].class_id, "an unclassed leak has no class");
    findings_free(&fs);
}

static void transfers(void)
{
    struct rm_model m = empty_model();
    struct findings fs = { 0 };
    m.small_threshold = 32768;
    m.xfer.small_count = 9, m.xfer.small_bytes = 9 * 1024, m.xfer.small_ns = 9 * 10000;
    family("small-transfers")(&m, &th, &fs);
    CHECK(fs.n == 0, "9 small transfers are under --small-count");
    m.xfer.small_count = 512, m.xfer.small_bytes = 512 * 1024, m.xfer.small_ns = 512 * 10000;
    m.xfer.ns[RM_H2D][0] = 512 * 10000, m.xfer.ns[RM_H2D][4] = 1000000;
    m.xfer.large_bytes = 8 << 20, m.xfer.large_ns = 1000000;      /* 8.39 GB/s */
    struct rm_site s = { "upload (app.c:50)", 512, 512 * 1024, 0 };
    m.sites = &s, m.n_sites = 1;
    family("small-transfers")(&m, &th, &fs);
    expect(&fs, 0, "small-transfers", SEV_WARNING, "512 transfers below 32768 bytes");
    CHECK(strstr(fs.v[0].where, "512 from upload (app.c:50)") != NULL, "small where: %s", fs.v[0].where);
    /* 5.12 ms less 524288 bytes at 8.39 GB/s (0.0625 ms) */
    CHECK(fs.v[0].gain_ns > 5.05e6 && fs.v[0].gain_ns < 5.06e6, "small gain %.0f", fs.v[0].gain_ns);
    /* 10 pageable host-to-device transfers at ~1 GB/s against a best of ~16 GB/s */
    m.xfer.best_gbps[RM_H2D] = 16;
    m.xfer.bw_count[RM_H2D][0][rm_bw_bin(1.0)] = 10, m.xfer.bw_bytes[RM_H2D][0][rm_bw_bin(1.0)] = 10 << 20;
    m.xfer.bw_ns[RM_H2D][0][rm_bw_bin(1.0)] = 10 << 20;
    m.xfer.bw_count[RM_H2D][1][rm_bw_bin(16.0)] = 2;
    family("low-bandwidth")(&m, &th, &fs);
    expect(&fs, 1, "low-bandwidth", SEV_WARNING, "10 of 12 transfers on pageable memory ran at 1.00 GB/s");
    findings_free(&fs);
}

static struct rm_device nvidia(unsigned cus)
{
    struct rm_device d = { .name = "NVIDIA H100", .vendor = "NVIDIA Corporation", .compute_units = cus, .warp = 32,
                           .cc = 90 };
    return d;
}

static void work_groups_and_occupancy(void)
{
    struct rm_model m = empty_model();
    m.dev[0] = nvidia(132), m.n_dev = 1;
    struct rm_kernel k[3] = {
        { .name = "odd", .launches = 10, .device_ns = 1000000, .work_dim = 1, .gws = { 100000 }, .lws = { 100 },
          .work_groups = 1000, .wg_size = 100, .pref_multiple = 32 },
        { .name = "null", .launches = 1, .work_dim = 1, .gws = { 4096 }, .local_null = 1 },
        { .name = "few", .launches = 1, .device_ns = 400000, .work_dim = 1, .gws = { 1024 }, .lws = { 32 },
          .work_groups = 32, .wg_size = 32, .pref_multiple = 32 },
    };
    m.kernels = k, m.n_kernels = 3;
    struct findings fs = { 0 };
    family("work-group-multiple")(&m, &th, &fs);
    expect(&fs, 0, "work-group-multiple", SEV_WARNING, "100 work-items per group is not a multiple of the preferred 32");
    /* 100 of 128 lanes busy: 1 ms x 28/128 */
    CHECK(fs.v[0].gain_ns > 218749 && fs.v[0].gain_ns < 218751, "lane gain %.0f", fs.v[0].gain_ns);
    expect(&fs, 1, "work-group-multiple", SEV_WARNING, "local_work_size NULL");
    expect(&fs, 2, "work-group-small", SEV_INFO, "32 work-items per group (fewer than 64)");
    expect(&fs, 3, "under-filled-device", SEV_WARNING, "32 work-groups for 132 compute units");
    CHECK(fs.v[3].gain_ns > 303029 && fs.v[3].gain_ns < 303031, "fill gain %.0f", fs.v[3].gain_ns);
    CHECK(fs.n == 4, "%u work-group findings", fs.n);
    findings_free(&fs);
    /* 256 work-items of 128 registers: 2 groups of 8 warps on an SM of 64 */
    struct rm_kernel heavy = { .name = "heavy", .launches = 1, .work_dim = 1, .gws = { 1 << 20 }, .lws = { 256 },
                               .work_groups = 4096, .wg_size = 256, .pref_multiple = 32, .regs = 128 };
    m.kernels = &heavy, m.n_kernels = 1;
    family("occupancy")(&m, &th, &fs);
    expect(&fs, 0, "occupancy", SEV_WARNING, "25% occupancy (16 warps of 64");
    CHECK(strstr(fs.v[0].numbers, "limited by registers") != NULL, "occupancy: %s", fs.v[0].numbers);
    heavy.regs = 32;
    family("occupancy")(&m, &th, &fs);
    CHECK(fs.n == 1, "32 registers: full occupancy, no finding (%u)", fs.n);
    findings_free(&fs);
}

static void serialization_and_idle(void)
{
    struct rm_model m = empty_model();
    struct findings fs = { 0 };
    m.tl = (struct rm_timeline){ .first_start = 0, .busy_until = 10000000, .idle_ns = 8000000, .max_gap_ns = 500000,
                                 .commands = 64, .kernel_ns = 2000000, .launches = 32, .launches_synced = 31,
                                 .host_after_sync_ns = 1000000 };
    family("serialization")(&m, &th, &fs);
    expect(&fs, 0, "serialization", SEV_WARNING, "31 of 32 launches followed by clFinish");
    /* idle 8 ms x 31/32 = 7.75, less the host's 1 ms, plus its overlap (1 ms) */
    CHECK(fs.v[0].gain_ns > 7.749e6 && fs.v[0].gain_ns < 7.751e6, "serialization gain %.0f", fs.v[0].gain_ns);
    family("device-idle")(&m, &th, &fs);
    expect(&fs, 1, "device-idle", SEV_INFO, "idle 80% of 10.000 ms");
    snprintf(m.self.sampling, sizeof m.self.sampling, "first 16, then 1 in 256");
    m.n_dev = 1;
    m.dev[0].sampled_out = 100;          /* launches left untimed, none drawn where they ran */
    family("device-idle")(&m, &th, &fs);
    CHECK(fs.n == 2, "sampled: no idle figure");
    m.estimated_commands = 100;          /* every one drawn (estimated): the timeline is whole again */
    family("device-idle")(&m, &th, &fs);
    CHECK(fs.n == 3, "sampled, every untimed launch drawn: the idle figure");
    m.tl.launches_synced = 20;
    family("serialization")(&m, &th, &fs);
    CHECK(fs.n == 3, "20 of 32 waited: not serialized");
    findings_free(&fs);
}

static void source_and_build(void)
{
    struct rm_model m = empty_model();
    struct rm_hint h[2] = { { "strided-access", "transpose", "out[x * n + y]", "stride n", 7, 2, 14 },
                            { "double-literals", "unused", "2.0", "double literal", 7, 1, 3 } };
    struct rm_kernel k = { .name = "transpose", .launches = 1 };
    struct rm_program p[2] = { { .id = 7, .uses_float = 1, .builds = 1, .fast_math = 0 },   /* float code: without, */
                               { .id = 8, .uses_float = 1, .builds = 1, .fast_math = 1 } };   /* with fast math */
    m.hints = h, m.n_hints = 2, m.kernels = &k, m.n_kernels = 1, m.programs = p, m.n_programs = 2;
    struct findings fs = { 0 };
    family("strided-access")(&m, &th, &fs);
    expect(&fs, 0, "strided-access", SEV_WARNING, "heuristic: stride n (2 place(s) in this kernel)");
    CHECK(fs.n == 1, "a kernel that never ran gets no hint (%u)", fs.n);
    family("build-options")(&m, &th, &fs);
    expect(&fs, 1, "build-options", SEV_INFO, "float code built without -cl-mad-enable");
    CHECK(fs.n == 2 && strstr(fs.v[1].where, "program 7"), "only program 7 (%u)", fs.n);
    findings_free(&fs);
}

/* nan: the first command (by #N, not by the order the trace has them) that
 * left a non-finite value; the later ones counted; clean runs give none */
static void first_nan(void)
{
    struct rm_model m = empty_model();
    struct rm_site s = { "buffers (app.c:88)", 0, 0, 0 };
    struct rm_fpcmd c[4];
    memset(c, 0, sizeof c);
    const uint64_t order[4] = { 3, 1, 4, 2 };      /* as a collector may have drawn them */
    for (int i = 0; i < 4; i++) {
        snprintf(c[i].name, sizeof c[i].name, "update");
        c[i].cmd_n = order[i], c[i].launch_n = order[i], c[i].work_dim = 1, c[i].gws[0] = 4096, c[i].lws[0] = 64;
        c[i].n = 1;
        c[i].fp[0] = (struct rm_fp){ .arg = 2, .buffer = 9, .bytes = 16384, .first_nonfinite = UINT64_MAX,
                                     .type = "float", .site = 1 };
    }
    m.fpcmds = c, m.n_fpcmds = 4, m.sites = &s, m.n_sites = 1;
    struct findings fs = { 0 };
    family("nan")(&m, &th, &fs);
    CHECK(fs.n == 0, "nan on clean fingerprints (%u)", fs.n);
    c[0].fp[0].nan = 3, c[0].fp[0].first_nonfinite = 17;      /* #3 */
    c[2].fp[0].pos_inf = 1, c[2].fp[0].first_nonfinite = 5;   /* #4: later */
    family("nan")(&m, &th, &fs);
    expect(&fs, 0, "nan", SEV_ERROR, "kernel `update` launch 3 (#3, global 4096, local 64) first wrote 3 NaN");
    CHECK(fs.n == 1 && strstr(fs.v[0].numbers, "buffer 9 (arg 2, float, 16384 bytes, created at buffers (app.c:88))") &&
          strstr(fs.v[0].numbers, "element 17; the 2 fingerprinted commands before it left none; 1 later"),
          "nan numbers: %s", fs.n ? fs.v[0].numbers : "");
    findings_free(&fs);
}

static void table_and_ranking(void)
{
    unsigned n = rule_count();
    CHECK(n >= 16, "%u rules", n);
    for (unsigned i = 0; i < n; i++) {
        CHECK(rule_table[i].family && rule_table[i].fires[0], "%s: no family or text", rule_table[i].id);
        CHECK(rule_find(rule_table[i].id) == &rule_table[i], "%s listed twice", rule_table[i].id);
    }
    CHECK(rule_find("no-such-rule") == NULL, "an unknown id found");
    /* the whole pipeline on one model: dropped-calls first, errors next, a
     * warning worth under 1 % of the timeline shown as info */
    struct rm_model m = empty_model();
    m.dev[0] = nvidia(4), m.n_dev = 1;
    m.dropped_calls = 1;
    struct rm_error e = { "clFinish", "CL_INVALID_COMMAND_QUEUE", 1, "", -1, "", 0 };
    m.errors = &e, m.n_errors = 1;
    struct rm_kernel k = { .name = "tiny", .launches = 1, .device_ns = 1000, .work_dim = 1, .gws = { 1000 },
                           .lws = { 100 }, .work_groups = 10, .wg_size = 100, .pref_multiple = 32 };
    m.kernels = &k, m.n_kernels = 1;
    m.tl.first_start = 0, m.tl.busy_until = 100000000;    /* 100 ms: the kernel's 219 ns are nothing */
    struct findings fs = { 0 };
    rules_run(&m, &th, &fs);
    expect(&fs, 0, "dropped-calls", SEV_WARNING, "1 calls not recorded");
    expect(&fs, 1, "api-errors", SEV_ERROR, "CL_INVALID_COMMAND_QUEUE");
    expect(&fs, 2, "work-group-multiple", SEV_INFO, "not a multiple of the preferred 32");
    findings_free(&fs);
}

/* Whose frame: the program's or a library's (model/stacks.c); a library's
 * own failing call (hwloc's probing in MPI_Init) is info, never above the
 * program's error. */
static void frames_and_library_calls(void)
{
    static const struct { const char *src, *bin, *fn; int lib; } f[] = {
        { "/home/u/app/solver.py", "", "step", 0 },
        { "<string>", "", "<module>", 0 },
        { "/usr/lib/python3/dist-packages/pyopencl/__init__.py", "", "enqueue_copy", 1 },
        { "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", "", "run", 1 },
        { "/opt/venv/lib/python3.12/site-packages/numpy/core/x.py", "", "f", 1 },
        { "<pyopencl invoker for 'scale'>", "", "enqueue_knl_scale", 1 },
        { "<frozen runpy>", "", "_run_code", 1 },
        { "", "/usr/lib/python3/dist-packages/pyopencl/_cl.cpython-311-x86_64-linux-gnu.so", "", 1 },
        { "", "/usr/bin/python3.11", "_PyEval_EvalFrameDefault", 1 },
        { "", "/root/.pyenv/versions/3.11.7/bin/python3.11", "PyObject_Call", 1 },
        { "", "/usr/local/nvidia/lib64/libnvidia-opencl.so.1", "", 1 },
        { "", "/usr/lib/x86_64-linux-gnu/hwloc/hwloc_opencl.so", "", 1 },
        { "", "/usr/bin/clinfo", "main", 0 },                /* the program, installed system-wide */
        { "examples/common/example.h", "/home/u/cltrace/build/leaks", "ex_buffer", 0 },
        { "", "/home/u/app/build/libhelper.so", "helper", 0 },
        { "/usr/include/CL/cl.h", "/home/u/app/app", "inl", 1 },
        { "", "", "libfoo.so+0x1234", 1 },
    };
    for (unsigned i = 0; i < sizeof f / sizeof f[0]; i++)
        CHECK(rm_frame_is_library(f[i].src, f[i].bin, f[i].fn, "clinfo") == f[i].lib, "%s %s %s: library %d",
              f[i].src, f[i].bin, f[i].fn, f[i].lib);
    char p[64] = "examples/leaks/../common/./example.h";
    rm_tidy_path(p);
    CHECK(!strcmp(p, "examples/common/example.h"), "tidied: %s", p);
    struct rm_model m;
    memset(&m, 0, sizeof m);
    struct rm_error e[2] = { { .fn = "clGetDeviceInfo", .error = "CL_INVALID_VALUE", .by = "hwloc_opencl.so inside MPI_Init",
                               .count = 4, .site = "hwloc_opencl_query (x.c:1)", .phase = -1 },
                             { .fn = "clCreateBuffer", .error = "CL_INVALID_BUFFER_SIZE", .count = 1,
                               .site = "main (app.c:19)", .phase = -1 } };
    m.errors = e;
    m.n_errors = 2;
    struct findings fs = { 0 };
    struct thresholds th = THRESHOLDS_DEFAULT;
    rules_run(&m, &th, &fs);
    CHECK(fs.n == 2 && !strcmp(fs.v[0].where, "clCreateBuffer, called from main (app.c:19)") && !fs.v[0].library &&
          fs.v[0].sev == SEV_ERROR, "the program's error first: %s", fs.n ? fs.v[0].where : "");
    CHECK(fs.n == 2 && fs.v[1].library && fs.v[1].sev == SEV_INFO &&
          strstr(fs.v[1].where, "called by hwloc_opencl.so inside MPI_Init, not by the program"),
          "the library's call after it, info: %s", fs.n > 1 ? fs.v[1].where : "");
    findings_free(&fs);
}

int main(void)
{
    frames_and_library_calls();
    dropped_and_errors();
    leaks();
    transfers();
    work_groups_and_occupancy();
    serialization_and_idle();
    source_and_build();
    first_nan();
    table_and_ranking();
    if (failures)
        fprintf(stderr, "test_rules: %d failure(s)\n", failures);
    else
        printf("test_rules: every family as expected\n");
    return failures != 0;
}
