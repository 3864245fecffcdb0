#!/usr/bin/env bash
# Issue 15, pairs: the Onesweep pass with values loaded at tile start beside
# the keys (PassShape::values_early; docs/perf/radix.md, "Pairs: values
# loaded at tile start") against the shipped pass and CUB, on one GPU.
#   scripts/gpu-pairs-regs.sh [build-dir]   (about 4-5 minutes on an H100)
# Builds bench/radix_cuda_tune.cu outside CMake (bench/radix_cuda_tune.sh)
# under BUILD/pairs-regs, one binary per variant (tables by
# bench/tuning/variant.py; "e" = values_early on, the u32/u32 row 8,4,4 and
# the u64/u64 row 8,8,8 changed):
#   base      shipped: 256x24x2 ; 256x16x2, values after the ranking
#   e24       256x24x2 ; 256x16x2 early (the shipped tiles), and every
#             other pairs row early too (GPK_RADIX_CUDA_VALUES_EARLY: u32
#             keys with u64 values and the reverse, sigma passes, 10 and
#             11-bit digits, the multi-GPU scattering instantiations)
#   e20       256x20x2 ; 256x12x2 early
#   e384      384x16x2 early (u32/u32 only)
#   e16x3     256x16x3 early (u32/u32 only)
#   wide      every pairs row early (GPK_RADIX_CUDA_VALUES_EARLY), 64-bit
#             positions from n = 0, output positions moved past 2^32
# Correctness: --check --small of every early build (all six key types,
# u32 and u64 values, sigma with u32 and u64 indices, every API, sizes
# 0..70001), and --check --quick of e24 with persistent blocks
# (GPK_RADIX_CUDA_GRID=resident: the next tile's values are prefetched with
# its keys; the quick suite keeps the 2^21..5e6-key cases, where a block
# takes more than one tile). Speed: --perf --only
# pairs,pairs64 --reps 10 (2^28, CUB in the same process, keys and values
# checked against CUB's order), and e24 and base with persistent blocks.
# Logs in $OUT (one tar), registers and spills of the pairs kernels of each
# build in $OUT/ptxas.txt, the summary table last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-pairs-regs-out}
b=${1:-${GPK_GPU_BUILD:-$root/build-gpu}}
dir=$b/pairs-regs
mkdir -p "$out" "$dir"
dir=$(cd "$dir" && pwd) # nvcc -include and nvlink resolve it from other directories
logs=$(mktemp -d "$out/logs.XXXXXX") # this run's own folder, packed into logs.tgz at the end
export PATH="$PATH:/usr/local/cuda/bin"
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$logs/gpu.txt" 2>&1 || true

v=$root/bench/tuning/variant.py
python3 "$v" "$dir/e24.h" 8,4,4=256,24,2,1 8,8,8=256,16,2,1 &&
python3 "$v" "$dir/e20.h" 8,4,4=256,20,2,1 8,8,8=256,12,2,1 &&
python3 "$v" "$dir/e384.h" 8,4,4=384,16,2,1 8,8,8=256,16,2,1 &&
python3 "$v" "$dir/e16x3.h" 8,4,4=256,16,3,1 8,8,8=256,16,2,1 || { echo "variant.py failed"; exit 1; }
# the ptxas report of every variant's kernels comes back with the logs
sh "$root/bench/radix_cuda_tune.sh" "$dir" "base:-Xptxas -v" \
  "e24:-Xptxas -v -DGPK_RADIX_CUDA_VALUES_EARLY -DGPK_RADIX_CUDA_TUNING='\"$dir/e24.h\"'" \
  "e20:-Xptxas -v -DGPK_RADIX_CUDA_TUNING='\"$dir/e20.h\"'" \
  "e384:-Xptxas -v -DGPK_RADIX_CUDA_TUNING='\"$dir/e384.h\"'" \
  "e16x3:-Xptxas -v -DGPK_RADIX_CUDA_TUNING='\"$dir/e16x3.h\"'" \
  "wide:-DGPK_RADIX_CUDA_VALUES_EARLY -DGPK_RADIX_CUDA_WIDE_FROM=0 -DGPK_RADIX_CUDA_POS_OFFSET=4294966519" \
  >"$logs/build.log" 2>&1 || { tail -n 40 "$logs/build.log"; echo "build failed"; exit 1; }
echo "== built in $(( $(date +%s) - t0 )) s"

