/* The clocks of a job's ranks (capture/mpi.c measures each rank's against
 * rank 0's at MPI_Init and MPI_Finalize; the correction at a time:
 * mpi.c): a trace's attributes read alone (they come last), and a job's
 * traces read into one model with the ranks on other hosts moved onto rank
 * 0's clock.
 * Ranks on rank 0's host share its CLOCK_BOOTTIME and are read as they are. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "input.h"
#include "model.h"
#include "reader.h"

/* Does a packet hold TraceAttributes (field 126) at its top level? Its
 * fields stepped over, none decoded. */
static int has_attributes(const uint8_t *p, const uint8_t *end)
{
    while (p < end) {
        uint64_t key = 0, v = 0;
        for (int shift = 0; p < end && shift < 64; shift += 7) {
            key |= (uint64_t)(*p & 0x7F) << shift;
            if (*p++ < 0x80)
                break;
        }
        if (key >> 3 == 126)
            return 1;
        switch (key & 7) {
        case 0:
            while (p < end && *p++ >= 0x80)
                ;
            break;
        case 1: p += 8; break;
        case 5: p += 4; break;
        case 2:
            for (int shift = 0; p < end && shift < 64; shift += 7) {
                v |= (uint64_t)(*p & 0x7F) << shift;
                if (*p++ < 0x80)
                    break;
            }
            if (v > (uint64_t)(end - p))
                return 0;
            p += v;
            break;
        default: return 0;
        }
    }
    return 0;
}

int rm_read_attributes_only(struct rm_model *m, const char *path, char *err, unsigned errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct rm_in in;
    if (fd < 0 || rm_in_open(&in, fd) != 0) {
        if (fd >= 0) {
            rm_in_close(&in);
            close(fd);
        }
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    close(fd);
    for (;;) {
        const uint8_t *buf;
        uint64_t len;
        int tag;
        if (rm_next_packet(&in, &buf, &len, &tag) != RM_FRAME_OK)
            break;
        if (!has_attributes(buf, buf + len))
            continue;
        Perfetto__Protos__TracePacket *p = perfetto__protos__trace_packet__unpack(NULL, len, buf);
        if (p && p->trace_attributes)
            rm_read_attributes(m, p->trace_attributes);
        if (p)
            perfetto__protos__trace_packet__free_unpacked(p, NULL);
    }
    rm_in_close(&in);
    return 0;
}

int rm_read_job(struct rm_model *m, char **paths, unsigned n, char *err, unsigned errlen)
{
    struct rm_model *a = n > 1 ? calloc(n, sizeof *a) : NULL;
    const char *host0 = NULL;
    for (unsigned i = 0; a && i < n; i++) {
        rm_model_init(&a[i]);
        if (rm_read_attributes_only(&a[i], paths[i], err, errlen) == 0 && a[i].rank == 0)
            host0 = a[i].host;
    }
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        int apart = a && host0 && strcmp(a[i].host, host0) && (a[i].mpi_clock[0].have || a[i].mpi_clock[1].have);
        m->clock_fix = apart ? a[i].mpi_clock : NULL;
        rc = rm_read(m, paths[i], err, errlen);
        m->clock_fix = NULL;
    }
    for (unsigned i = 0; a && i < n; i++)
        rm_free(&a[i]);
    free(a);
    return rc;
}
