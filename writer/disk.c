/* A full disk: the trace keeps what fits and says the disk filled. At start
 * the writer sets aside a little space beside the trace (an unlinked file
 * of CLT_DISK_RESERVE bytes); when a write of the trace fails for want of
 * space, the writer keeps as much of that flush as still fits, gives the
 * reserve back, and ends the trace with one trace-attributes packet --
 * `cltrace.disk_full` (why), `cltrace.disk_full_at_ns`, `cltrace.bytes_kept`
 * (writer.c, write_failed). Under a file size limit (EFBIG) the reserve
 * does not help: the packet goes only where the limit still leaves room. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "trace/cltrace.pb-c.h"
#include "emit.h"
#include "writer.h"

#define CLT_DISK_RESERVE (16 << 10)    /* the note needs a block or two */
static int reserve_fd = -1;

void clt_disk_reserve(const char *trace_path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", trace_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        snprintf(dir, sizeof dir, ".");
    if (reserve_fd >= 0)
        close(reserve_fd);
    reserve_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (reserve_fd >= 0 && posix_fallocate(reserve_fd, 0, CLT_DISK_RESERVE) != 0) {
        close(reserve_fd);      /* no room even for this, or no fallocate: no reserve */
        reserve_fd = -1;
    }
}

void clt_disk_release(void)
{
    if (reserve_fd >= 0)
        close(reserve_fd);
    reserve_fd = -1;
}

size_t clt_disk_full_packet(uint8_t *buf, size_t cap, const char *why, uint64_t kept)
{
    static struct clt_attrs a;
    a.n = 0;
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    clt_attr_str(&a, "cltrace.disk_full", why);
    clt_attr_int(&a, "cltrace.disk_full_at_ns", (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
    clt_attr_int(&a, "cltrace.bytes_kept", (int64_t)kept);
    Perfetto__Protos__TraceAttributes ta = PERFETTO__PROTOS__TRACE_ATTRIBUTES__INIT;
    ta.n_attribute = a.n;
    ta.attribute = a.ptr;
    Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES;
    p.trace_attributes = &ta;
    size_t n = protobuf_c_message_get_packed_size(&p.base);
    if (n + 8 > cap)
        return 0;
    uint8_t *o = buf;
    *o++ = 0x0A;                /* Trace.packet, length-delimited */
    for (size_t v = n;; v >>= 7) {
        *o++ = (uint8_t)(v < 0x80 ? v : (v | 0x80));
        if (v < 0x80)
            break;
    }
    protobuf_c_message_pack(&p.base, o);
    return (size_t)(o - buf) + n;
}
