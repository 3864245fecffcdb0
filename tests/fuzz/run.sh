#!/bin/sh
# Builds the libFuzzer targets of the readers (QAPLIB, TSPLIB95, QAPLIB
# .sln, TSPLIB .tour, the CLI's .npy / raw array reader, its structured
# .npy header parser and its best-known tables) with clang,
# AddressSanitizer and UBSan, and runs each for SECONDS (60), one a core
# at a time (GPK_FUZZ_JOBS), from a seed corpus of small files copied out
# of DATA (../shared/data) into /tmp: the data is read in place and never
# copied into the tree. Without DATA the instance targets start from a few
# inputs written here.
#   tests/fuzz/run.sh [SECONDS] [DATA]
# Crashes, leaks and sanitizer reports stop the fuzzer and leave the input
# as BUILD/crash-* ; replay one with: BUILD/tests/fuzz_tsplib FILE
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${2:-$root/../shared/data}
build=${GPK_FUZZ_BUILD:-$root/build-fuzz} # in the tree: a shared /tmp folder holds another checkout's cache
targets="fuzz_qaplib fuzz_tsplib fuzz_sln fuzz_tour fuzz_npy fuzz_npy_records fuzz_best_known"
# GPK_FUZZ instruments the library too (fuzzer-no-link): otherwise the
# fuzzer sees no coverage inside the readers and ASan checks none of their
# accesses.
cmake -S "$root" -B "$build" -DGPK_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPK_WITH_CUDA=OFF -DGPK_WITH_OPENCL=OFF >/dev/null
cmake --build "$build" --target $targets -j"$(nproc 2>/dev/null || echo 2)"
corp=$(mktemp -d /tmp/gpk-fuzz-corpus.XXXXXX)
trap 'rm -rf "$corp"' EXIT
for t in $targets; do mkdir -p "$corp/$t"; done
# The smallest instances: short inputs keep executions fast, and the
# mutations reach every header keyword and section type from them.
for f in $(ls -S -r "$data"/qaplib/*.dat 2>/dev/null | head -8); do cp "$f" "$corp/fuzz_qaplib/"; done
for f in $(ls -S -r "$data"/qaplib/*.sln 2>/dev/null | head -8); do cp "$f" "$corp/fuzz_sln/"; done
for f in burma14 ulysses16 att48 bays29 bayg29 fri26 eil51 gr17 gr21 dantzig42; do
  if [ -f "$data/tsplib/$f.tsp" ]; then cp "$data/tsplib/$f.tsp" "$corp/fuzz_tsplib/"; fi
  if [ -f "$data/tsplib/$f.opt.tour" ]; then cp "$data/tsplib/$f.opt.tour" "$corp/fuzz_tour/"; fi
done
printf '3\n\n0 1 2\n1 0 1\n2 1 0\n\n0 5 2\n5 0 3\n2 3 0\n' >"$corp/fuzz_qaplib/tiny.dat"
printf '3 24\n2 3 1\n' >"$corp/fuzz_sln/tiny.sln"
# best-known seeds: the selector byte (bit 0: ':' else ','; the rest: the
# name, see fuzz_best_known.c), then the head of each table
{ printf '\003'; head -c 2000 "$data/qaplib/best-known.csv" 2>/dev/null || true; printf 'tai12a,224416,OPT\n'; } \
  >"$corp/fuzz_best_known/csv"
{ printf '\001'; head -c 2000 "$data/tsplib/bestSolutions.txt" 2>/dev/null || true; printf 'a280 : 2579\n'; } \
  >"$corp/fuzz_best_known/txt"
printf 'NAME : sq\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 0 10\n3 10 10\n4 10 0\nEOF\n' \
  >"$corp/fuzz_tsplib/sq.tsp"
printf 'NAME : sq.tour\nTYPE : TOUR\nDIMENSION : 4\nTOUR_SECTION\n1\n3\n2\n4\n-1\nEOF\n' >"$corp/fuzz_tour/sq.tour"
# .npy seeds: the selector byte (see fuzz_npy.c), then a small array of
# each width as a file and as a stream, and a raw one.
npy() { # SELECTOR DESCR COUNT BYTES-PER-ITEM
  hdr="{'descr': '$2', 'fortran_order': False, 'shape': ($3,), }"
  pad=$((117 - ${#hdr}))
  { printf "\\$(printf %03o "$1")"; printf '\223NUMPY\001\000v\000%s' "$hdr"
    head -c $pad /dev/zero | tr '\0' ' '; printf '\n'; head -c $(($3 * $4)) /dev/urandom; }
}
npy 6 '<u4' 5 4 >"$corp/fuzz_npy/u4.npy"
npy 14 '<f8' 3 8 >"$corp/fuzz_npy/f8-stream.npy"
npy 22 '<i8' 0 8 >"$corp/fuzz_npy/empty.npy"
{ printf '\001'; head -c 64 /dev/urandom; } >"$corp/fuzz_npy/raw-i32"
# structured .npy seeds: the key name, a NUL, then the file
rec() { # KEY DESCR COUNT RECORD-BYTES
  hdr="{'descr': $2, 'fortran_order': False, 'shape': ($3,), }"
  pad=$((117 - ${#hdr}))
  { printf '%s\000' "$1"; printf '\223NUMPY\001\000v\000%s' "$hdr"
    head -c $pad /dev/zero | tr '\0' ' '; printf '\n'; head -c $(($3 * $4)) /dev/urandom; }
}
rec a "[('a', '<u4'), ('b', '<f8')]" 3 12 >"$corp/fuzz_npy_records/two.npy"
rec k "[('', '|V4'), ('k', '<i8'), ('v', '<f4', (2,))]" 2 20 >"$corp/fuzz_npy_records/pad-sub.npy"
cd "$build"
# One fuzzer a core at a time (each runs on one thread), every one for the
# whole SECONDS; each log printed when its batch ends, whole on a failure.
# -rss_limit_mb: a reader that trusts a size from the input runs into it.
jobs=${GPK_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
failed=""
set -- $targets
while [ $# -gt 0 ]; do
  batch=""
  while [ $# -gt 0 ] && [ $(echo $batch | wc -w) -lt "$jobs" ]; do
    echo "== $1: $secs s"
    ./tests/$1 -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 "$corp/$1" >"$corp/$1.log" 2>&1 &
    batch="$batch $1:$!"
    shift
  done
  for tp in $batch; do
    t=${tp%%:*}
    if wait "${tp#*:}"; then
      echo "== $t passed"; tail -n 12 "$corp/$t.log"
    else
      echo "== $t FAILED"; cat "$corp/$t.log"; failed="$failed $t"
    fi
  done
done
if [ -n "$failed" ]; then echo "fuzz: failed:$failed"; exit 1; fi
