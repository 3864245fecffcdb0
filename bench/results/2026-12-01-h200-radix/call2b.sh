#!/usr/bin/env bash
# Device call 2b (warm, after 2a's build): memcheck of the new CUDA code,
# gpk against CUB at its best on the cases the second versions change, and
# the segmented sort against CUB's segmented sorts.
set -u
export PATH=$PATH:/usr/local/cuda/bin
b=build-gpu; o=${OUT:-/tmp/out}; mkdir -p $o
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_OPENCL=OFF -DGPK_WITH_MPI=OFF >$o/cmake.log 2>&1 && cmake --build $b -j 16 --target gpk_cli gpk_bench gpk_cub_alone test_segmented >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
GPK_REQUIRE_CUDA=1 GPK_TEST_SMALL=1 timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/test_segmented cuda >$o/memcheck-seg.log 2>&1
echo "memcheck test_segmented cuda small: rc=$? $(grep -E 'checks|ERROR SUMMARY' $o/memcheck-seg.log | tail -n 2 | tr '\n' ' ')"
true

echo "== gpk vs CUB at its best (gpk-cub-alone, median of 15)"
for c in "u32 28 0 uniform" "u32 28 0 equal" "u32 28 0 bits10" "u32 28 4 bits10" \
         "u32 10 0 uniform" "u32 12 0 uniform" "u32 12 4 uniform" "u64 12 0 uniform"; do
  set -- $c
  timeout 60 $b/gpk-cub-alone $1 $2 $3 $4 15 >$o/alone.tmp 2>&1; rc=$?
  cat $o/alone.tmp >>$o/alone2.log
  echo "$c: rc=$rc gpk $(grep '^gpk_cuda_sort' $o/alone.tmp | awk '{print $2, $5, $NF}') | $(grep '^gpk / best' $o/alone.tmp)"
done
echo "== segmented, 2^28 elements"
for args in "--type u32"; do
  timeout 110 $b/gpk bench segmented --backend cuda $args --n 2^28 --reps 5 >$o/seg.tmp 2>&1; rc=$?
  cat $o/seg.tmp >>$o/seg.log
  echo "-- $args: rc=$rc"; grep -v "^#\|^$" $o/seg.tmp | tail -n 14
done
