#!/bin/sh
# libgpk without its GPU backends' modules (libgpk_cuda.so,
# libgpk_opencl.so; src/modules/module.h): libgpk names none of them among
# its NEEDED entries; with a copy of libgpk in a folder of its own (found
# first through LD_LIBRARY_PATH, before the programs' RUNPATH), `gpk info`
# says of each backend that its module could not be loaded, and the
# example program sorts on the CPU.
#   usage: no_backend_modules_test.sh GPK EXAMPLE LIBGPK [BACKEND...]
# BACKEND: each backend this build makes a module of (cuda, opencl). Exit
# 77 (skipped) when there is none.
set -u
GPK=${1:?usage: no_backend_modules_test.sh GPK EXAMPLE LIBGPK [BACKEND...]}
EXAMPLE=${2:?}
LIBGPK=${3:?}
shift 3
if [ $# -eq 0 ]; then
    echo "no_backend_modules_test: skipped: this build has no backend module"
    exit 77
fi

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

needed=$(readelf -d "$LIBGPK" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if echo "$needed" | grep -q '^libgpk_'; then fail "$LIBGPK needs a module: $needed"; fi

alone=$(mktemp -d "${TMPDIR:-/tmp}/gpk_no_modules.XXXXXX") || exit 1
soname=$(readelf -d "$LIBGPK" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
cp "$LIBGPK" "$alone/$soname" || fail "copying $LIBGPK"
run() {
    env LD_LIBRARY_PATH="$alone" GPK_BACKEND= "$@" >"$alone/out.txt" 2>&1
}
if run "$GPK" info; then
    sed 's/^/    gpk info: /' "$alone/out.txt"
    grep -q '^cpu ' "$alone/out.txt" || fail "gpk info does not list the CPU backend"
    for b in "$@"; do
        grep -q "^$b  *not available: its module could not be loaded ($alone/libgpk_$b.so: " "$alone/out.txt" ||
            fail "gpk info does not say that $b's module could not be loaded"
    done
else
    fail "gpk info exits non-zero: $(cat "$alone/out.txt")"
fi
for b in "$@"; do
    if run "$GPK" sort --gen uniform --n 1000 --backend "$b"; then
        fail "gpk sort --backend $b succeeds without its module"
    else
        grep -q "module could not be loaded" "$alone/out.txt" ||
            fail "gpk sort --backend $b: no reason given: $(cat "$alone/out.txt")"
    fi
done
if run "$EXAMPLE" 65537; then
    grep -q 'sorted on cpu' "$alone/out.txt" || fail "the example did not sort on the CPU: $(cat "$alone/out.txt")"
else
    fail "the example program exits non-zero: $(cat "$alone/out.txt")"
fi
rm -rf "$alone"

if [ $failures -ne 0 ]; then
    echo "no_backend_modules_test: $failures failure(s)" >&2
    exit 1
fi
echo "no_backend_modules_test: passed ($*)"
