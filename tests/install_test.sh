#!/bin/sh
# Installs the build tree into a fresh prefix, as `make install PREFIX=...`
# does, then uses it as a user would, with no LD_LIBRARY_PATH and no
# ld.so.conf entry:
#   - the installed gpk runs, links libgpk alone (and libgpk_mpi with MPI,
#     for gpk sort --mpi), and has no gpk-bench;
#   - libgpk finds its own dependencies (libcudart) by its run path;
#   - a C consumer through find_package(gpk), a C++-only consumer through
#     find_package(gpk) with OpenMP, CUDAToolkit and OpenCL disabled (it must
#     need none of them), and a C consumer through pkg-config without any
#     -rpath of its own; each is run;
#   - with CUDA, a consumer of the CUDA API through find_package(gpk
#     COMPONENTS cuda) is built and run (skips without a device).
set -eu
build=$1
prefix=$2/prefix
rm -rf "$2"
mkdir -p "$2"
unset LD_LIBRARY_PATH
cmake --install "$build" --prefix "$prefix" >"$2/install.log"
test -f "$prefix/include/gpk/gpk.h"
test -x "$prefix/bin/gpk"
"$prefix/bin/gpk" --version
fail() { echo "install test FAILED: $*" >&2; exit 1; }

# the installed gpk links only libgpk (and the C library)
if command -v readelf >/dev/null 2>&1; then
    needed=$(readelf -d "$prefix/bin/gpk" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    for lib in $needed; do
        case $lib in
        libgpk.so.*|libc.so.*|libm.so.*) ;;
        libgpk_mpi.so.*|libmpi.so.*) [ -f "$prefix/include/gpk/mpi.h" ] || fail "gpk needs $lib without gpk::mpi" ;;
        *) fail "the installed gpk needs $lib (it should link libgpk alone): $needed" ;;
        esac
    done
    echo "installed gpk needs: $needed"
fi
if [ -e "$prefix/bin/gpk-bench" ]; then fail "gpk-bench is installed by default"; fi
if "$prefix/bin/gpk" bench sort --n 1k >"$2/bench.out" 2>&1; then fail "installed gpk bench ran without gpk-bench"; fi
grep -q "gpk-bench" "$2/bench.out" || fail "installed gpk bench does not say where the benchmarks are"

# the library resolves all of its dependencies by itself
lib=$(ls "$prefix"/lib*/libgpk.so.0 | head -n 1)
if command -v ldd >/dev/null 2>&1; then
    if ldd "$lib" | grep "not found"; then fail "$lib has unresolved dependencies without LD_LIBRARY_PATH"; fi
fi
# and libcudart by its own run path, not by an ld.so.conf entry of this machine
if command -v readelf >/dev/null 2>&1; then
    cudart=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(libcudart[^]]*\)\]/\1/p')
    if [ -n "$cudart" ]; then
        runpath=$(readelf -d "$lib" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
        found=""
        for d in $(echo "$runpath" | tr ':' ' '); do
            d=$(echo "$d" | sed "s|\\\$ORIGIN|$(dirname "$lib")|")
            [ -e "$d/$cudart" ] && found=$d
        done
        [ -n "$found" ] || fail "$lib needs $cudart but its RUNPATH ($runpath) has no directory holding it"
        echo "libgpk finds $cudart in $found (RUNPATH)"
    fi
fi

src=$(dirname "$0")
cmake -S "$src/consumer" -B "$2/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >"$2/cmake.log"
cmake --build "$2/cmake-build" >"$2/build.log"
"$2/cmake-build/consumer"

# C++ only, and nothing of OpenMP, CUDA or OpenCL found at configure time
cmake -S "$src/consumer_cxx" -B "$2/cxx-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
      -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=ON >"$2/cxx-cmake.log" 2>&1 ||
    { cat "$2/cxx-cmake.log" >&2; fail "find_package(gpk) from a C++-only project"; }
cmake --build "$2/cxx-build" >"$2/cxx-build.log"
"$2/cxx-build/consumer_cxx"

# pkg-config alone: its Libs carry the run path
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH=$libdir
export PKG_CONFIG_PATH
cc -std=c11 "$src/consumer/main.c" -o "$2/consumer-pc" $(pkg-config --cflags --libs gpk)
"$2/consumer-pc"

# gpk::mpi, where MPI was built: find_package(gpk COMPONENTS mpi), and gpk-mpi.pc
if [ -f "$prefix/include/gpk/mpi.h" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cmake -S "$src/consumer_mpi" -B "$2/mpi-build" -DCMAKE_PREFIX_PATH="$prefix" >"$2/mpi-cmake.log" 2>&1 ||
        { cat "$2/mpi-cmake.log" >&2; fail "find_package(gpk COMPONENTS mpi)"; }
    cmake --build "$2/mpi-build" >"$2/mpi-build.log"
    "$2/mpi-build/consumer_mpi" || fail "the MPI consumer (CMake) failed"
    cc -std=c11 "$src/consumer_mpi/main.c" -o "$2/consumer-mpi-pc" $(pkg-config --cflags --libs gpk-mpi)
    "$2/consumer-mpi-pc" || fail "the MPI consumer (pkg-config) failed"
fi

if [ -f "$prefix/include/gpk/cuda.h" ]; then
    cmake -S "$src/consumer_cuda" -B "$2/cuda-build" -DCMAKE_PREFIX_PATH="$prefix" >"$2/cuda-cmake.log" 2>&1 ||
        { cat "$2/cuda-cmake.log" >&2; fail "find_package(gpk COMPONENTS cuda)"; }
    cmake --build "$2/cuda-build" >"$2/cuda-build.log"
    rc=0
    "$2/cuda-build/consumer_cuda" || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "the CUDA consumer failed ($rc)"
fi
echo "install test passed"
