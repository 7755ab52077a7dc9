# Tests of jobs of many processes (MPI, Slurm): each rank's trace named and
# marked by rank. Sourced by tests/run.sh: its t_* functions join the suite.

t_job_ranks_name_the_traces() {
    # under a launcher that names ranks, each trace's name and attributes
    # carry rank and host; the default output is the job's folder
    mkdir -p "$WORK/job0" && cd "$WORK/job0"
    for r in 0 1; do
        OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 OMPI_MCA_ess_base_jobid=77 CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
            "$T/vecadd" > /dev/null
    done
    cd "$ROOT"
    ls "$WORK/job0/cltrace-job-77/"
    [ "$(ls "$WORK"/job0/cltrace-job-77/cltrace-vecadd-r[01]-"$(hostname -s)"-*.pftrace.gz | wc -l)" -eq 2 ]
    $PY tests/tracedump.py --attributes "$(ls "$WORK"/job0/cltrace-job-77/*-r1-*)" |
        $PY -c 'import json,sys; a=json.load(sys.stdin); assert (a["cltrace.rank"], a["cltrace.job_size"], a["cltrace.job_id"]) == (1, 2, "77"), a'
    # outside a job: %r is 0, %h the host
    CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/solo-%r-%h.pftrace" LD_PRELOAD=$SHIM "$T/vecadd" > /dev/null
    ls "$WORK"/solo-0-"$(hostname -s)".*.pftrace.gz
}

