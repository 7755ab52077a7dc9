/* cltrace [options] [--] app args...: run app with the shim preloaded and
 * say where its trace (and those of its child processes) went. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/beside.h"
#include "common/config.h"
#include "common/window_spec.h"
#include "ctl.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace [-o FILE] [-q] [--] program [args...]\n"
               "       cltrace probe [--device NAME-PART]   measure each device once (see cltrace probe -h)\n"
               "       cltrace replay DIR | cltrace tune DIR    run a captured launch again, tune it (cltrace replay -h)\n"
               "       cltrace ctl PID start|stop|snapshot|status   control a program run with --window\n"
               "       cltrace try [--override F] [--options K=O] [--local K=L] -- program [args...]\n"
               "                 run it as it is and with the change, and compare (cltrace try -h)\n\n"
               "Runs program with every OpenCL call traced to a Perfetto trace (.pftrace[.gz]).\n"
               "Open it at https://ui.perfetto.dev or read it with cltrace-report.\n\n"
               "Traced, with no flag: programs linked with libOpenCL, programs that load it at\n"
               "run time (dlopen or dlmopen by name or path, then dlsym: hashcat, ctypes, clew),\n"
               "extension functions looked up with clGetExtensionFunctionAddress*, and calls that\n"
               "come through an ICD loader's layer (OPENCL_LAYERS=libcltrace.so): each call once.\n"
               "On OpenCL 1.x platforms cltrace calls only 1.x commands of its own.\n\n"
               "  -o FILE   trace file (same as CLTRACE_OUTPUT)\n"
               "  -q        no messages from cltrace\n"
               "  --no-children  trace the program only, not the programs it runs\n"
               "  --sample[=all|FIRST,EVERY[,BYTES]]  which device commands are timed. Default: every\n"
               "            one while timing costs at most CLTRACE_BUDGET (5 %%) of the run since its first\n"
               "            command (3 ms at least), then a sample (the rest drawn as estimated); all:\n"
               "            every one; --sample: the first 16 of each launch configuration, then 1 in 256\n"
               "            (CLTRACE_SAMPLE)\n"
               "  --fingerprint[=SPEC]  after each command, a fingerprint of the buffers it may\n"
               "            write (CLTRACE_FINGERPRINT; default: every command): finds the first\n"
               "            NaN, and where two runs diverge (cltrace-report diverge A B)\n"
               "  --capture=SPEC  write each chosen kernel launch (its program, arguments and\n"
               "            buffers before and after) to a folder that cltrace replay runs again\n"
               "            (CLTRACE_CAPTURE: KERNEL, KERNEL@N, #N, count=N; folders in CLTRACE_CAPTURE_DIR)\n"
               "  --programs DIR  write each program the app builds to DIR as FIRSTKERNEL-HASH.cl\n"
               "            (.spv, .bin), with its build options in FIRSTKERNEL-HASH.options\n"
               "  --override FILE|DIR  build the app's programs from edited files instead: FILE replaces\n"
               "            the program of the hash in its name, else the one defining the same kernels;\n"
               "            a DIR's NAME-HASH.cl files each the program of that hash (.options beside it)\n"
               "  --options KERNEL=OPTS  build options of the program defining KERNEL (or HASH=, *=);\n"
               "            +OPTS adds to the app's. Repeatable\n"
               "  --local KERNEL=X[,Y[,Z]]  the local size of KERNEL's launches (the app's NULL too).\n"
               "            Repeatable. A size a launch cannot take is reported, the app's launch runs\n"
               "  --window=SPEC  record only in windows (CLTRACE_WINDOW): START[+LENGTH],...\n"
               "            START: 60s, 1000calls, kernel:NAME (its first launch), manual (cltrace_start()\n"
               "            or cltrace ctl PID start); LENGTH: 10s or 500calls. Outside, only the calls\n"
               "            that make or release objects are kept, and nothing is timed on the device\n"
               "  --every=TIME  repeat the windows that often (CLTRACE_WINDOW_EVERY): --window 60s+10s --every 600s\n"
               "  --ring=MB  flight recorder: keep only the last MB of the trace in memory, written at exit,\n"
               "            on a crash, and on cltrace ctl PID snapshot (CLTRACE_RING_MB)\n"
               "  --snapshot-on=error,kernel:NAME  with --ring: a snapshot file at the first failing call,\n"
               "            at a kernel's first launch (CLTRACE_SNAPSHOT_ON)\n"
               "  --cpu-samples=HZ|off  the program's threads sampled HZ times a second of their CPU\n"
               "            time (100; CLTRACE_CPU_SAMPLES): what the host ran while the device waited\n"
               "  -h        this help\n\n"
               "Options are environment variables (the launcher passes them on):\n");
    for (unsigned i = 0; i < clt_n_options; i++) {
        if (strcmp(clt_options[i].name, CLT_ENV_PREFIX "NOTIFY_FD") == 0)
            continue;
        fprintf(f, "  %-20s %s (default: %s)\n", clt_options[i].name, clt_options[i].help,
                clt_options[i].def[0] ? clt_options[i].def : "none");
    }
    fprintf(f, "\nExit status: the program's (128+N if it died of signal N); 127 if it cannot run.\n");
}

static int find_shim(char *out, size_t cap)
{
    const char *env = getenv("CLTRACE_SHIM");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK);
    }
    return clt_find_beside("libcltrace.so", out, cap);
}

/* LD_PRELOAD without the entries whose file is named name. */
static void unpreload(const char *name)
{
    const char *pre = getenv("LD_PRELOAD");
    char out[8192] = "", copy[8192];
    snprintf(copy, sizeof copy, "%s", pre ? pre : "");
    for (char *save = NULL, *e = strtok_r(copy, ": ", &save); e; e = strtok_r(NULL, ": ", &save)) {
        const char *base = strrchr(e, '/');
        if (strcmp(base ? base + 1 : e, name) != 0 && strlen(out) + strlen(e) + 2 < sizeof out)
            strcat(strcat(out, out[0] ? ":" : ""), e);
    }
    if (out[0])
        setenv("LD_PRELOAD", out, 1);
    else
        unsetenv("LD_PRELOAD");
}

