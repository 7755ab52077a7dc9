/* The run's last attributes, at the exit: how commands were sampled and
 * what the budget spent, the command line, what was spilled, where gzip
 * ran, the flight recorder's memory, the exit's way where no atexit
 * handler ran; strings in static storage (pointed at until put). */
#define _GNU_SOURCE
#include "common/config.h"
#include "emit.h"
#include "grow.h"
#include "spill.h"
#include "file.h"
#include "writer.h"
#include "trace/ring.h"

static const char *exit_how;
static int exit_status = -1;

void clt_writer_exit_how(const char *how, int status)
{
    exit_how = how;
    exit_status = status;
}

void clt_run_attrs(struct clt_attrs *cost, int gzip)
{
    static char sampling[320], cmdline[1024];
    struct clt_sample smp;
    clt_sample_parse(clt_cfg.SAMPLE, clt_cfg.BUDGET, &smp);
    clt_sample_describe(&smp, sampling, sizeof sampling);
    cost->n = 0;
    clt_attr_str(cost, "cltrace.sampling", sampling);
    clt_attr_str(cost, "cltrace.sampling_mode", !smp.on ? "all" : smp.mode == CLT_SAMPLE_BUDGET ? "budget" : "fixed");
    if (smp.on && smp.mode == CLT_SAMPLE_BUDGET) {   /* what timing cost against its budget */
        clt_attr_int(cost, "cltrace.budget_percent_x100", (int64_t)(smp.budget * 100));
        clt_attr_int(cost, "cltrace.budget_spent_ns", (int64_t)__atomic_load_n(&clt_shared.budget_spent_ns, __ATOMIC_RELAXED));
        clt_attr_int(cost, "cltrace.budget_price_ns", (int64_t)__atomic_load_n(&clt_shared.budget_price_ns, __ATOMIC_RELAXED));
        clt_attr_int(cost, "cltrace.budget_first", (int64_t)smp.first);
    }
    if (clt_command_line(cmdline, sizeof cmdline))     /* what the report's commands (cltrace try) rerun */
        clt_attr_str(cost, "cltrace.cmdline", cmdline);
    clt_attr_int(cost, "cltrace.spilled_bytes", (int64_t)clt_spill_total());
    clt_attr_int(cost, "cltrace.rings_grown", (int64_t)clt_grow_count());
    if (gzip)
        clt_attr_str(cost, "cltrace.gzip_thread", clt_file_compressor());
    if (exit_how) {      /* no atexit handler ran: the objects held are held at that call */
        clt_attr_str(cost, "cltrace.exit_by", exit_how);
        if (exit_status >= 0)
            clt_attr_int(cost, "cltrace.exit_status", exit_status);
    }
    if (clt_rec_on()) {
        clt_attr_int(cost, "cltrace.ring_bytes", (int64_t)clt_rec_held());
        clt_attr_int(cost, "cltrace.ring_dropped_bytes", (int64_t)clt_rec_dropped());
    }
}

