/* A disk that stops answering, for tests: preloaded before the shim, the
 * STALL_AT-th pwritev of the process sleeps STALL_S seconds first. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    static ssize_t (*real)(int, const struct iovec *, int, off_t);
    static _Atomic int calls;
    if (!real)
        real = (ssize_t (*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev");
    const char *at = getenv("STALL_AT"), *secs = getenv("STALL_S");
    if (at && secs && ++calls == atoi(at))
        sleep((unsigned)atoi(secs));
    return real(fd, iov, n, off);
}