t_mpirun_four_ranks_four_traces() {
    # mpirun -n 4 cltrace -o job/ -- app: one trace per rank, named by rank
    command -v mpirun > /dev/null || { echo "mpirun not installed (optional package openmpi-bin)"; return 77; }
    local root=""; [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    (cd "$WORK" && timeout 120 mpirun $root --oversubscribe -n 4 "$B/cltrace" -q -o mpi/ -- "$T/vecadd" > mpi.out)
    ls "$WORK/mpi"
    for r in 0 1 2 3; do ls "$WORK"/mpi/cltrace-vecadd-r$r-*.pftrace.gz; done
    [ "$(ls "$WORK"/mpi/*.pftrace.gz | wc -l)" -eq 4 ]
}

sim_job() {   # sim_job DIR: examples/job as ranks 0-3 of a job (launcher variables set by hand)
    for r in 0 1 2 3; do
        OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=4 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$1/" \
            LD_PRELOAD=$SHIM "$B/examples/job-nompi" > /dev/null
    done
}

merged_processes() {   # merged_processes TRACE R,R...: one process per rank, named by rank, own pid
    $PY - "$1" "$2" <<'PY'
import sys
sys.path.insert(0, "tests")
from tracedump import load_schema, read_packets
pb = load_schema()
procs = [p.track_descriptor.process for p in read_packets(pb, sys.argv[1])
         if p.HasField("track_descriptor") and p.track_descriptor.HasField("process")]
names = sorted(p.process_name for p in procs)
want = ["rank %s " % r for r in sys.argv[2].split(",")]
assert len(names) == len(want) and all(n.startswith(w) for n, w in zip(names, want)), names
assert len({p.pid for p in procs}) == len(want), [p.pid for p in procs]
print(sys.argv[1], names)
PY
}

job_report_checks() {   # job_report_checks DIR: the report names rank 2 and kernel work, in every format
    [ "$(ls "$1"/*.pftrace.gz | wc -l)" -eq 4 ]
    "$B/cltrace-report" "$1" | tee "$WORK/job.txt" | head -n 14
    grep -q "slowest rank: 2 .*kernel work:" "$WORK/job.txt"
    "$B/cltrace-report" --format json "$1" | $PY -c 'import json,sys
j = json.load(sys.stdin)["job"]
assert [r["rank"] for r in j["ranks"]] == [0, 1, 2, 3], j["ranks"]
assert j["slowest_rank"] == 2 and j["kernel"] == "work", j
assert j["imbalance"]["device_ms"]["rank"] == 2 and j["imbalance"]["device_ms"]["ratio"] > 1.5, j["imbalance"]'
    "$B/cltrace-report" --format markdown "$1" | grep -q "^## Job: 4 ranks"
    "$B/cltrace-report" --format junit "$1" | grep -q '<property name="job.slowest_rank" value="2"/>'
    "$B/cltrace-report" --format html "$1" | grep -q "<h2>Job: 4 ranks</h2>"
}

t_job_report_names_the_slow_rank() {
    # examples/job as four ranks (launcher variables set by hand, no MPI
    # needed): the job report's rows, imbalance, slowest rank and kernel
    sim_job "$WORK/simjob"
    job_report_checks "$WORK/simjob"
}

t_mpirun_job_report_names_the_slow_rank() {
    # the MPI build of the job under mpirun -n 4 and the launcher (Open MPI,
    # optional): 4 traces named by rank; the report, merged and MPI-parallel
    # reports
    command -v mpirun > /dev/null || { echo "mpirun not installed (optional package openmpi-bin)"; return 77; }
    local root=""; [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    (cd "$WORK" && timeout 300 mpirun $root --oversubscribe -n 4 "$B/cltrace" -q -o mpijob/ -- "$B/examples/job" \
        > mpijob.out)
    sort "$WORK/mpijob.out"
    grep -q "^job: sum over the ranks" "$WORK/mpijob.out"
    for r in 0 1 2 3; do ls "$WORK"/mpijob/cltrace-job-r$r-*.pftrace.gz; done
    job_report_checks "$WORK/mpijob"
    # the first screen: one device line for the 4 ranks sharing PoCL's device
    # (their union), and gains as shares of the ranks' timelines summed
    "$B/cltrace-report" "$WORK/mpijob" > "$WORK/mpijob.txt" || [ $? -eq 1 ]
    head -8 "$WORK/mpijob.txt"
    grep -q "^devices: 1$" "$WORK/mpijob.txt"
    unwrap "$WORK/mpijob.txt" | grep -q "^  0  .*, ranks 0, 1, 2, 3 (the union of their commands; kernels and transfers summed)"
    ! grep -Eq "[0-9.]+ ms \((1[0-9][0-9]|[2-9][0-9][0-9])\.[0-9] %" "$WORK/mpijob.txt" || return 1
    "$B/cltrace-report" merge -o "$WORK/mpijob.pftrace.gz" "$WORK/mpijob"
    lint "$WORK/mpijob.pftrace.gz"
    merged_processes "$WORK/mpijob.pftrace.gz" 0,1,2,3
    # the analysis spread over MPI ranks gives the same job section as threads
    if [ -x "$B/cltrace-report-mpi" ]; then
        "$B/cltrace-report" --ranks-only "$WORK/mpijob" > "$WORK/rj.threads"
        timeout 120 mpirun $root --oversubscribe -n 2 "$B/cltrace-report-mpi" "$WORK/mpijob" > "$WORK/rj.mpi"
        cmp "$WORK/rj.threads" "$WORK/rj.mpi"
    fi
}

t_job_diff_against_a_job() {
    # diff takes two jobs (folders, summed): a job whose rank 2 got slow
    # against one where no rank is slow is a regression of kernel work
    mkdir -p "$WORK/even" "$WORK/uneven"
    for r in 0 1 2 3; do
        CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/even/" OMPI_COMM_WORLD_RANK=$((r == 2 ? 0 : r)) \
            LD_PRELOAD=$SHIM "$B/examples/job-nompi" > /dev/null
        CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/uneven/" OMPI_COMM_WORLD_RANK=$r \
            LD_PRELOAD=$SHIM "$B/examples/job-nompi" > /dev/null
    done
    local rc=0
    "$B/cltrace-report" diff "$WORK/even" "$WORK/uneven" > "$WORK/jd.txt" || rc=$?
    cat "$WORK/jd.txt"
    [ $rc -eq 1 ]
    grep -q "work" "$WORK/jd.txt"
}

t_job_merged_trace_one_process_per_rank() {
    # cltrace-report merge: the chosen ranks as processes of one trace,
    # named by rank and host, lint clean
    sim_job "$WORK/mjob"
    "$B/cltrace-report" merge -o "$WORK/all.pftrace.gz" "$WORK/mjob"
    "$B/cltrace-report" merge --ranks 0,3 -o "$WORK/r03.pftrace" "$WORK/mjob"
    lint "$WORK/all.pftrace.gz" "$WORK/r03.pftrace"
    merged_processes "$WORK/all.pftrace.gz" 0,1,2,3
    merged_processes "$WORK/r03.pftrace" 0,3
    # the ranks share PoCL's one device here: one group for it, at the top,
    # every rank's queue inside it named by its rank, no rank's own group
    $PY - "$WORK/all.pftrace.gz" <<'PY'
import sys
sys.path.insert(0, "tests")
from tracedump import load_schema, read_packets
pb = load_schema()
tds = [p.track_descriptor for p in read_packets(pb, sys.argv[1]) if p.HasField("track_descriptor")]
groups = [t for t in tds if t.name.startswith("Device: ")]
assert len(groups) == 1 and groups[0].name.endswith(", ranks 0,1,2,3") and not groups[0].parent_uuid, \
    [t.name for t in groups]
queues = sorted({t.name for t in tds if t.parent_uuid == groups[0].uuid and " queue " in t.name
                 and "in flight" not in t.name})      # a queue whose commands overlapped has lanes of its name
assert queues == ["rank %d: Device 0 queue 1 (in order)" % r for r in range(4)], queues
assert not [t.name for t in tds if t.name.startswith("Device 0: ")], "a rank's own device group left"
print(groups[0].name, queues)
PY
}

# Ranks 2 and 3 as a second host: each in a time namespace whose boot clock
# runs 2 h ahead, with a host name of its own (root, util-linux unshare).
TWO_HOSTS_S=7200
two_hosts_ready() {
    command -v mpirun > /dev/null && [ -x "$T/mpi_halo" ] ||
        { echo "mpirun or mpicc not installed (optional packages openmpi-bin, libopenmpi-dev)"; return 77; }
    unshare --time --boottime 1 --uts true 2> /dev/null ||
        { echo "this machine does not allow unshare --time --uts (root and a kernel with time namespaces)"; return 77; }
    cat > "$WORK/hostb.sh" <<SH
#!/bin/sh
if [ "\${OMPI_COMM_WORLD_RANK:-0}" -ge 2 ]; then
    exec unshare --time --boottime $TWO_HOSTS_S --uts sh -c 'hostname hostB && exec "\$@"' sh "\$@"
fi
exec "\$@"
SH
    chmod +x "$WORK/hostb.sh"
}

t_mpi_two_hosts_one_timeline() {
    # 4 ranks, 2 and 3 on "hostB" (boot clock +2 h): each rank's offset to
    # rank 0 at MPI_Init and MPI_Finalize matches the namespaces' within
    # 50 us; the merged trace puts hostB's enqueues and kernels within 50 us
    # of their true times, every message received after it was sent; MPI
    # calls are slices with the right peers, tags and bytes; the job report
    # states the offsets; the trace lints; hostB's ranks are named so
    two_hosts_ready || return $?
    local root=""; [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    (cd "$WORK" && timeout 300 mpirun $root --oversubscribe -n 4 ./hostb.sh "$B/cltrace" -q -o two/ -- \
        "$T/mpi_halo" blocking 500 > two.out)
    cat "$WORK/two.out"
    ls "$WORK"/two/*-r2-hostB-*.pftrace.gz "$WORK"/two/*-r0-"$(hostname -s)"-*.pftrace.gz
    "$B/cltrace-report" merge -o "$WORK/two.pftrace.gz" "$WORK/two"
    lint "$WORK/two.pftrace.gz"
    "$B/cltrace-report" --ranks-only "$WORK/two" | tee "$WORK/two.txt" | tail -n 7
    grep -q "^  *2 hostB  *+7199\.99[0-9]*\|^  *2 hostB  *+7200\.00[0-9]*" "$WORK/two.txt"
    $PY tests/checks.py report_mpi_two_hosts "$WORK/two" "$WORK/two.pftrace.gz" $TWO_HOSTS_S
}

t_mpi_wait_with_idle_device_found_and_fixed() {
    # 2 ranks: blocking, rank 1 waits in MPI_Recv for rank 0's host work
    # with its device idle: the finding, with its gain, on rank 1 only;
    # the non-blocking variant (posted first, the kernel during the wait):
    # none. A program without MPI says nothing of MPI.
    command -v mpirun > /dev/null && [ -x "$T/mpi_halo" ] ||
        { echo "mpirun or mpicc not installed (optional packages openmpi-bin, libopenmpi-dev)"; return 77; }
    local root="" mode r; [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    # blocking: a short kernel (500 rounds), so that the idle waits are most
    # of the device's span however slow a loaded machine makes the kernels
    # (6000 rounds left them 6-9 % of it on PoCL, by a 5 % threshold);
    # overlap: a kernel that outlasts rank 0's host work
    local rounds
    for mode in blocking overlap; do
        rounds=500; [ $mode = blocking ] || rounds=6000
        (cd "$WORK" && timeout 300 mpirun $root --oversubscribe -n 2 "$B/cltrace" -q -o $mode/ -- \
            "$T/mpi_halo" $mode $rounds > $mode.out)
        for r in 0 1; do
            "$B/cltrace-report" --format json "$(ls "$WORK"/$mode/*-r$r-*.pftrace.gz)" > "$WORK/$mode-$r.json" ||
                [ $? -le 1 ]
        done
    done
    $PY tests/checks.py report_mpi_wait_idle "$WORK"
    # what rank 1 ran while its device waited: the MPI call, from the
    # program's line (Open MPI's own components, loaded after the start,
    # are not the program's frame)
    $PY -c '
import json, sys
f = [x for x in json.load(open(sys.argv[1]))["findings"] if x["rule"] == "mpi-wait-idle-device"][0]
top = f.get("host", {}).get("top") or [{}]
print("rank 1 while its device waited:", top[0])
assert not top[0] or (top[0]["function"].startswith("MPI_") and "mpi_halo.c:" in top[0]["where"]), top' \
        "$WORK/blocking-1.json"
    traced "$WORK/nompi" "$T/vecadd" > /dev/null
    ! $PY tests/tracedump.py --attributes "$(trace_of "$WORK/nompi")" | grep -q "cltrace.mpi" || return 1
}
