#!/usr/bin/env bash
# The tuning runs behind docs/perf/radix.md (GPU machine, after
# scripts/gpu-check.sh build): CUDA pass-kernel grid forms and shape tables
# against CUB, and the OpenCL keys-per-item sweep, all at n = 2^28.
#   bash bench/radix_gpu_experiments.sh   (writes under $OUT or ./experiments-out)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/experiments-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
log=$out/experiments.txt
: >"$log"

# CUDA: shipped table and three shape tables (bench/tuning/README.md), each
# with both grid forms.
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
  for grid in resident tiles; do
    GPK_RADIX_CUDA_GRID=$grid timeout 150 "$bin" --perf --reps 10 --only u32,pairs,u64,pic,picperm \
      --label "$v/$grid" 2>&1 | sed -n '/^\[.*floor/,$p' | tail -n +3 | sed "s|^|$v/$grid  |" | tee -a "$log"
  done
done

# OpenCL on the NVIDIA GPU: keys per item (4-byte, 8-byte keys) of the fast kernels.
for kpt in 8,4 4,2 12,6 16,8; do
  GPK_OPENCL_KPT=$kpt timeout 120 "$build/gpk" bench sort --backends opencl --types u32,u64 --n 2^28 --pairs \
    --reps 10 -q 2>&1 | grep -E '^opencl' | sed "s|^|kpt=$kpt  |" | tee -a "$log"
done
echo "==== experiments"
cat "$log"