step() { # name timeout command...
  local name=$1 to=$2; shift 2; local t=$(date +%s)
  timeout "$to" "$@" >"$logs/$name.txt" 2>&1
  local rc=$?
  echo "== $name: exit $rc, $(( $(date +%s) - t )) s"
}
run() { echo "$dir/radix_cuda_tune_$1"; }
step check-e24 90 "$(run e24)" --check --small --label e24
# persistent blocks only take more than one tile above ~264 tiles (2^21 pairs
# at 4096-6144 a tile): --quick keeps the suite's large cases, which do
step check-e24-resident 150 env GPK_RADIX_CUDA_GRID=resident "$(run e24)" --check --quick --label e24-resident
step check-wide 90 "$(run wide)" --check --small --label wide
for x in e20 e384 e16x3; do step check-$x 60 "$(run $x)" --check --small --quick --label $x; done
step perf-base 60 "$(run base)" --perf --only pairs,pairs64 --reps 10 --label base
step perf-e24 60 "$(run e24)" --perf --only pairs,pairs64 --reps 10 --label e24
step perf-e20 60 "$(run e20)" --perf --only pairs,pairs64 --reps 10 --label e20
step perf-e384 40 "$(run e384)" --perf --only pairs --reps 10 --label e384
step perf-e16x3 40 "$(run e16x3)" --perf --only pairs --reps 10 --label e16x3
step perf-e24-resident 60 env GPK_RADIX_CUDA_GRID=resident "$(run e24)" --perf --only pairs,pairs64 --reps 10 \
  --label e24-resident
step perf-base-resident 60 env GPK_RADIX_CUDA_GRID=resident "$(run base)" --perf --only pairs,pairs64 --reps 10 \
  --label base-resident

# registers and spills of the pairs pass kernels (8-bit digits, loaded
# values, 32-bit positions, one GPU) per build: radix_cuda_NAME.log
python3 - "$dir" >"$out/ptxas.txt" 2>&1 <<'PY'
import re, subprocess, sys, os
d = sys.argv[1]
for v in ("base", "e24", "e20", "e384", "e16x3"):
    cur = None; spill = None; res = {}
    p = os.path.join(d, "radix_cuda_%s.log" % v)
    if not os.path.exists(p): print(v, "no log"); continue
    for line in open(p):
        m = re.search(r"Function properties for (\S+)", line)
        if m: cur = m.group(1); continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m: spill = (int(m.group(1)), int(m.group(2))); continue
        m = re.search(r"Used (\d+) registers", line)
        if m and cur and "onesweep" in cur: res[cur] = (int(m.group(1)),) + spill
    names = list(res)
    dm = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    for n, dn in zip(names, dm):
        m = re.search(r"onesweep_kernel<(8, unsigned (int|long), unsigned (int|long), 1, unsigned int, false)>", dn)
        if m: print("%-6s %-52s %3d regs, spill stores/loads %d/%d B" % ((v, m.group(1)) + res[n]))
PY

python3 - "$logs" <<'PY' | tee "$out/summary.txt"
import re, sys, os
logs = sys.argv[1]
def perf(name):
    p = os.path.join(logs, name + ".txt")
    rows = {}
    if not os.path.exists(p): return rows
    for line in open(p):
        m = re.match(r"(u32/u32 pairs b=32|u64/u64 pairs b=64)\s+ours\s+([\d.]+) ms.*cub\s+([\d.]+) ms.*ratio ([\d.]+) (\w+)", line)
        if m: rows[m.group(1)[:7]] = (float(m.group(2)), float(m.group(3)), m.group(5))
    return rows
def check(name):
    p = os.path.join(logs, name + ".txt")
    if not os.path.exists(p): return "-"
    t = open(p).read()
    m = re.findall(r"check: (\d+) cases, (\d+) checks, (\d+) failed", t)
    return ("%s checks, %s failed" % (m[-1][1], m[-1][2])) if m else "no result"
print("\nvariant            u32/u32 ms (cub, x cub, ok)        u64/u64 ms (cub, x cub, ok)        check (--small; resident: --quick)")
for v, c in [("base", None), ("e24", "check-e24"), ("e20", "check-e20"), ("e384", "check-e384"),
             ("e16x3", "check-e16x3"), ("e24-resident", "check-e24-resident"), ("base-resident", None),
             ("wide", "check-wide")]:
    r = perf("perf-" + v)
    cells = []
    for k in ("u32/u32", "u64/u64"):
        if k in r:
            o, cb, ok = r[k]
            cells.append("%8.3f (%7.3f, %.2fx, %s)" % (o, cb, cb / o, ok))
        else:
            cells.append("%-32s" % "-")
    print("%-18s %-34s %-34s %s" % (v, cells[0], cells[1], check(c) if c else "-"))
PY
cp "$dir"/radix_cuda_*.log "$logs/" 2>/dev/null
tar -C "$logs" -czf "$out/logs.tgz" . && rm -rf "$logs"
echo "total $(( $(date +%s) - t0 )) s; logs in $out/logs.tgz, ptxas in $out/ptxas.txt"
