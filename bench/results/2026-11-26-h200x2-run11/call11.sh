#!/usr/bin/env bash
set -u
export PATH="$PATH:/usr/local/cuda/bin"
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nvidia-smi topo -m | head -4
( cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j20 --target gpk_bench >$W/build.log 2>&1; echo "bench build rc=$?" ) &
( cmake -S . -B build-proto -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF >$W/cfg-p.log 2>&1 &&
  cmake --build build-proto -j12 --target gpk_msd_2gpu_proto >$W/build-p.log 2>&1; echo "proto build rc=$?"; tail -3 $W/build-p.log ) &
wait; echo "builds $(( $(date +%s)-t0 )) s"
GPK_RADIX_CUDA_SMALL=0 timeout 180 build-proto/gpk_msd_2gpu_proto 2>&1 | tee $W/proto2.txt
echo "proto done $(( $(date +%s)-t0 )) s"
timeout 200 build-gpu/gpk-bench bench multi --gpus 1,2 --devices 0,1 --n 2G --reps 3 --configs u32 --json $W/multi.json 2>&1 | tee $W/multi.txt | tail -12
(cd $W && tar czf $O/run11-logs.tgz *.log *.txt *.json 2>/dev/null)
echo "total $(( $(date +%s)-t0 )) s"
