### call1.sh
#!/usr/bin/env bash
# Session call 1: tile-shape sweep (CUB's shapes), 3 x 11-bit passes, sorted
# input, and an ncu look at sorted vs uniform passes. Short table last.
set -u
export PATH=$PATH:/usr/local/cuda/bin
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a $S
uname -r | tee -a $S
t0=$(date +%s)
T=build-tune; mkdir -p $T
V=(default)
add() { python3 bench/tuning/variant.py $T/$1.h $2 && V+=("$1:-DGPK_RADIX_CUDA_TUNING=\\\"$PWD/$T/$1.h\\\""); }
add k19 8,4,0=384,19,2
add k19b3 8,4,0=384,19,3
add k20 8,4,0=384,20,2

add p23 8,4,4=384,23,2
add p17 8,4,4=384,17,2
sh bench/radix_cuda_tune.sh $T "${V[@]}" >$o/tune-build.log 2>&1 || { tail -30 $o/tune-build.log; exit 1; }
echo "tune build $(( $(date +%s) - t0 )) s" | tee -a $S
for v in default k19 k19b3 k20; do
  for n in 268435456 16777216; do
    timeout 200 $T/radix_cuda_tune_$v --perf --n $n --reps 15 --label $v --only u32,f32,u32sorted,u32r11 >$o/perf-$v-$n.log 2>&1
    echo "[$v n=$n rc=$?]" >>$S; grep -E "^(u32|f32)" $o/perf-$v-$n.log | grep -v ":" | awk '{print "  "$0}' >>$S
  done
done
for v in default p23 p17; do
  for n in 268435456 16777216; do
    timeout 200 $T/radix_cuda_tune_$v --perf --n $n --reps 15 --label $v --only pairs,pairssorted >$o/perf-$v-$n.log 2>&1
    echo "[$v n=$n rc=$?]" >>$S; grep -E "^u32/u32" $o/perf-$v-$n.log | grep -v ":" | awk '{print "  "$0}' >>$S
  done
done
if command -v ncu >/dev/null; then
  for c in u32 u32sorted; do
    timeout 200 ncu --clock-control none -k regex:nesweep -c 6 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
      $T/radix_cuda_tune_default --perf --n 16777216 --reps 1 --only $c >$o/ncu-$c.log 2>&1
    echo "ncu $c rc=$?" >>$S
    grep -E "onesweep|Onesweep|Duration|DRAM Throughput|Memory Throughput|Stall Long|Warp Cycles Per Issued|L2 Hit" $o/ncu-$c.log | head -80 >$o/ncu-$c.short
  done
fi
echo "total $(( $(date +%s) - t0 )) s" | tee -a $S
cat $S
### call2.sh
#!/usr/bin/env bash
# Session call 2: occupancy sweep (3 and 4 blocks an SM) for every 8-bit row.
set -u
export PATH=$PATH:/usr/local/cuda/bin
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
t0=$(date +%s)
T=build-tune2; mkdir -p $T
V=(default)
add() { n=$1; shift; python3 bench/tuning/variant.py $T/$n.h "$@" && V+=("$n:-DGPK_RADIX_CUDA_TUNING=\\\"$PWD/$T/$n.h\\\" -Xptxas -v"); }
add k19b3 8,4,0=384,19,3
add A 8,4,0=384,16,3 8,4,4=384,16,3 8,8,0=384,12,3 8,8,8=256,12,3
add B 8,4,0=384,20,3 8,4,4=256,20,3 8,8,0=256,16,3 8,8,8=256,10,3
add C 8,4,0=256,24,4 8,4,4=256,24,3 8,8,0=256,12,4 8,8,8=256,8,4
add D 8,4,0=256,16,4 8,4,4=256,16,4 8,8,0=384,10,3 8,8,8=384,8,3
sh bench/radix_cuda_tune.sh $T "${V[@]}" >$o/tune-build.log 2>&1 || { tail -30 $o/tune-build.log; exit 1; }
echo "tune build $(( $(date +%s) - t0 )) s" | tee -a $S
for v in default k19b3 A B C D; do
  grep -E "spill|Used" $T/radix_cuda_$v.log | grep -B1 -A0 "spill" | head -0
  for n in 268435456 16777216; do
    timeout 250 $T/radix_cuda_tune_$v --perf --n $n --reps 15 --label $v --only u32,f32,pairs,u64,pairs64 >$o/perf-$v-$n.log 2>&1
    echo "[$v n=$n rc=$?]" >>$S; grep -E "^(u32|f32|u64)" $o/perf-$v-$n.log | grep -v "ours" | awk '{print "  "$0}' >>$S
  done
