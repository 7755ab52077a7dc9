#!/bin/sh
# A stand-in for cltrace-nvregs in the tests (CLTRACE_TEST_NVREGS_HELPER): its
# arguments and the program's source on standard input as the shim gives
# them; it answers, after STANDIN_SLEEP seconds, as NVIDIA's compiler logs
# with -cl-nv-verbose: STANDIN_REGS registers for each __kernel of the source.
# STANDIN_ENV=FILE: the ICD loader's variables it was given, and what its
# file 3 is (where the app had one open), written there.
[ $# -eq 6 ] || { echo "nvregs_standin: 6 arguments expected, got $#" >&2; exit 2; }
fd3=$(readlink /proc/$$/fd/3 2> /dev/null || echo none)    # read before any file of its own
src=$(cat)
if [ -n "${STANDIN_ENV:-}" ]; then
    { env | grep '^OCL_ICD_' | sort; echo "file 3: $fd3"; } > "$STANDIN_ENV"
fi
# as the helper: until the app (its parent) ends, the 6th argument's ms at most
app=$PPID waited=0
while [ "$waited" -lt "$6" ] && read -r _ _ _ ppid _ < /proc/$$/stat && [ "$ppid" = "$app" ]; do
    sleep 0.1; waited=$((waited + 100))
done
sleep "${STANDIN_SLEEP:-0}"
printf '%s\n' "$src" | sed -n 's/.*__kernel void \([A-Za-z_0-9]*\).*/\1/p' | while read -r k; do
    printf "ptxas info    : Compiling entry function '%s' for 'sm_90'\n" "$k"
    printf "ptxas info    : Used %s registers, 368 bytes cmem[0]\n" "${STANDIN_REGS:-37}"
done
