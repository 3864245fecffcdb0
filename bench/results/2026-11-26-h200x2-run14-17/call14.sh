#!/usr/bin/env bash
# run 14 (2 GPUs): build; the _bits API (test_cuda_api), the multi-GPU part plan after the mends (test_multi
# cuda 0,1: default and part), the MPI part plan (test_mpi_sort cuda on 2 ranks: default plans, then part forced).
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j32 --target gpk_bench test_multi test_cuda_api test_mpi_sort gpk_mpi_bench >$W/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"; tail -3 $W/build.log; grep -E "gpk: MPI" $W/cfg.log
export GPK_REQUIRE_CUDA=1
s=$(date +%s); timeout 120 build-gpu/tests/test_cuda_api >$W/cuda_api.log 2>&1
echo "test_cuda_api rc=$? $(( $(date +%s)-s )) s: $(tail -3 $W/cuda_api.log | tr '\n' ' ')"; grep -E "FAIL" $W/cuda_api.log | head -5
for p in default part; do
  s=$(date +%s); e=""; [ $p != default ] && e="GPK_MULTI_PLAN=$p"
  env $e GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 timeout 45 build-gpu/tests/test_multi cuda 0,1 >$W/multi-$p.log 2>&1
  echo "test_multi $p rc=$? $(( $(date +%s)-s )) s: $(tail -2 $W/multi-$p.log | tr '\n' ' ')"; grep FAIL $W/multi-$p.log | head -3
done
s=$(date +%s); timeout 240 mpiexec --bind-to none -n 2 build-gpu/tests/test_mpi_sort cuda >$W/mpi.log 2>&1
echo "test_mpi_sort cuda np2 rc=$? $(( $(date +%s)-s )) s: $(grep -E 'moved by|^passed|^FAILED' $W/mpi.log | tr '\n' ' ')"; grep -E "FAIL|rank [0-9]:" $W/mpi.log | head -12
(cd $W && tar czf $O/run14-logs.tgz *.log)
echo "total $(( $(date +%s)-t0 )) s"
