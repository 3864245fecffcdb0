#!/usr/bin/env bash
# Issue 18's measurements on the 16-core GPU host, one part per call (each
# under 10 minutes). Builds once into build-issue18 (CUDA when nvcc is
# found), then runs PART; results land in $OUT (default /tmp/out).
#   scripts/issue18-host.sh tsp1|tsp2|tsp3|tsp4   TSP quality, 10 s, 16 threads, 5 seeds
#                                                  (100-150, 151-280, 281-500, 501-1000 cities)
#   scripts/issue18-host.sh large                  pla33810, 100k and 1M random, 60 s each
#   scripts/issue18-host.sh qap                    tai*a up to 100, ITS default budget, 5 seeds
#   scripts/issue18-host.sh cuda                   test_search_cuda, and CPU / CUDA agreement
#                                                  of 2-opt tabu above the matrix threshold
#                                                  (the tabu list keyed by city)
#   GPK_DATA  instance directory (default ../shared/data, else $PWD/.carry/data)
set -u
part=${1:?usage: issue18-host.sh tsp1|tsp2|tsp3|tsp4|large|qap|cuda}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out"
data=${GPK_DATA:-$root/../shared/data}
[ -d "$data/tsplib" ] || data=$root/.carry/data
export PATH="$PATH:/usr/local/cuda/bin"
build=$root/build-issue18
if [ ! -x "$build/gpk" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_CUDA_OCTREE=OFF \
    -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF -DGPK_DATA_DIR="$data" >"$out/cmake.log" 2>&1 &&
    cmake --build "$build" -j 16 --target gpk_cli test_search_cuda test_search_ls >"$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log"; exit 1; }
fi
gpk=$build/gpk
fail=0
case $part in
tsp1) range="100 150" ;;
tsp2) range="151 280" ;;
tsp3) range="281 500" ;;
tsp4) range="501 1000" ;;
esac
case $part in
tsp[1-4])
  # shellcheck disable=SC2086
  GPK_TSPLIB=$data/tsplib "$root/bench/tsp_quality.sh" "$gpk" "$out/tsp-$part.json" 10 16 5 $range |
    tee "$out/tsp-$part.txt" ;;
large)
  for spec in "$data/tsplib/pla33810.tsp" "--random 100000" "--random 1M"; do
    name=$(echo "$spec" | sed 's/.*\///; s/\.tsp//; s/--random /rand/')
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e s wall, %M KB max RSS" "$gpk" tsp $spec --nb or2opt --algo its --time-limit 60 \
      --threads 16 -q --json >"$out/tsp-$name-60s.json" 2>"$out/tsp-$name-60s.err" || fail=1
    echo "$name: $(sed -n 's/.*"best": \([0-9]*\).*"best_known": \([0-9]*\).*"gap_percent": \([-0-9.]*\).*/best \1, reference \2, gap \3 %/p' \
      "$out/tsp-$name-60s.json"), $(cat "$out/tsp-$name-60s.err")"
  done ;;
qap)
  GPK_QAPLIB=$data/qaplib "$root/bench/qap_quality.sh" "$gpk" "$out/qap-tai-a.json" 5 100 | tee "$out/qap-tai-a.txt" ;;
cuda)
  GPK_REQUIRE_CUDA=1 timeout 300 "$build/tests/test_search_cuda" >"$out/test_search_cuda.log" 2>&1 || fail=1
  tail -n 2 "$out/test_search_cuda.log"
  timeout 200 "$build/tests/test_search_ls" "$data" >"$out/test_search_ls.log" 2>&1 || fail=1
  tail -n 1 "$out/test_search_ls.log"
  # 33810 > GPK_TSP_MATRIX_MAX: the tabu list is keyed by city on both sides.
  for be in cpu cuda; do
    timeout 120 "$gpk" tsp "$data/tsplib/pla33810.tsp" --nb 2opt --algo tabu --iters 30 --seed 4 --backend $be \
      --threads 16 -q --json >"$out/pla-tabu-$be.json" || fail=1
  done
  a=$(sed -n 's/.*"best": \([0-9]*\).*/\1/p' "$out/pla-tabu-cpu.json")
  b=$(sed -n 's/.*"best": \([0-9]*\).*/\1/p' "$out/pla-tabu-cuda.json")
  echo "pla33810 2-opt tabu, 30 iterations: cpu $a, cuda $b"
  [ -n "$a" ] && [ "$a" = "$b" ] || { echo "MISMATCH"; fail=1; } ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
echo "result: $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
