/* Every rule: its id, default severity, when it fires, where its threshold
 * comes from, and the family function that makes it. The one list the
 * report, --rules, the JUnit test cases, the job's findings by rule, the
 * README's rule table and the man page come from (tests check the last
 * two against `cltrace-report --rules`). To add a rule: a file with its
 * family function (build_options.c is the smallest), and here its name in
 * the list below and a row in the table. */
#include <string.h>
#include "rules.h"

/* The families, one file each (declared here, the one place that uses them). */
rule_family_fn rules_dropped_calls, rules_api_errors, rules_leaks, rules_use_after_release, rules_small_transfers,
    rules_low_bandwidth, rules_work_groups, rules_occupancy, rules_serialization, rules_device_idle,
    rules_source_hints, rules_build_options, rules_nan, rules_halting_idle_cpus, rules_mpi;

const struct rule rule_table[] = {
    { "dropped-calls", SEV_WARNING, "the tracer's buffer was full and calls were not recorded", "",
      rules_dropped_calls },
    { "nan", SEV_ERROR, "with fingerprints (`cltrace --fingerprint`): the first command that left a NaN or an "
      "infinity in a buffer it may write, its buffer, element and call site, the commands before it clean",
      "seed 004 (debugging: GDB, printf, gDEBugger)", rules_nan },
    { "api-errors", SEV_ERROR, "a call returned an error (one finding per function and error, with the first "
      "call's stack)", "", rules_api_errors },
    /* (the classes in full: writer/leaks.c, which decides them) */
    { "leaks", SEV_ERROR, "objects still held at exit, per type and creation site, classed as a memory checker "
      "does: an error when definitely lost or growing with the run, info when still held", "seed 004", rules_leaks },
    { "use-after-release", SEV_ERROR, "a call on a handle the app had released", "", rules_use_after_release },
    { "small-transfers", SEV_WARNING, "at least `--small-count` (10) host-device transfers below `--small-bytes` "
      "(default: the device's `cltrace probe` when the trace has one, else 32768; every format says which); their "
      "bytes and share of transfer time", "seeds 001, 003", rules_small_transfers },
    { "low-bandwidth", SEV_WARNING, "at least 8 transfers of 64 KiB or more on pageable memory, at least half of a "
      "direction's, under half the best bandwidth seen in it", "seed 001 (pinned memory)", rules_low_bandwidth },
    { "work-group-multiple", SEV_WARNING, "local size NULL, or not a multiple of the kernel's preferred multiple "
      "(else the warp/wavefront)", "seed 001", rules_work_groups },
    { "work-group-small", SEV_INFO, "fewer than `--min-wg` (64) work-items per group", "seed 001",
      rules_work_groups },
    { "under-filled-device", SEV_WARNING, "fewer work-groups than compute units (warning) or than twice as many "
      "(info); the fix names more than 100 for future devices", "seed 001", rules_work_groups },
    { "occupancy", SEV_WARNING, "theoretical occupancy below `--min-occupancy` (50 %), with the limiting resource "
      "(NVIDIA: registers from the build, local memory, warps, blocks)", "seeds 001, 004", rules_occupancy },
    { "serialization", SEV_WARNING, "at least 8 launches, 90 % or more of them followed by clFinish, "
      "clWaitForEvents or a blocking call before the next; notes when transfers never overlap kernels", "seed 001",
      rules_serialization },
    { "device-idle", SEV_INFO, "at least 8 commands over more than 1 ms, the device idle more than half of that "
      "(largest gap given)", "", rules_device_idle },
    { "mpi-wait-idle-device", SEV_WARNING, "an MPI rank's device idle 1 ms or more, and 5 % or more of its span, "
      "while the rank waited for messages (MPI_Send, MPI_Recv, MPI_Sendrecv, MPI_Wait, MPI_Waitall): what "
      "non-blocking calls posted before the kernel would overlap", "", rules_mpi },
    { "strided-access", SEV_WARNING, "heuristic, kernel source: a `__global` index that grows with "
      "`get_global_id(0)`/`get_local_id(0)` times a factor", "seed 001 (strideCopy, transpose)",
      rules_source_hints },
    { "redundant-global-reads", SEV_WARNING, "heuristic, kernel source: in a loop, a `__global` index that does "
      "not vary along dimension 0", "seeds 001 (simpleMultiply), 004 (N-body)", rules_source_hints },
    { "double-literals", SEV_INFO, "heuristic: `2.0` instead of `2.0f` in code without `double`", "",
      rules_source_hints },
    { "build-options", SEV_INFO, "float math (math built-ins, `+= a * b`) built without "
      "`-cl-mad-enable`/`-cl-fast-relaxed-math`", "seed 001", rules_build_options },
    { "halting-idle-cpus", SEV_INFO, "a virtual machine whose idle CPUs halt at once (its cpuidle driver is not "
      "`haltpoll`, or `guest_halt_poll_ns` is 0), where the app's threads were put on a CPU 5,000 times a second or "
      "more (hand-offs between threads): each wake of an idle CPU goes through the hypervisor",
      "measured on a 2-vCPU KVM guest (docs/PERFORMANCE.md)", rules_halting_idle_cpus },
    { NULL, 0, NULL, NULL, NULL },
};

unsigned rule_count(void)
{
    unsigned n = 0;
    while (rule_table[n].id)
        n++;
    return n;
}

const struct rule *rule_find(const char *id)
{
    for (const struct rule *r = rule_table; r->id; r++)
        if (!strcmp(r->id, id))
            return r;
    return NULL;
}

void rules_run(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    unsigned start = out->n;
    for (const struct rule *r = rule_table; r->id; r++) {
        int ran = 0;           /* a family makes several rules: it runs once, at its first row */
        for (const struct rule *q = rule_table; q != r && !ran; q++)
            ran = q->family == r->family;
        if (!ran)
            r->family(m, th, out);
    }
    findings_without_device_time(m, out, start);
    findings_rank(m, out, start);
    findings_stacks(m, out, start);
}
