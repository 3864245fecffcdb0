#!/usr/bin/env bash
# Issue 15, OpenCL part, on the GPU machine: the OpenCL radix sort on the
# NVIDIA GPU (NVIDIA's OpenCL driver) against gpk's CUDA backend.
#   scripts/gpu-ocl.sh [build-dir]     (default $GPK_GPU_BUILD or build-gpu)
# Builds nothing: the build dir must hold gpk and tests/test_radix built with
# CUDA (sm_90) and OpenCL. Stages, about 4 minutes in all:
#   1. the OpenCL program on the NVIDIA device with the vendor path required
#      (GPK_OPENCL_VENDOR=2: a failed inline-PTX build is an error that
#      carries the build log, printed here);
#   2. test_radix opencl: vendor path (onesweep + PTX, the default), the
#      portable default (GPK_OPENCL_VENDOR=0: the fast kernels), the
#      portable onesweep (GPK_OPENCL_VENDOR=0 GPK_OPENCL_VARIANT=onesweep:
#      the fast kernels where its counter rows do not fit local memory) and
#      the emulated warp ranking (GPK_OPENCL_VENDOR=emulate);
#   3. gpk bench sort, u32 and u64 keys and pairs at 2^26, cuda and opencl in
#      one run (the OpenCL rows' peer is the CUDA backend), vendor path and
#      GPK_OPENCL_VENDOR=0 on the same machine;
#   4. shapes of the onesweep pass (register cap, keys per item, the general
#      group scan instead of the warp-shuffle one) between two default rows;
# then a table: OpenCL ms, CUDA ms, CUDA/OpenCL (the goal: >= 0.6).
# Logs and JSON go to $OUT (or ./gpu-ocl-out): summary.txt, ocl.tar.gz.
# GPK_OCL_N=2^16 (with GPK_OPENCL_DEVICE=...) smoke-tests the script elsewhere.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${GPK_GPU_BUILD:-$root/build-gpu}}
build=$(cd "$build" && pwd) || { echo "no build dir $build"; exit 2; }
out=${OUT:-$root/gpu-ocl-out}
mkdir -p "$out"
logs=$out/ocl-logs
mkdir -p "$logs"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
gpk=$build/gpk
n=${GPK_OCL_N:-2^26} # smaller for a smoke test elsewhere
[ -x "$gpk" ] || { note "no $gpk"; exit 2; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader >"$logs/gpu.txt" 2>&1 || true
note "gpu: $(head -n 1 "$logs/gpu.txt")"

# NVIDIA's ICD, as scripts/gpu-check.sh registers it.
nvlib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
if [ -z "$nvlib" ]; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -e "$d/libnvidia-opencl.so.1" ] && nvlib=$d/libnvidia-opencl.so.1 && break
  done
