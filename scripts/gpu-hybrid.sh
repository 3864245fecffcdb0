#!/usr/bin/env bash
# The CUDA hybrid radix sort in one device call: correctness (test_radix and
# test_cuda_api with the hybrid forced on every size, on few-key buckets and
# on default buckets so that skewed inputs take both fallbacks; racecheck and
# memcheck of a small forced run), then gpk bench sort against CUB with the
# hybrid off and on, every distribution at 2^28, and the copy-rate floor.
#   scripts/gpu-hybrid.sh [BINDIR]   (BINDIR holds gpk, test_radix, test_cuda_api, copy_bw)
set -u
B=${1:-.carry}
out=${OUT:-/tmp/gpu-hybrid-out}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
S=$out/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
note "gpu: $(nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader | head -n1)"
export GPK_REQUIRE_CUDA=1
run_test() { # name env... -- cmd...
  local name=$1; shift
  local t0=$(date +%s)
  env "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "test $name: rc=$rc in $(( $(date +%s) - t0 )) s; $(grep -E 'passed|failed|FAIL' "$out/$name.log" | tail -n 2 | tr '\n' ' ')"
}
[ -x "$B/copy_bw" ] && note "copy: $("$B/copy_bw" 1024 2>&1 | tail -n 1)"
run_test radix-default "$B/test_radix" cuda
run_test radix-hyb-fill64 GPK_RADIX_CUDA_HYBRID=1 GPK_RADIX_CUDA_HYBRID_MIN_LOG=0 GPK_RADIX_CUDA_HYBRID_FILL=64 "$B/test_radix" cuda
run_test radix-hyb-fill4096 GPK_RADIX_CUDA_HYBRID=1 GPK_RADIX_CUDA_HYBRID_MIN_LOG=0 "$B/test_radix" cuda quick
run_test api-hyb GPK_RADIX_CUDA_HYBRID=1 GPK_RADIX_CUDA_HYBRID_MIN_LOG=0 GPK_RADIX_CUDA_HYBRID_FILL=64 "$B/test_cuda_api"
for H in 0 -1; do
  GPK_RADIX_CUDA_HYBRID=$H timeout 200 "$B/gpk" bench sort --backends cuda --types u32,f32 --n 2^24,2^28 \
    --pairs --perm --peers cub --reps 10 --json "$out/bench-h$H.json" -q >"$out/bench-h$H.txt" 2>&1
  note "bench hybrid=$H rc=$?"
done
for d in gaussian sorted bucket staggered; do
  timeout 60 "$B/gpk" bench sort --backends cuda --types u32 --n 2^28 --dist $d --pairs --perm --no-keys \
    --peers cub --reps 5 -q >"$out/dist-$d.txt" 2>&1
done
small="bench sort --backends cuda --types u32 --n 131101 --pairs --perm --reps 1 --peers none -q"
for tool in racecheck memcheck; do
  GPK_RADIX_CUDA_HYBRID=1 GPK_RADIX_CUDA_HYBRID_MIN_LOG=0 GPK_RADIX_CUDA_HYBRID_FILL=64 timeout 150 \
    compute-sanitizer --tool $tool --error-exitcode 9 "$B/gpk" $small >"$out/$tool.log" 2>&1
  note "$tool rc=$? $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/$tool.log")"
done
echo "==== rows (gpk vs CUB) ===="
for f in "$out"/bench-h0.txt "$out"/bench-h-1.txt "$out"/dist-*.txt; do
  echo "## $(basename "$f")"; grep -E "cuda|cub|FAIL|ERROR" "$f" | cut -c1-150
done
cat "$S"
(cd "$out" && tar czf logs.tgz --exclude logs.tgz *.log *.txt *.json)
