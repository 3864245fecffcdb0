#!/usr/bin/env bash
# run 22 (1 GPU): after the review's mends (launch_setup serves the small path too, gpk__align_up shared,
# the part plans' constants shared with MPI): tests and a small-size benchmark against CUB.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >/tmp/cfg.log 2>&1 &&
  cmake --build build-gpu -j16 --target gpk_bench test_radix test_cuda_api test_api test_multi test_quick test_mpi_sort >/tmp/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"; tail -1 /tmp/build.log
export GPK_REQUIRE_CUDA=1
run() { local name=$1 t=$2; shift 2; local s=$(date +%s); timeout $t "$@" >$OUT/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-s )) s: $(grep -E 'checks|^passed|^FAILED' $OUT/$name.log | tail -1)"; grep FAIL $OUT/$name.log | head -3; }
run test_cuda_api 60 build-gpu/tests/test_cuda_api
run test_radix 60 env GPK_TEST_SMALL=1 build-gpu/tests/test_radix cuda
run test_api 30 build-gpu/tests/test_api cuda
run test_quick 60 env GPK_TEST_SMALL=1 build-gpu/tests/test_quick cuda
run test_multi_part 40 env GPK_MULTI_PLAN=part GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 build-gpu/tests/test_multi cuda 0,0
run test_mpi_sort_np2 60 env GPK_TEST_SMALL=1 mpiexec --oversubscribe --bind-to none -n 2 build-gpu/tests/test_mpi_sort cuda
timeout 40 build-gpu/gpk-bench bench sort --backends cuda --types u32 --n 65536,1048576,4194304 --pairs --peers cub -q >$OUT/small.txt 2>&1
echo "bench rc=$?"; grep -E "gpk " $OUT/small.txt
echo "total $(( $(date +%s)-t0 )) s"
