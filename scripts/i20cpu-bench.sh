#!/usr/bin/env bash
# Issue 20's CPU goal on the 16-core GPU host: gpk.sort of 2^26 float64
# (normal(0, 1), python/bench/bench.py's data) at least 5x numpy.sort, and
# the CPU radix sort's 2^28 figures against __gnu_parallel::sort. No GPU work.
#   scripts/i20cpu-bench.sh            (about 2-4 minutes on 16 cores)
# Uses the CUDA build in $GPK_GPU_BUILD (default build-gpu; configured if
# absent), builds the `gpk` CLI and the extension gpk._gpk there (plain CMake,
# as scripts/gpu-check.sh python does), writes logs and JSON to $OUT (or
# ./i20cpu-out) and prints a short table last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/i20cpu-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
py=${PYTHON:-python3}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
note "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $("$py" -c 'import numpy; print("numpy", numpy.__version__)' 2>&1)"

t0=$(date +%s)
{ [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90; } >"$out/build.log" 2>&1
{ cmake -S "$root" -B "$build" -DGPK_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v "$py")" &&
  cmake --build "$build" -j "$(nproc)" --target gpk_cli _gpk; } >>"$out/build.log" 2>&1
brc=$?
note "build: exit $brc ($(( $(date +%s) - t0 )) s)"
[ $brc = 0 ] || { tail -n 30 "$out/build.log"; exit 1; }
pkg=$build/python-pkg-i20
rm -rf "$pkg" && mkdir -p "$pkg/gpk" &&
  cp "$root"/python/src/gpk/*.py "$root"/python/src/gpk/*.pyi "$pkg/gpk/" && cp "$build"/python/_gpk*.so "$pkg/gpk/"

# The copying sort (gpk.sort: gpk_sort_keys_to) against numpy.sort, and the
# in-place ones, on every core; then on 8 threads for the scaling; then every
# core again with f64's first level counted as in v10 (GPK_CPU_RADIX_FIRST=
# count: the detection writes the mapped keys) instead of planned from a
# sample (v11, the default), and the default once more: the A/B of v11's
# sampled first level in one run.
for run in 0 8 0-count 0-again; do
  th=${run%%-*}
  first=$([ "$run" = 0-count ] && echo count || echo sample)
  ( cd "$root" && GPK_CPU_RADIX_FIRST=$first GPK_THREADS=$([ $th = 0 ] && nproc || echo $th) PYTHONPATH=$pkg \
      timeout 300 "$py" python/bench/bench.py --only cpu --cpu-n 2^26 --reps 5 --out "$out/python-cpu-t$run.json" ) \
    >"$out/python-cpu-t$run.txt" 2>&1
  note "python bench (threads ${th/#0/all}, first level $first): exit $?"
done
# The test of the copying sort's Python path on this machine, quickly.
( cd "$root" && PYTHONPATH=$pkg timeout 300 "$py" -m pytest -q -p no:cacheprovider python/tests/test_sort.py ) \
  >"$out/python-test-sort.log" 2>&1
note "python/tests/test_sort.py: $(tail -n 1 "$out/python-test-sort.log")"

# The CPU radix sort against __gnu_parallel::sort, every core.
timeout 400 "$build/gpk" bench sort --backends cpu --types u32,f32,u64,f64 --n 2^26,2^28 \
  --peers gnu-parallel --reps 3 --json "$out/bench-sort-cpu.json" >"$out/bench-sort-cpu.txt" 2>&1
note "gpk bench sort cpu: exit $?"

echo
echo "== python/bench/bench.py --only cpu --cpu-n 2^26 (normal(0,1) float64; goal: gpk.sort >= 5x numpy.sort)"
for run in 0 8 0-count 0-again; do echo "-- threads ${run/#0/all}"; grep -h "cpu float64" "$out/python-cpu-t$run.txt"; done
echo "== gpk bench sort --backends cpu (uniform; floats in [0, 1))"
grep -E "^backend|^cpu|FAIL" "$out/bench-sort-cpu.txt" | head -n 40
cat "$summary"
