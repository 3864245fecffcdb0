#!/usr/bin/env bash
# Issue 17, the distributed sort on MPI, on nvidia-h100-x2 (2 H100 joined by
# NVLink, 32 cores, OpenMPI, NCCL), from a built tree (it never builds):
#   scripts/gpu-mpi.sh BUILD_DIR        (or GPK_GPU_BUILD; default build-gpu)
# Within GPK_MPI_BUDGET seconds (default 125; every step under `timeout`,
# and a step that would not fit is skipped), most important first:
#  1. test_mpi_sort cuda under mpiexec -n 2, one GPU per rank: every type,
#     keys and pairs, host shards on CUDA contexts and device shards (CUDA
#     IPC), sizes 0/1/primes/one rank holding all, all-equal and few
#     distinct keys, in place, other communicators, and the bad inputs
#     (mismatched types/widths/options, NULL shard, small output on one
#     rank): against gpk_sort_reference, every rank must agree;
#  2. the goal: one GPU sorting 2^31 u32 keys (gpk_cuda_sort_keys, device
#     memory) against mpiexec -n 2 with 2^30 keys per rank on its GPU
#     (gpk_mpi_sort_keys, device_memory; goal >= 1.6x);
#  3. the CPU row: one process of 16 threads sorting 2^31 u32 keys against
#     2 ranks of 16 threads (bound to 16 cores each) with 2^30 each;
#  4. then, while time is left: the test with NCCL moving the device shards,
#     the goal row with NCCL, one GPU sorting 2^30 (a rank's local sort
#     alone), u64 keys and u32/u32 pairs (1 GPU vs 2 ranks).
# $OUT/i17mpi/summary.txt (the table last) and $OUT/i17mpi/logs.tar.gz (every
# log and mpi_sort.json, the JSON lines for bench/results/).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${GPK_GPU_BUILD:-$root/build-gpu}}
out=${OUT:-$root/gpu-mpi-out}/i17mpi
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpk_gpu_mpi.XXXXXX")
mkdir -p "$work/logs"
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary=$out/summary.txt
: >"$summary"
json=$work/logs/mpi_sort.json
: >"$json"
note() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
deadline=$(( start + ${GPK_MPI_BUDGET:-125} ))
finish() {
  tar -C "$work" -czf "$out/logs.tar.gz" logs 2>/dev/null
  rm -rf "$work"
}
trap finish EXIT
note "gpu: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tr '\n' ';')"
note "cpu: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(mpiexec --version 2>&1 | head -n 1)"
bench=$build/gpk-mpi-sort-bench
test=$build/tests/test_mpi_sort
if [ ! -x "$bench" ] || [ ! -x "$test" ]; then
  note "FAILED: $bench or $test is missing (configure with MPI found: gpk: MPI library gpk::mpi ON)"
  exit 1
fi

# runlog NAME TIMEOUT command...: within its timeout and the budget
runlog() {
  local name=$1 t=$2; shift 2
  local s=$(date +%s) left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt "$t" ]; then note "$name: SKIPPED (budget: ${left} s left, needs up to $t)"; return 1; fi
  timeout "$t" "$@" >"$work/logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E '^passed|^FAILED|FAIL |device shards skipped' "$work/logs/$name.log" | tail -n 1)"
  grep '^{"bench"' "$work/logs/$name.log" >>"$json"
  return $rc
}
M="mpiexec --bind-to none"
# GPK_MPI_N_PER_RANK: a smaller size, for trying the script elsewhere (default 2^30)
N30=${GPK_MPI_N_PER_RANK:-$((1 << 30))}; N31=$((2 * N30))

runlog test_np2 40 $M -n 2 "$test" cuda
runlog dev_1gpu_u32 25 $M -n 1 "$bench" --mode device --single $N31 --reps 3 --label "1 GPU, 2^31"
runlog dev_2ranks_u32 25 $M -n 2 "$bench" --mode device --n-per-rank $N30 --reps 3 --label "2 ranks, 2^30 each"
# 16 cores per rank where there are 32; unbound otherwise (the summary says which)
B="mpiexec --map-by slot:PE=16 --bind-to core"
timeout 10 $B -n 2 true >/dev/null 2>&1 || B="mpiexec --bind-to none"
note "CPU rows: $B"
runlog cpu_1proc_u32 30 $B -n 1 "$bench" --mode host --threads 16 --single $N31 --reps 2 --label "1 process x 16 threads, 2^31"
runlog cpu_2ranks_u32 25 $B -n 2 "$bench" --mode host --threads 16 --n-per-rank $N30 --reps 2 --label "2 ranks x 16 threads, 2^30 each"
GPK_MPI_DEVICE_EXCHANGE=nccl runlog test_np2_nccl 25 $M -n 2 -x GPK_MPI_DEVICE_EXCHANGE "$test" cuda
GPK_MPI_DEVICE_EXCHANGE=nccl runlog dev_2ranks_u32_nccl 20 $M -n 2 -x GPK_MPI_DEVICE_EXCHANGE "$bench" --mode device \
  --n-per-rank $N30 --reps 3 --label "2 ranks, 2^30 each"
runlog dev_1gpu_u32_2e30 15 $M -n 1 "$bench" --mode device --single $N30 --reps 3 --label "1 GPU, 2^30 (a rank's sort)"
runlog dev_1gpu_u64 20 $M -n 1 "$bench" --mode device --type u64 --single $N31 --reps 2 --label "1 GPU, 2^31"
runlog dev_2ranks_u64 20 $M -n 2 "$bench" --mode device --type u64 --n-per-rank $N30 --reps 2 --label "2 ranks, 2^30 each"
runlog dev_1gpu_pairs 20 $M -n 1 "$bench" --mode device --values 4 --single $N31 --reps 2 --label "1 GPU, 2^31"
runlog dev_2ranks_pairs 20 $M -n 2 "$bench" --mode device --values 4 --n-per-rank $N30 --reps 2 --label "2 ranks, 2^30 each"

# the table
python3 - "$json" <<'EOF' | tee -a "$summary"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
def key(r): return (r['mode'], r['type'], r['value_bytes'], r['n_total'])
print()
print(f"{'mode':6} {'keys':8} {'run':34} {'N':>11} {'ms med':>9} {'Gkeys/s':>8} {'vs peer':>8}  {'sort/split/exch/merge ms':26} check")
peers = {key(r): r for r in rows if r['peer']}
for r in rows:
    p = peers.get(key(r))
    sp = f"{p['ms_median'] / r['ms_median']:.2f}x" if p and not r['peer'] and r['ms_median'] > 0 else ''
    ph = r['phases_ms_max_over_ranks']
    phs = '' if r['peer'] else f"{ph['sort']:.1f}/{ph['split']:.1f}/{ph['exchange']:.1f}/{ph['merge']:.1f}"
    kv = r['type'] + (f"/{'u32' if r['value_bytes'] == 4 else 'u64'}" if r['value_bytes'] else '')
    lab = r['label'] + (f" [{r.get('exchange_path', '')}]" if not r['peer'] else '')
    print(f"{r['mode']:6} {kv:8} {lab:34} {r['n_total']:>11} {r['ms_median']:>9.2f} {r['gkeys_per_s']:>8.2f} {sp:>8}  {phs:26} {r['check']}")
print("goal: device u32, 2 ranks x 2^30 vs 1 GPU on 2^31: >= 1.6x; CPU row reported")
EOF
note "total: $(( $(date +%s) - start )) s"
