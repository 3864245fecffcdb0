#!/usr/bin/env bash
# The CUDA quicksort's experiments (docs/perf/quicksort.md): per-kernel times
# of one sort, and the tuning knobs side by side, in one call on the GPU
# machine.
#   bench/quick_experiments.sh [GPK] [N]     (default build-gpu/gpk, 2^25)
# Knobs (environment, read by the library; defaults in src/sort/quick_cuda.cu):
#   GPK_QUICK_FINISH_BITS  4 or 5: digit bits of the in-block radix sort
#   GPK_QUICK_CDP_DEPTH    1..22: depth down to which the recursive variant
#                          launches from the device
set -u
gpk=${1:-build-gpu/gpk}
n=${2:-2^25}
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/cuda/bin"
row() { # label, env..., then bench args after --
  local label=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" "$gpk" bench quicksort -q --n "$n" "$@" 2>&1 | grep '^cuda' |
    sed -E "s/^cuda +/$(printf '%-22s' "$label") /" | cut -c1-120
}
echo "== per-kernel device time, one sort ($n)"
for t in u32 f64; do
  echo "-- $t uniform"
  bash "$root/scripts/qprof.sh" "$gpk" $t "$n" uniform quick
done
echo "== finish digit bits"
for b in 4 5; do
  row "finish-bits=$b" GPK_QUICK_FINISH_BITS=$b -- --types u32,f64 --dists uniform --impls quick,cub-merge --reps 10
done
echo "== recursive: device-side launch depth"
for d in 2 4 6 8 15; do
  row "cdp-depth=$d" GPK_QUICK_CDP_DEPTH=$d -- --types u32 --dists uniform --impls quick-recursive --reps 5
done
