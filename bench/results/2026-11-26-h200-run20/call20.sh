#!/usr/bin/env bash
# run 20 (1 GPU): test_radix cuda with the hybrid forced (both fills, as gpu-check.sh) after the test fix; test_cuda_api
# after the pairs-width helper; test_api cuda (gpk_device_count).
set -u
export PATH="$PATH:/usr/local/cuda/bin"
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >/tmp/cfg.log 2>&1 &&
  cmake --build build-gpu -j16 --target test_radix test_cuda_api test_api >/tmp/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"; tail -1 /tmp/build.log
export GPK_REQUIRE_CUDA=1
for hv in 64 4096; do
  s=$(date +%s); GPK_RADIX_CUDA_HYBRID=1 GPK_RADIX_CUDA_HYBRID_MIN_LOG=0 GPK_RADIX_CUDA_HYBRID_FILL=$hv timeout 100 build-gpu/tests/test_radix cuda >$OUT/hyb$hv.log 2>&1
  echo "hybrid forced fill $hv test_radix rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/hyb$hv.log)"; grep FAIL $OUT/hyb$hv.log | head -3
done
s=$(date +%s); timeout 100 build-gpu/tests/test_cuda_api >$OUT/cuda_api.log 2>&1; echo "test_cuda_api rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/cuda_api.log)"; grep FAIL $OUT/cuda_api.log | head -3
s=$(date +%s); timeout 60 build-gpu/tests/test_api cuda >$OUT/api.log 2>&1; echo "test_api cuda rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/api.log)"; grep FAIL $OUT/api.log | head -3
echo "total $(( $(date +%s)-t0 )) s"
