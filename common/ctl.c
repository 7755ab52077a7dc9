/* Where `cltrace ctl` finds a traced program (ctl.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl.h"

static int private_dir(const char *dir, int make, char *err, unsigned errlen)
{
    struct stat st;
    if (make && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(err, errlen, "%s is not a folder of this user's only (mode 0700): not used", dir);
        return -1;
    }
    return 0;
}

int clt_ctl_path(pid_t pid, int make, char *out, unsigned cap, char *err, unsigned errlen)
{
    char dir[200];
    const char *run = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (run && *run == '/' && strlen(run) < 150 && stat(run, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid())
        snprintf(dir, sizeof dir, "%s/cltrace", run);
    else
        snprintf(dir, sizeof dir, "/tmp/cltrace-%u", (unsigned)geteuid());
    if (private_dir(dir, make, err, errlen) != 0)
        return -1;
    if ((unsigned)snprintf(out, cap, "%s/%d.sock", dir, (int)pid) >= cap) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    return 0;
}
