#!/usr/bin/env bash
# The CUDA octree builders and pools on a GPU: build, tests, then the stages
# in GPK_OCTREE_STAGES (default "memcheck final grid"; also "sweep", "small",
# "quick", "split", "phases", "cpuvictim"):
# compute-sanitizer, Figure 4 benches against the 16-core CPU, the threads x
# blocks grid. Logs in $OUT/logs.tar.gz, JSON beside it; see
# docs/perf/octree.md for what the figures mean.
set -u
. "$(dirname "$0")/gpu-lib.sh"
gpu_build gpk_cli test_octree test_pool_cuda
run octree_cuda 240 $b/tests/test_octree cuda
TAILN=9 run pool_cuda 120 $b/tests/test_pool_cuda
for s in ${GPK_OCTREE_STAGES:-memcheck final grid}; do case $s in
memcheck) GPK_TEST_SMALL=1 run memcheck_octree 240 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/test_octree cuda
     GPK_TEST_SMALL=1 run memcheck_pool 200 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/test_pool_cuda ;;
final) for v in rr random; do # Figure 4 against the 16-core CPU, device time and host API time
       TAILN=40 run bench_octree_gpu_$v 200 $b/gpk bench octree --backend cuda --n 1M,2M,4M,8M,16M --dists uniform,tube \
         --schemes static,steal,morton --victim $v --reps 3 --json "$out/octree-gpu-$v.json"; done
     TAILN=40 run bench_octree_gpu_queues 200 $b/gpk bench octree --backend cuda --n 1M,4M --dists uniform,tube \
       --schemes queue,lockfree --reps 3 --json "$out/octree-gpu-queues.json"
     TAILN=40 run bench_octree_cpu 200 $b/gpk bench octree --backend cpu --n 1M,4M,16M --dists uniform,tube --reps 2 \
       --schemes static,steal,morton --json "$out/octree-cpu16.json" ;;
sweep) for v in rr random; do for n in 1M 16M; do # the grid split, grid and victims (defaults)
       TAILN=40 run sweep-$v-$n 150 $b/gpk bench octree --backend cuda --n $n --dists uniform --schemes static,steal \
         --victim $v --grid-split 4096,16384,65536,pool --blocks 528,2112 --block-threads 64,128 --reps 1 \
         --json "$out/sweep-$v-$n.json"; done; done ;;
small) for v in rr random; do # Figure 4 below 1M (the paper's range starts at 100k)
       TAILN=25 run bench_octree_small_$v 150 $b/gpk bench octree --backend cuda --n 100k,200k,500k --dists uniform,tube \
         --victim $v --reps 3 --json "$out/octree-gpu-small-$v.json"; done ;;
quick) TAILN=12 run bench_octree_quick 120 $b/gpk bench octree --backend cuda --n 1M,16M --dists uniform \
       --schemes static,steal,morton --reps 3 --json "$out/octree-quick.json" ;;
split) # stealing against the static list under two grid splits
     for v in rr random; do
       TAILN=45 run split-$v 200 $b/gpk bench octree --backend cuda --n 1M,2M,4M,8M,16M --dists uniform,tube \
         --schemes static,steal --victim $v --grid-split 16384,65536 --reps 3 --json "$out/split-$v.json"; done ;;
phases) # static / steal / Morton interleaved: device time and the pool kernel's part, per round, keep_first
     # setting ("default": the environment left alone) and victim choice
     for r in ${GPK_OCTREE_ROUNDS:-1 2}; do for k in ${GPK_OCTREE_KEEPS:-default}; do for v in ${GPK_OCTREE_VICTIMS:-random rr}; do
       ( [ "$k" = default ] || export GPK_POOL_KEEP_FIRST=$k
         TAILN=0 run phases-k$k-$v-r$r 200 $b/gpk bench octree --backend cuda --n 1M,2M,4M,8M,16M --dists uniform,tube \
           --schemes static,steal,morton --victim $v --reps ${GPK_OCTREE_REPS:-9} --json "$out/phases-k$k-$v-r$r.json" )
     done; done; done
     python3 scripts/octree_ratio_table.py "$out"/phases-*.json ;;
cpuvictim) # the CPU pools' victim choice on this host's cores
     for v in random rr; do
       TAILN=12 run cpu-victim-$v 200 $b/gpk bench octree --backend cpu --n 1M,4M --dists uniform,tube --schemes static,steal \
         --victim $v --reps 5 --json "$out/cpu-victim-$v.json"; done ;;
grid) # Figures 2-3: threads per block x blocks (rows above the resident limit are refused)
     TAILN=90 run bench_octree_grid 200 $b/gpk bench octree --backend cuda --n 4M --dists uniform \
       --schemes static,queue,lockfree,steal --block-threads 32,64,128,256 --blocks 132,264,528,1056,1584 --reps 1 \
       --json "$out/grid-octree-gpu.json" ;;
esac; done
cd "$out" && tar czf logs.tar.gz *.log && rm -f *.log && echo "logs in logs.tar.gz"