done
echo "total $(( $(date +%s) - t0 )) s" | tee -a $S
cat $S
#!/usr/bin/env bash
# Final call: build the merged tree, the CUDA tests of every changed path,
# gpk vs CUB at its best, the segmented goals against CUB and torch.sort.
# Every step has its own timeout; the whole call ends by DEADLINE seconds.
set -u
export PATH=$PATH:/usr/local/cuda/bin
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s); DEADLINE=${DEADLINE:-300}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
b=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_OPENCL=OFF -DGPK_WITH_MPI=OFF \
  -DGPK_FUZZ=OFF >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
cmake --build $b -j16 --target gpk_cli test_cuda_api test_radix test_segmented test_descending gpk_cub_alone gpk_bench \
  >$o/build.log 2>&1 || { grep -B3 -A12 -m3 "error" $o/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - T0 )) s" | tee -a $S
run_test() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local l=$(left); [ "$l" -lt 20 ] && { echo "$name: SKIP (time)" | tee -a $S; return; }
  [ "$t" -gt "$l" ] && t=$l
  local t0=$(date +%s)
  GPK_REQUIRE_CUDA=1 timeout $t "$@" >$o/$name.log 2>&1; local rc=$?
  echo "$name: rc=$rc $(tail -n 1 $o/$name.log | cut -c1-150) ($(( $(date +%s) - t0 )) s)" | tee -a $S
  grep -m 6 -iE "fail|error" $o/$name.log | head -6 | tee -a $S
}
GPK_TEST_SMALL=1 run_test api 50 $b/tests/test_cuda_api
run_test radix_quick 60 $b/tests/test_radix cuda quick
GPK_TEST_SMALL=1 run_test segmented 50 $b/tests/test_segmented cuda
GPK_TEST_SMALL=1 run_test descending 40 $b/tests/test_descending cuda
echo "== gpk vs CUB at its best (gpk-cub-alone, median of 9)" | tee -a $S
for c in "u32 28 0 uniform" "f32 28 0 uniform" "u32 12 0 uniform" "u32 28 0 sorted" "u32 28 4 uniform"; do
  [ "$(left)" -lt 110 ] && { echo "$c: SKIP (time)" >>$S; continue; }
  set -- $c
  timeout 30 $b/gpk-cub-alone $1 $2 $3 $4 9 >$o/alone.tmp 2>&1; rc=$?
  cat $o/alone.tmp >>$o/alone.log
  echo "$c: rc=$rc gpk $(grep '^gpk_cuda_sort' $o/alone.tmp | awk '{print $2, $NF}') | $(grep '^gpk / best' $o/alone.tmp)" | tee -a $S
done
if [ "$(left)" -gt 80 ]; then
  # the 85 900-city goal: gpk tsp with only a 60 s limit on this host's 16
  # cores, random uniform cities; the optimum estimated by BHH (an estimate)
  timeout 75 $b/gpk tsp --random 85900 --time-limit 60 --json -q >$o/tsp85900.json 2>$o/tsp85900.err
  echo "tsp 85900 rc=$? $(python3 -c 'import json,math,sys; r=json.load(open(sys.argv[1])); e=0.7124*math.sqrt(85900*1e12); print("best", r.get("best"), "vs BHH estimate %.0f: %+.3f %%" % (e, 100*(r["best"]/e-1)), "algo", r.get("algo"), "nb", r.get("nb"), "backend", r.get("backend"), "iters", r.get("iterations"))' $o/tsp85900.json 2>&1 | tail -1)" | tee -a $S
fi
if [ "$(left)" -gt 45 ]; then
  timeout $(( $(left) - 25 )) $b/gpk bench segmented --backend cuda --n 2^26 --reps 3 --cases goals \
    >$o/segmented.txt 2>&1; echo "bench segmented 2^26 rc=$?" | tee -a $S
  tail -n 40 $o/segmented.txt >>$S
fi
if [ "$(left)" -gt 20 ]; then
  timeout $(( $(left) - 8 )) python3 bench/peers_torch_segmented.py --n 2^26 --reps 3 >$o/torch.jsonl 2>&1
  echo "torch rc=$?" | tee -a $S; cat $o/torch.jsonl | cut -c1-160 >>$S
fi
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
cat $S
