#!/usr/bin/env bash
# Issue 17, part 3: the local search's multistart across MPI ranks on
# nvidia-h100-x2 (2 H100s, 16+ cores, OpenMPI, CUDA). About 2 minutes with a
# built tree, under 4 with the build.
#   scripts/gpu-mpi-search.sh [BUILD_DIR]      (default build-gpu)
#   GPK_STAGES="build test table cli" (default: all), GPK_DATA (default
#   .carry/data in the repository root, a copy of ../shared/data)
# build: configures BUILD_DIR when it has no CMake cache (sm_90, MPI on) and
#        builds gpk_mpi, test_mpi_search, gpk_mpi_search_bench and gpk-mpi
#        (the program `gpk ... --mpi` runs; it needs no benchmark peers).
# test:  test_mpi_search cuda under mpirun -np 2 (one GPU per rank), -np 1
#        (one GPU) and -np 3 (3 ranks on 2 GPUs): every result equal to one
#        process's, every neighbour evaluated on a GPU, bad input on one
#        rank refused on all, a cancel on one rank and a time limit; then
#        the CPU version on 4 ranks.
# table: the multistart table: 2 tabu searches of 3000 iterations on
#        tai256c (the issue's 1.96x measurement), and 4 searches, on 1 and
#        2 GPUs of one process and on 1 and 2 MPI ranks of one GPU each, in
#        one mpirun launch; the goal: 2 ranks >= 1.8x one GPU.
# cli:   `mpirun -np 2 gpk-mpi qap tai256c.dat --mpi` (what `gpk ... --mpi`
#        runs) against `gpk-mpi qap --gpus 2` (the same commands as gpk; same
#        best), and a PPP multistart.
# Logs go to $OUT/logs.tar.gz, JSON to $OUT, the summary (last) to
# $OUT/summary.txt.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpu}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
out=${OUT:-$root/gpu-mpi-search-out}
data=${GPK_DATA:-$root/.carry/data}
stages=${GPK_STAGES:-build test table cli}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out/logs"
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
# --bind-to none: Open MPI binds each of 2 ranks to one core by default,
# which would put a rank's GPU-driving thread and the one-process rows'
# two driving threads on a single core.
MPIRUN="mpirun --oversubscribe --bind-to none"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
deadline=$(( start + ${GPK_DEADLINE:-230} ))
note "gpu: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | paste -sd ';')"
note "cpu: $(nproc) cores; $(mpirun --version 2>&1 | head -n 1); data $data"
[ -f "$data/qaplib/tai256c.dat" ] || note "data: $data/qaplib/tai256c.dat MISSING (set GPK_DATA)"

# runlog NAME TIMEOUT command...: bounded by the deadline; the last lines
# that say how it went go to the summary.
runlog() {
  local name=$1 t=$2; shift 2
  local s=$(date +%s) left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 10 ]; then note "$name: SKIPPED (deadline)"; return 1; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout -s KILL "$t" "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E 'checks|FAIL|passed|skipped' "$out/logs/$name.log" | tail -n 1)"
  return $rc
}

if has build; then
  s=$(date +%s)
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_MPI=ON >"$out/logs/configure.log" 2>&1 \
      || note "build: configure FAILED (logs/configure.log)"
  fi
  grep -E "MPI library|CUDA backend" "$out/logs/configure.log" 2>/dev/null | tee -a "$summary"
  if timeout 170 cmake --build "$build" -j"$(nproc)" --target gpk_mpi test_mpi_search gpk_mpi_search_bench gpk_mpi_cli \
      >"$out/logs/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - s )) s)"
  else
    note "build: FAILED ($(( $(date +%s) - s )) s, logs/build.log)"; tail -n 20 "$out/logs/build.log"
  fi
fi
test_prog=$build/tests/test_mpi_search
bench=$build/gpk_mpi_search_bench

if has test; then
  # 77 (no usable device) counts as a failure here
  runlog test_cuda_np2 90 $MPIRUN -np 2 "$test_prog" cuda "$data"
  runlog test_cuda_np1 60 $MPIRUN -np 1 "$test_prog" cuda "$data"
  runlog test_cuda_np3 90 $MPIRUN -np 3 "$test_prog" cuda "$data"
  runlog test_cpu_np4 60 $MPIRUN -np 4 "$test_prog" cpu "$data"
fi

goal="not run"
if has table; then
  for s in 2 4; do
    runlog table_${s}searches 90 $MPIRUN -np 2 "$bench" --instance tai256c --data "$data" --searches $s \
      --iters 3000 --gpus 1,2 --reps 3 --json "$out/mpi-search-tai256c-${s}x3000.json"
    sed -n '/^Multistart/,$p' "$out/logs/table_${s}searches.log" >>"$summary"
  done
  # the goal: the 2-rank row over the 1-GPU row, 2 searches
  j=$out/mpi-search-tai256c-2x3000.json
  if [ -f "$j" ]; then
    goal=$(python3 - "$j" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["row"]: r for r in d["rows"]}
one, two = rows.get("1 process, 1 GPU"), rows.get("MPI, 2 ranks")
if not one or not two or "ms" not in one or "ms" not in two:
    print("no rows")
else:
    x = one["ms"] / two["ms"]
    print("%.2fx (%.1f -> %.1f ms): %s" % (x, one["ms"], two["ms"], "MET" if x >= 1.8 else "MISSED"))
EOF
)
  fi
fi

if has cli; then
  g=$build/gpk-mpi
  q=$data/qaplib/tai256c.dat
  runlog cli_mpi_np2 60 $MPIRUN -np 2 "$g" qap "$q" --mpi --algo tabu --iters 3000 --starts 2 --json \
    --out "$out/tai256c-mpi.sln"
  runlog cli_gpus2 60 "$g" qap "$q" --gpus 2 --algo tabu --iters 3000 --starts 2 --json
  b1=$(grep -o '"best": [0-9]*' "$out/logs/cli_mpi_np2.log" | head -n 1)
  b2=$(grep -o '"best": [0-9]*' "$out/logs/cli_gpus2.log" | head -n 1)
  note "cli: --mpi on 2 ranks $b1, --gpus 2 $b2: $([ -n "$b1" ] && [ "$b1" = "$b2" ] && echo same || echo DIFFERENT)"
  note "cli: --out $(head -n 1 "$out/tai256c-mpi.sln" 2>/dev/null)"
  grep -h "runs on" "$out/logs/cli_mpi_np2.log" | tee -a "$summary"
  runlog cli_ppp_np2 60 $MPIRUN -np 2 "$g" ppp --m 73 --n 73 --mpi --algo multistart --starts 4 \
    --iters 300 --global 2 --json
  runlog cli_ppp_gpus1 60 "$g" ppp --m 73 --n 73 --gpus 1 --algo multistart --starts 4 --iters 300 \
    --global 2 --json
  p1=$(grep -o '"best": [0-9]*' "$out/logs/cli_ppp_np2.log" | head -n 1)
  p2=$(grep -o '"best": [0-9]*' "$out/logs/cli_ppp_gpus1.log" | head -n 1)
  note "cli: ppp 73-73 multistart 4 starts, --mpi on 2 ranks $p1, one GPU $p2: \
$([ -n "$p1" ] && [ "$p1" = "$p2" ] && echo same || echo DIFFERENT)"
fi

(cd "$out" && tar czf logs.tar.gz logs && rm -rf logs)
note "total: $(( $(date +%s) - start )) s"
note "goal (multistart, 2 ranks x 1 GPU vs 1 GPU, 2 x 3000 tabu on tai256c, >= 1.8x): $goal"
echo
echo "==== summary ===="
cat "$summary"
