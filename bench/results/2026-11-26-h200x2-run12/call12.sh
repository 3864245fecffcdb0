#!/usr/bin/env bash
# run 12 (2 GPUs): the part plan: test_multi cuda (quick) with GPK_MULTI_PLAN=part, a memcheck of a small
# part sort, then gpk bench multi at 2^31 (merge and part in the same process) for u32, u64, u32/u32.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j32 --target gpk_bench test_multi >$W/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"; tail -3 $W/build.log
export GPK_REQUIRE_CUDA=1
s=$(date +%s); GPK_MULTI_PLAN=part GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 timeout 60 build-gpu/tests/test_multi cuda 0,1 >$W/test_part.log 2>&1
echo "test_multi part rc=$? $(( $(date +%s)-s )) s: $(tail -2 $W/test_part.log | tr '\n' ' ')"; grep FAIL $W/test_part.log | head -5
s=$(date +%s); GPK_MULTI_PLAN=part timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/gpk-bench bench multi --gpus 2 --devices 0,1 --n 3000017 --reps 1 --configs u32,u32/u32 --plans part >$W/memcheck.log 2>&1
echo "memcheck rc=$? $(( $(date +%s)-s )) s: $(grep -E 'ERROR SUMMARY|part ' $W/memcheck.log | tr '\n' ' ' | cut -c1-300)"
for c in u32 u64 u32/u32; do
  s=$(date +%s); r=3; tl=60; [ $c = u32 ] && r=5 && tl=70
  timeout $tl build-gpu/gpk-bench bench multi --gpus 1,2 --devices 0,1 --n 2G --reps $r --configs $c --plans merge,part --json $W/multi-${c/\//-}.json >$W/multi-${c/\//-}.txt 2>&1
  echo "bench $c rc=$? $(( $(date +%s)-s )) s"; grep -E "^device|^link" $W/multi-${c/\//-}.txt
done
(cd $W && tar czf $O/run12-logs.tgz *.log *.txt *.json 2>/dev/null)
echo "total $(( $(date +%s)-t0 )) s"
