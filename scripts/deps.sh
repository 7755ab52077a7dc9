#!/bin/sh
# Install what cltrace needs to build and test on Debian 12 / Ubuntu 24.04.
# As root it runs apt-get; otherwise it prints the exact command to run.
set -eu
PKGS="build-essential pkg-config ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers \
pocl-opencl-icd clinfo libunwind-dev libprotobuf-c-dev protobuf-c-compiler \
protobuf-compiler python3-protobuf valgrind \
clpeak hashcat oclgrind python3-pyopencl curl clang"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "cltrace: missing packages; run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