fi
if [ -n "$nvlib" ]; then
  if mkdir -p /etc/OpenCL/vendors 2>/dev/null && echo "$nvlib" >/etc/OpenCL/vendors/nvidia.icd 2>/dev/null; then
    note "opencl: registered $nvlib in /etc/OpenCL/vendors/nvidia.icd"
  else
    mkdir -p "$out/icd"
    cp /etc/OpenCL/vendors/*.icd "$out/icd/" 2>/dev/null || true
    echo "$nvlib" >"$out/icd/nvidia.icd"
    export OCL_ICD_VENDORS=$out/icd
    note "opencl: registered $nvlib through OCL_ICD_VENDORS=$out/icd"
  fi
else
  note "opencl: libnvidia-opencl.so.1 not found"
fi
export GPK_OPENCL_DEVICE=${GPK_OPENCL_DEVICE:-NVIDIA}
"$gpk" info >"$logs/info.txt" 2>&1 || true

# --- 1. the vendor build, required: its log if it fails -------------------------
# A look-back that never ends would hang every later vendor stage: a timeout
# here skips them.
GPK_OPENCL_VENDOR=2 timeout 90 "$gpk" bench sort --backends opencl --types u32,u64 --n 2^16,2^22 --pairs --reps 3 \
  --json "$logs/vendor-build.json" >"$logs/vendor-build.txt" 2>&1
vrc=$?
vendor_ok=1
[ $vrc -eq 124 ] && vendor_ok=0 && note "vendor path: TIMED OUT (hang?): vendor stages skipped"
if grep -q 'opencl-onesweep-ptx' "$logs/vendor-build.json" 2>/dev/null; then
  note "vendor build: ok (onesweep with inline PTX)"
else
  note "vendor build: FAILED or not used; output (build log in the error):"
  cat "$logs/vendor-build.txt" | tee -a "$summary"
fi

# --- 2. correctness -----------------------------------------------------------------
t0=$(date +%s)
run_test() { # name, env..., then the test arguments after --
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" timeout 100 "$build/tests/test_radix" "$@" >"$logs/test-$name.txt" 2>&1
  local rc=$?
  note "test_radix opencl [$name]: rc $rc: $(grep -E 'checks|^backend' "$logs/test-$name.txt" | tr '\n' ' ' | cut -c1-220)"
  [ $rc -eq 0 ] || grep -m 20 -E 'FAIL|error|Error' "$logs/test-$name.txt" | tee -a "$summary"
}
[ $vendor_ok -eq 1 ] && run_test vendor GPK_REQUIRE_OPENCL=1 GPK_OPENCL_VENDOR=2 -- opencl
run_test portable-fast GPK_REQUIRE_OPENCL=1 GPK_OPENCL_VENDOR=0 -- opencl quick
run_test portable-onesweep GPK_REQUIRE_OPENCL=1 GPK_OPENCL_VENDOR=0 GPK_OPENCL_VARIANT=onesweep -- opencl quick
run_test emulated GPK_REQUIRE_OPENCL=1 GPK_OPENCL_VENDOR=emulate GPK_OPENCL_VARIANT=onesweep -- opencl quick
if [ $vendor_ok -eq 1 ] && [ -x "$build/tests/test_radix_opencl_extra" ]; then
  GPK_OPENCL_VENDOR=2 timeout 90 "$build/tests/test_radix_opencl_extra" --quick >"$logs/test-extra.txt" 2>&1
  note "test_radix_opencl_extra --quick (vendor): rc $?: $(tail -n 2 "$logs/test-extra.txt" | tr '\n' ' ' | cut -c1-200)"
fi
note "tests: $(( $(date +%s) - t0 )) s"

# --- 3. the goal: CUDA vs OpenCL at 2^26, same run ---------------------------------------
bench() { # name, env...
  local name=$1; shift
  env "$@" timeout 100 "$gpk" bench sort --backends cuda,opencl --types u32,u64 --n "$n" --pairs --reps 20 \
    --peers cuda --json "$logs/bench-$name.json" >"$logs/bench-$name.txt" 2>&1
  local rc=$?
  note "bench [$name]: rc $rc"
  [ $rc -eq 0 ] || grep -v '^gpk bench \[' "$logs/bench-$name.txt" | tail -n 8 | tee -a "$summary"
}
[ $vendor_ok -eq 1 ] && bench vendor GPK_OPENCL_VENDOR=1
bench portable GPK_OPENCL_VENDOR=0

# --- 4. shapes of the onesweep pass (keys only, OpenCL only) -------------------------
shape() { # name, env...
  local name=$1; shift
  env "$@" timeout 60 "$gpk" bench sort --backends opencl --types u32,u64 --n "$n" --pairs --reps 10 --peers none \
    --json "$logs/shape-$name.json" >"$logs/shape-$name.txt" 2>&1
  local rc=$?
  note "shape [$name]: rc $rc"
  [ $rc -eq 0 ] || grep -v '^gpk bench \[' "$logs/shape-$name.txt" | tail -n 4 | tee -a "$summary"
}
# same sequence, keys and pairs: the default first, for comparison (run 1
# had no default row: its shapes ran minutes after the bench)
[ $vendor_ok -eq 1 ] && shape default GPK_OPENCL_VENDOR=1
[ $vendor_ok -eq 1 ] && shape maxrreg64 GPK_OPENCL_BUILD_OPTIONS=-cl-nv-maxrregcount=64
[ $vendor_ok -eq 1 ] && shape maxrreg56 GPK_OPENCL_BUILD_OPTIONS=-cl-nv-maxrregcount=56
[ $vendor_ok -eq 1 ] && shape maxrreg64-kpt20-10 GPK_OPENCL_BUILD_OPTIONS=-cl-nv-maxrregcount=64 GPK_OPENCL_OS_KPT=20,10
[ $vendor_ok -eq 1 ] && shape plainscan GPK_OPENCL_BUILD_OPTIONS=-DGPK_OS_PLAIN_SCAN
[ $vendor_ok -eq 1 ] && shape default-again GPK_OPENCL_VENDOR=1

tar -czf "$out/ocl.tar.gz" -C "$out" ocl-logs 2>/dev/null

# --- table ----------------------------------------------------------------------------
python3 - "$logs" "$n" <<'PY' | tee -a "$summary"
import glob, json, os, sys
logs, n = sys.argv[1], sys.argv[2]
def rows(path):
    try:
        return json.load(open(path))['rows']
    except Exception as e:
        return []
print('\nCUDA vs OpenCL, n = %s, device-resident, median ms (goal: CUDA/OpenCL >= 0.6)' % n)
print('%-10s %-4s %-6s %10s %10s %8s  %s' % ('run', 'type', 'mode', 'opencl', 'cuda', 'ratio', 'opencl path / check'))
for name in ('vendor', 'portable'):
    rs = rows(os.path.join(logs, 'bench-%s.json' % name))
    cuda = {(r['type'], r['mode']): r for r in rs if r['backend'] == 'cuda' and r.get('is_gpk')}
    for r in rs:
        if r['backend'] != 'opencl' or not r.get('is_gpk'):
            continue
        c = cuda.get((r['type'], r['mode']))
        cm = c['ms'] if c else float('nan')
        print('%-10s %-4s %-6s %10.3f %10.3f %8.2f  %s / %s' % (name, r['type'], r['mode'], r['ms'], cm,
              cm / r['ms'] if r['ms'] else 0, r.get('note', ''), r.get('check', '')))
for path in sorted(glob.glob(os.path.join(logs, 'shape-*.json'))):
    for r in rows(path):
        if r.get('is_gpk'):
            print('%-10s %-4s %-6s %10.3f %10s %8s  %s / %s' % (os.path.basename(path)[6:-5], r['type'], r['mode'],
                  r['ms'], '-', '-', r.get('note', ''), r.get('check', '')))
PY
