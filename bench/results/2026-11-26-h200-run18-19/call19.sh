#!/usr/bin/env bash
# run 19 (1 GPU): why test_radix cuda fails with the hybrid forced (gpu-check run 18): memo on / off, small path on / off;
# and cli_sort_mpi on one GPU after the round-robin device fix.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >/tmp/cfg.log 2>&1 &&
  cmake --build build-gpu -j16 --target test_radix gpk_cli gpk_mpi_cli >/tmp/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"; tail -2 /tmp/build.log
export GPK_REQUIRE_CUDA=1 GPK_TEST_SEED=12345
for v in "memo1 small1" "memo0 small1" "memo1 small0" "memo0 small0"; do
  set -- $v; m=${1#memo}; sm=${2#small}
  s=$(date +%s)
  GPK_RADIX_CUDA_LAUNCH_MEMO=$m GPK_RADIX_CUDA_SMALL=$sm GPK_RADIX_CUDA_HYBRID=1 GPK_RADIX_CUDA_HYBRID_MIN_LOG=0 GPK_RADIX_CUDA_HYBRID_FILL=64 \
    timeout 100 build-gpu/tests/test_radix cuda >$OUT/hyb-$m-$sm.log 2>&1
  echo "hybrid fill64 memo=$m small=$sm rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/hyb-$m-$sm.log)"; grep FAIL $OUT/hyb-$m-$sm.log | head -6
done
s=$(date +%s); (cd build-gpu && ctest -R cli_sort_mpi --output-on-failure >$OUT/cli_sort_mpi.log 2>&1); echo "cli_sort_mpi rc=$? $(( $(date +%s)-s )) s"; grep -E "FAIL|tests passed|failed" $OUT/cli_sort_mpi.log | head -5
echo "total $(( $(date +%s)-t0 )) s"
