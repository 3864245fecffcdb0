#!/usr/bin/env bash
# Issue 17, part 3: the local search's multistart across MPI ranks on
# nvidia-h100-x2 (2 H100s, OpenMPI). At most 60 s (GPK_BUDGET), on a tree
# already built with CUDA (sm_90) and MPI; nothing is built here.
#   scripts/gpu-mpi-search.sh BUILD_DIR        (or GPK_GPU_BUILD; default build-gpu)
#   GPK_DATA: the instances (default .carry/data in the repository root, a
#   copy of ../shared/data; qaplib/tai256c.dat, tai12a.dat, nug12.dat,
#   tsplib/burma14.tsp are read)
# 1. test_mpi_search cuda under mpirun -np 2, one GPU per rank: every result
#    equal to one process's (best, solution, best run, totals; every
#    neighbour on a GPU), starts the ranks do not divide and more ranks than
#    starts, bad input on one rank refused on every rank (another instance,
#    another seed or iteration count, no contexts, a NULL problem, a failing
#    search), a cancel on one rank and a time limit.
# 2. the multistart rows: 2 tabu searches of 3000 iterations on tai256c (the
#    issue's 1.96x measurement) on 1 and 2 GPUs of one process and on 1 and
#    2 MPI ranks of one GPU each, one mpirun launch (gpk_mpi_search_bench,
#    median of 3); the goal: 2 ranks >= 1.8x one GPU.
# 3. if time is left: `mpirun -np 2 gpk qap tai256c.dat --mpi` (gpk runs
#    gpk-mpi) against `gpk qap --gpus 2`: the same best.
# Output: $OUT/i17ms/summary.txt (printed last) and $OUT/i17ms/logs.tar.gz
# (logs, the rows' JSON, the .sln written by rank 0).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${GPK_GPU_BUILD:-$root/build-gpu}}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
out=${OUT:-$root/gpu-mpi-search-out}/i17ms
data=${GPK_DATA:-$root/.carry/data}
mkdir -p "$out/logs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
# --bind-to none: Open MPI binds each of 2 ranks to one core by default,
# which would put the one-process rows' two GPU-driving threads on a
# single core.
MPIRUN="mpirun --oversubscribe --bind-to none"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
deadline=$(( start + ${GPK_BUDGET:-60} - 3 ))
note "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | paste -sd ';'); build $build; data $data"
for f in "$build/tests/test_mpi_search" "$build/gpk_mpi_search_bench" "$build/gpk" "$data/qaplib/tai256c.dat"; do
  [ -e "$f" ] || note "MISSING: $f"
done

# runlog NAME TIMEOUT command...: bounded by its timeout and the deadline.
runlog() {
  local name=$1 t=$2; shift 2
  local s=$(date +%s) left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 5 ]; then note "$name: SKIPPED (budget)"; return 1; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout -s KILL "$t" "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc$([ $rc -eq 137 ] && echo ' (TIMEOUT)') ($(( $(date +%s) - s )) s)"
  return $rc
}

# 1. correctness on 2 GPUs (77, no usable device, is a failure here)
runlog test_cuda_np2 25 $MPIRUN -np 2 "$build/tests/test_mpi_search" cuda "$data"
grep -E "checks|FAIL|skipped" "$out/logs/test_cuda_np2.log" | head -n 8 | tee -a "$summary"

# 2. the multistart rows
json=$out/logs/mpi-search-tai256c-2x3000.json
runlog table 28 $MPIRUN -np 2 "$build/gpk_mpi_search_bench" --instance tai256c --data "$data" --searches 2 \
  --iters 3000 --gpus 1,2 --reps 3 --json "$json"
goal="not measured"
if [ -f "$json" ]; then
  goal=$(python3 - "$json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["row"]: r for r in d["rows"]}
one, two = rows.get("1 process, 1 GPU"), rows.get("MPI, 2 ranks")
if not one or not two or "ms" not in one or "ms" not in two:
    print("rows missing")
else:
    x = one["ms"] / two["ms"]
    print("%.2fx (%.1f -> %.1f ms): %s" % (x, one["ms"], two["ms"], "MET" if x >= 1.8 else "MISSED"))
EOF
)
fi

# 3. the command line
q=$data/qaplib/tai256c.dat
if runlog cli_mpi_np2 12 $MPIRUN -np 2 "$build/gpk" qap "$q" --mpi --algo tabu --iters 3000 --starts 2 --json \
    --out "$out/logs/tai256c-mpi.sln"; then
  runlog cli_gpus2 8 "$build/gpk" qap "$q" --gpus 2 --algo tabu --iters 3000 --starts 2 --json
  b1=$(grep -o '"best": [0-9]*' "$out/logs/cli_mpi_np2.log" | head -n 1)
  b2=$(grep -o '"best": [0-9]*' "$out/logs/cli_gpus2.log" | head -n 1)
  note "cli: gpk --mpi on 2 ranks $b1, gpk --gpus 2 $b2: $([ -n "$b1" ] && [ "$b1" = "$b2" ] && echo same || echo DIFFERENT);\
 --out: $(head -n 1 "$out/logs/tai256c-mpi.sln" 2>/dev/null)"
fi

sed -n '/^Multistart/,$p' "$out/logs/table.log" 2>/dev/null >>"$summary"
note "goal (2 ranks x 1 GPU vs 1 GPU, 2 x 3000 tabu on tai256c, >= 1.8x): $goal"
note "total: $(( $(date +%s) - start )) s"
(cd "$out" && tar czf logs.tar.gz logs && rm -rf logs)
echo
echo "==== i17ms summary: multistart across MPI ranks ===="
cat "$summary"
