#!/usr/bin/env bash
# Issue 15's goal table in one call on the GPU machine (docs/perf/radix.md,
# "Against issue 15's goals"): every row against its peer in the same run.
#   scripts/gpu-goals15.sh [build-dir]   (about 5 minutes on an H100)
# CUDA vs cub::DeviceRadixSort (device-resident): u32/i32/f32 keys at 2^24 and
# 2^28, u64/i64/f64 keys at 2^28, u32/u32 and u64/u64 pairs at 2^28, 10-bit
# keys and 10-bit keys with sigma (CUB sorts pairs, end_bit 10), the eight
# distributions at 2^28 u32, 2^16..2^20 u32 keys; OpenCL vs our CUDA (u32 and
# u64 keys, 2^26); CPU (16 threads) vs __gnu_parallel::sort, u32 keys and
# u32/u32 pairs at 2^28. JSON per group in $OUT, the table last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-goals15-out}
b=${1:-${GPK_GPU_BUILD:-$root/build-gpu}}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -x "$b/gpk-bench" ]; then
  [ -f "$b/CMakeCache.txt" ] || cmake -S "$root" -B "$b" -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1
  cmake --build "$b" -j16 --target gpk-bench >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
fi
g=$b/gpk-bench
fail=0
bench() { # name timeout args...
  local name=$1 to=$2; shift 2; local t=$(date +%s)
  timeout "$to" "$g" bench sort -q --json "$out/$name.json" "$@" >"$out/$name.txt" 2>&1
  local rc=$?; [ $rc = 0 ] || fail=1
  echo "== $name: exit $rc, $(( $(date +%s) - t )) s"
}
bench keys32 150 --backends cuda --types u32,i32,f32 --n 2^24,2^28 --peers cub
bench keys64 200 --backends cuda --types u64,i64,f64 --n 2^28 --peers cub --reps 10
bench pairs32 90 --backends cuda --types u32 --n 2^28 --pairs --no-keys --value-type u32 --peers cub
bench pairs64 90 --backends cuda --types u64 --n 2^28 --pairs --no-keys --value-type u64 --peers cub
bench bits10 90 --backends cuda --types u32 --n 2^28 --key-bits 10 --perm --peers cub
bench small 90 --backends cuda --types u32 --n 2^16,2^17,2^18,2^19,2^20 --peers cub
for d in uniform gaussian few-bits sorted reverse zero-entropy staggered bucket; do
  bench dist-$d 60 --backends cuda --types u32 --n 2^28 --dist $d --peers cub
done
bench ocl 120 --backends cuda,opencl --types u32,u64 --n 2^26 --peers none
bench cpu 240 --backends cpu --types u32 --n 2^28 --pairs --threads 16 --peers gnu-parallel --reps 3
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("%-14s %-6s %-5s %-6s %-10s %9s %9s %7s" % ("group", "type", "n", "mode", "bits", "gpk ms", "peer ms", "ratio"))
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e); continue
    rows = d.get("rows", [])
    for r in rows:
        if not r.get("is_gpk") or r.get("backend") not in ("cuda", "cpu", "opencl"):
            continue
        if r["backend"] == "cuda" and os.path.basename(f) == "ocl.json":
            continue
        peer = [p for p in rows if not p.get("is_gpk") and p["type"] == r["type"] and p["n"] == r["n"]
                and p["mode"] == r["mode"] and p.get("end_bit") == r.get("end_bit")
                and p.get("gpk_row", "").endswith(r["backend"])]
        pm = peer[0]["ms"] if peer else float("nan")
        if r["backend"] == "opencl":
            cu = [p for p in rows if p.get("is_gpk") and p["backend"] == "cuda" and p["type"] == r["type"]
                  and p["n"] == r["n"] and p["mode"] == r["mode"]]
            pm = cu[0]["ms"] if cu else float("nan")
        n = r["n"]; ln = n.bit_length() - 1
        ns = "2^%d" % ln if n == 1 << ln else str(n)
        print("%-14s %-6s %-5s %-6s %-10s %9.3f %9.3f %6.2fx %s" % (os.path.basename(f)[:-5], r["type"], ns, r["mode"],
              "%d-%d" % (r.get("begin_bit", 0), r.get("end_bit", 0)), r["ms"], pm, pm / r["ms"] if r["ms"] else 0,
              "" if r.get("check") == "ok" else r.get("check")))
PY
grep -l FAIL "$out"/*.txt 2>/dev/null && fail=1
exit $fail
