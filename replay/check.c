/* cltrace replay --check DIR: the launch replayed once under Oclgrind (a
 * simulator of an OpenCL device, Debian's `oclgrind`) with its checks of
 * memory bounds, data races and uninitialized values; each problem it
 * finds said with kernel, work-item, work-group and source line.
 * Exit 1 on any problem, 0 on none, 2 when it cannot run (no oclgrind). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "replay.h"

struct problem { char what[256], kernel[128], entity[256], line[64], code[256]; unsigned more; };

/* The same problem (kind, kernel, line) at many work-items: said once,
 * with how many more. */
#define MAX_PROBLEMS 64
static struct problem found[MAX_PROBLEMS];
static unsigned n_found, n_dropped;

static size_t kind_len(const char *what)      /* "Invalid write of size 4" of "... at global memory address 0x..." */
{
    const char *at = strstr(what, " at ");
    return at ? (size_t)(at - what) : strlen(what);
}

static int same_kind(const struct problem *a, const struct problem *b)
{
    size_t n = kind_len(a->what);
    return n == kind_len(b->what) && !strncmp(a->what, b->what, n) && !strcmp(a->kernel, b->kernel) &&
           !strcmp(a->line, b->line);
}

static void keep(const struct problem *p)
{
    for (unsigned i = 0; i < n_found; i++)
        if (same_kind(&found[i], p)) {
            found[i].more++;
            return;
        }
    if (n_found == MAX_PROBLEMS)
        n_dropped++;
    else
        found[n_found++] = *p;
}

static void say(const struct problem *p, unsigned n)
{
    printf("  %u. %s\n     kernel %s, %s%s%s\n", n, p->what, p->kernel[0] ? p->kernel : "?",
           p->entity[0] ? p->entity : "work-item unknown", p->line[0] ? ", " : "", p->line);
    if (p->code[0])
        printf("     %s\n", p->code);
    if (p->more)
        printf("     (and %u more like it at other work-items)\n", p->more);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* Oclgrind's messages: a line at the margin says what; indented lines after
 * it say "Kernel: ...", "Entity: Global(..) Local(..) Group(..)" (or First
 * and Second entity for a race), "At line N (column C) of input.cl:" and the
 * source line itself. */
static unsigned parse(FILE *f, unsigned *other)
{
    char line[1024];
    struct problem p;
    int open = 0, want_code = 0;
    unsigned n = 0;
    while (fgets(line, sizeof line, f)) {
        char *t = trim(line);
        int indented = line[0] == '\t' || line[0] == ' ';
        if (!indented && (strstr(t, "Invalid ") || strstr(t, "data race") || strstr(t, "ninitialized") ||
                          strstr(t, "out-of-bounds") || strstr(t, "Uninitialized"))) {
            if (open)
                keep(&p), n++;
            memset(&p, 0, sizeof p);
            snprintf(p.what, sizeof p.what, "%s", t);
            open = 1;
            want_code = 0;
        } else if (open && indented) {
            if (!strncmp(t, "Kernel: ", 8))
                snprintf(p.kernel, sizeof p.kernel, "%s", t + 8);
            else if (!strncmp(t, "Entity: ", 8) || !strncmp(t, "First entity: ", 14)) {
                const char *e = strchr(t, ':') + 1;
                snprintf(p.entity, sizeof p.entity, "work-item %s", trim((char *)e));
            } else if (!strncmp(t, "Second entity: ", 15)) {
                size_t used = strlen(p.entity);
                snprintf(p.entity + used, sizeof p.entity - used, " against work-item %s", trim(t + 15));
            } else if (!strncmp(t, "At line ", 8)) {
                unsigned ln = (unsigned)atoi(t + 8);
                snprintf(p.line, sizeof p.line, "line %u", ln);
                want_code = 1;
            } else if (want_code && t[0] && !p.code[0]) {
                snprintf(p.code, sizeof p.code, "%s", t);
                want_code = 0;
            }
        } else if (open && !t[0]) {
            /* blank: the message goes on or ends; the next header decides */
        } else if (!indented && t[0] && strncmp(t, "cltrace", 7)) {
            ++*other;
            fprintf(stderr, "%s\n", t);
        }
    }
    if (open)
        keep(&p), n++;
    for (unsigned i = 0; i < n_found; i++)
        say(&found[i], i + 1);
    if (n_dropped)
        printf("  (%u more kinds of problem not listed)\n", n_dropped);
    return n;
}

int rp_check(const struct rp_args *a, const char *self)
{
    char me[4096];
    ssize_t len = readlink("/proc/self/exe", me, sizeof me - 1);
    if (len <= 0)
        snprintf(me, sizeof me, "%s", self);
    else
        me[len] = 0;
    struct rf_capture c;
    char err[1024];
    if (rf_read(a->dir, &c, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace replay --check: %s\n", err);
        return 2;
    }
    int pfd[2];
    if (pipe(pfd) != 0)
        return perror("cltrace replay --check: pipe"), 2;
    pid_t pid = fork();
    if (pid < 0)
        return perror("cltrace replay --check: fork"), 2;
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        char tol[64];
        snprintf(tol, sizeof tol, "%g,%g", a->o.rel, a->o.abs);
        unsetenv("LD_PRELOAD");          /* oclgrind sets its own */
        execlp("oclgrind", "oclgrind", "--data-races", "--uninitialized", "--check-api", me, "replay", "--repeat",
               "1", "--platform", "Oclgrind", "--tolerance", tol, a->dir, (char *)NULL);
        fprintf(stderr, "cltrace replay --check: cannot run oclgrind: %s (install Debian's oclgrind)\n",
                strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    FILE *f = fdopen(pfd[0], "r");
    printf("check of %s launch %llu under Oclgrind (bounds, data races, uninitialized values, API use):\n",
           c.kernel, (unsigned long long)c.launch_n);
    fflush(stdout);
    unsigned other = 0, n = f ? parse(f, &other) : 0;
    if (f)
        fclose(f);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
    if (rc == 127 || (rc == 2 && !n)) {
        fprintf(stderr, "cltrace replay --check: the replay under Oclgrind could not run (exit %d)\n", rc);
        return 2;
    }
    if (!n)
        printf("  no problem found\n");
    printf("result: %u problem%s found by Oclgrind\n", n, n == 1 ? "" : "s");
    return n ? 1 : 0;
}
