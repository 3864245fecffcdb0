#!/usr/bin/env bash
# The CUDA quicksort's experiments (docs/perf/quicksort.md) in one call on the
# GPU machine: per-kernel device times of one sort, the compile-time variants
# of the finish side by side with CUB's merge sort, records against the
# index-permutation peers, and the recursive variant's device-side depth.
#   bench/quick_experiments.sh [BUILD] [N]     (default build-gpu, 2^25)
# BUILD must hold the shipped build (scripts/gpu-check.sh build). Variants,
# built here into BUILD-B and BUILD-C (CUDA only, no recursive variant):
#   A  as shipped: 512-thread finish, 4-bit digits, merge sort above 32-bit spans
#   B  -DGPK_QUICK_FINISH_THREADS=256 -DGPK_QUICK_FINISH_RB=6 -DGPK_QUICK_MERGE_BITS=64
#   C  -DGPK_QUICK_MERGE_BITS=64: the radix sort for every span
# Knob read by the library: GPK_QUICK_CDP_DEPTH (1..22), the depth down to
# which the recursive variant launches from the device (default 15).
set -u
build=${1:-build-gpu}
n=${2:-2^25}
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/cuda/bin"
declare -A flags=(
  [B]="-DGPK_QUICK_FINISH_THREADS=256 -DGPK_QUICK_FINISH_RB=6 -DGPK_QUICK_MERGE_BITS=64"
  [C]="-DGPK_QUICK_MERGE_BITS=64")
for v in B C; do
  cmake -S "$root" -B "$build-$v" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF -DGPK_BUILD_TESTS=OFF "-DCMAKE_CUDA_FLAGS=${flags[$v]}" \
    >"$build-$v.log" 2>&1 && cmake --build "$build-$v" -j "$(nproc)" --target gpk_cli >>"$build-$v.log" 2>&1 ||
    echo "variant $v: build FAILED (see $build-$v.log)"
done
rows() { # label, bench args
  local label=$1; shift
  "$@" 2>&1 | grep -E '^cuda|FAIL|ERROR' | sed -E "s/^cuda +/$(printf '%-10s' "$label") /"
}
echo "== per-kernel device time, one sort ($n)"
for t in u32 f64; do
  echo "-- $t uniform"
  bash "$root/scripts/qprof.sh" "$build/gpk" $t "$n" uniform quick
done
echo "== finish variants (the check column last: ok or FAIL)"
for v in A B C; do
  g=$build/gpk
  [ $v = A ] || g=$build-$v/gpk
  [ -x "$g" ] || continue
  rows "$v" "$g" bench quicksort -q --n "$n" --types u32,f64 --dists uniform,gaussian \
    --impls quick,cub-merge --reps 10
done
echo "== records, 64-bit key + 32-byte payload"
rows rec "$build/gpk" bench quicksort -q --n "$n" --dists uniform --records-only --payloads 32 \
  --impls quick,cub-index,thrust-index --reps 5
echo "== recursive: device-side launch depth"
for d in 2 4 8 15; do
  GPK_QUICK_CDP_DEPTH=$d rows "cdp=$d" "$build/gpk" bench quicksort -q --n "$n" --types u32 \
    --dists uniform --impls quick,quick-recursive --reps 5
done
