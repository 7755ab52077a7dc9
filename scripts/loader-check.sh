#!/usr/bin/env bash
# The run-time-loading and OpenCL 1.2 tests of `make test` (tests/loading.sh)
# against another ICD loader: the Khronos OpenCL-ICD-Loader, the
# libOpenCL.so.1 bundled with CUDA, a vendor's own.
#   bash scripts/loader-check.sh /path/to/libOpenCL.so.1
# The programs load that library (first on LD_LIBRARY_PATH, through a
# counting stand-in built for it) and must be traced exactly, as with
# Debian's ocl-icd. Needs `make test-bins`.
set -eu
cd "$(dirname "$0")/.."
lib=$(readlink -f "${1:?usage: loader-check.sh /path/to/libOpenCL.so.1}")
dir=build/loader-check/$(echo "$lib" | md5sum | cut -c1-8)
mkdir -p "$dir"
/usr/bin/python3 tests/count/gen_counter.py "$lib" "$dir/clcount.c"
${CC:-cc} -shared -fPIC -Wl,--version-script="$dir/clcount.map" -o "$dir/libOpenCL.so.1" "$dir/clcount.c" -ldl
ln -sf libOpenCL.so.1 "$dir/libOpenCL.so"
echo "loader: $lib"
CLCOUNT_DIR=$PWD/$dir ONLY="${ONLY:-t_runtime_loaded_dlopen_dlsym t_runtime_loaded_dlmopen t_runtime_loaded_python_ctypes
    t_runtime_loaded_hashcat_mask_attack t_linked_and_runtime_loaded_once_each t_opencl_1_2_platform_c_program
    t_opencl_1_2_platform_pyopencl t_opencl_1_2_platform_missing_command_fails_not_hangs}" bash tests/run.sh
