#!/bin/sh
# A build with CUDA runs on a machine without CUDA: libgpk, gpk and a
# program linking libgpk load, `gpk info` says why CUDA is unavailable, and
# the default backend sorts on the CPU.
#   usage: no_cuda_runtime_test.sh HAVE_CUDA CUDA_LIBDIR GPK EXAMPLE LIBGPK [MPI_BINARY...]
# HAVE_CUDA is the build's GPK_HAVE_CUDA; EXAMPLE is examples/sort_keys;
# each MPI_BINARY (libgpk_mpi, gpk-mpi) is held to the same rule: NCCL is
# opened at run time too (src/mpi/nccl_loader.c).
#
# Two checks. (1) No binary names a CUDA library (NCCL included) among its
# NEEDED entries (the runtime is linked statically into the CUDA module,
# libgpk_cuda.so, which libgpk opens at run time, and into libgpk_mpi; the
# driver and NCCL are opened at run time too). (2) As root, in a private
# mount namespace, the CUDA libraries are hidden: an empty tmpfs over
# CUDA_LIBDIR and an empty file over every libcuda, libcudart, libnvrtc,
# libnccl (and the rest of CUDA_LIBS) that ld.so.cache lists or the usual
# library and CUDA directories hold; then the programs run, gpk-mpi (when
# given) a distributed sort on the CPU on one rank.
# Without root or unshare, (2) runs with LD_LIBRARY_PATH emptied only, and
# says so. Exit 77 (skipped) only when the build has no CUDA.
set -u

if [ "${1:-}" = "--hidden" ]; then
    hidden=1
    shift
else
    hidden=0
fi
HAVE_CUDA=${1:?usage: no_cuda_runtime_test.sh HAVE_CUDA CUDA_LIBDIR GPK EXAMPLE LIBGPK [MPI_BINARY...]}
CUDA_LIBDIR=$2
GPK=$3
EXAMPLE=$4
LIBGPK=$5
shift 5
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
case $EXAMPLE in /*) ;; *) EXAMPLE=$(pwd)/$EXAMPLE ;; esac

case $HAVE_CUDA in
ON | on | 1 | TRUE | true) ;;
*)
    echo "no_cuda_runtime_test: skipped: this build has no CUDA backend, so nothing to hide"
    exit 77
    ;;
esac

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# The libraries a CUDA build must not need at load time.
CUDA_LIBS='lib(cuda|cudart|nvrtc|nvJitLink|nvrtc-builtins|cublas|cublasLt|cufft|curand|cusparse|cusolver|cupti|nvidia-ml|nvToolsExt|nccl)\.so'

# the program gpk-mpi among the MPI_BINARY arguments (absent: no MPI sort run)
GPK_MPI=
for b in "$@"; do
    case ${b##*/} in gpk-mpi) GPK_MPI=$b ;; esac
