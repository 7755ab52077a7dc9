/* Preloaded into `cltrace try` (tests/try.sh): its forks fail from the
 * (FAIL_FORK_AFTER + 1)th on, as on a machine out of processes; every other
 * program's forks are its own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pid_t fork(void)
{
    static int forks;
    static pid_t (*real)(void);
    if (!real)
        real = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    const char *after = getenv("FAIL_FORK_AFTER");
    if (after && !strcmp(program_invocation_short_name, "cltrace-try") && forks++ >= atoi(after)) {
        errno = EAGAIN;
        return -1;
    }
    return real();
}
