/* cltrace-report merge [--ranks 0,3] -o OUT TRACE...|FOLDER: one Perfetto
 * trace of several ranks of a job, each a process of its own named by rank
 * and host. Every packet is copied with what would clash between traces made
 * apart: sequence ids (+ (k+1) << 16), track uuids and flow ids (^ (k+1) << 56),
 * pids and tids (+ (k+1) << 22, so ranks on different hosts with the same pid
 * stay apart). Timestamps: ranks on rank 0's host share its CLOCK_BOOTTIME
 * and are left exactly as they are; a rank on another host is moved onto
 * rank 0's clock by the offsets it measured against rank 0 at MPI_Init and
 * MPI_Finalize (capture/mpi.c), linearly between the two
 * (rm_mpi_offset); a rank on another host without them (no MPI) stays
 * where its own clock put it, and merge says so. The traces' own
 * attributes are dropped; the merged trace says which ranks it holds
 * (cltrace.merged_ranks). A physical device (its UUID, else its name on its
 * host, as the report counts devices) is one group at the top of the
 * timeline, "Device: NAME, ranks R,R": every rank's queues and counters on
 * it inside, each named by its rank; the ranks' own device groups go. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "commands.h"
#include "pbout.h"
#include "report/model/input.h"
#include "report/model/model.h"
#include "trace/cltrace.pb-c.h"

typedef Perfetto__Protos__TracePacket Packet;

static uint64_t uuid(uint64_t u, unsigned k)
{
    return u ? u ^ ((uint64_t)(k + 1) << 56) : 0;
}

/* The physical devices of the merged ranks: each rank's device N -> one. */
#define MERGE_DEVS 64
#define MERGE_DEV_UUID 0x0DE7000000000000ull    /* + its index: a top-level group, in no rank's space */
#define MERGE_TRACES 4096
struct shared_devs {
    char key[MERGE_DEVS][200], name[MERGE_DEVS][RM_MAX_NAME], ranks[MERGE_DEVS][128];
    unsigned n;
    int of[MERGE_TRACES][8];                    /* path i's device N: index + 1, 0 none */
};

static void shared_add(struct shared_devs *sd, unsigned i_path, const struct rm_model *m)
{
    for (unsigned d = 0; d < m->n_dev && d < 8 && i_path < MERGE_TRACES; d++) {
        const struct rm_device *dv = &m->dev[d];
        char key[200];
        if (dv->uuid[0] && strncmp(dv->uuid, "pci:", 4))
            snprintf(key, sizeof key, "%s", dv->uuid);       /* a UUID is the same seen from every host */
        else
            snprintf(key, sizeof key, "%s/%s/%s", m->host, dv->uuid, dv->name);
        unsigned i = 0;
        while (i < sd->n && strcmp(sd->key[i], key))
            i++;
        if (i == MERGE_DEVS)
            continue;
        if (i == sd->n) {
            snprintf(sd->key[i], sizeof sd->key[i], "%s", key);
            snprintf(sd->name[i], sizeof sd->name[i], "%s", dv->name[0] ? dv->name : "device");
            sd->n++;
        }
        size_t l = strlen(sd->ranks[i]);
        snprintf(sd->ranks[i] + l, sizeof sd->ranks[i] - l, "%s%d", l ? "," : "", m->rank);
        sd->of[i_path][d] = (int)i + 1;
    }
}

static void shared_tracks(const struct shared_devs *sd, struct pb_out *out)
{
    for (unsigned i = 0; i < sd->n; i++) {
        char name[RM_MAX_NAME + 160];
        snprintf(name, sizeof name, "Device: %s, ranks %s", sd->name[i], sd->ranks[i]);
        Perfetto__Protos__TrackDescriptor t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        t.has_uuid = 1;
        t.uuid = MERGE_DEV_UUID + i;
        t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
        t.name = name;
        Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
        p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
        p.track_descriptor = &t;
        pb_out_packet(out, &p);
    }
}

/* A track of a rank's trace (of: its devices' shared index + 1, NULL none):
 * its own device group dropped (1), a track in one moved into the shared
 * device's group and named by its rank. */
