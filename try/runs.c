/* One run of the program under cltrace, as `cltrace` runs it (the launcher
 * beside this program): its traces into a folder of its own, its output
 * into files, its wall time measured around it. The run as it is gets none
 * of the change's variables, even where the caller's environment has them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/beside.h"
#include "try.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_or_unset(const char *var, const char *value)
{
    if (value && value[0])
        setenv(var, value, 1);
    else
        unsetenv(var);
}

int try_run_once(const struct try_opts *o, int which, unsigned i, const char *fingerprint, struct try_run *r)
{
    char launcher[1024];
    const char *name = which == AS_IS ? "as-is" : "changed";
    snprintf(r->dir, sizeof r->dir, "%s/%s-%u", o->work, name, i + 1);
    snprintf(r->out, sizeof r->out, "%s/%s-%u.out", o->work, name, i + 1);
    snprintf(r->err, sizeof r->err, "%s/%s-%u.err", o->work, name, i + 1);
    r->status = -1;
    if (clt_find_beside("cltrace", launcher, sizeof launcher) != 0) {
        fprintf(stderr, "cltrace try: the cltrace launcher is not beside cltrace-try\n");
        return -1;
    }
    if (mkdir(r->dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cltrace try: %s: %s\n", r->dir, strerror(errno));
        return -1;
    }
    uint64_t t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int out = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644), err = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0)
            _exit(127);
        dup2(out, 1);
        dup2(err, 2);
        char dir[sizeof r->dir + 2];
        snprintf(dir, sizeof dir, "%s/", r->dir);
        setenv("CLTRACE_OUTPUT", dir, 1);
        setenv("CLTRACE_FINGERPRINT", fingerprint, 1);
        setenv("PYOPENCL_NO_CACHE", "1", 1);   /* both runs build their programs (the shim asks it of the changed one) */
        set_or_unset("CLTRACE_OVERRIDE", which == CHANGED ? o->override : NULL);
        set_or_unset("CLTRACE_OVERRIDE_LOCAL", which == CHANGED ? o->local : NULL);
        set_or_unset("CLTRACE_OVERRIDE_OPTIONS", which == CHANGED ? o->options : NULL);
        unsetenv("CLTRACE_PROGRAMS");
        unsetenv("CLTRACE_SAMPLE");           /* every command timed in both */
        int n = 0;
        while (o->argv[n])
            n++;
        char **argv = calloc((size_t)n + 3, sizeof *argv);
        if (!argv)
            _exit(127);
        argv[0] = launcher;
        argv[1] = (char *)"--";
        memcpy(argv + 2, o->argv, (size_t)n * sizeof *argv);
        execv(launcher, argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->wall_ns = now_ns() - t0;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}
