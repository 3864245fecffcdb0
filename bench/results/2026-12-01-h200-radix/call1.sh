#!/usr/bin/env bash
# Device call 1: build, the radix tests that touch the changed kernels, then
# gpk vs CUB at its best (gpk-cub-alone, a plain program) and gpk bench sort
# with the honest peer. Prints a short table last.
set -u
export PATH=$PATH:/usr/local/cuda/bin
b=bgpu
o=${OUT:-/tmp/out}
mkdir -p $o
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $o/gpu.txt
t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_OPENCL=OFF -DGPK_WITH_MPI=OFF >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
cmake --build $b -j 16 --target gpk gpk_bench gpk_cli gpk_cub_alone test_radix test_cuda_api >$o/build.log 2>&1 || { grep -B5 -A5 -i error $o/build.log | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
S=$o/summary.txt; : >$S
run_test() { # name, cmd...
  local name=$1; shift
  local t=$(date +%s)
  GPK_REQUIRE_CUDA=1 timeout ${TT:-240} "$@" >$o/$name.log 2>&1; local rc=$?
  echo "$name: rc=$rc $(tail -n 1 $o/$name.log) ($(( $(date +%s) - t )) s)" | tee -a $S
  grep -m 8 -i "fail" $o/$name.log | head -8
}
run_test api $b/tests/test_cuda_api
run_test radix_quick $b/tests/test_radix cuda quick
GPK_RADIX_CUDA_SMALL=0 run_test radix_onesweep_quick $b/tests/test_radix cuda quick
TT=400 run_test radix_full $b/tests/test_radix cuda
if command -v compute-sanitizer >/dev/null; then
  GPK_TEST_SMALL=1 TT=200 run_test memcheck_api compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/test_cuda_api
fi
echo "== gpk vs CUB at its best (gpk-cub-alone, median of 15)" | tee -a $S
for c in "u32 28 0 uniform" "i32 28 0 uniform" "f32 28 0 uniform" "u64 28 0 uniform" "f64 28 0 uniform" \
         "u32 28 4 uniform" "u64 28 8 uniform" "u32 24 0 uniform" "u32 24 4 uniform" "f32 24 0 uniform" \
         "u32 28 0 sorted" "u32 28 0 reverse" "u32 28 0 equal" "u32 28 0 and3" "u32 28 0 bits10" "u32 28 4 bits10" \
         "u32 12 0 uniform" "u32 10 0 uniform" "u32 14 0 uniform" "u32 16 0 uniform" "u32 20 0 uniform" "u32 22 0 uniform"; do
  set -- $c
  $b/gpk-cub-alone $1 $2 $3 $4 15 >$o/alone.tmp 2>&1; rc=$?
  cat $o/alone.tmp >>$o/alone.log
  best=$(grep '^gpk / best' $o/alone.tmp)
  g=$(grep '^gpk_cuda_sort' $o/alone.tmp | awk '{print $2, $NF}')
  echo "$c: rc=$rc gpk $g | $best" | tee -a $S
done
echo "== gpk bench sort (honest peer), u32/u64 2^28, keys and pairs" | tee -a $S
$b/gpk bench sort --backends cuda --types u32,i32,f32,u64 --n 2^24,2^28 --pairs --reps 15 -q --json $o/bench.json >$o/bench.txt 2>&1
echo "bench rc=$?" | tee -a $S
grep -E "^cuda" $o/bench.txt | tee -a $S
echo "== summary"; cat $S
