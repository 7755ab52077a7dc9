#!/bin/sh
# Install what cltrace needs to build and test on Debian 12 (Ubuntu 24.04
# works too). As root it runs apt-get; otherwise it prints the command.
# REQUIRED: build and the core tests. OPTIONAL: the real-client, viewer and
# fuzz tests (each skips visibly without its package); installed where the
# distribution has them.
set -eu
REQUIRED="build-essential pkg-config ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers \
pocl-opencl-icd clinfo libunwind-dev libdw-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libdeflate-dev libisal-dev libxxhash-dev \
protobuf-compiler python3-protobuf python3-jsonschema valgrind groff-base man-db"
OPTIONAL="clpeak hashcat oclgrind python3-pyopencl clblast-tests clfft-client ffmpeg curl clang libclang-rt-14-dev chromium gdb openmpi-bin libopenmpi-dev"
missing() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || printf ' %s' "$p"
    done
}
need=$(missing $REQUIRED)
want=$(missing $OPTIONAL)
# and arm64 under emulation for tests/arm64.sh (its own script: best effort)
[ -z "$need$want" ] && exec sh "$(dirname "$0")/deps-arm64.sh"
if [ "$(id -u)" -ne 0 ]; then
    echo "cltrace: missing packages; run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y$need$want" >&2
    [ -z "$need" ] && exit 0
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ -z "$need" ] || apt-get install -y -qq --no-install-recommends $need > /dev/null
for p in $want; do      # one by one: a name this distribution lacks skips only itself
    apt-get install -y -qq --no-install-recommends "$p" > /dev/null 2>&1 || echo "cltrace: optional package $p not installed" >&2
done
exec sh "$(dirname "$0")/deps-arm64.sh"
