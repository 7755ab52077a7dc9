#!/bin/sh
# arm64 under emulation, for the tests that build cltrace for arm64 and run
# it under qemu (tests/arm64.sh, make test-arm64): the cross compiler, qemu,
# the arm64 libraries cltrace links, and binfmt_misc so that an arm64
# program (and what it execs) runs as if native. As root; best effort: what
# fails is said, and the arm64 tests then skip, saying why.
set -u
[ "$(id -u)" -eq 0 ] || { echo "cltrace: arm64 tests need root to install (sh scripts/deps-arm64.sh)" >&2; exit 0; }
[ "$(uname -m)" = x86_64 ] || exit 0       # a native arm64 host builds and tests as any other
ARM64="gcc-aarch64-linux-gnu qemu-user-static libc6:arm64 libprotobuf-c-dev:arm64 libdeflate-dev:arm64 \
libxxhash-dev:arm64 ocl-icd-opencl-dev:arm64 zlib1g-dev:arm64 libunwind8:arm64 libdw1:arm64"
missing=""
for p in $ARM64; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
    { dpkg --add-architecture arm64 && apt-get update -qq &&
      apt-get install -y -qq --no-install-recommends $missing > /dev/null; } ||
        echo "cltrace: arm64 packages not installed:$missing" >&2
fi
# ISA-L's arm64 library cannot be installed beside the amd64 one (Debian 12's
# libisal2 is not multi-arch): its files are unpacked where the cross
# compiler and qemu's loader look, the headers being the amd64 package's.
if [ ! -e /usr/lib/aarch64-linux-gnu/libisal.so ]; then
    d=$(mktemp -d)
    ( cd "$d" && apt-get download -qq libisal2:arm64 libisal-dev:arm64 > /dev/null 2>&1 &&
      for f in ./*.deb; do dpkg -x "$f" x; done &&
      cp -a x/usr/lib/aarch64-linux-gnu/libisal.so* /usr/lib/aarch64-linux-gnu/ ) ||
        echo "cltrace: ISA-L for arm64 not unpacked" >&2
    rm -rf "$d"
fi
# binfmt_misc: arm64 programs run through qemu (F: qemu opened now, so it
# works inside containers and namespaces too)
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && [ -e /usr/lib/binfmt.d/qemu-aarch64.conf ]; then
    [ -e /proc/sys/fs/binfmt_misc/register ] ||
        mount binfmt_misc -t binfmt_misc /proc/sys/fs/binfmt_misc 2> /dev/null
    cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register 2> /dev/null ||
        echo "cltrace: cannot register qemu-aarch64 with binfmt_misc" >&2
fi
exit 0
