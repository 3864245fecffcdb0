#!/usr/bin/env bash
# Issue 17, the distributed sort on MPI, on nvidia-h100-x2 (2 H100 joined by
# NVLink, 32 cores, OpenMPI, NCCL):
#   scripts/gpu-mpi.sh [BUILD_DIR] [stages...]     stages: build test device host
#   (default: all; about 4 minutes with a built BUILD_DIR, plus the build)
# build:  configures BUILD_DIR (default $GPK_GPU_BUILD or build-gpu, sm_90) when
#         it has no CMake cache; builds test_mpi_sort and gpk_mpi_bench.
# test:   test_mpi_sort cuda under mpiexec -n 1 and -n 2 (one GPU per rank):
#         every type, keys and pairs, host shards on CUDA contexts and device
#         shards (CUDA IPC), against gpk_sort_reference; then -n 2 with the
#         device shards moving by NCCL and through host memory
#         (GPK_MPI_DEVICE_EXCHANGE=nccl, host).
# device: weak scaling, device-resident: one GPU sorting 2^31 keys
#         (gpk_cuda_sort_*, the peer) against mpiexec -n 2 with 2^30 keys per
#         rank (gpk_mpi_sort_* with device_memory; the default exchange: CUDA
#         IPC, the merge reading the peer's shard over NVLink): u32 keys (the
#         goal: >= 1.6x), u64 keys, u32/u32 pairs; u32 also with the NCCL and
#         the host-staged exchange, and one GPU sorting 2^30 (a rank's share).
# host:   the CPU backend, host shards: one process of 16 threads sorting
#         2^31 u32 keys against 2 ranks of 16 threads with 2^30 each (ranks
#         bound to 16 cores each where the machine allows).
# Logs, JSON lines (mpi_sort.json) and summary.txt go to $OUT (or
# ./gpu-mpi-out); the table comes last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-mpi-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
case "${1:-}" in
  ""|build|test|device|host) ;;
  *) build=$(cd "$1" 2>/dev/null && pwd || echo "$1"); shift ;;
esac
stages=${*:-build test device host}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out/logs"
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary=$out/summary.txt
: >"$summary"
json=$out/mpi_sort.json
: >"$json"
note() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
deadline=$(( start + ${GPK_MPI_DEADLINE:-330} ))
note "gpu: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tr '\n' ';')"
note "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
note "mpi: $(mpiexec --version 2>&1 | head -n 1)"
nvidia-smi topo -m >"$out/logs/topo.log" 2>&1

if has build; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/logs/configure.log" 2>&1 \
      || note "build: configure FAILED (logs/configure.log)"
  fi
  grep -E "gpk: MPI" "$build/CMakeCache.txt" "$out/logs/configure.log" 2>/dev/null | tail -n 1 | tee -a "$summary"
  if cmake --build "$build" -j "$(nproc)" --target test_mpi_sort gpk_mpi_bench >"$out/logs/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - start )) s)"
  else
    note "build: FAILED (logs/build.log)"; tail -n 30 "$out/logs/build.log"
  fi
fi
bench=$build/gpk-mpi-sort-bench
deadline=$(( $(date +%s) + ${GPK_MPI_DEADLINE:-330} )) # the build does not count

# runlog NAME TIMEOUT command...: stops at its timeout and at the deadline
runlog() {
  local name=$1 t=$2; shift 2
  local s=$(date +%s) left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 15 ]; then note "$name: SKIPPED (deadline)"; return 1; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout "$t" "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E 'passed|FAILED|FAIL ' "$out/logs/$name.log" | tail -n 1)"
  grep '^{"bench"' "$out/logs/$name.log" >>"$json"
  return $rc
}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
np=$(( gpus < 2 ? gpus : 2 ))
[ "$np" -ge 1 ] || np=1
M="mpiexec --bind-to none"

