#!/usr/bin/env bash
# Issue 17, the distributed sort on MPI, on nvidia-h100-x2 (2 H100 joined by
# NVLink, 32 cores, OpenMPI, NCCL), from a built tree (it never builds):
#   scripts/gpu-mpi.sh BUILD_DIR        (or GPK_GPU_BUILD; default build-gpu)
# Needs BUILD_DIR/tests/test_mpi_sort and BUILD_DIR/gpk-mpi-sort-bench
# (cmake --build BUILD_DIR --target test_mpi_sort gpk_mpi_bench).
# Within GPK_MPI_BUDGET seconds (default 330; every step under `timeout`,
# and a step that would not fit is skipped), most important first:
#  1. test_mpi_sort cuda under mpiexec -n 2, one GPU per rank: every type,
#     keys and pairs, host and device shards, sizes 0/1/primes/one rank
#     holding all, all-equal and few distinct keys, in place, other
#     communicators, bad inputs, and repeated calls on one communicator
#     (sizes up and down, types in turn, release, the communicator freed,
#     a second context destroyed; a call that fits the kept buffers must
#     make none): against gpk_sort_reference; the device shards by the
#     default plans, then with the part plan forced on every size;
#  2. the goal, device u32: one GPU sorting 2^31 keys (gpk_cuda_sort_keys)
#     against mpiexec -n 2 with 2^30 keys per rank (gpk_mpi_sort_keys,
#     device_memory): the part plan (the default at this size), the
#     sort-first plan (GPK_MPI_DEVICE_PLAN=merge; the merge kernel reads
#     the peer over CUDA IPC), and NCCL moving the shards (the path
#     between nodes); goal >= 1.6x;
#  3. the CPU goal (unless GPK_MPI_SKIP_CPU is set): one process of 16
#     threads sorting 2^31 u32 keys against 2 ranks of 16 threads (bound
#     to 16 cores each) with 2^30 each;
#  4. u32/u32 pairs and u64 keys (1 GPU vs 2 ranks, both plans), u32 at
#     2^20, 2^22, 2^24 keys a rank (both plans: where part starts to pay),
#     the test again with nccl moving the device shards (GPK_TEST_SMALL),
#     and one GPU sorting 2^30 (a rank's local sort alone).
# Every bench row: a first call (it makes the kept buffers, the window, the
# IPC mappings) and then 5 (CPU: 3) timed calls; the figure is their
# median. $OUT/i17mpi/summary.txt (the table last) and
# $OUT/i17mpi/logs.tar.gz (every log and mpi_sort.json, the JSON lines for
# bench/results/).
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
deadline=$(( start + ${GPK_MPI_BUDGET:-330} ))
finish() {
  tar -C "$work" -czf "$out/logs.tar.gz" logs 2>/dev/null
  rm -rf "$work"
}
trap finish EXIT
note "gpu: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tr '\n' ';')"
note "links: $(nvidia-smi topo -m 2>/dev/null | awk '/^GPU0/ {print $3}' | head -n 1) (GPU0-GPU1)"
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
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E '^passed|^FAILED|FAIL |device shards skipped|moved by' "$work/logs/$name.log" | tail -n 1)"
  grep '^{"bench"' "$work/logs/$name.log" >>"$json"
  return $rc
}
M="mpiexec --bind-to none"
X="-x GPK_MPI_DEVICE_EXCHANGE"
# GPK_MPI_N_PER_RANK: a smaller size, for trying the script elsewhere (default 2^30)
N30=${GPK_MPI_N_PER_RANK:-$((1 << 30))}; N31=$((2 * N30))
# 16 cores per rank where there are 32; unbound otherwise (the summary says which)
B="mpiexec --map-by slot:PE=16 --bind-to core"
timeout 10 $B -n 2 true >/dev/null 2>&1 || B="mpiexec --bind-to none"

runlog test_np2 180 $M -n 2 "$test" cuda
P="-x GPK_MPI_DEVICE_PLAN"
runlog dev_1gpu_u32 30 $M -n 1 "$bench" --mode device --single $N31 --reps 5 --label "1 GPU, 2^31"
runlog dev_2ranks_u32_part 30 $M -n 2 "$bench" --mode device --n-per-rank $N30 \
  --reps 5 --label "2 ranks, 2^30 each, part (default)"
GPK_MPI_DEVICE_PLAN=merge runlog dev_2ranks_u32_ipc 30 $M -n 2 $P "$bench" --mode device --n-per-rank $N30 \
  --reps 5 --label "2 ranks, 2^30 each, merge, ipc"
GPK_MPI_DEVICE_EXCHANGE=nccl runlog dev_2ranks_u32_nccl 30 $M -n 2 $X "$bench" --mode device --n-per-rank $N30 \
  --reps 5 --label "2 ranks, 2^30 each, nccl"
