#!/usr/bin/env bash
# Issue 17, the multi-GPU sort in one process, on nvidia-h100-x2 (2 H100s
# joined by NVLink; runs on one GPU too, as the same GPU twice).
#   scripts/gpu-multi.sh [BUILD_DIR] [build] [test] [bench] [host] [memcheck] [suites]
#   (default: all stages; about 5 minutes)
# build:    configures BUILD_DIR (default $GPK_GPU_BUILD or build-gpu, sm_90)
#           when it has no CMake cache; builds test_multi, test_radix,
#           test_api and gpk-bench.
# test:     nvidia-smi topo; tests/test_multi cuda over every GPU (0,1), the
#           GPUs reversed (1,0), the same GPU twice (0,0), the copying
#           exchange (GPK_MULTI_EXCHANGE=copy), each then with 3 and 4
#           shards over the GPUs repeated (the merge tree).
# suites:   the whole test_radix (GPK_TEST_SMALL=1) and test_api suites
#           through a context of all GPUs (GPK_DEVICES=0,1, GPK_MULTI_MIN=0:
#           every host-API radix sort spread over them).
# memcheck: compute-sanitizer memcheck of test_multi cuda (quick sizes).
# bench:    gpk bench multi: 2^31 keys device-resident, 1 GPU vs 2 GPUs:
#           u32 keys (the goal: 1.7x), u64 keys, u32/u32 pairs; u32 keys
#           again with GPK_MULTI_EXCHANGE=copy (pieces copied by DMA, then
#           merged locally, instead of peer loads in the merge); then 2^28
#           and 2^22 u32 keys. JSON in $OUT/multi.json (copy: multi.json.copy).
# host:     the host API (gpk_sort_keys on a pageable array) of 2^31 u32
#           keys on a context of 1 and of 2 GPUs.
# big:      (not in the default list; about 3 minutes, 150 GiB of host
#           memory) the host API of 12 x 2^30 u32 keys (48 GiB) on 1 GPU
#           (out of core) and on 2 (in memory).
# Logs go to $OUT (or ./gpu-multi-out) as logs.tar.gz; the table comes last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-multi-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
if [ $# -gt 0 ] && [ -d "$1" ]; then build=$(cd "$1" && pwd); shift; fi
stages=${*:-build test bench host memcheck suites}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out/logs"
export PATH="$PATH:/usr/local/cuda/bin"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
json=$out/multi.json
: >"$json"
start=$(date +%s)
deadline=$(( start + ${GPK_MULTI_DEADLINE:-345} ))
note "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tr '\n' ';')"
note "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "gpus: $gpus"
nvidia-smi topo -m >"$out/logs/topo.txt" 2>&1 || true

# Every step stops at its own timeout and at the script's deadline.
runlog() { # name timeout command...
  local name=$1 t=$2; shift 2
  local s=$(date +%s)
  local left=$(( deadline - s ))
  if [ "$left" -lt 15 ]; then note "$name: SKIPPED (deadline)"; return 1; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout "$t" "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E 'checks|ERROR SUMMARY' "$out/logs/$name.log" | tail -n 1)"
  grep -E '^FAIL' "$out/logs/$name.log" | head -n 5 | tee -a "$summary"
  return $rc
}

if has build; then
  s=$(date +%s)
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/logs/configure.log" 2>&1 \
      || note "build: configure FAILED (logs/configure.log)"
  fi
  if cmake --build "$build" -j16 --target test_multi test_radix test_api gpk_bench gpk_cli >"$out/logs/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - s )) s)"
  else
    note "build: FAILED (logs/build.log)"; tail -n 30 "$out/logs/build.log"
  fi
fi

all=0; rev=0
if [ "$gpus" -ge 2 ]; then
  all=$(seq -s, 0 $(( gpus - 1 )))
  rev=$(seq -s, $(( gpus - 1 )) -1 0)
fi
if has test; then
  export GPK_REQUIRE_CUDA=1
  if [ "$gpus" -ge 2 ]; then
    runlog test_multi_all 75 "$build/tests/test_multi" cuda "$all"
    GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_reversed 30 "$build/tests/test_multi" cuda "$rev"
  fi
  GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_same_gpu 30 "$build/tests/test_multi" cuda 0,0
  devs=$all; [ "$gpus" -lt 2 ] && devs=0,0
  # the CLI end to end: 2^24 keys over the GPUs, checked against the reference
  runlog cli_devices 40 "$build/gpk" sort --gen uniform --n 16M --type u32 --devices "$devs" --backend cuda --check \
    --json
  grep -o "\"path\": \"[a-z-]*\", \"devices\": [0-9]*" "$out/logs/cli_devices.log" | head -n 1 | tee -a "$summary"
  GPK_MULTI_EXCHANGE=copy GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog test_multi_copy 30 "$build/tests/test_multi" cuda "$devs"
fi

bench=$build/gpk-bench
if has bench; then
  devs=$all; [ "$gpus" -lt 2 ] && devs=0,0
  runlog bench_2g 120 "$bench" bench multi --gpus 1,2 --devices "$devs" --n 2G --reps 5 \
    --configs u32,u64,u32/u32 --json "$json"
  GPK_MULTI_EXCHANGE=copy runlog bench_2g_copy 60 "$bench" bench multi --gpus 1,2 --devices "$devs" --n 2G \
    --reps 5 --configs u32 --json "$json.copy"
  runlog bench_256m 30 "$bench" bench multi --gpus 1,2 --devices "$devs" --n 256M --reps 9 --configs u32 \
    --json "$json"
  # where two GPUs stop paying (GPK_MULTI_MIN's default, 2^22)
  runlog bench_small 30 "$bench" bench multi --gpus 1,2 --devices "$devs" --n 4M --reps 15 --configs u32,u32/u32 \
    --json "$json"
fi
if has host; then
  devs=$all; [ "$gpus" -lt 2 ] && devs=0,0
  runlog bench_host 60 "$bench" bench multi --gpus 1,2 --devices "$devs" --n 2G --reps 2 --configs "" --host \
    --json "$json"
fi

if has big; then
  # 12 x 2^30 u32 keys (48 GiB) through the host API: one GPU needs the
  # out-of-core sort (issue 16), two hold 24 GiB each twice in memory
  devs=$all; [ "$gpus" -lt 2 ] && devs=0,0
  runlog bench_host_big 240 "$bench" bench multi --gpus 1,2 --devices "$devs" --n 12G --reps 1 --configs "" \
    --host --json "$json"
fi

if has memcheck; then
  devs=$all; [ "$gpus" -lt 2 ] && devs=0,0
  GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 runlog memcheck_multi 75 \
    compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$build/tests/test_multi" cuda "$devs"
fi

if has suites; then
  devs=$all; [ "$gpus" -lt 2 ] && devs=0,0
  GPK_REQUIRE_CUDA=1 GPK_DEVICES=$devs GPK_MULTI_MIN=0 GPK_TEST_SMALL=1 runlog test_radix_multi 90 \
    "$build/tests/test_radix" cuda
  GPK_REQUIRE_CUDA=1 GPK_DEVICES=$devs GPK_MULTI_MIN=0 runlog test_api_multi 20 "$build/tests/test_api" cuda
fi

tar -czf "$out/logs.tar.gz" -C "$out" logs 2>/dev/null && rm -rf "$out/logs"
note "total: $(( $(date +%s) - start )) s"
echo
echo "== gpk bench multi (median ms; speedup vs 1 GPU in the same run) =="
for f in bench_2g bench_2g_copy bench_256m bench_small bench_host bench_host_big; do
  tar -xzf "$out/logs.tar.gz" -O "logs/$f.log" 2>/dev/null | grep -E '^(mode|device|host|link:) '
done | awk '!(/^mode/ && seen++)'
