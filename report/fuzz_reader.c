/* libFuzzer target for the trace reader: any bytes, raw or gzip, must give a
 * model or a clean error — no crash, no hang, no unbounded allocation.
 *   make fuzz   (a bounded run; FUZZ_SECONDS=N for longer) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "report/model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("trace", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return 0;
    }
    static struct rm_model m;
    char err[256];
    memset(&m, 0, sizeof m);
    m.small_threshold = 32768;
    rm_read_fd(&m, fd, "fuzz", err, sizeof err);
    rm_free(&m);
    return 0;
}