static int shared_track(const int *of, int rank, Perfetto__Protos__TrackDescriptor *t)
{
    if (of && (t->uuid & 0xF0000000u) == 0x90000000u && of[(t->uuid >> 8) & 7])
        return 1;
    if (!of || (t->parent_uuid & 0xF0000000u) != 0x90000000u || !of[(t->parent_uuid >> 8) & 7])
        return 0;
    t->parent_uuid = MERGE_DEV_UUID + (uint64_t)of[(t->parent_uuid >> 8) & 7] - 1;
    char *name = malloc(strlen(t->name ? t->name : "") + 32);
    if (name) {
        sprintf(name, "rank %d: %s", rank, t->name ? t->name : "");
        free(t->name);
        t->name = name;
    }
    return 0;
}

/* One trace's packets into the merged file, as rank `rank` on `host`;
 * clock: its offsets to rank 0's clock, NULL: none to apply. */
static int copy_trace(const char *path, unsigned k, int rank, const char *host, const struct rm_model *clock,
                      const int *of, struct pb_out *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct rm_in in;
    if (fd < 0)
        return -1;
    if (rm_in_open(&in, fd) != 0) {
        rm_in_close(&in);
        close(fd);
        return -1;
    }
    close(fd);
    int32_t pid_add = (int32_t)((k + 1) << 22);
    for (;;) {
        uint64_t len;
        const uint8_t *buf;
        int tag;
        if (rm_next_packet(&in, &buf, &len, &tag) != RM_FRAME_OK)
            break;                  /* the end, or a cut trace: what came before it counts */
        Packet *p = perfetto__protos__trace_packet__unpack(NULL, len, buf);
        if (!p)
            continue;
        if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES) {
            perfetto__protos__trace_packet__free_unpacked(p, NULL);
            continue;
        }
        if (p->has_trusted_packet_sequence_id)
            p->trusted_packet_sequence_id += (k + 1) << 16;
        if (clock && p->has_timestamp)
            p->timestamp = (uint64_t)((int64_t)p->timestamp - rm_mpi_offset(clock->mpi_clock, p->timestamp));
        if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR &&
            shared_track(of, rank, p->track_descriptor)) {
            perfetto__protos__trace_packet__free_unpacked(p, NULL);
            continue;
        }
        if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR) {
            Perfetto__Protos__TrackDescriptor *t = p->track_descriptor;
            t->uuid = uuid(t->uuid, k);
            if (t->parent_uuid < MERGE_DEV_UUID || t->parent_uuid >= MERGE_DEV_UUID + MERGE_DEVS)
                t->parent_uuid = uuid(t->parent_uuid, k);
            if (t->process) {
                t->process->pid += pid_add;
                char *name = malloc(300);
                if (name) {
                    snprintf(name, 300, "rank %d (%s): %s", rank, host,
                             t->process->process_name ? t->process->process_name : "");
                    free(t->process->process_name);
                    t->process->process_name = name;
                }
            }
            if (t->thread) {
                t->thread->pid += pid_add;
                t->thread->tid += pid_add;
            }
        }
        if (p->trace_packet_defaults && p->trace_packet_defaults->track_event_defaults) {
            Perfetto__Protos__TrackEventDefaults *d = p->trace_packet_defaults->track_event_defaults;
            d->track_uuid = uuid(d->track_uuid, k);
            for (size_t i = 0; i < d->n_extra_counter_track_uuids; i++)
                d->extra_counter_track_uuids[i] = uuid(d->extra_counter_track_uuids[i], k);
        }
        if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT) {
            Perfetto__Protos__TrackEvent *e = p->track_event;
            e->track_uuid = uuid(e->track_uuid, k);
            for (size_t i = 0; i < e->n_extra_counter_track_uuids; i++)
                e->extra_counter_track_uuids[i] = uuid(e->extra_counter_track_uuids[i], k);
            for (size_t i = 0; i < e->n_flow_ids; i++)
                e->flow_ids[i] = uuid(e->flow_ids[i], k);
            for (size_t i = 0; i < e->n_terminating_flow_ids; i++)
                e->terminating_flow_ids[i] = uuid(e->terminating_flow_ids[i], k);
        }
        pb_out_packet(out, p);
        perfetto__protos__trace_packet__free_unpacked(p, NULL);
    }
    rm_in_close(&in);
    return 0;
}

