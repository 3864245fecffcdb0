#!/usr/bin/env bash
set -u
export PATH="$PATH:/usr/local/cuda/bin"
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
( cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j10 --target test_radix test_multi test_ooc test_cuda_api >$W/build.log 2>&1; echo "build rc=$?" ) &
( cmake -S . -B build-proto -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF >$W/cfg-p.log 2>&1 &&
  cmake --build build-proto -j6 --target gpk_static >$W/build-p.log 2>&1 &&
  nvcc -std=c++17 -O2 -arch=sm_90 -Iinclude .scratch/proto_msd.cu build-proto/libgpk.a -Xcompiler -fopenmp -lpthread -lm -o build-proto/proto >$W/link-p.log 2>&1; echo "proto build rc=$?"; tail -5 $W/link-p.log ) &
wait; echo "builds $(( $(date +%s)-t0 )) s"
timeout 200 build-proto/proto 2>&1 | tee $W/proto.txt
echo "proto done $(( $(date +%s)-t0 )) s"
export GPK_REQUIRE_CUDA=1
for t in "radix:build-gpu/tests/test_radix cuda" "multi:build-gpu/tests/test_multi cuda 0,0" "ooc:build-gpu/tests/test_ooc cuda" "api:build-gpu/tests/test_cuda_api"; do
  n=${t%%:*}; c=${t#*:}; s=$(date +%s)
  timeout 150 $c >$W/$n.log 2>&1; echo "test $n rc=$? $(( $(date +%s)-s )) s: $(grep -E 'checks|passed|FAIL' $W/$n.log | tail -2 | tr '\n' ' ')"
done
(cd $W && tar czf $O/run10-logs.tgz *.log *.txt)
echo "total $(( $(date +%s)-t0 )) s"
