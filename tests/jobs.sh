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
