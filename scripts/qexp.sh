set -u; export PATH=$PATH:/usr/local/cuda/bin
GPK_REQUIRE_CUDA=1 timeout 150 .carry/test_quick cuda > $OUT/test_quick.log 2>&1; echo "test_quick cuda: rc $? $(tail -n 1 $OUT/test_quick.log)"; grep -m5 -i "fail" $OUT/test_quick.log
for t in u32 f64; do echo "-- $t"; timeout 60 bash scripts/qprof.sh .carry/gpk $t 2^25 uniform quick; done
for v in gpk gpk_B gpk_C; do
  .carry/$v bench quicksort -q --n 2^25 --types u32,f64 --dists uniform,gaussian --impls quick,cub-merge --reps 10 2>&1 | grep '^cuda' | sed "s/^cuda/$v/" | cut -c1-100
done
.carry/gpk bench quicksort -q --n 2^25 --dists uniform --records-only --payloads 32 --impls quick,cub-index,thrust-index --reps 5 2>&1 | grep '^cuda' | cut -c1-110
.carry/gpk bench quicksort -q --n 2^25 --types u32 --dists uniform --impls quick-recursive --reps 5 2>&1 | grep '^cuda' | cut -c1-110
