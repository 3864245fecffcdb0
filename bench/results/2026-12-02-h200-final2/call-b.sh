#!/usr/bin/env bash
# Final call B (warm, same build): descending against ascending (and CUB's
# descending), compute-sanitizer on the device API tests, the Python
# segmented CPU goal after the parallel copy, extra CUB rows.
set -u
export PATH=$PATH:/usr/local/cuda/bin
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s); DEADLINE=${DEADLINE:-330}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
b=build-gpu
alone() { # TYPE LOG2N VB DIST ORDER
  [ "$(left)" -lt 25 ] && { echo "$*: SKIP (time)" | tee -a $S; return; }
  timeout 40 $b/gpk-cub-alone $1 $2 $3 $4 9 $5 >$o/alone.tmp 2>&1; local rc=$?
  cat $o/alone.tmp >>$o/alone.log
  echo "$*: rc=$rc gpk $(grep '^gpk_cuda_sort' $o/alone.tmp | awk '{print $2, $NF}') | $(grep '^gpk / best' $o/alone.tmp)" | tee -a $S
}
echo "== descending / ascending, device API, 2^28 (gpk-cub-alone, median of 9)" | tee -a $S
for c in "u32 28 0" "f32 28 0" "i32 28 0" "u32 28 4" "u64 28 0"; do
  alone $c uniform asc; alone $c uniform desc
done
echo "== segmented 2^8 x 2^20, asc and desc" | tee -a $S
timeout 60 $b/gpk bench segmented --backend cuda --n 2^28 --reps 5 --seed 7 --shapes 2^20 \
  --cases u32,u32-desc,f32,f32-desc,u32-pairs,u32-pairs-desc >$o/seg-large.txt 2>&1
echo "rc=$?" | tee -a $S; grep -E 'gpk bench|segs|descending /|best|Radix' $o/seg-large.txt | tee -a $S
for tool in memcheck racecheck; do
  [ "$(left)" -lt 70 ] && { echo "$tool: SKIP (time)" | tee -a $S; continue; }
  t0=$(date +%s)
  GPK_TEST_SMALL=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/test_cuda_api >$o/$tool-api.log 2>&1
  echo "$tool test_cuda_api (small): rc=$? $(grep -E '^test_cuda_api' $o/$tool-api.log | tail -1) $(grep -m1 'ERROR SUMMARY' $o/$tool-api.log) ($(( $(date +%s) - t0 )) s)" | tee -a $S
done
if [ "$(left)" -gt 50 ]; then
  t0=$(date +%s)
  PYTHONPATH=$b/python-pkg timeout $(( $(left) - 30 )) python3 python/bench/segmented.py --n 2^28 --reps 3 >$o/seg-py.txt 2>&1
  echo "python segmented rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S; cat $o/seg-py.txt >>$S
fi
for c in "u32 28 0 reverse" "u32 28 0 equal" "u64 28 8 uniform"; do alone $c asc; done
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
