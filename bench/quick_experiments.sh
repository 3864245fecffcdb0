#!/usr/bin/env bash
# The CUDA quicksort's experiments (docs/perf/quicksort.md) in one call on the
# GPU machine: per-kernel device times of one sort, the default side by side
# with CUB's merge sort, records against the index-permutation peers, and
# the recursive variant against the iterative one. The tuning constants
# (bin limit, batch, sampling, recursion depth) are compile-time constants
# of src/sort/quick_cuda.cu; the "variant" part builds other values.
#   bench/quick_experiments.sh [BUILD] [N] [PARTS]   (default build-gpu, 2^25,
#                                                     "prof knobs records cdp")
# BUILD must hold a CUDA build (scripts/gpu-check.sh build, or scripts/gpu-stages.sh quick).
set -u
build=${1:-build-gpu}
n=${2:-2^25}
parts=${3:-prof knobs records cdp}   # also: ncu variant bw
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/cuda/bin"
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
rows() { # label, command...
  local label=$1; shift
  "$@" 2>&1 | grep -E '^cuda|FAIL|ERROR' | sed -E "s/^cuda +/$(printf '%-12s' "$label") /"
}
if has bw; then
  echo "== copy bandwidth (the floor of a pass)"
  nvcc -O3 -arch=sm_90 -o "$build/copy_bw" "$root/bench/copy_bw.cu" && "$build/copy_bw" 128 256 1024
fi
if has prof; then
  echo "== per-kernel device time, one sort ($n)"
  for t in u32 f64; do
    for d in uniform gaussian; do
      echo "-- $t $d"
      bash "$root/bench/qprof.sh" "$build/gpk" $t "$n" $d quick
    done
  done
fi
if has ncu; then
  # the limiters of the finish and of one mid-depth partition launch
  for t in u32 f64; do
    for k in "finish_kernel 0" "partition_kernel 6"; do
      set -- $k
      echo "-- ncu $t uniform $1 (launch $2)"
      ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
        -k "regex:$1" --launch-skip "$2" -c 1 "$build/gpk" bench quicksort --types $t --n "$n" \
        --dists uniform --impls quick --reps 1 -q 2>&1 |
        grep -E 'Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Stall|Warp Cycles Per Issued|Issue Slot|Grid Size|Executed Ipc' | head -40
    done
  done
fi
if has knobs; then
  echo "== the default against CUB's merge sort (the check column last: ok or FAIL)"
  rows default "$build/gpk" bench quicksort -q --n "$n" --types u32,f64 --dists paper \
    --impls quick,cub-merge --reps 10
fi
if has variant; then
  # compile-time variants beside the shipped build, built in parallel:
  # GPK_QUICK_VARIANTS="name:flags;name:flags"
  # "ctl" (no change) is built the same way: variants are compared with it,
  # not with the main build (configured differently, it ran ~5 % apart)
  IFS=';' read -ra vs <<<"ctl:-DGPK_QUICK_CONTROL=1;${GPK_QUICK_VARIANTS:-pb6:-DGPK_QUICK_PART_BLOCKS=6}"
  jobs=$(( $(nproc) / ${#vs[@]} )); [ $jobs -ge 1 ] || jobs=1
  for v in "${vs[@]}"; do
    name=${v%%:*} vflags=${v#*:}
    ( cmake -S "$root" -B "$build-$name" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF -DGPK_BUILD_TESTS=OFF -DGPK_WITH_CUDA_SEARCH=OFF \
        -DGPK_WITH_CUDA_OCTREE=OFF "-DCMAKE_CUDA_FLAGS=$vflags" >"$build-$name.log" 2>&1 &&
      cmake --build "$build-$name" -j $jobs --target gpk_cli gpk_bench >>"$build-$name.log" 2>&1 ||
      echo "variant $name: build FAILED (see $build-$name.log)" ) &
  done
  wait
  for v in "${vs[@]}"; do
    name=${v%%:*}
    echo "== variant $name: ${v#*:}"
    rows "$name" "$build-$name/gpk" bench quicksort -q --n "$n" --types ${GPK_QUICK_VARIANT_TYPES:-u32,f64} \
      --dists paper --impls ${GPK_QUICK_VARIANT_IMPLS:-quick} --reps 10
  done
fi
if has records; then
  echo "== records, 64-bit key + 32-byte payload"
  rows rec "$build/gpk" bench quicksort -q --n "$n" --dists uniform,gaussian --records-only --payloads 32 \
    --impls quick,cub-index,thrust-index --reps 5
fi
if has cdp; then
  echo "== recursive against iterative"
  rows cdp "$build/gpk" bench quicksort -q --n "$n" --types u32 --dists uniform --impls quick,quick-recursive --reps 5
fi
