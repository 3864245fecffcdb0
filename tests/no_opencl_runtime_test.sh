#!/bin/sh
# A build with OpenCL runs on a machine without an OpenCL ICD loader:
# libgpk, gpk and a program linking libgpk load, `gpk info` says why OpenCL
# is unavailable, and the CPU sorts.
#   usage: no_opencl_runtime_test.sh HAVE_OPENCL GPK EXAMPLE LIBGPK [MODULE]
# HAVE_OPENCL is the build's GPK_HAVE_OPENCL; EXAMPLE is examples/sort_keys;
# MODULE is libgpk_opencl.so, the backend's code, which libgpk opens.
#
# Two checks. (1) No binary names libOpenCL among its NEEDED entries (gpk
# opens it at run time). (2) As root, in a private mount namespace, an
# empty file is bound over every libOpenCL that ld.so.cache lists or the
# usual directories hold; then the programs run. Without root or unshare,
# (2) is skipped with a message. Exit 77 (skipped) only when the build has
# no OpenCL.
set -u

if [ "${1:-}" = "--hidden" ]; then
    hidden=1
    shift
else
    hidden=0
fi
HAVE_OPENCL=${1:?usage: no_opencl_runtime_test.sh HAVE_OPENCL GPK EXAMPLE LIBGPK}
GPK=$2
EXAMPLE=$3
LIBGPK=$4
MODULE=${5:-}
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
case $EXAMPLE in /*) ;; *) EXAMPLE=$(pwd)/$EXAMPLE ;; esac

case $HAVE_OPENCL in
ON | on | 1 | TRUE | true) ;;
*)
    echo "no_opencl_runtime_test: skipped: this build has no OpenCL backend, so nothing to hide"
    exit 77
    ;;
esac

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

if [ $hidden -eq 0 ]; then
    for b in "$GPK" "$EXAMPLE" "$LIBGPK" $MODULE; do
        needed=$(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        [ -n "$needed" ] || fail "$b: readelf found no NEEDED entries"
        if echo "$needed" | grep -q '^libOpenCL'; then fail "$b needs libOpenCL"; fi
    done
    if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        unshare -m sh "$0" --hidden "$HAVE_OPENCL" "$GPK" "$EXAMPLE" "$LIBGPK" || failures=$((failures + 1))
    else
        echo "no_opencl_runtime_test: not root or no unshare -m: libOpenCL stays on disk; only NEEDED was checked"
    fi
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpk_no_opencl.XXXXXX") || exit 1
    : >"$work/empty"
    libs=$( {
        ldconfig -p | sed -n 's/.*=> //p'
        ls /usr/lib/x86_64-linux-gnu/lib* /usr/lib64/lib* /usr/lib/lib* /usr/local/lib/lib* 2>/dev/null
    } | grep -E '/libOpenCL\.so' | sort -u)
    [ -n "$libs" ] || echo "no_opencl_runtime_test: no libOpenCL found to hide"
    for f in $libs; do
        r=$(realpath -e "$f" 2>/dev/null) || continue
        [ -s "$r" ] || continue # hidden already (several names, one file)
        mount --bind "$work/empty" "$r" || fail "hiding $r"
    done
    for f in $libs; do
        if [ -s "$f" ]; then fail "$f is still there after hiding"; fi
    done
    cd "$work" || exit 1
    run() {
        env LD_LIBRARY_PATH= GPK_BACKEND= "$@" >out.txt 2>err.txt
    }
    if run "$GPK" info; then
        grep -q '^cpu ' out.txt || fail "gpk info does not list the CPU backend"
        grep -q '^opencl  *not available: .*libOpenCL\.so\.1 not found' out.txt ||
            fail "gpk info does not say that libOpenCL.so.1 is missing"
        sed 's/^/    gpk info: /' out.txt
    else
        fail "gpk info exits non-zero"
        cat out.txt err.txt >&2
    fi
    if run "$GPK" sort --gen uniform --n 1000 --backend opencl; then
        fail "gpk sort --backend opencl succeeds without libOpenCL"
    else
        grep -q 'libOpenCL\.so\.1 not found' err.txt || fail "gpk sort --backend opencl: no reason given"
        sed 's/^/    gpk sort --backend opencl: /' err.txt
    fi
    if run "$GPK" sort --gen uniform --n 100000 --type u64 --json --check -o sorted.bin --backend cpu; then
        grep -q '"check": "ok"' out.txt || fail "gpk sort: the check did not pass"
        [ "$(wc -c <sorted.bin)" -eq 800000 ] || fail "gpk sort: sorted.bin is not 100000 u64 keys"
    else
        fail "gpk sort on the CPU exits non-zero"
        cat out.txt err.txt >&2
    fi
    if run "$EXAMPLE" 65537; then
        grep -q 'sorted on' out.txt || fail "the example did not sort"
    else
        fail "the example program (libgpk) exits non-zero"
        cat out.txt err.txt >&2
    fi
    cd / && rm -rf "$work"
fi

if [ $failures -ne 0 ]; then
    echo "no_opencl_runtime_test: $failures failure(s)" >&2
    exit 1
fi
[ $hidden -eq 1 ] || echo "no_opencl_runtime_test: passed"