static int wanted(const char *ranks, int rank)
{
    if (!ranks)
        return 1;
    for (const char *s = ranks; *s;) {
        char *end;
        long r = strtol(s, &end, 10);
        if (end == s)
            return 0;
        if (r == rank)
            return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* Each trace's rank, host and clocks (its attributes: a pass that decodes
 * nothing else) into ms[i], read_ok[i]; rank 0's host, NULL: none. */
static const char *ranks_and_hosts(char **paths, unsigned n, struct rm_model *ms, int *read_ok)
{
    const char *host0 = NULL;
    for (unsigned i = 0; i < n; i++) {
        char err[512];
        rm_model_init(&ms[i]);
        if (rm_read_attributes_only(&ms[i], paths[i], err, sizeof err) != 0) {
            fprintf(stderr, "cltrace-report: %s\n", err);
            continue;
        }
        read_ok[i] = 1;
        if (ms[i].rank < 0)
            ms[i].rank = (int)i;
        if (ms[i].rank == 0)
            host0 = ms[i].host;
    }
    return host0;
}

int report_merge(int argc, char **argv, char **paths, unsigned n_paths)
{
    const char *ranks = NULL, *out_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out_path = argv[++i];
    }
    if (!out_path || !n_paths) {
        fprintf(stderr, "usage: cltrace-report merge [--ranks R,R...] -o OUT.pftrace[.gz] TRACE...|FOLDER\n");
        return 2;
    }
    struct pb_out out;
    if (pb_out_open(&out, out_path) != 0) {
        fprintf(stderr, "cltrace-report: cannot write %s\n", out_path);
        return 2;
    }
    char merged[512] = "";
    unsigned k = 0;
    /* every trace's rank, host and clock first: rank 0's host is the one
     * whose clock the others are moved onto */
    struct rm_model *ms = calloc(n_paths, sizeof *ms);
    int *read_ok = calloc(n_paths, sizeof *read_ok);
    if (!ms || !read_ok) {
        fprintf(stderr, "cltrace-report: out of memory\n");
        return 2;
    }
    const char *host0 = ranks_and_hosts(paths, n_paths, ms, read_ok);
    static struct shared_devs sd;
    memset(&sd, 0, sizeof sd);
    for (unsigned i = 0; i < n_paths; i++)
        if (read_ok[i] && wanted(ranks, ms[i].rank))
            shared_add(&sd, i, &ms[i]);
    shared_tracks(&sd, &out);
    for (unsigned i = 0; i < n_paths; i++) {
        if (!read_ok[i] || !wanted(ranks, ms[i].rank))
            continue;
        int rank = ms[i].rank, apart = host0 && strcmp(ms[i].host, host0);
        int measured = ms[i].mpi_clock[0].have || ms[i].mpi_clock[1].have;
        char host[64];
        snprintf(host, sizeof host, "%s", ms[i].host[0] ? ms[i].host : "?");
        if (apart && !measured)
            fprintf(stderr, "cltrace-report: rank %d (%s): another host than rank 0's, no MPI clock offsets in "
                    "its trace: its times are its own host's\n", rank, host);
        if (copy_trace(paths[i], k, rank, host, apart && measured ? &ms[i] : NULL,
                       i < MERGE_TRACES ? sd.of[i] : NULL, &out) != 0) {
            fprintf(stderr, "cltrace-report: %s: cannot read\n", paths[i]);
            continue;
        }
        snprintf(merged + strlen(merged), sizeof merged - strlen(merged), "%s%d", k ? "," : "", rank);
        k++;
    }
    for (unsigned i = 0; i < n_paths; i++)
        if (read_ok[i])
            rm_free(&ms[i]);
    free(ms);
    free(read_ok);
    /* what the merged trace holds */
    Perfetto__Protos__TraceAttributes__Attribute a = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__INIT, *ap = &a;
    a.key = "cltrace.merged_ranks";
    a.value_case = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE;
    a.string_value = merged;
    Perfetto__Protos__TraceAttributes ta = PERFETTO__PROTOS__TRACE_ATTRIBUTES__INIT;
    ta.n_attribute = 1;
    ta.attribute = &ap;
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES;
    p.trace_attributes = &ta;
    pb_out_packet(&out, &p);
    int ok = pb_out_close(&out) == 0;
    if (!ok || !k) {
        fprintf(stderr, "cltrace-report: %s\n", k ? "cannot write the merged trace" : "no rank selected");
        return 2;
    }
    fprintf(stderr, "cltrace-report: ranks %s merged into %s\n", merged, out_path);
    return 0;
}
