/* n bytes at `at` in process pid (this one) copied to `to` through the
 * kernel: 1 where all of them could be read, 0 where some are not mapped.
 * A read that cannot fault: a sampled thread's Python frames, a code
 * object's line table, a driver's handle that may be no pointer.
 * Async-signal-safe (one system call). */
#ifndef CLT_PEEK_H
#define CLT_PEEK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static inline int clt_peek(pid_t pid, const void *at, void *to, size_t n)
{
    struct iovec mine = { to, n }, there = { (void *)(uintptr_t)at, n };
    return syscall(SYS_process_vm_readv, pid, &mine, 1, &there, 1, 0) == (ssize_t)n;
}
#endif
