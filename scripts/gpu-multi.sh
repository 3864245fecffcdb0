#!/usr/bin/env bash
# Issue 17, the multi-GPU sort in one process, on nvidia-h100-x2 (2 H100s
# joined by NVLink; on one GPU it runs as the same GPU twice).
#   scripts/gpu-multi.sh BUILD_DIR [STAGES...]
#   (default stages: test goal extra, within GPK_MULTI_DEADLINE = 290 s)
# BUILD_DIR is a CUDA build with every target built (sm_90); the script
# builds nothing unless the stage `build` is named.
# test:     tests/test_multi cuda over every GPU (0,1), quick sizes, once per
#           plan (the default: part for 4-byte keys, merge for 8-byte ones;
#           part, merge and lsd forced by GPK_MULTI_PLAN): keys and pairs of every type against the
#           reference, shard sizes balanced, random, empty, all in one; one
#           pass, 3-, 10- and 11-bit digits; 3 and 4 shards over the GPUs
#           repeated; the host API; the bad inputs (a device list naming a
#           GPU that is not there, NULL shards, short scratch, ...).
# goal:     gpk bench multi: 2^31 keys device-resident, 1 GPU vs 2 GPUs with
#           each plan of the step (merge and part, the bench's default; lsd
#           where named) in
#           the same run, every result verified, one step per key type: u32
#           keys (the goal: 1.7x), u64 keys, u32/u32 pairs.
# extra:    what the deadline leaves room for: test_multi on the same GPU
#           twice (0,0), u32 with the merge plan's GPK_MULTI_EXCHANGE=copy,
#           the host API (2^31 u32 keys, 1 vs 2 GPUs, both plans), gpk sort
#           --devices end to end, u32 lsd with its passes one block per tile
#           (GPK_RADIX_CUDA_DIST_GRID=tiles; default: persistent blocks for
#           keys without values).
# Stages not in the default list: build (configure and build BUILD_DIR),
# full (test_multi at every size and GPUs reversed), memcheck
# (compute-sanitizer on test_multi), suites (test_radix and test_api through
# a context of all GPUs), small (2^28 and 2^22 keys), big (48 GiB through
# the host API: 1 GPU out of core, 2 in memory; 150 GiB of host memory).
# Output: $OUT/i17mgpu/summary.txt and $OUT/i17mgpu/logs.tar.gz (logs and
# multi.json); the table comes last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-multi-out}/i17mgpu
build=${GPK_GPU_BUILD:-$root/build-gpu}
if [ $# -gt 0 ] && [ -d "$1" ]; then build=$(cd "$1" && pwd); shift; fi
stages=${*:-test goal extra}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
logs=$out/logs
mkdir -p "$logs"
export PATH="$PATH:/usr/local/cuda/bin"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
json=$logs/multi.json
: >"$json"
start=$(date +%s)
deadline=$(( start + ${GPK_MULTI_DEADLINE:-290} ))
note "gpu: $(timeout 10 nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tr '\n' ';')"
gpus=$(timeout 10 nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "gpus: $gpus, cpu: $(nproc) cores, build: $build"
timeout 10 nvidia-smi topo -m >"$logs/topo.txt" 2>&1

# Every step stops at its own timeout and at the script's deadline.
runlog() { # name timeout command...
  local name=$1 t=$2; shift 2
  local s=$(date +%s)
  local left=$(( deadline - s ))
  if [ "$left" -lt 8 ]; then note "$name: SKIPPED (deadline)"; return 1; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout "$t" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E 'checks|ERROR SUMMARY' "$logs/$name.log" | tail -n 1)"
  grep -E '^FAIL' "$logs/$name.log" | head -n 5 | tee -a "$summary"
  return $rc
}

if has build; then
  s=$(date +%s)
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 >"$logs/configure.log" 2>&1 \
      || note "build: configure FAILED (logs/configure.log)"
  fi
  if cmake --build "$build" -j16 --target test_multi test_radix test_api gpk_bench gpk_cli >"$logs/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - s )) s)"
  else
    note "build: FAILED (logs/build.log)"; tail -n 30 "$logs/build.log"
  fi
fi

all=0,0; rev=0,0
if [ "$gpus" -ge 2 ]; then
  all=$(seq -s, 0 $(( gpus - 1 )))
  rev=$(seq -s, $(( gpus - 1 )) -1 0)
fi
bench=$build/gpk-bench
export GPK_REQUIRE_CUDA=1

if has test; then
  GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_default 45 "$build/tests/test_multi" cuda "$all"
  GPK_MULTI_PLAN=part GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_part 45 \
    "$build/tests/test_multi" cuda "$all"
  GPK_MULTI_PLAN=lsd GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi 45 "$build/tests/test_multi" cuda "$all"
  GPK_MULTI_PLAN=merge GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_merge 45 \
    "$build/tests/test_multi" cuda "$all"
fi
if has goal; then
  # one step per key type (the keys generated once on the host, then 1 GPU,
  # 2 GPUs merge, 2 GPUs part, each checked), so that a step at its time
  # limit loses one key type (run 1: three types in one step reached 80 s)
  runlog bench_goal 70 "$bench" bench multi --gpus 1,2 --devices "$all" --n 2G --reps 5 --configs u32 \
    --plans merge,part --json "$json"
  runlog bench_goal_u64 70 "$bench" bench multi --gpus 1,2 --devices "$all" --n 2G --reps 3 --configs u64 \
    --plans merge,part --json "$json"
  runlog bench_goal_pairs 70 "$bench" bench multi --gpus 1,2 --devices "$all" --n 2G --reps 3 --configs u32/u32 \
    --plans merge,part --json "$json"
fi
if has extra; then
  GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_same_gpu 20 "$build/tests/test_multi" cuda 0,0
  GPK_MULTI_EXCHANGE=copy runlog bench_copy 25 "$bench" bench multi --gpus 1,2 --devices "$all" --n 2G --reps 3 \
    --configs u32 --plans merge --json "$json"
  runlog bench_host 40 "$bench" bench multi --gpus 1,2 --devices "$all" --n 2G --reps 1 --configs "" --host \
    --plans lsd,merge --json "$json"
  runlog cli_devices 20 "$build/gpk" sort --gen uniform --n 16M --type u32 --devices "$all" --backend cuda \
    --check --json
  grep -o "\"path\": \"[a-z-]*\", \"devices\": [0-9]*" "$logs/cli_devices.log" | head -n 1 | tee -a "$summary"
  GPK_RADIX_CUDA_DIST_GRID=tiles runlog bench_dist_tiles 30 "$bench" bench multi --gpus 1,2 --devices "$all" \
    --n 2G --reps 3 --configs u32 --plans lsd --json "$json"
fi
if has full; then
  runlog test_multi_full 90 "$build/tests/test_multi" cuda "$all"
  GPK_MULTI_PLAN=merge runlog test_multi_full_merge 90 "$build/tests/test_multi" cuda "$all"
  GPK_TEST_SMALL=1 runlog test_multi_reversed 45 "$build/tests/test_multi" cuda "$rev"
  GPK_MULTI_EXCHANGE=copy GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_copy 30 \
    "$build/tests/test_multi" cuda "$all"
fi
if has memcheck; then
  GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog memcheck_multi 90 \
    compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$build/tests/test_multi" cuda "$all"
fi
if has suites; then
  GPK_DEVICES=$all GPK_MULTI_MIN=0 GPK_TEST_SMALL=1 runlog test_radix_multi 90 "$build/tests/test_radix" cuda
  GPK_DEVICES=$all GPK_MULTI_MIN=0 runlog test_api_multi 20 "$build/tests/test_api" cuda
fi
if has small; then
  runlog bench_256m 30 "$bench" bench multi --gpus 1,2 --devices "$all" --n 256M --reps 9 --configs u32 \
    --plans lsd,merge --json "$json"
  runlog bench_4m 30 "$bench" bench multi --gpus 1,2 --devices "$all" --n 4M --reps 15 --configs u32,u32/u32 \
    --plans lsd,merge --json "$json"
fi
if has big; then
  runlog bench_host_big 240 "$bench" bench multi --gpus 1,2 --devices "$all" --n 12G --reps 1 --configs "" --host \
    --json "$json"
fi

note "total: $(( $(date +%s) - start )) s"
{
  echo
  echo "== gpk bench multi (median ms; speedup vs 1 GPU in the same run; lsd rows: the GPUs' histogram +"
  echo "   passes; merge rows: merge = copy + search + tiles) =="
  for f in bench_goal bench_goal_u64 bench_goal_pairs bench_copy bench_host bench_dist_tiles bench_256m bench_4m \
    bench_host_big; do
    [ -f "$logs/$f.log" ] && grep -E '^(mode|device|host|link:|\(lsd) ' "$logs/$f.log" | sed "s/^/[$f] /"
  done | awk '!((/\] mode/ || /\] \(lsd/) && seen[$2]++)'
} | tee -a "$summary"
tar -czf "$out/logs.tar.gz" -C "$out" logs 2>/dev/null && rm -rf "$logs"
