#!/bin/sh
# End-to-end tests of gpk sort's segmented mode (--rows, --segments,
# --descending) on the CPU backend: results checked with --check (the
# segmented reference) and by hand on a small case; bad offsets files are
# usage errors that leave the output unwritten.
#   usage: cli_segmented_test.sh PATH/TO/gpk
set -u
GPK=${1:?usage: cli_segmented_test.sh PATH/TO/gpk}
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
. "$(dirname "$0")/cli_lib.sh"
cli_workdir gpk_cli_segmented_test
export GPK_BACKEND=cpu

# expect RC DESCRIPTION -- command...
expect() {
    want=$1
    what=$2
    shift 3
    "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -eq "$want" ]; then pass; else fail "$what: exit $got, expected $want ($(cat err.txt))"; fi
}
# u64 little-endian offsets from the arguments into FILE
offsets() {
    f=$1
    shift
    : >"$f"
    for x in "$@"; do
        printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((x & 255)) $((x >> 8 & 255)) $((x >> 16 & 255)) $((x >> 24 & 255)))" >>"$f"
        printf '\000\000\000\000' >>"$f"
    done
}
# the u32 keys of FILE, one per line
u32s() { od -An -v -tu4 -w4 "$1" | awk '{print $1}'; }

for t in u32 i32 f32 u64 i64 f64; do
    expect 0 "$t rows" -- "$GPK" sort --gen uniform --n 6000 --type $t --rows 40 --check -o rows.bin
    expect 0 "$t rows desc perm" -- "$GPK" sort --gen float-specials --n 6000 --type $t --rows 3 --descending --perm p.bin --check
    expect 0 "$t desc alone" -- "$GPK" sort --gen few-bits --n 5000 --type $t --descending --check
    expect 0 "$t desc perm" -- "$GPK" sort --gen float-specials --n 5000 --type $t --descending --perm p.bin --check
    expect 0 "$t desc quick" -- "$GPK" sort --gen random-bits --n 5000 --type $t --descending --algo quick --check
done

offsets off.bin 0 10 10 500 1000
expect 0 "segments file" -- "$GPK" sort --gen uniform --n 1000 --type u32 --segments off.bin --perm p.bin --check

# by hand: 3 rows of 3, descending, with the permutation
printf '\003\000\000\000\001\000\000\000\002\000\000\000\007\000\000\000\007\000\000\000\011\000\000\000\005\000\000\000\004\000\000\000\006\000\000\000' >small.bin
expect 0 "small" -- "$GPK" sort small.bin --type u32 --rows 3 --descending --perm sp.bin -o so.bin
[ "$(u32s so.bin | tr '\n' ' ')" = "3 2 1 9 7 7 6 5 4 " ] && pass || fail "small: keys $(u32s so.bin | tr '\n' ' ')"
[ "$(u32s sp.bin | tr '\n' ' ')" = "0 2 1 2 0 1 2 0 1 " ] && pass || fail "small: sigma $(u32s sp.bin | tr '\n' ' ')"
# the plain sort, descending, with its permutation (stable: the 7 at 3 before the one at 4)
expect 0 "small plain" -- "$GPK" sort small.bin --type u32 --descending --perm pp.bin -o sd.bin
[ "$(u32s sd.bin | tr '\n' ' ')" = "9 7 7 6 5 4 3 2 1 " ] && pass || fail "small plain: keys $(u32s sd.bin | tr '\n' ' ')"
[ "$(u32s pp.bin | tr '\n' ' ')" = "5 3 4 8 6 7 0 2 1 " ] && pass || fail "small plain: sigma $(u32s pp.bin | tr '\n' ' ')"

# bad offsets: usage errors, no output written
offsets bad1.bin 0 600 500 1000
offsets bad2.bin 0 500 999
offsets bad3.bin 5 1000
for b in bad1 bad2 bad3; do
    expect 2 "$b" -- "$GPK" sort --gen uniform --n 1000 --type u32 --segments $b.bin -o never.bin
    [ ! -e never.bin ] && pass || fail "$b: output written"
done
expect 2 "rows not dividing" -- "$GPK" sort --gen uniform --n 1000 --type u32 --rows 3 -o never.bin
expect 2 "rows and segments" -- "$GPK" sort --gen uniform --n 1000 --type u32 --rows 2 --segments off.bin
expect 2 "rows with quicksort" -- "$GPK" sort --gen uniform --n 1000 --type u32 --rows 2 --algo quick
[ ! -e never.bin ] && pass || fail "output written on a usage error"

echo "cli_segmented: $TESTS passed, $FAILS failed"
if [ "$FAILS" -eq 0 ]; then
    cd / && rm -rf "$WORK"
    exit 0
fi
echo "work directory kept: $WORK"
exit 1
