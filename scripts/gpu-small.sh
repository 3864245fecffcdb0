#!/usr/bin/env bash
# Issue 15, small sizes on CUDA: the single-launch radix sort for small inputs
# (GPK_RADIX_CUDA_SMALL, docs/perf/radix.md "CUDA backend: small sizes in one
# launch") in one device call, about 3-4 minutes on an H100:
#   1. correctness with the path forced on: tests/test_radix cuda (every type,
#      mode, size up to 2^20 and, with the limit raised to 2^22, the sizes
#      where blocks loop over tiles; section 8 asserts the path ran),
#      tests/test_cuda_api (device-pointer API, in place, streams), and
#      compute-sanitizer memcheck, racecheck, synccheck of small forced sorts;
#   2. gpk-bench bench sort against CUB in the same process, the switch off
#      and on alternately, twice: u32 keys at 2^16..2^20 and 2^22; f64 keys,
#      u32/u32 pairs and u32 keys + sigma at 2^18; u32 at 2^21, 2^22 with the
#      limit raised to 2^22 (blocks loop over tiles there).
#   scripts/gpu-small.sh [BUILD_DIR]   (a CUDA build for sm_90; built here if needed)
# Logs and JSON in $OUT (one tarball), the summary table last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-${GPK_GPU_BUILD:-$root/build-gpu}}
out=${OUT:-/tmp/gpu-small-out}
mkdir -p "$out"
work=$(mktemp -d)
export PATH="$PATH:/usr/local/cuda/bin"
S=$out/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
if [ ! -x "$B/gpk-bench" ] || [ ! -x "$B/tests/test_radix" ] || [ ! -x "$B/tests/test_cuda_api" ]; then
  [ -f "$B/CMakeCache.txt" ] || cmake -S "$root" -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 >"$work/configure.log" 2>&1
  cmake --build "$B" -j16 --target gpk_bench test_radix test_cuda_api >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log"; cp "$work/build.log" "$out/"; exit 1; }
fi
note "gpu: $(nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | head -n1)"
note "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
export GPK_REQUIRE_CUDA=1
fail=0
run_test() { # name timeout env... cmd...
  local name=$1 to=$2; shift 2
  local t0=$(date +%s)
  timeout "$to" env "$@" >"$work/$name.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || fail=1
  note "test $name: rc=$rc in $(( $(date +%s) - t0 )) s; $(grep -E 'passed|failed|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' "$work/$name.log" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
}
on="GPK_RADIX_CUDA_SMALL=1"
run_test radix-small20 100 $on "$B/tests/test_radix" cuda
run_test radix-small22 100 $on GPK_RADIX_CUDA_SMALL_MAX_LOG=22 "$B/tests/test_radix" cuda
run_test api-small 60 $on "$B/tests/test_cuda_api"
# the new kernel under compute-sanitizer (u32 and f64 keys, pairs and sigma;
# 2^22 - 3 keys with the limit raised: blocks looping over tiles)
for tool in memcheck racecheck synccheck; do
  run_test "san-$tool" 60 $on GPK_RADIX_CUDA_SMALL_MAX_LOG=22 compute-sanitizer --tool $tool --error-exitcode 9 \
    "$B/gpk-bench" bench sort --backends cuda --types u32,f64 --n 20011 --pairs --perm --reps 1 --peers none -q
done
run_test san-memcheck-22 60 $on GPK_RADIX_CUDA_SMALL_MAX_LOG=22 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$B/gpk-bench" bench sort --backends cuda --types u32 --n 4194301 --reps 1 --peers none -q

bench() { # name timeout env... -- args...
  local name=$1 to=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0=$(date +%s)
  timeout "$to" env "${envs[@]}" "$B/gpk-bench" bench sort -q --json "$work/$name.json" "$@" >"$work/$name.txt" 2>&1
  local rc=$?
  [ $rc = 0 ] || fail=1
  note "bench $name: rc=$rc in $(( $(date +%s) - t0 )) s"
}
small="--backends cuda --peers cub --reps 50"
for round in 1 2; do
  for sw in off on; do
    e=GPK_RADIX_CUDA_SMALL=0; [ $sw = on ] && e=$on
    bench "u32-$sw-$round" 60 $e -- $small --types u32 --n 2^16,2^17,2^18,2^19,2^20,2^22
    bench "f64-$sw-$round" 30 $e -- $small --types f64 --n 2^18
    bench "pairs-$sw-$round" 30 $e -- $small --types u32 --n 2^18 --pairs --perm --no-keys --value-type u32
  done
  bench "u32-on22-$round" 30 $on GPK_RADIX_CUDA_SMALL_MAX_LOG=22 -- $small --types u32 --n 2^21,2^22
done
python3 - "$work" <<'PY' | tee -a "$S"
import glob, json, os, re, sys, statistics as st
rows = {}  # (type, n, mode) -> {config: [gpk ms], 'cub': [ms]}, notes
notes = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    m = re.match(r"(\w+)-(off|on|on22)-(\d)\.json", os.path.basename(f))
    if not m:
        continue
    cfg = m.group(2)
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e); continue
    for r in d.get("rows", []):
        if "ms" not in r:
            print("row without time:", os.path.basename(f), r.get("type"), r.get("n"), r.get("mode"), r.get("check"))
            continue
        key = (r["type"], r["n"], r["mode"] + ("/" + r["value_type"] if "value_type" in r else ""))
        e = rows.setdefault(key, {})
        who = cfg if r.get("is_gpk") else "cub"
        e.setdefault(who, []).append(r["ms"])
        if r.get("is_gpk"):
            notes.setdefault((key, cfg), set()).add(r.get("note", "") + ("" if r.get("check") == "ok" else " CHECK:" + str(r.get("check"))))
def ms(v):
    return st.median(v) if v else float("nan")
print("\nmedian over rounds of each bench's median; CUB from the same processes; ratio = CUB / gpk (>1: gpk faster)")
print("%-5s %-8s %-10s %9s %9s %9s %9s %8s %8s %8s %9s  %s" % ("type", "n", "mode", "off ms", "on ms", "on22 ms", "CUB ms",
      "off/CUB", "on/CUB", "on/off", "on22/CUB", "path"))
for key in sorted(rows, key=lambda k: (k[2], k[0], k[1])):
    e = rows[key]; t, n, mode = key
    ln = n.bit_length() - 1
    ns = "2^%d" % ln if n == 1 << ln else str(n)
    off, on, on22, cub = ms(e.get("off", [])), ms(e.get("on", [])), ms(e.get("on22", [])), ms(e.get("cub", []))
    path = " ".join("%s:%s" % (c, ",".join(sorted(notes[(key, c)]))) for c in ("off", "on", "on22") if (key, c) in notes)
    print("%-5s %-8s %-10s %9.4f %9.4f %9.4f %9.4f %7.2fx %7.2fx %7.2fx %8.2fx  %s" % (t, ns, mode, off, on, on22, cub,
          cub / off, cub / on, off / on, cub / on22, path))
PY
(cd "$work" && tar czf "$out/logs.tgz" *.log *.txt *.json 2>/dev/null)
rm -rf "$work"
cat "$S" >/dev/null
exit $fail
