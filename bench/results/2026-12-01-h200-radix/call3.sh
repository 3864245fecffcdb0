#!/usr/bin/env bash
# Device call 3: the final tree (one DeviceGuard for the CUDA sources, the
# CPU merge): build the CUDA tests and run the ones through the guard.
set -u
export PATH=$PATH:/usr/local/cuda/bin
b=build-gpu; o=${OUT:-/tmp/out}; mkdir -p $o
t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_OPENCL=OFF -DGPK_WITH_MPI=OFF -DGPK_WITH_CDP=OFF >$o/cmake.log 2>&1 &&
cmake --build $b -j 16 --target test_cuda_api test_radix test_segmented test_octree test_quick >$o/build.log 2>&1 || { grep -B2 -A6 -E "error" $o/build.log | head -40; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for t in "test_cuda_api" "test_radix cuda quick" "test_segmented cuda" "test_octree cuda" "test_quick cuda"; do
  GPK_REQUIRE_CUDA=1 GPK_TEST_SMALL=1 timeout 60 $b/tests/$t >$o/t.log 2>&1; echo "$t: rc=$? $(tail -n 1 $o/t.log)"
done
