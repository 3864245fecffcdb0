#!/usr/bin/env bash
set -u
export PATH="$PATH:/usr/local/cuda/bin"
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j32 --target test_multi >$W/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"
export GPK_REQUIRE_CUDA=1
for p in default merge part; do
  s=$(date +%s); e=""; [ $p != default ] && e="GPK_MULTI_PLAN=$p"
  env $e GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 timeout 45 build-gpu/tests/test_multi cuda 0,1 >$W/t-$p.log 2>&1
  echo "test_multi $p rc=$? $(( $(date +%s)-s )) s: $(tail -2 $W/t-$p.log | tr '\n' ' ')"; grep FAIL $W/t-$p.log | head -3
done
(cd $W && tar czf $O/run13-logs.tgz *.log)
echo "total $(( $(date +%s)-t0 )) s"
