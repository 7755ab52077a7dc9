/* `cltrace ctl PID start|stop|snapshot|status`: one command to a traced
 * program over its private channel (common/ctl.h), the answer printed.
 * The socket is looked for in this user's folder, then in the folder of the
 * user who runs PID (where the program itself refuses another user). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "common/ctl.h"
#include "ctl.h"

static int candidates(pid_t pid, char out[3][108])
{
    char err[256];
    int n = 0;
    if (clt_ctl_path(pid, 0, out[n], sizeof out[n], err, sizeof err) == 0)
        n++;
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
    if (stat(proc, &st) == 0 && st.st_uid != geteuid()) {
        snprintf(out[n++], 108, "/run/user/%u/cltrace/%d.sock", (unsigned)st.st_uid, (int)pid);
        snprintf(out[n++], 108, "/tmp/cltrace-%u/%d.sock", (unsigned)st.st_uid, (int)pid);
    }
    return n;
}

int clt_ctl_main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "start") && strcmp(argv[3], "stop") && strcmp(argv[3], "snapshot") &&
                      strcmp(argv[3], "status"))) {
        fprintf(stderr, "usage: cltrace ctl PID start|stop|snapshot|status\n"
                        "  to a program running under cltrace --window or --ring, by its process id:\n"
                        "  start/stop recording, write the trace so far (snapshot), say what it records\n");
        return 2;
    }
    char *end;
    long pid = strtol(argv[2], &end, 10);
    if (*end || pid <= 0) {
        fprintf(stderr, "cltrace ctl: '%s' is not a process id\n", argv[2]);
        return 2;
    }
    char path[3][108];
    int n = candidates((pid_t)pid, path), last_err = ENOENT;
    for (int i = 0; i < n; i++) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        memcpy(sa.sun_path, path[i], sizeof sa.sun_path - 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            if (errno != ENOENT)
                last_err = errno;
            if (fd >= 0)
                close(fd);
            continue;
        }
        char cmd[32];
        int len = snprintf(cmd, sizeof cmd, "%s\n", argv[3]);
        char buf[1024];
        ssize_t got = 0, r;
        if (send(fd, cmd, (size_t)len, MSG_NOSIGNAL) == len) {
            struct pollfd p = { fd, POLLIN, 0 };
            while (got < (ssize_t)sizeof buf - 1 && poll(&p, 1, 5000) == 1 &&
                   (r = recv(fd, buf + got, sizeof buf - 1 - (size_t)got, 0)) > 0)
                got += r;
        }
        close(fd);
        buf[got] = 0;
        fputs(got ? buf : "no answer\n", got && strncmp(buf, "refused", 7) && strncmp(buf, "unknown", 7) ? stdout : stderr);
        return got && strncmp(buf, "refused", 7) && strncmp(buf, "unknown", 7) ? 0 : 1;
    }
    if (last_err == EACCES || last_err == EPERM)
        fprintf(stderr, "cltrace ctl: refused: process %ld's channel belongs to another user\n", pid);
    else
        fprintf(stderr, "cltrace ctl: no traced program with a channel as process %ld (is it running under "
                        "cltrace --window or --ring, and has it made an OpenCL call?)\n", pid);
    return 1;
}