done
case $GPK_MPI in /* | '') ;; *) GPK_MPI=$(pwd)/$GPK_MPI ;; esac

if [ $hidden -eq 0 ]; then
    for b in "$GPK" "$EXAMPLE" "$LIBGPK" "$@"; do
        needed=$(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        [ -n "$needed" ] || fail "$b: readelf found no NEEDED entries"
        bad=$(echo "$needed" | grep -E "^$CUDA_LIBS" | tr '\n' ' ')
        [ -z "$bad" ] || fail "$b needs $bad"
        echo "$b: NEEDED $(echo "$needed" | tr '\n' ' ')"
    done
    if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        unshare -m sh "$0" --hidden "$HAVE_CUDA" "$CUDA_LIBDIR" "$GPK" "$EXAMPLE" "$LIBGPK" "$@" || failures=$((failures + 1))
    else
        echo "no_cuda_runtime_test: not root or no unshare -m: the CUDA libraries stay on disk;" \
            "the programs run with LD_LIBRARY_PATH emptied only"
        hidden=2
    fi
fi

if [ $hidden -ge 1 ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpk_no_cuda.XXXXXX") || exit 1
    if [ $hidden -eq 1 ]; then
        : >"$work/empty"
        if [ -n "$CUDA_LIBDIR" ] && [ -d "$CUDA_LIBDIR" ]; then
            mount -t tmpfs none "$(realpath "$CUDA_LIBDIR")" || fail "mounting a tmpfs over $CUDA_LIBDIR"
        fi
        # ld.so.cache's entries, the driver's usual places (a container's
        # libcuda may not be in the cache) and the CUDA toolkits' library
        # directories besides CUDA_LIBDIR (NCCL may be in lib and lib64)
        libs=$( {
            ldconfig -p | sed -n 's/.*=> //p'
            ls /usr/lib/x86_64-linux-gnu/lib* /usr/lib64/lib* /usr/lib/lib* /usr/local/nvidia/lib*/lib* \
                /usr/local/cuda*/lib*/lib* /usr/local/cuda*/targets/*/lib/lib* 2>/dev/null
        } | grep -E "/$CUDA_LIBS" | sort -u)
        for f in $libs; do
            r=$(realpath -e "$f" 2>/dev/null) || continue
            [ -s "$r" ] || continue # hidden already (several names, one file)
            mount --bind "$work/empty" "$r" || fail "hiding $r"
        done
        for f in $libs; do
            if [ -s "$f" ]; then fail "$f is still there after hiding"; fi
        done
        echo "no_cuda_runtime_test: CUDA libraries hidden ($CUDA_LIBDIR and ld.so.cache's libcuda*, libcudart*, libnvrtc*, libnccl*)"
    fi
    cd "$work" || exit 1
    run() {
        env LD_LIBRARY_PATH= GPK_BACKEND= "$@" >out.txt 2>err.txt
    }
    # hidden = 2: CUDA may be there, so only what holds either way
    if [ $hidden -eq 1 ]; then backend=; else backend="--backend cpu"; fi
    if run "$GPK" info; then
        grep -q '^cpu ' out.txt || fail "gpk info does not list the CPU backend"
        if [ $hidden -eq 1 ]; then
            grep -q '^cuda  *not available: .*CUDA' out.txt || fail "gpk info does not say why CUDA is unavailable"
        fi
        sed 's/^/    gpk info: /' out.txt
    else
        fail "gpk info exits non-zero"
        cat out.txt err.txt >&2
    fi
    if [ $hidden -eq 1 ]; then
        if run "$GPK" info --backend cuda; then
            fail "gpk info --backend cuda succeeds without the CUDA libraries"
        else
            grep -qi 'cuda backend: no usable CUDA device' err.txt || fail "gpk info --backend cuda: no reason given"
            sed 's/^/    gpk info --backend cuda: /' err.txt
        fi
        if run "$GPK" sort --gen uniform --n 1000 --backend cuda; then
            fail "gpk sort --backend cuda succeeds without the CUDA libraries"
        fi
    fi
    if run "$GPK" sort --gen uniform --n 100000 --type u64 --json --check -o sorted.bin $backend; then
        grep -q '"backend": "cpu"' out.txt || fail "gpk sort: the default backend is not the CPU"
        grep -q '"check": "ok"' out.txt || fail "gpk sort: the check did not pass"
        [ "$(wc -c <sorted.bin)" -eq 800000 ] || fail "gpk sort: sorted.bin is not 100000 u64 keys"
    else
        fail "gpk sort on the CPU exits non-zero"
        cat out.txt err.txt >&2
    fi
    if [ $hidden -eq 2 ]; then
        : # the example picks AUTO: CUDA where it is there
    elif run "$EXAMPLE" 65537; then
        grep -q 'sorted on cpu' out.txt || fail "the example did not sort on the CPU"
    else
        fail "the example program (libgpk) exits non-zero"
        cat out.txt err.txt >&2
    fi
    # libgpk_mpi loads without NCCL and sorts on the CPU: one rank, started
    # as a singleton (Open MPI refuses root unless told it is wanted)
    if [ -z "$GPK_MPI" ]; then
        : # no gpk-mpi given (a build without MPI)
    elif ! dd if=/dev/urandom of=keys.bin bs=8192 count=100 2>/dev/null; then
        fail "writing random keys for gpk-mpi"
    elif run env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        "$GPK_MPI" sort --mpi keys.bin --type u64 -o mpi_sorted.bin --check --json $backend; then
        grep -q '"mpi_ranks": 1' out.txt || fail "gpk-mpi sort --mpi: not one rank"
        grep -q '"backend": "cpu"' out.txt || fail "gpk-mpi sort --mpi: the default backend is not the CPU"
        grep -q '"check": "passed"' out.txt || fail "gpk-mpi sort --mpi: the check did not pass"
        [ "$(wc -c <mpi_sorted.bin)" -eq 819200 ] || fail "gpk-mpi sort --mpi: mpi_sorted.bin is not 102400 u64 keys"
        sed 's/^/    gpk-mpi sort --mpi: /' out.txt
    else
        fail "gpk-mpi sort --mpi on the CPU exits non-zero"
        cat out.txt err.txt >&2
    fi
    cd / && rm -rf "$work"
fi

if [ $failures -ne 0 ]; then
    echo "no_cuda_runtime_test: $failures failure(s)" >&2
    exit 1
fi
[ $hidden -eq 1 ] || echo "no_cuda_runtime_test: passed"
exit 0
