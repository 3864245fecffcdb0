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
