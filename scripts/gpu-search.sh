#!/usr/bin/env bash
# The GPU local search (issue 5) on a GPU machine, in one call of about 8
# minutes at most: build (Release, sm_90, build-gpu-search, -j16), run
# tests/test_search_cuda (GPK_REQUIRE_CUDA=1), gpk bench search with the GPU
# columns (Tables 1-4: tai30a, tai50a, tai100a, tai256c, pr439, pr1002,
# pr2392 2-opt), the multistart table (--gpus 1,2,4 on tai256c: rows above
# the GPUs present are skipped with a note), the 2-opt evaluation rate
# (pr2392, fnl4461, rl5915, pla33810: on-the-fly distances), a PPP 2-flip
# line (1301-1317, few iterations), CPU/GPU agreement of the CLI and a short
# compute-sanitizer memcheck of the new kernels when time is left.
#   GPK_DATA     instance directory (default $PWD/.carry/data: qaplib/, tsplib/)
#   OUT          output directory (default /tmp/out); at most 8 files land there:
#                summary.txt, bench-search.json, bench-ppp.json, logs.tar.gz
#   GPK_SEARCH_BUDGET  seconds for the whole script (default 470); optional
#                stages are skipped when less than they need is left
#   GPK_SEARCH_BUILD   build directory (default build-gpu-search); with
#   GPK_SEARCH_SKIP_BUILD=1 an existing build is used as it is (a dry run)
# Prints a short table last. Exit status 1 when a test, check or run failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out"
logs=$(mktemp -d /tmp/gpu-search-logs.XXXXXX)
data=${GPK_DATA:-$PWD/.carry/data}
build=${GPK_SEARCH_BUILD:-$root/build-gpu-search}
budget=${GPK_SEARCH_BUDGET:-470}
export PATH="$PATH:/usr/local/cuda/bin"
t_start=$(date +%s)
fail=0
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
left() { echo $(( budget - ($(date +%s) - t_start) )); }
# run NAME TIMEOUT CMD...: the command's stdout+stderr in $logs/NAME.log
run() {
  local name=$1 to=$2; shift 2
  local t
  t=$(date +%s)
  timeout "$to" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  note "== $name: exit $rc in $(( $(date +%s) - t )) s"
  [ $rc = 0 ] || { fail=1; grep -m 12 -E 'FAIL|ERROR|rror' "$logs/$name.log" | tee -a "$summary"; tail -n 3 "$logs/$name.log" | tee -a "$summary"; }
  return $rc
}
finish() {
  (cd "$logs" && tar czf "$out/logs.tar.gz" ./*.log 2>/dev/null)
  echo
  echo "================ gpu-search summary ($(( $(date +%s) - t_start )) s) ================"
  cat "$summary"
  if [ -f "$logs/bench.log" ]; then
    echo; echo "---- gpk bench search (speed, multistart, evaluation rate) ----"
    sed -n '/^instance/,$p' "$logs/bench.log" | cut -c1-190
  fi
  if [ -f "$logs/bench-ppp.log" ]; then
    echo; echo "---- PPP 2-flip ----"; grep -A3 '^instance' "$logs/bench-ppp.log" | cut -c1-190
  fi
  echo; echo "result: $([ $fail = 0 ] && echo ALL OK || echo FAILURES, see above and logs.tar.gz)"
  rm -rf "$logs"
  exit $fail
}

nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$summary"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "data: $data ($(ls "$data/qaplib" 2>/dev/null | wc -l) qaplib, $(ls "$data/tsplib" 2>/dev/null | wc -l) tsplib files); GPUs: $ngpu"

# ---- build: the library, the CLI and the test (no octree, OpenCL or CDP: not needed here) ----
t0=$(date +%s)
if [ "${GPK_SEARCH_SKIP_BUILD:-0}" = 1 ]; then
  note "build: skipped (GPK_SEARCH_SKIP_BUILD=1), using $build"
elif cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_CUDA_SEARCH=ON \
     -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF -DGPK_DATA_DIR="$data" \
     >"$logs/cmake.log" 2>&1 &&
   cmake --build "$build" -j 16 --target gpk_cli test_search_cuda test_search_algos >"$logs/build.log" 2>&1; then
  note "build: ok in $(( $(date +%s) - t0 )) s"
else
  fail=1
  note "build: FAILED after $(( $(date +%s) - t0 )) s"
  grep -m 20 -E 'error' "$logs/build.log" "$logs/cmake.log" | tee -a "$summary"
  tail -n 20 "$logs/build.log"
  finish
fi
gpk=$build/gpk

# ---- the test: every GPU choice against the CPU's, both paths and modes, whole searches ----
run test_search_cuda 200 env GPK_REQUIRE_CUDA=1 "$build/tests/test_search_cuda"
note "   $(grep -m1 '^seed' "$logs/test_search_cuda.log") / $(tail -n 1 "$logs/test_search_cuda.log")"

run test_search_algos 60 "$build/tests/test_search_algos" cpu "$data"
note "   $(tail -n 1 "$logs/test_search_algos.log")"

# ---- gpk bench search: Tables 1-4 with the GPU columns, Table 5, the 2-opt evaluation rate ----
run bench $(( $(left) > 240 ? 240 : $(left) - 60 )) "$gpk" bench search --data "$data" \
  --instances tai30a,tai50a,tai100a,tai256c,pr439,pr1002,pr2392 --iters 200 --reps 3 \
  --gpus 1,2,4 --multi tai256c --multi-iters 3000 \
  --eval-rate pr2392,fnl4461,rl5915,pla33810 --eval-seconds 1 --json "$out/bench-search.json"

# ---- PPP 2-flip, 1301-1317 (3 iterations: 1 CPU thread takes seconds per iteration) ----
if [ "$(left)" -gt 100 ]; then
  run bench-ppp 90 "$gpk" bench search --data "$data" --instances 1301-1317:flip2 --iters 3 --reps 1 \
    --json "$out/bench-ppp.json"
else
  note "bench-ppp: skipped ($(left) s left)"
fi

# ---- the CLI: --backend cuda / cpu agree, --eval, --gpus, the progress line and JSON ----
if [ "$(left)" -gt 60 ]; then
  Q=$data/qaplib/tai256c.dat T=$data/tsplib/pr1002.tsp
  cmp_best() { # label, then two JSON logs: the same best
    local a b
    a=$(sed -n 's/.*"best": \(-\{0,1\}[0-9]*\).*/\1/p' "$logs/$2.log" | head -n 1)
    b=$(sed -n 's/.*"best": \(-\{0,1\}[0-9]*\).*/\1/p' "$logs/$3.log" | head -n 1)
    if [ -n "$a" ] && [ "$a" = "$b" ]; then note "   $1: both $a"; else note "   $1: MISMATCH '$a' vs '$b'"; fail=1; fi
  }
  run cli-qap-cpu 60 "$gpk" qap "$Q" --backend cpu --algo tabu --iters 300 --seed 3 --json
  run cli-qap-cuda 60 "$gpk" qap "$Q" --backend cuda --algo tabu --iters 300 --seed 3 --json
  run cli-qap-paper 60 "$gpk" qap "$Q" --backend cuda --eval paper --algo tabu --iters 300 --seed 3 --json
  cmp_best "qap tai256c tabu cpu / cuda ours" cli-qap-cpu cli-qap-cuda
  cmp_best "qap tai256c tabu cpu / cuda paper" cli-qap-cpu cli-qap-paper
  run cli-tsp-cpu 60 "$gpk" tsp "$T" --backend cpu --algo its --iters 100 --global 2 --seed 2 --json
  run cli-tsp-cuda 60 "$gpk" tsp "$T" --backend cuda --algo its --iters 100 --global 2 --seed 2 --json
  cmp_best "tsp pr1002 its cpu / cuda" cli-tsp-cpu cli-tsp-cuda
  run cli-ppp-cuda 60 "$gpk" ppp --m 73 --n 73 --nb flip2 --backend cuda --algo tabu --iters 300 --json
  run cli-ppp-cpu 60 "$gpk" ppp --m 73 --n 73 --nb flip2 --backend cpu --algo tabu --iters 300 --json
  cmp_best "ppp 73-73 flip2 tabu cpu / cuda" cli-ppp-cpu cli-ppp-cuda
  run cli-gpus1 60 "$gpk" qap "$Q" --gpus 1 --algo tabu --iters 300 --starts 2 --seed 3 --json
  grep -q '"gpus": 1' "$logs/cli-gpus1.log" || { note "   --gpus 1: no \"gpus\": 1 in the JSON"; fail=1; }
  k=$((ngpu + 1))
  timeout 60 "$gpk" qap "$Q" --gpus $k --algo tabu --iters 10 >"$logs/cli-gpus-too-many.log" 2>&1
  rc=$?
  if [ $rc = 1 ] && grep -q "gpus $k: cannot use CUDA device" "$logs/cli-gpus-too-many.log"; then
    note "   --gpus $k on $ngpu GPU(s): refused as expected: $(grep -m1 'gpus' "$logs/cli-gpus-too-many.log")"
  else
    note "   --gpus $k on $ngpu GPU(s): exit $rc, unexpected: $(head -n 2 "$logs/cli-gpus-too-many.log")"; fail=1
  fi
  if [ "$ngpu" -ge 2 ]; then
    run cli-gpus2 90 "$gpk" qap "$Q" --gpus 2 --algo tabu --iters 300 --starts 2 --seed 3 --json
    cmp_best "qap --gpus 1 / --gpus 2 (2 starts)" cli-gpus1 cli-gpus2
  fi
else
  note "cli: skipped ($(left) s left)"
fi

# ---- compute-sanitizer memcheck of short GPU searches (the new kernels), if time is left ----
if command -v compute-sanitizer >/dev/null 2>&1 && [ "$(left)" -gt 70 ]; then
  for spec in "qap $data/qaplib/tai30a.dat" "tsp $data/tsplib/pr439.tsp" "ppp --m 31 --n 31 --nb flip2"; do
    [ "$(left)" -gt 40 ] || break
    for ev in ours paper; do
      name=memcheck-$(echo "$spec" | cut -d' ' -f1)-$ev
      # shellcheck disable=SC2086
      run "$name" 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$gpk" $spec --backend cuda --eval $ev \
        --algo tabu --iters 15 -q
    done
  done
else
  note "memcheck: skipped ($(left) s left or no compute-sanitizer)"
fi

finish
