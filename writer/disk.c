/* A full disk: the trace keeps what fits and says the disk filled. Where
 * the disk runs low (under CLT_DISK_LOW free, looked at as the trace starts
 * and every CLT_DISK_LOOK bytes it writes) the writer sets aside a little
 * space beside the trace (an unlinked file of CLT_DISK_RESERVE bytes); when a
 * write of the trace fails for want of space, the writer keeps as much of
 * that flush as still fits, gives the reserve back, and ends the trace with
 * one trace-attributes packet --
 * `cltrace.disk_full` (why), `cltrace.disk_full_at_ns`, `cltrace.bytes_kept`
 * (writer.c, write_failed). Under a file size limit (EFBIG) the reserve
 * does not help: the packet goes only where the limit still leaves room. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "trace/cltrace.pb-c.h"
#include "emit.h"
#include "writer.h"

#define CLT_DISK_RESERVE (16 << 10)    /* the note needs a block or two */
/* Set aside only where the disk runs low: the reserve cost every run that
 * never needed it ~0.5 ms at its exit (the file system frees the unlinked
 * file's blocks as it closes, PoCL, 2 cores; 9.75 ms once on an H200 host).
 * The trace writes at most a few hundred MB/s: between two looks it cannot
 * take the 256 MB; a disk that another program fills faster can fill before
 * the reserve is made, and the trace then says why only if its note fits. */
#define CLT_DISK_LOW (256ull << 20)
#define CLT_DISK_LOOK (32ull << 20)
static int reserve_fd = -1;
static char reserve_dir[PATH_MAX];
static uint64_t next_look;      /* bytes written at which to look again */

static void reserve(void)
{
    reserve_fd = open(reserve_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (reserve_fd >= 0 && posix_fallocate(reserve_fd, 0, CLT_DISK_RESERVE) != 0) {
        close(reserve_fd);      /* no room even for this, or no fallocate: no reserve */
        reserve_fd = -1;
    }
}

void clt_disk_watch(int trace_fd, const char *trace_path)
{
    clt_disk_release();
    snprintf(reserve_dir, sizeof reserve_dir, "%s", trace_path);
    char *slash = strrchr(reserve_dir, '/');
    if (slash)
        *(slash == reserve_dir ? slash + 1 : slash) = 0;
    else
        snprintf(reserve_dir, sizeof reserve_dir, ".");
    next_look = 0;
    clt_disk_written(trace_fd, 0);
}

/* By the one thread that writes the trace, after each write. */
void clt_disk_written(int trace_fd, uint64_t bytes_written)
{
    if (reserve_fd >= 0 || bytes_written < next_look || !reserve_dir[0])
        return;
    next_look = bytes_written + CLT_DISK_LOOK;
    struct statvfs st;
    if (fstatvfs(trace_fd, &st) != 0 || (uint64_t)st.f_bavail * st.f_frsize < CLT_DISK_LOW)
        reserve();
}

/* Given back for good: the note, or the exit's last writes, take its room. */
void clt_disk_release(void)
{
    if (reserve_fd >= 0)
        close(reserve_fd);
    reserve_fd = -1;
    reserve_dir[0] = 0;
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
