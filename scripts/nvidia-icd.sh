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