if [ -z "${GPK_MPI_SKIP_CPU:-}" ]; then
  note "CPU rows: $B"
  runlog cpu_1proc_u32 40 $B -n 1 "$bench" --mode host --threads 16 --single $N31 --reps 3 --label "1 process x 16 threads, 2^31"
  runlog cpu_2ranks_u32 40 $B -n 2 "$bench" --mode host --threads 16 --n-per-rank $N30 --reps 3 --label "2 ranks x 16 threads, 2^30 each"
fi
runlog dev_1gpu_pairs 25 $M -n 1 "$bench" --mode device --values 4 --single $N31 --reps 5 --label "1 GPU, 2^31"
runlog dev_2ranks_pairs_part 25 $M -n 2 "$bench" --mode device --values 4 --n-per-rank $N30 --reps 5 \
  --label "2 ranks, 2^30 each, part (default)"
GPK_MPI_DEVICE_PLAN=merge runlog dev_2ranks_pairs 25 $M -n 2 $P "$bench" --mode device --values 4 --n-per-rank $N30 \
  --reps 5 --label "2 ranks, 2^30 each, merge"
runlog dev_1gpu_u64 25 $M -n 1 "$bench" --mode device --type u64 --single $N31 --reps 5 --label "1 GPU, 2^31"
runlog dev_2ranks_u64 25 $M -n 2 "$bench" --mode device --type u64 --n-per-rank $N30 --reps 5 \
  --label "2 ranks, 2^30 each, merge (default)"
GPK_MPI_DEVICE_PLAN=part runlog dev_2ranks_u64_part 25 $M -n 2 $P "$bench" --mode device --type u64 --n-per-rank $N30 \
  --reps 5 --label "2 ranks, 2^30 each, part"
# where part starts to pay (the default takes it from 2^22 keys a rank)
for lg in 20 22 24; do
  n=$((1 << lg))
  runlog dev_1gpu_u32_2e$((lg + 1)) 15 $M -n 1 "$bench" --mode device --single $((2 * n)) --reps 5 --label "1 GPU, 2^$((lg + 1))"
  for plan in part merge; do
    GPK_MPI_DEVICE_PLAN=$plan runlog dev_2ranks_u32_2e${lg}_$plan 15 $M -n 2 $P "$bench" --mode device --n-per-rank $n \
      --reps 5 --label "2 ranks, 2^$lg each, $plan"
  done
done
GPK_TEST_SMALL=1 GPK_MPI_DEVICE_EXCHANGE=nccl runlog test_np2_nccl 30 $M -n 2 $X -x GPK_TEST_SMALL "$test" cuda
runlog dev_1gpu_u32_2e30 15 $M -n 1 "$bench" --mode device --single $N30 --reps 5 --label "1 GPU, 2^30 (a rank's sort)"

# the table
python3 - "$json" <<'EOF' | tee -a "$summary"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
def key(r): return (r['mode'], r['type'], r['value_bytes'], r['n_total'])
peers = {key(r): r for r in rows if r['peer']}
print()
print(f"{'mode':6} {'keys':8} {'run':44} {'N':>11} {'first ms':>9} {'ms med':>8} {'Gkeys/s':>8} {'vs peer':>8}  "
      f"{'sort/split/exch/merge ms':26} {'setup ms first/later':20} check")
best = {}
for r in rows:
    p = peers.get(key(r))
    x = p['ms_median'] / r['ms_median'] if p and not r['peer'] and r['ms_median'] > 0 else None
    sp = f"{x:.2f}x" if x else ''
    ph = r['phases_ms_max_over_ranks']
    pf = r.get('phases_first_ms', {})
    phs = '' if r['peer'] else f"{ph['sort']:.1f}/{ph['split']:.1f}/{ph['exchange']:.1f}/{ph['merge']:.1f}"
    sets = '' if r['peer'] else f"{pf.get('setup', 0):.1f}/{ph.get('setup', 0):.1f} ({r.get('setups_later', '?')} later)"
    kv = r['type'] + (f"/{'u32' if r['value_bytes'] == 4 else 'u64'}" if r['value_bytes'] else '')
    lab = r['label'] + (f" [{r.get('exchange_path', '')}]" if not r['peer'] else '')
    print(f"{r['mode']:6} {kv:8} {lab:44} {r['n_total']:>11} {r.get('ms_first', 0):>9.2f} {r['ms_median']:>8.2f} "
          f"{r['gkeys_per_s']:>8.2f} {sp:>8}  {phs:26} {sets:20} {r['check']}")
    if x and r['type'] == 'u32' and not r['value_bytes'] and (r['mode'] not in best or x > best[r['mode']][0]):
        best[r['mode']] = (x, r)
for mode, name in (('device', 'device u32, 2 ranks x 2^30 vs 1 GPU on 2^31'),
                   ('host', 'CPU u32, 2 ranks x 16 threads vs 1 process x 16 threads on 2^31')):
    if mode in best:
        x, r = best[mode]
        print(f"goal {name}: {x:.2f}x ({r.get('exchange_path', '')}) -> {'MET' if x >= 1.6 else 'NOT MET'} (>= 1.6x)")
    else:
        print(f"goal {name}: no figure")
EOF
note "total: $(( $(date +%s) - start )) s"
