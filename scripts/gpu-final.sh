#!/usr/bin/env bash
# The closing runs of issues 4 and 5 on a GPU machine (one call per stage):
#   f1: scripts/gpu-check.sh build test (every suite, CUDA and OpenCL on the
#       NVIDIA device required), the 2-opt evaluation rate, the octree
#       threads x blocks grid (Figures 2-3)
#   f2: the local search's quality table (ITS 10 x 1000, 10 seeds) and the
#       paper's Tables 1 (QAP) and 4 (TSP, swap as in the paper; 2-opt)
#   tsp: the 2-opt kernel alone: test_search_cuda, the evaluation rate,
#       Nsight Compute (pla33810)
# GPK_DATA: instances (default $PWD/.carry/data). Outputs under $OUT.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/gpu-final-out}
mkdir -p "$out"
data=${GPK_DATA:-$root/.carry/data}
b=${GPK_GPU_BUILD:-$root/build-gpu}
fail=0
run() { # name timeout cmd...: output in $out/name.txt, its last lines shown
  local name=$1 to=$2; shift 2; local t=$(date +%s)
  timeout "$to" "$@" >"$out/$name.txt" 2>&1; local rc=$?
  [ $rc = 0 ] || fail=1
  echo "== $name: exit $rc in $(( $(date +%s) - t )) s"; tail -n ${TAILN:-25} "$out/$name.txt"
}
for stage in ${*:-f1}; do case $stage in
f1)
  OUT=$out/check bash scripts/gpu-check.sh build test || fail=1
  TAILN=8 run eval-rate 120 "$b/gpk" bench search --data "$data" --instances eil101 --iters 2 --reps 1 \
    --eval-rate pr2392,fnl4461,rl5915,pla33810 --eval-seconds 2 --json "$out/eval-rate.json"
  TAILN=90 run octree-grid 200 "$b/gpk" bench octree --backend cuda --n 4M --dists uniform \
    --schemes static,queue,lockfree,steal --block-threads 32,64,128,256 --blocks 132,264,528,1056,1584 --reps 1 \
    --json "$out/octree-grid.json" ;;
f2)
  [ -x "$b/gpk" ] || OUT=$out/check bash scripts/gpu-check.sh build >/dev/null || fail=1
  TAILN=30 run quality 300 "$b/gpk" bench search --data "$data" --iters 2 --reps 1 --quality --seeds 10 \
    --instances tai12a,tai15a,tai17a,tai20a,tai25a,tai30a,tai35a,tai40a,tai50a,tai60a,tai80a,tai100a,tai150b,tai256c,eil101,lin318,pcb442,pcb1173,pr2392 \
    --json "$out/quality.json"
  TAILN=30 run tables 240 "$b/gpk" bench search --data "$data" --iters 20 --reps 3 \
    --instances tai12a,tai15a,tai17a,tai20a,tai25a,tai30a,tai35a,tai40a,tai50a,tai60a,tai80a,tai100a,tai150b,tai256c,eil101:swap,d198:swap,lin318:swap,pcb442:swap,rat783:swap,pcb1173:swap,pr2392:swap,fnl4461:swap,rl5915:swap,pr2392,fnl4461 \
    --json "$out/tables.json" ;;
tsp) # the 2-opt kernel: its test, the evaluation rate, Nsight Compute on pla33810
  cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.txt" 2>&1 &&
    cmake --build "$b" -j 16 --target gpk_cli test_search_cuda >"$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; fail=1; }
  GPK_REQUIRE_CUDA=1 TAILN=3 run test-search-cuda 200 "$b/tests/test_search_cuda"
  TAILN=7 run eval-rate 120 "$b/gpk" bench search --data "$data" --instances tai12a --iters 2 --reps 1 \
    --eval-rate pr2392,fnl4461,rl5915,pla33810 --eval-seconds 2 --json "$out/eval-rate.json"
  TAILN=60 run ncu-2opt 240 ncu --clock-control none --kernel-name regex:k_2opt_tiled --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis \
    "$b/gpk" bench search --data "$data" --instances tai12a --iters 2 --reps 1 --eval-rate pla33810 \
    --eval-seconds 1 ;;
esac; done
# The device tool brings back 8 files at most: the JSON loose, the rest in one archive.
( cd "$out" && find . -type f ! -name '*.json' ! -name logs.tar.gz -printf '%P\n' >.list &&
  tar czf logs.tar.gz -T .list && xargs rm -f <.list && rm -f .list &&
  find . -mindepth 2 -name '*.json' -exec mv {} . \; ; find . -mindepth 1 -type d -empty -delete ) 2>/dev/null
[ $fail = 0 ] && echo "gpu-final: all passed" || echo "gpu-final: FAILURES"
exit $fail
