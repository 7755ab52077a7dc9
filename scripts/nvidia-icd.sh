# Sourced by the GPU scripts (with OUT set): some hosts install NVIDIA's
# driver without listing it for the ICD loader; list it beside the system's
# ICDs in $OUT/vendors and point the loader there.
mkdir -p "$OUT/vendors"
cp /etc/OpenCL/vendors/*.icd "$OUT/vendors/" 2> /dev/null || true
if [ "${OCL_PLATFORM:-}" = NVIDIA ] && ! grep -qs nvidia "$OUT"/vendors/*.icd; then
    echo libnvidia-opencl.so.1 > "$OUT/vendors/nvidia.icd"
fi
export OCL_ICD_VENDORS
OCL_ICD_VENDORS=$(cd "$OUT/vendors" && pwd)
HOST_ICD_FILENAMES=${HOST_ICD_FILENAMES-${OCL_ICD_FILENAMES:-}}

# icd_only NAME: that platform's driver alone in the process (NVIDIA,
# Portable, or a word of its library's name), named both ways loaders read:
# a vendors folder of its own (ocl-icd then ignores OCL_ICD_FILENAMES) and
# OCL_ICD_FILENAMES (the Khronos loader adds those, once each). A host that
# sets OCL_ICD_FILENAMES itself (one lists libpocl.so.2:libnvidia-opencl.so.1
# there) had every process load both drivers, whatever OCL_ICD_VENDORS said:
# PoCL's runs opened the GPU and their end took 60-100 ms instead of ~2
# (docs/PERFORMANCE.md).
icd_only() {
    local key libs="" lib f
    case $1 in NVIDIA) key=nvidia ;; Portable) key=pocl ;; *) key=$(echo "$1" | tr '[:upper:]' '[:lower:]') ;; esac
    if [ -n "$HOST_ICD_FILENAMES" ]; then
        for lib in $(echo "$HOST_ICD_FILENAMES" | tr ':' ' '); do
            case $(echo "$lib" | tr '[:upper:]' '[:lower:]') in *"$key"*) libs=${libs:+$libs:}$lib ;; esac
        done
    fi
    if [ -z "$libs" ]; then
        for f in "$OUT"/vendors/*.icd; do
            grep -qi "$key" "$f" 2> /dev/null && libs=${libs:+$libs:}$(head -n1 "$f")
        done
    fi
    if [ -z "$libs" ]; then
        echo "(no ICD for $1 alone: all listed)"
        return 0
    fi
    rm -rf "$OUT/vendors-$key" && mkdir -p "$OUT/vendors-$key"
    for lib in $(echo "$libs" | tr ':' ' '); do echo "$lib" > "$OUT/vendors-$key/$(basename "$lib").icd"; done
    export OCL_ICD_FILENAMES=$libs OCL_ICD_VENDORS
    OCL_ICD_VENDORS=$(cd "$OUT/vendors-$key" && pwd)
    echo "(the loader given $libs alone)"
}
