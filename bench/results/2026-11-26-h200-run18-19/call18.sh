#!/usr/bin/env bash
# run 18 (1 GPU): the whole build of scripts/gpu-check.sh (CUDA, OpenCL, CDP, octree), then test_mpi_sort cuda on
# 3 ranks sharing the GPU (a rank count that does not divide N; the part plan forced in its second half).
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GPK_GPU_BUILD=$PWD/build-check
t0=$(date +%s)
bash scripts/gpu-check.sh build 2>&1 | tail -4
s=$(date +%s); GPK_TEST_SMALL=1 GPK_REQUIRE_CUDA=1 timeout 200 mpiexec --oversubscribe --bind-to none -n 3 build-check/tests/test_mpi_sort cuda >$OUT/mpi3.log 2>&1
echo "test_mpi_sort cuda np3 rc=$? $(( $(date +%s)-s )) s: $(grep -E 'moved by|^passed|^FAILED' $OUT/mpi3.log | tr '\n' ' ')"; grep FAIL $OUT/mpi3.log | head -5
echo "total $(( $(date +%s)-t0 )) s"
