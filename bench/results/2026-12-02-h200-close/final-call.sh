#!/usr/bin/env bash
# Final call (cold): the merged tree built with CUDA, OpenCL, MPI; the CUDA
# tests of what changed (small sizes); the segmented rows (cost model,
# striped medium writes); the Onesweep timing; racecheck of the segmented
# kernels; radix_cuda_tune --check if time is left.
set -u
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s); DEADLINE=${DEADLINE:-440}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
b=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
echo "tree: $(cat .devrun/TREE)" | tee -a $S
nvlib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
[ -n "$nvlib" ] && mkdir -p /etc/OpenCL/vendors && echo "$nvlib" >/etc/OpenCL/vendors/nvidia.icd
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_FUZZ=OFF >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
cmake --build $b -j16 >$o/build.log 2>&1 || { grep -B3 -A12 -m3 "error" $o/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - T0 )) s" | tee -a $S
r() { # name timeout cmd...
  local n=$1 to=$2; shift 2
  [ "$(left)" -lt 12 ] && { echo "== $n SKIP (time)" | tee -a $S; return; }
  [ "$to" -gt "$(left)" ] && to=$(left)
  local t=$(date +%s); GPK_REQUIRE_CUDA=1 timeout $to "$@" >$o/$n.log 2>&1; local rc=$?
  echo "== $n rc=$rc $(( $(date +%s) - t )) s" | tee -a $S
}
t0=$(date +%s)
GPK_TEST_SMALL=1 GPK_REQUIRE_CUDA=1 timeout 150 ctest --test-dir $b -j5 --timeout 140 \
  -R "${CTEST_RE:-^(radix_cuda|radix_cuda_onesweep|cuda_device_api|api_cuda|quick_cuda|segmented_cuda|descending_cuda|octree_cuda|pool_cuda|search_cuda|bench_sort_hooks|bench_quick_hooks|no_cuda_runtime|multi_cuda|ooc_cuda)$}" \
  >$o/ctest.log 2>&1
echo "ctest rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S
grep -E 'Test +#|tests passed|tests failed' $o/ctest.log | sed 's/  */ /g' | tee -a $S
for c in "u32 28 0" "u32 28 4"; do
  r alone_${c// /_} 40 $b/gpk-cub-alone $c uniform 9 asc
  echo "$c: $(grep '^gpk_cuda_sort' $o/alone_${c// /_}.log | awk '{print $2, $NF}') | $(grep '^gpk / best' $o/alone_${c// /_}.log)" | tee -a $S
done
r seg_default 60 $b/gpk bench segmented --backend cuda --n 2^28 --shapes 2^18,2^19,2^20,ragged --cases u32,u32-pairs --reps 3 --seed 7
grep -E 'segs|gpk bench|SegmentedRadix' $o/seg_default.log | tee -a $S
for w in 1 0; do
  r seg_medium_$w 45 $b/gpk bench segmented --backend cuda --n 2^28 --shapes 2^14,2^18 --cases u32,u32-pairs --reps 3 --seed 7 --large-min 2^30 --hook segmented_cuda_medium_rank=$w
  grep -E 'segs|gpk bench' $o/seg_medium_$w.log | sed "s/^/[rank $w] /" | tee -a $S
done
r race_seg 40 compute-sanitizer --tool racecheck --error-exitcode 9 $b/gpk bench segmented --backend cuda --n 2^20 --shapes 256,4096,2^17 --cases u32,u32-pairs --reps 1 --seed 7 --large-min 2^30
grep -m2 'RACECHECK SUMMARY' $o/race_seg.log | tee -a $S
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