if has test; then
  runlog test_np1 120 $M -n 1 "$build/tests/test_mpi_sort" cuda
  runlog "test_np$np" 150 $M -n "$np" "$build/tests/test_mpi_sort" cuda
  for x in nccl host; do
    GPK_MPI_DEVICE_EXCHANGE=$x runlog "test_np${np}_$x" 120 $M -n "$np" -x GPK_MPI_DEVICE_EXCHANGE \
      "$build/tests/test_mpi_sort" cuda
  done
fi

# GPK_MPI_N_PER_RANK: a smaller size for trying the script (default 2^30)
N30=${GPK_MPI_N_PER_RANK:-$((1 << 30))}; N31=$((2 * N30))
if has device; then
  for cfg in "u32 0" "u64 0" "u32 4"; do
    set -- $cfg
    t=$1; v=$2
    runlog "dev_single_${t}_v$v" 60 $M -n 1 "$bench" --mode device --type "$t" --values "$v" --single $N31 \
      --reps 3 --label "1 GPU, 2^31"
    runlog "dev_mpi${np}_${t}_v$v" 90 $M -n "$np" "$bench" --mode device --type "$t" --values "$v" \
      --n-per-rank $N30 --reps 3 --label "$np ranks, 2^30 per rank"
  done
  for x in nccl host; do
    GPK_MPI_DEVICE_EXCHANGE=$x runlog "dev_mpi${np}_u32_$x" 90 $M -n "$np" -x GPK_MPI_DEVICE_EXCHANGE \
      "$bench" --mode device --type u32 --n-per-rank $N30 --reps 3 --label "$np ranks, 2^30 per rank"
  done
  # the local sort alone: one GPU sorting one rank's share
  runlog dev_single_u32_half 60 $M -n 1 "$bench" --mode device --type u32 --single $N30 --reps 3 --label "1 GPU, 2^30 (a rank's share)"
fi

if has host; then
  # 16 cores per rank where there are 32; unbound otherwise (the log says which)
  B="mpiexec --map-by slot:PE=16 --bind-to core"
  if ! $B -n 2 true >/dev/null 2>&1; then B="mpiexec --bind-to none"; fi
  note "host binding: $B"
  runlog host_single_u32 90 $B -n 1 "$bench" --mode host --threads 16 --single $N31 --reps 3 --label "1 process, 16 threads, 2^31"
  runlog host_mpi2_u32 90 $B -n 2 "$bench" --mode host --threads 16 --n-per-rank $N30 --reps 3 \
    --label "2 ranks x 16 threads, 2^30 per rank"
fi

# the table
python3 - "$json" <<'EOF' | tee -a "$summary"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
def key(r): return (r['mode'], r['type'], r['value_bytes'], r['n_total'])
print()
print(f"{'mode':6} {'keys':8} {'run':38} {'ranks':>5} {'N':>12} {'ms med':>9} {'Gkeys/s':>8} {'vs peer':>8}  phases ms (sort/split/exch/merge)  check")
peers = {key(r): r for r in rows if r['peer']}
for r in rows:
    p = peers.get(key(r))
    sp = f"{p['ms_median'] / r['ms_median']:.2f}x" if p and not r['peer'] and r['ms_median'] > 0 else ''
    ph = r['phases_ms_max_over_ranks']
    phs = '' if r['peer'] else f"{ph['sort']:.1f}/{ph['split']:.1f}/{ph['exchange']:.1f}/{ph['merge']:.1f}"
    kv = r['type'] + (f"/{'u32' if r['value_bytes'] == 4 else 'u64'}" if r['value_bytes'] else '')
    lab = r['label'] + (f" [{r['exchange_env']}]" if r['exchange_env'] else '')
    print(f"{r['mode']:6} {kv:8} {lab:38} {r['ranks']:>5} {r['n_total']:>12} {r['ms_median']:>9.2f} {r['gkeys_per_s']:>8.2f} {sp:>8}  {phs:33}  {r['check']}")
print("goals: device u32 2 ranks vs 1 GPU >= 1.6x; host: reported")
EOF
note "total: $(( $(date +%s) - start )) s"
