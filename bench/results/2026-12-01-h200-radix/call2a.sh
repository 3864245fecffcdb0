#!/usr/bin/env bash
# Device call 2a: the merged tree (static CUDA runtime, segmented sorts, the
# radix kernels' second versions): build everything, then the CUDA tests.
set -u
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
b=bgpu; o=${OUT:-/tmp/out}; mkdir -p $o
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_OPENCL=OFF >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
grep "gpk:" $o/cmake.log
cmake --build $b -j 16 >$o/build.log 2>&1 || { grep -B3 -A8 -E "error|Error" $o/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
ldd $b/libgpk.so | grep -i -E "cuda|nccl" || echo "libgpk: no CUDA library needed"
t0=$(date +%s)
GPK_REQUIRE_CUDA=1 timeout 330 ctest --test-dir $b -j 8 --timeout 300 --output-on-failure \
  -R "cuda|segmented|api_|no_cuda_runtime|install_consumer|mpi_sort_np2|example_sort_keys_1000003|cli$" >$o/ctest.log 2>&1
echo "ctest rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "tests passed|tests failed|Test +#|\*\*\*|Failed|Timeout|Not Run" $o/ctest.log | tail -40