/* `cltrace probe [args]` (the calibration program), `cltrace replay|tune
 * [args]` (cltrace-replay replay|tune [args]): untraced. */
static int run_beside(const char *program, char **argv)
{
    char path[PATH_MAX];
    if (clt_find_beside(program, path, sizeof path) != 0) {
        fprintf(stderr, "cltrace: %s not found next to cltrace or in ../lib/cltrace/\n", program);
        return 127;
    }
    unsetenv("OPENCL_LAYERS");
    if (strcmp(program, "cltrace-replay") == 0)
        unpreload("libcltrace.so");  /* keeps another's: `oclgrind cltrace replay DIR` */
    else
        unsetenv("LD_PRELOAD");
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "cltrace: cannot run %s: %s\n", path, strerror(errno));
    return 127;
}

/* --name VALUE or --name=VALUE at argv[*i] (VALUE; *i moved past it), else NULL. */
static const char *value_of(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

/* A repeatable flag: its values joined by sep in one variable. */
static void append_env(const char *var, const char *value, const char *sep)
{
    const char *had = getenv(var);
    if (!had || !*had) {
        setenv(var, value, 1);
        return;
    }
    char *both = malloc(strlen(had) + strlen(sep) + strlen(value) + 1);
    if (!both)
        return;
    sprintf(both, "%s%s%s", had, sep, value);
    setenv(var, both, 1);
    free(both);
}

/* The options before the program, into the environment the shim reads.
 * The program's index in argv; -1 after --help; -2 a wrong option (said). */
static int read_options(int argc, char **argv, int *quiet)
{
    int i = 1;
    const char *opt;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(argv[i], "--no-children") == 0) {
            setenv(CLT_ENV_PREFIX "CHILDREN", "0", 1);
        } else if (strcmp(argv[i], "--sample") == 0 || strncmp(argv[i], "--sample=", 9) == 0) {
            setenv(CLT_ENV_PREFIX "SAMPLE", argv[i][8] ? argv[i] + 9 : "1", 1);
        } else if (strcmp(argv[i], "--fingerprint") == 0 || strncmp(argv[i], "--fingerprint=", 14) == 0) {
            setenv(CLT_ENV_PREFIX "FINGERPRINT", argv[i][13] ? argv[i] + 14 : "1", 1);
        } else if ((opt = value_of(argc, argv, &i, "--capture"))) {
            setenv(CLT_ENV_PREFIX "CAPTURE", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--programs"))) {
            setenv(CLT_ENV_PREFIX "PROGRAMS", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--override"))) {
            setenv(CLT_ENV_PREFIX "OVERRIDE", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--options"))) {
            append_env(CLT_ENV_PREFIX "OVERRIDE_OPTIONS", opt, "\n");
        } else if ((opt = value_of(argc, argv, &i, "--local"))) {
            append_env(CLT_ENV_PREFIX "OVERRIDE_LOCAL", opt, ";");
        } else if ((opt = value_of(argc, argv, &i, "--window"))) {
            setenv(CLT_ENV_PREFIX "WINDOW", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--ring"))) {
            setenv(CLT_ENV_PREFIX "RING_MB", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--snapshot-on"))) {
            setenv(CLT_ENV_PREFIX "SNAPSHOT_ON", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--cpu-samples"))) {
            setenv(CLT_ENV_PREFIX "CPU_SAMPLES", opt, 1);
        } else if ((opt = value_of(argc, argv, &i, "--every"))) {
            setenv(CLT_ENV_PREFIX "WINDOW_EVERY", opt, 1);
        } else if (strcmp(argv[i], "-q") == 0) {
            *quiet = 1;
            setenv(CLT_ENV_PREFIX "QUIET", "1", 1);
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            setenv(CLT_ENV_PREFIX "OUTPUT", argv[++i], 1);
        } else {
            fprintf(stderr, "cltrace: unknown option %s\n", argv[i]);
            usage(stderr);
            return -2;
        }
    }
    return i;
}

/* --ring, --snapshot-on, --window and --every checked now, not after an
 * hour's run: 0, or 2 said. */
static int check_options(void)
{
    const char *win = getenv(CLT_ENV_PREFIX "WINDOW"), *every = getenv(CLT_ENV_PREFIX "WINDOW_EVERY");
    const char *ring = getenv(CLT_ENV_PREFIX "RING_MB"), *snap = getenv(CLT_ENV_PREFIX "SNAPSHOT_ON");
    if (ring && *ring) {
        char *end;
        double mb = strtod(ring, &end);
        if (*end || !(mb >= 0.5)) {
            fprintf(stderr, "cltrace: --ring %s: a size in MiB, 0.5 or more\n", ring);
            return 2;
        }
    }
    if (snap && *snap) {
        if (!ring || !*ring) {
            fprintf(stderr, "cltrace: --snapshot-on needs --ring (a snapshot is what the flight recorder holds)\n");
            return 2;
        }
        char copy[512];
        snprintf(copy, sizeof copy, "%s", snap);
        for (char *save = NULL, *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save))
            if (strcmp(it, "error") != 0 && (strncmp(it, "kernel:", 7) != 0 || !it[7])) {
                fprintf(stderr, "cltrace: --snapshot-on %s: 'error' or 'kernel:NAME'\n", it);
                return 2;
            }
    }
    if ((win && *win) || (every && *every)) {   /* a spelling mistake said now, not after an hour's run */
        struct clt_windows ws;
        char err[256];
        if (!win || !*win || clt_windows_parse(win, every, &ws, err, sizeof err) != 0) {
            fprintf(stderr, "cltrace: --window %s: %s\n", win ? win : "", win && *win ? err : "--every needs --window");
            return 2;
        }
    }
    return 0;
}

/* The program run with the shim preloaded; each trace path its processes
 * announce said; its exit status, as a shell gives it. */
static int run_traced(char **argv, int quiet)
{
    /* Traced processes announce their trace path on this pipe. */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        perror("cltrace: pipe");
        return 127;
    }
    int notify = fcntl(pfd[1], F_DUPFD, 3);       /* without CLOEXEC: inherited */
    char num[16];
    snprintf(num, sizeof num, "%d", notify);
    setenv(CLT_ENV_PREFIX "NOTIFY_FD", num, 1);

    pid_t pid = fork();
    if (pid < 0) {
        perror("cltrace: fork");
        return 127;
    }
    if (pid == 0) {
        close(pfd[0]);
        execvp(argv[0], argv);
        fprintf(stderr, "cltrace: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    close(notify);
    signal(SIGINT, SIG_IGN);      /* the app gets ^C; we wait for it */
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    /* Read what was announced (children that outlive the app keep the pipe
     * open: do not wait for them). */
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    char buf[8192];
    ssize_t n;
    while ((n = read(pfd[0], buf, sizeof buf - 1)) > 0) {
        buf[n] = 0;
        if (!quiet) {
            for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                fprintf(stderr, "cltrace: trace written to %s\n", line);
        }
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    int quiet = 0;
    if (argc > 1 && strcmp(argv[1], "probe") == 0)
        return run_beside("cltrace-probe", argv + 1);
    if (argc > 1 && (strcmp(argv[1], "replay") == 0 || strcmp(argv[1], "tune") == 0))
        return run_beside("cltrace-replay", argv);
    if (argc > 1 && strcmp(argv[1], "ctl") == 0)
        return clt_ctl_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "try") == 0)
        return run_beside("cltrace-try", argv + 1);
    int i = read_options(argc, argv, &quiet);
    if (i < 0)
        return i == -1 ? 0 : 2;
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    if (check_options() != 0)
        return 2;
    char shim[PATH_MAX], preload[2 * PATH_MAX];
    if (find_shim(shim, sizeof shim) != 0) {
        fprintf(stderr, "cltrace: libcltrace.so not found next to the launcher (set CLTRACE_SHIM)\n");
        return 127;
    }
    const char *old = getenv("LD_PRELOAD");
    snprintf(preload, sizeof preload, "%s%s%s", shim, old && *old ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", preload, 1);

    return run_traced(argv + i, quiet);
}
