#!/usr/bin/env bash
# The tuning runs behind docs/perf/radix.md (GPU machine, after
# scripts/gpu-check.sh build): CUDA shape tables against CUB at n = 2^28
# (the OpenCL keys per item are the tuning table's, src/sort/radix_opencl.c).
#   bash bench/radix_gpu_experiments.sh   (writes under $OUT or ./experiments-out)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/experiments-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
log=$out/experiments.txt
: >"$log"

# CUDA: shipped table and three shape tables (bench/tuning/README.md).
variants=(default)
mkdir -p "$out/tuning"
while read -r name rows; do
  python3 "$root/bench/tuning/variant.py" "$out/tuning/$name.h" $rows || exit 1
  variants+=("$name:-DGPK_RADIX_CUDA_TUNING='\"$out/tuning/$name.h\"'")
done <<'ROWS'
lo 8,4,0=384,15,2 8,4,4=384,12,2 8,8,0=384,11,2 8,8,8=384,10,2 11,4,0=512,12,2 11,4,4=512,9,2
t256 8,4,4=256,18,3 8,8,0=256,16,3 8,8,8=384,10,2 11,4,0=256,24,2 11,4,4=256,16,2
t512 8,4,0=512,16,2 8,4,4=512,12,2 8,8,0=512,10,2 8,8,8=384,10,2 11,4,0=512,20,2 11,4,4=512,14,2
ROWS
sh "$root/bench/radix_cuda_tune.sh" "$build/exp" "${variants[@]}" >"$out/exp-build.log" 2>&1 ||
  { tail -n 30 "$out/exp-build.log"; exit 1; }
for bin in "$build"/exp/radix_cuda_tune_*; do
  v=${bin##*_tune_}
  timeout 150 "$bin" --perf --reps 10 --only u32,pairs,u64,pic,picperm \
    --label "$v" 2>&1 | sed -n '/^\[.*floor/,$p' | tail -n +3 | sed "s|^|$v  |" | tee -a "$log"
done
echo "==== experiments"
cat "$log"
