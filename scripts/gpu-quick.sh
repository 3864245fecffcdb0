#!/usr/bin/env bash
# The CUDA quicksort on a GPU: build, test_quick cuda, then the stages in
# GPK_QUICK_STAGES (default "exp"):
#   exp       bench/quick_experiments.sh (per-kernel times, knobs, records, recursion)
#   paper     gpk bench quicksort, u32 and f64, the six distributions, 2^20..2^25,
#             records with 16/32/64-byte payloads (JSON: quicksort-gpu.json)
#   paperkeys paper without the records (JSON: quicksort-gpu-keys.json)
#   keys25    the keys rows of paper at 2^25 only (JSON: quicksort-gpu-2e25.json)
#   records   records only at 2^25, payloads $GPK_QUICK_PAYLOADS (default 16,32,64;
#             JSON: quicksort-gpu-records.json)
#   big       the same at 2^28 (256M keys; JSON: quicksort-gpu-256M.json)
#   memcheck  test_quick cuda (GPK_TEST_SMALL=1) under compute-sanitizer memcheck
#   racecheck the same under racecheck
# Logs and JSON in $OUT; docs/perf/quicksort.md says what the figures mean.
set -u
. "$(dirname "$0")/gpu-lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
gpu_build gpk_cli test_quick test_cuda_api
[ -n "${GPK_QUICK_NOTEST:-}" ] || run test_quick 300 $b/tests/test_quick cuda
for s in ${GPK_QUICK_STAGES:-exp}; do case $s in
exp) TAILN=200 run experiments 400 bash "$root/bench/quick_experiments.sh" $b "${GPK_QUICK_N:-2^25}" \
       "${GPK_QUICK_PARTS:-prof knobs records cdp}" ;;
paper) TAILN=0 run bench_paper 500 $b/gpk bench quicksort --types u32,f64 --n 2^20,2^21,2^22,2^23,2^24,2^25 \
         --records --json "$out/quicksort-gpu.json"
       python3 "$root/bench/quick_table.py" "$out/quicksort-gpu.json" ;;
paperkeys) TAILN=0 run bench_paperkeys 480 $b/gpk bench quicksort --types u32,f64 \
         --n 2^20,2^21,2^22,2^23,2^24,2^25 --json "$out/quicksort-gpu-keys.json"
       python3 "$root/bench/quick_table.py" "$out/quicksort-gpu-keys.json" ;;
keys25) TAILN=0 run bench_2e25 300 $b/gpk bench quicksort --types u32,f64 --n 2^25 --json "$out/quicksort-gpu-2e25.json"
       python3 "$root/bench/quick_table.py" "$out/quicksort-gpu-2e25.json" ;;
big) TAILN=0 run bench_256M 500 $b/gpk bench quicksort --types u32,f64 --n 2^28 --reps 3 \
       --json "$out/quicksort-gpu-256M.json"
     python3 "$root/bench/quick_table.py" "$out/quicksort-gpu-256M.json" ;;
records) TAILN=0 run bench_records 300 $b/gpk bench quicksort --n 2^25 --records-only --reps 5 \
         --payloads ${GPK_QUICK_PAYLOADS:-16,32,64} \
         --json "$out/quicksort-gpu-records.json"
       python3 "$root/bench/quick_table.py" "$out/quicksort-gpu-records.json" ;;
memcheck|racecheck) GPK_TEST_SMALL=1 TAILN=4 run $s-quick ${GPK_QSAN_TIMEOUT:-400} compute-sanitizer --tool $s --error-exitcode 9 \
       $b/tests/test_quick cuda ;;
esac; done
