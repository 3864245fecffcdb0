#!/usr/bin/env bash
# run 21 (1 GPU): test_mpi_sort cuda on 3 and 2 ranks sharing the GPU after the part plan skips empty ranges
# (kept sizes with rank 1 empty: the new case must take part when forced).
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >/tmp/cfg.log 2>&1 &&
  cmake --build build-gpu -j16 --target test_mpi_sort >/tmp/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"; tail -1 /tmp/build.log
export GPK_REQUIRE_CUDA=1
for np in 3 2; do
  s=$(date +%s); GPK_TEST_SMALL=1 timeout 150 mpiexec --oversubscribe --bind-to none -n $np build-gpu/tests/test_mpi_sort cuda >$OUT/mpi-np$np.log 2>&1
  echo "test_mpi_sort cuda np$np rc=$? $(( $(date +%s)-s )) s: $(grep -E 'moved by|^passed|^FAILED' $OUT/mpi-np$np.log | tr '\n' ' ')"; grep FAIL $OUT/mpi-np$np.log | head -4
done
echo "total $(( $(date +%s)-t0 )) s"
