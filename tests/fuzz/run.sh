#!/bin/sh
# Builds the libFuzzer targets of the instance readers (QAPLIB, TSPLIB95)
# with clang, AddressSanitizer and UBSan, and runs each for SECONDS (60)
# from a seed corpus of small instances copied out of DATA (../shared/data)
# into /tmp: the data is read in place and never copied into the tree.
#   tests/fuzz/run.sh [SECONDS] [DATA]
# Crashes, leaks and sanitizer reports stop the fuzzer and leave the input
# as BUILD/crash-* ; replay one with: BUILD/tests/fuzz_tsplib FILE
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${2:-$root/../shared/data}
build=${GPK_FUZZ_BUILD:-/tmp/build-fuzz}
# GPK_FUZZ instruments the library too (fuzzer-no-link): otherwise the
# fuzzer sees no coverage inside the readers and ASan checks none of their
# accesses.
cmake -S "$root" -B "$build" -DGPK_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPK_WITH_CUDA=OFF -DGPK_WITH_OPENCL=OFF >/dev/null
cmake --build "$build" --target fuzz_qaplib fuzz_tsplib -j"$(nproc 2>/dev/null || echo 2)"
corp=$(mktemp -d /tmp/gpk-fuzz-corpus.XXXXXX)
mkdir -p "$corp/qap" "$corp/tsp"
# The smallest instances: short inputs keep executions fast, and the
# mutations reach every header keyword and section type from them.
for f in $(ls -S -r "$data"/qaplib/*.dat 2>/dev/null | head -8); do cp "$f" "$corp/qap/"; done
for f in burma14 ulysses16 att48 bays29 bayg29 fri26 eil51 gr17 gr21 dantzig42; do
  [ -f "$data/tsplib/$f.tsp" ] && cp "$data/tsplib/$f.tsp" "$corp/tsp/"
done
cd "$build"
./tests/fuzz_qaplib -max_total_time="$secs" -print_final_stats=1 "$corp/qap"
./tests/fuzz_tsplib -max_total_time="$secs" -print_final_stats=1 "$corp/tsp"
rm -rf "$corp"
