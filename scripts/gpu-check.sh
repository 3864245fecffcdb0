#!/usr/bin/env bash
# One command for the GPU machine: build with CUDA (sm_90) and OpenCL, run the
# whole test suite with the CUDA and OpenCL-on-NVIDIA tests required, run the
# benchmarks, and print a short table last.
#   scripts/gpu-check.sh [build] [test] [cudacheck] [sanitize] [bench] [pic]
#                        [qsanitize] [qbench] [octree] [python] [wide]
#                        [quick] [search] [multi] [mpi] [mpi-search] [ooc] [ocl]
#                        [segmented]
#   (default: all but sanitize, qsanitize, octree and wide)
# wide (issue 16, about 5 min on an 80 GB H100; run it as a call of its own
# after `build`): sorts past 2^31 and 2^32
# keys with tests/test_cuda_wide (boundary sizes 2^31-1 .. 2^32+1 on the
# device API, u32 keys, pairs, a 12-bit key set whose upper digits count
# past 2^32, the host API and gpk_sort_perm64; checked on the device:
# order and an order-free hash of the multiset), the goals (2^32+3 and 2^33
# u32 keys, 2^32+3 u32/u32 pairs, device-resident, beside 2^28 in the same
# run), radix_cuda_tune --check --small built with 64-bit positions from
# n = 0 and every output position moved past 2^32 (GPK_RADIX_CUDA_POS_OFFSET;
# with and without 20000-key portions), and gpk bench sort at 2^28
# beside GPK_MAIN_BUILD's gpk when that is set (main's build dir). Cases
# that do not fit the free device memory print SKIP.
# octree runs scripts/gpu-stages.sh octree on the same build (the CUDA pools and
# octree builders: tests, memcheck, benches against the 16-core CPU, the
# threads x blocks grid). The other stages of scripts/gpu-stages.sh (quick,
# search, multi, mpi, mpi-search, ooc, ocl), named here, run there on the
# same build with their outputs in $OUT/STAGE; each is a device call of its
# own (several minutes).
# python builds the extension gpk._gpk on the same build (plain CMake: the
# GPU host has no PyPI; GPK_PY_PIP=1 runs `pip install --no-build-isolation
# ./python` instead), runs python/tests with GPK_REQUIRE_CUDA=1 (CuPy and
# PyTorch arrays on the device) and python/bench/bench.py (2^28 u32 against
# cupy.sort and torch.sort, 2^26 f64 against numpy.sort): python-bench.json.
# qsanitize runs test_quick (GPK_TEST_SMALL=1) under compute-sanitizer
# memcheck (GPK_QSANITIZE_TOOLS adds racecheck); qbench runs gpk bench quicksort (u32 and f64, the
# paper's six distributions) at the sizes in GPK_QBENCH_N (default
# 2^20..2^25), then its records at GPK_QBENCH_RECORDS_N (2^20..2^24), all
# within GPK_QBENCH_TIMEOUT (500 s), and prints bench/quick_table.py's
# tables last.
# cudacheck builds bench/radix_cuda_tune.cu twice: as shipped (--check: every
# API, type, many sizes and (b, r)) and with 20000-key look-back portions, so
# the multi-portion path that only n > 2^29 reaches in the shipped build runs
# on small inputs.
# GPK_GPU_CMAKE_ARGS adds to the build's cmake line (e.g.
# -DGPK_IPS4O_INCLUDE_DIR=DIR for the IPS4o peer where no package is).
# Logs and JSON go to $OUT (the device tool's folder) or ./gpu-check-out.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-check-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
mkdir -p "$out"
stages=${*:-build test cudacheck bench pic qbench python}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
export PATH="$PATH:/usr/local/cuda/bin"

# --- the machine -----------------------------------------------------------------
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader \
  >"$out/gpu.txt" 2>&1 || true
note "gpu: $(head -n 1 "$out/gpu.txt")"
note "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"

# --- OpenCL: the NVIDIA driver ships libnvidia-opencl.so.1 but only PoCL is
# registered; register NVIDIA's ICD (system-wide when we may, else privately).
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
  note "opencl: libnvidia-opencl.so.1 not found; OpenCL runs on whatever is registered"
fi
# The NVIDIA device first (the OpenCL backend lists GPUs first anyway).
export GPK_OPENCL_DEVICE=${GPK_OPENCL_DEVICE:-NVIDIA}

fail=0
# --- build --------------------------------------------------------------------------
if has build; then
  t0=$(date +%s)
  # the check drivers of cudacheck and bench: built with the library
  tune=
  { has cudacheck || has bench; } && tune="default;portion:-DGPK_RADIX_CUDA_PORTION=20000"
  if cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
       -DGPK_RADIX_CUDA_TUNE="$tune" ${GPK_GPU_CMAKE_ARGS:-} >"$out/cmake.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1; then
    note "build: ok in $(( $(date +%s) - t0 )) s; $(grep 'gpk: CUDA' "$out/cmake.log" | sed 's/^-- //')"
  else
    tail -n 40 "$out/cmake.log" "$out/build.log"
    note "build: FAILED"
    exit 1
  fi
fi
gpk=$build/gpk
"$gpk" info >"$out/info.txt" 2>&1 || true

# --- tests --------------------------------------------------------------------------
if has test; then
  t0=$(date +%s)
  GPK_REQUIRE_CUDA=1 GPK_REQUIRE_OPENCL=1 ctest --test-dir "$build" -j 4 --output-on-failure \
    >"$out/ctest.log" 2>&1 || fail=1
  note "tests: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1) ($(( $(date +%s) - t0 )) s)"
  grep -E '^\s*[0-9]+/[0-9]+ Test' "$out/ctest.log" | sed 's/^ *//' >>"$summary"
  grep -h '^backend ' "$build"/Testing/Temporary/LastTest.log 2>/dev/null | sort -u | sed 's/^/  /' >>"$summary"
  # ctest runs the MPI tests on 1 and 2 ranks (and multi_cuda over every
  # GPU); with more GPUs, one rank per GPU as well
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$ngpu" -gt 2 ] && command -v mpiexec >/dev/null 2>&1; then
    for tp in test_mpi_sort test_mpi_search; do
      [ -x "$build/tests/$tp" ] || continue
      args="cuda"
      [ $tp = test_mpi_search ] && args="cuda $(sed -n "s/^GPK_DATA_DIR:PATH=//p" "$build/CMakeCache.txt")"
      # shellcheck disable=SC2086
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GPK_REQUIRE_CUDA=1 GPK_TEST_SMALL=1 \
        timeout 600 mpiexec --oversubscribe --bind-to none -n "$ngpu" "$build/tests/$tp" $args \
        >"$out/$tp-np$ngpu.log" 2>&1 || fail=1
      note "$tp cuda on $ngpu ranks: $(grep -E '^passed|^FAILED|checks, [0-9]+ failed' "$out/$tp-np$ngpu.log" | tail -n 1)"
    done
  fi
  # The CUDA hybrid radix sort forced on every size and call: few-key
  # buckets (every bucket through the finish), default buckets (skewed and
  # few-bit inputs take the big-bucket fallbacks and the skew check).
  # (test hooks given as arguments, src/core/test_hooks.h)
  for hv in "radix_cuda_hybrid_fill=64" "radix_cuda_hybrid_fill=4096"; do
    for tp in "tests/test_radix cuda" "tests/test_cuda_api"; do
      env GPK_REQUIRE_CUDA=1 "$build"/$tp radix_cuda_hybrid=1 radix_cuda_hybrid_min_log=0 $hv \
        >"$out/hybrid-test.log" 2>&1 || fail=1
      note "hybrid forced ($hv) $tp: $(tail -n 1 "$out/hybrid-test.log")"
    done
  done
fi

if has cudacheck; then
  for v in default portion; do
    args="--check"
    [ $v = portion ] && args="--check --small"
    if [ -x "$build/tune/radix_cuda_tune_$v" ]; then
      timeout 240 "$build/tune/radix_cuda_tune_$v" $args --label $v >"$out/cudacheck-$v.log" 2>&1
      rc=$?
      [ $rc = 0 ] || fail=1
      note "cuda check ($v): exit $rc, $(grep -E '^check:' "$out/cudacheck-$v.log" | tail -n 1)"
      grep -m 5 FAIL "$out/cudacheck-$v.log" >>"$summary"
    else
      fail=1
      note "cuda check ($v): not built (stage build with cudacheck builds it)"
    fi
  done
fi

if has sanitize; then
  if command -v compute-sanitizer >/dev/null 2>&1; then
    # test_cuda_api at its small sizes (memcheck: about 15 s on an H200;
    # racecheck runs minutes), then racecheck of each radix path on its
    # own: the one-block sort (2^12), the small path with values (2^18)
    # and the Onesweep passes (2^23), through gpk-cub-alone
    for tool in memcheck racecheck; do
      GPK_TEST_SMALL=1 timeout ${GPK_SANITIZE_TIMEOUT:-420} compute-sanitizer --tool $tool --error-exitcode 9 \
        "$build/tests/test_cuda_api" >"$out/$tool.log" 2>&1
      rc=$?
      [ $rc = 0 ] || fail=1
      note "compute-sanitizer $tool test_cuda_api (small): exit $rc, $(grep -E '^test_cuda_api' "$out/$tool.log" | tail -n 1)"
    done
    if [ -x "$build/gpk-cub-alone" ]; then
      for c in "u32 12 0" "u32 18 4" "u32 23 0"; do
        set -- $c
        timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$build/gpk-cub-alone" $1 $2 $3 uniform 1 \
          >"$out/racecheck-alone-$2.log" 2>&1
        rc=$?
        [ $rc = 0 ] || fail=1
        note "compute-sanitizer racecheck gpk-cub-alone $c: exit $rc, $(grep -m1 'RACECHECK SUMMARY' "$out/racecheck-alone-$2.log")"
      done
    fi
  fi
fi

if has qsanitize; then
  if command -v compute-sanitizer >/dev/null 2>&1; then
    # racecheck of the whole small suite runs past 400 s: ask for it with
    # GPK_QSANITIZE_TOOLS="memcheck racecheck"
    for tool in ${GPK_QSANITIZE_TOOLS:-memcheck}; do
      GPK_TEST_SMALL=1 timeout ${GPK_QSANITIZE_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 9 \
        "$build/tests/test_quick" cuda >"$out/$tool-quick.log" 2>&1
      rc=$?
      [ $rc = 0 ] || fail=1
      note "compute-sanitizer $tool test_quick cuda (small): exit $rc, $(grep -E '^test_quick:' "$out/$tool-quick.log" | tail -n 1), $(grep -m1 'ERROR SUMMARY' "$out/$tool-quick.log")"
    done
  fi
fi

# --- sizes past 2^32 (issue 16) ---------------------------------------------------------
if has wide; then
  t0=$(date +%s)
  wide=$build/tests/test_cuda_wide
  [ -x "$wide" ] || cmake --build "$build" -j "$(nproc)" --target test_cuda_wide >"$out/wide-build.log" 2>&1
  # 64-bit positions on every size, with and without small portions (CPU
  # work: built while the GPU runs the boundary sizes)
  sh "$root/bench/radix_cuda_tune.sh" "$build" \
    "wide:-DGPK_RADIX_CUDA_WIDE_FROM=0 -DGPK_RADIX_CUDA_POS_OFFSET=4294966519" \
    "portionwide:-DGPK_RADIX_CUDA_PORTION=20000 -DGPK_RADIX_CUDA_WIDE_FROM=0 -DGPK_RADIX_CUDA_POS_OFFSET=4294960000" \
    >"$out/wide-tune-build.log" 2>&1 &
  wide_tune_pid=$!
  # the usual sizes through the changed code first: CUDA radix (host API
  # quick ladder, device API), the small wide cases, the OpenCL 64-bit build
  for tp in "tests/test_radix cuda quick" "tests/test_cuda_api" "tests/test_cuda_wide" \
            "env $build/tests/test_radix opencl quick opencl_wide_from=0"; do
    case "$tp" in env*) cmd=$tp ;; *) cmd="$build/$tp" ;; esac
    k=$(( ${k:-0} + 1 ))
    GPK_REQUIRE_CUDA=1 GPK_REQUIRE_OPENCL=1 timeout 120 $cmd >"$out/wide-small-$k.log" 2>&1 || fail=1
    note "wide small: ${tp##*/}: $(tail -n 1 "$out/wide-small-$k.log")"
    grep -m 5 FAIL "$out/wide-small-$k.log" >>"$summary"
  done
  if [ -x "$wide" ]; then
    timeout 420 "$wide" keys:2^31-1 keys:2^31 keys:2^31+1 keys:2^32-1 keys:2^32 keys:2^32+1 \
      keys:2^32+1:low12 pairs:2^32+1 pairs:2^31+1:low12 host:2^32+1 perm64:2^31+1 perm64:2^32+1 \
      ocl:2^32+1 ocl:2^32+1:low12 cudaquick:2^32+1 cpu:2^32+1 cpuquick:2^32+1 \
      >"$out/wide-check.log" 2>&1
    rc=$?
    [ $rc = 0 ] || fail=1
    note "wide boundary sizes: exit $rc, $(tail -n 1 "$out/wide-check.log") ($(( $(date +%s) - t0 )) s)"
    grep -E '^(ok|FAIL|SKIP)' "$out/wide-check.log" | sed 's/^/  /' >>"$summary"
  else
    fail=1
    note "wide: test_cuda_wide not built"; tail -n 20 "$out/wide-build.log"
  fi
  wait $wide_tune_pid
  # the goals: device-resident u32 keys and pairs, 2^28 beside 2^32+3 and 2^33
  t1=$(date +%s)
  timeout 240 "$wide" keys:2^28:uniform:21 keys:2^32+3:uniform:5 keys:2^33:uniform:3 \
    pairs:2^28:uniform:21 pairs:2^32+3:uniform:5 keys:2^28:uniform:21 >"$out/wide-bench.txt" 2>&1
  rc=$?
  [ $rc = 0 ] || fail=1
  note "wide bench: exit $rc ($(( $(date +%s) - t1 )) s)"
  grep -E '^(ok|FAIL|SKIP)' "$out/wide-bench.txt" | sed 's/^/  /' >>"$summary"
  for v in wide portionwide; do
    if [ -x "$build/tune/radix_cuda_tune_$v" ]; then
      timeout 200 "$build/tune/radix_cuda_tune_$v" --check --small --label $v >"$out/wide-tune-$v.log" 2>&1
      rc=$?
      [ $rc = 0 ] || fail=1
      note "cuda check ($v: 64-bit positions past 2^32 on small n): exit $rc, $(grep -E '^check:' "$out/wide-tune-$v.log" | tail -n 1)"
      grep -m 5 FAIL "$out/wide-tune-$v.log" >>"$summary"
    else
      fail=1
      note "cuda check ($v): not built"; tail -n 20 "$out/wide-tune-build.log"
    fi
  done
  # 2^28 against main's binary in the same run, alternating (GPK_MAIN_BUILD)
  for round in 1 2; do
    for who in this main; do
      g=$gpk
      [ $who = main ] && g=${GPK_MAIN_BUILD:-}/gpk
      [ -x "$g" ] || continue
      timeout 120 "$g" bench sort --backends cuda --types u32 --n 2^28 --pairs --peers none \
        >"$out/wide-2p28-$who-$round.txt" 2>&1 || fail=1
      note "gpk bench sort 2^28 u32 ($who, round $round):"
      grep -E 'cuda' "$out/wide-2p28-$who-$round.txt" | sed 's/^/  /' >>"$summary"
    done
  done
  note "wide: $(( $(date +%s) - t0 )) s in all"
fi

# --- benchmarks ------------------------------------------------------------------------
if has qbench; then
  t0=$(date +%s)
  # Keys, then records one size lower: the records' host-side generation,
  # host-to-host sorts and checks are nine tenths of the stage's time
  # (2^24 records of 72 bytes: 1.2 GB), and 2^25 would double it.
  limit=${GPK_QBENCH_TIMEOUT:-500}
  timeout "$limit" "$gpk" bench quicksort --types u32,f64 \
    --n "${GPK_QBENCH_N:-2^20,2^21,2^22,2^23,2^24,2^25}" ${GPK_QBENCH_ARGS-} \
    --json "$out/quicksort-gpu.json" >"$out/bench-quick.txt" 2>"$out/bench-quick.err"
  rc=$?
  left=$(( limit - ($(date +%s) - t0) ))
  [ $left -gt 0 ] || left=1 # timeout 0 would mean none
  if [ $rc = 0 ]; then
    timeout $left "$gpk" bench quicksort --records-only \
      --n "${GPK_QBENCH_RECORDS_N:-2^20,2^21,2^22,2^23,2^24}" --json "$out/quicksort-records-gpu.json" \
      >>"$out/bench-quick.txt" 2>>"$out/bench-quick.err"
    rc=$?
  fi
  [ $rc = 0 ] || fail=1
  note "quicksort bench: exit $rc in $(( $(date +%s) - t0 )) s; $(grep -c FAIL "$out/bench-quick.txt") FAIL rows"
  grep -m 10 -E 'FAIL|ERROR' "$out/bench-quick.txt" >>"$summary"
  [ -f "$out/quicksort-gpu.json" ] && python3 "$root/bench/quick_table.py" "$out/quicksort-gpu.json" \
    $(ls "$out/quicksort-records-gpu.json" 2>/dev/null) >"$out/quick-table.txt" 2>&1
fi
if has bench; then
  # The ceiling: a large device-to-device copy, bytes read + written.
  python3 - >"$out/copy-bandwidth.txt" 2>&1 <<'PY' || true
import torch
n = 1 << 30
a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
a.random_(0, 255)
for _ in range(3): b.copy_(a)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ts = []
for _ in range(20):
    s.record(); b.copy_(a); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); ms = ts[len(ts) // 2]
print(f"device-to-device copy: {2 * n / ms / 1e6:.0f} GB/s (read + write, 1 GiB, median of 20)")
PY
  note "$(tail -n 1 "$out/copy-bandwidth.txt")"
  if [ -x "$build/tune/radix_cuda_tune_default" ]; then
    # n = 2^28 against CUB with the bytes-moved floor per case (docs/perf/radix.md)
    timeout 200 "$build/tune/radix_cuda_tune_default" --perf --label default >"$out/cuda-perf.txt" 2>&1 || fail=1
  fi
  timeout 300 "$gpk" bench sort --backends cuda,opencl --types u32,u64 --n 2^28 --pairs \
    --json "$out/radix-gpu.json" >"$out/bench-gpu.txt" 2>"$out/bench-gpu.err" || fail=1
  timeout 200 "$gpk" bench sort --backends cuda,opencl --types u32 --n 2^28 --key-bits 10 --perm \
    --json "$out/radix-gpu-10bit.json" >"$out/bench-gpu-10bit.txt" 2>"$out/bench-gpu-10bit.err" || fail=1
  # the threaded peers only: qsort and std::sort take minutes at 2^28
  timeout 300 "$gpk" bench sort --backends cpu --types u32 --n 2^28 --peers gnu-parallel,ips4o,vqsort \
    --json "$out/radix-cpu.json" >"$out/bench-cpu.txt" 2>"$out/bench-cpu.err" || fail=1
fi

if has pic; then
  for be in cuda opencl cpu; do
    timeout 120 "$gpk" pic --backend "$be" >"$out/pic-$be.txt" 2>&1 || fail=1
  done
fi

# --- the CUDA octree builders and pools ------------------------------------------------
if has octree; then
  GPK_GPU_BUILD=$build OUT=$out/octree GPK_OCTREE_STAGES="${GPK_OCTREE_STAGES:-memcheck final grid}" \
    bash "$root/scripts/gpu-stages.sh" octree >"$out/octree.log" 2>&1
  rc=$?
  [ $rc = 0 ] || fail=1
  note "octree (scripts/gpu-stages.sh octree): exit $rc; $(grep -c -E 'FAIL|ERROR' "$out/octree.log") FAIL/ERROR lines"
fi

# --- the other stages of scripts/gpu-stages.sh, on this build --------------------------------
for st in quick search multi mpi mpi-search ooc ocl segmented; do
  has $st || continue
  case $st in multi | mpi | mpi-search | ocl) args=$build ;; *) args= ;; esac
  GPK_GPU_BUILD=$build OUT=$out/$st bash "$root/scripts/gpu-stages.sh" $st $args >"$out/$st.log" 2>&1
  rc=$?
  [ $rc = 0 ] || fail=1
  note "$st (scripts/gpu-stages.sh $st): exit $rc"
done

# --- Python: gpk over numpy, CuPy and PyTorch (python/) ------------------------------------
if has python; then
  t0=$(date +%s)
  py=${PYTHON:-python3}
  pkg=$build/python-pkg
  rc=0
  if [ "${GPK_PY_PIP:-0}" = 1 ]; then
    "$py" -m pip install --no-build-isolation --no-deps "$root/python" >"$out/python-build.log" 2>&1 || rc=$?
    pypath=${PYTHONPATH:-}
  else
    { cmake -S "$root" -B "$build" -DGPK_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v "$py")" &&
      cmake --build "$build" -j "$(nproc)" --target _gpk; } >"$out/python-build.log" 2>&1 || rc=$?
    rm -rf "$pkg" && mkdir -p "$pkg/gpk" &&
      cp "$root"/python/src/gpk/*.py "$root"/python/src/gpk/*.pyi "$pkg/gpk/" &&
      cp "$build"/python/_gpk*.so "$pkg/gpk/" 2>>"$out/python-build.log" || rc=1
    pypath=$pkg${PYTHONPATH:+:$PYTHONPATH}
  fi
  if [ $rc = 0 ]; then
    ( cd "$root" && GPK_REQUIRE_CUDA=1 PYTHONPATH=$pypath timeout 900 "$py" -m pytest -q -p no:cacheprovider \
        python/tests --doctest-modules --pyargs gpk ) >"$out/python-tests.log" 2>&1 || fail=1
    note "python tests: $(tail -n 1 "$out/python-tests.log") ($(( $(date +%s) - t0 )) s)"
    ( cd "$root" && PYTHONPATH=$pypath timeout 900 "$py" python/bench/bench.py --out "$out/python-bench.json" ) \
      >"$out/python-bench.txt" 2>&1
    brc=$?
    [ $brc = 0 ] || fail=1
    note "python bench: exit $brc (python-bench.json)"
  else
    fail=1
    note "python: build FAILED"; tail -n 20 "$out/python-build.log"
  fi
fi

# --- the short table, last ----------------------------------------------------------
echo
echo "==== gpu-check summary ===="
cat "$summary"
for f in cuda-perf bench-gpu bench-gpu-10bit bench-cpu bench-octree-cuda bench-octree-cpu python-bench wide-bench; do
  [ -f "$out/$f.txt" ] && { echo "---- $f"; cat "$out/$f.txt"; }
done
for be in cuda opencl cpu; do
  [ -f "$out/pic-$be.txt" ] && { echo "---- pic $be"; tail -n 6 "$out/pic-$be.txt"; }
done
[ -f "$out/quick-table.txt" ] && { echo "---- quicksort"; cat "$out/quick-table.txt"; }
# The device tool brings back 8 files at most: keep the summary and the
# JSON loose, everything else in one archive.
( cd "$out" && find . -maxdepth 1 -type f ! -name 'summary.txt' ! -name 'radix-*.json' ! -name 'quicksort-*.json' ! -name 'octree-*.json' ! -name 'python-*.json' ! -name '*.tar.gz' \
    -printf '%P\n' | tar czf gpu-check-logs.tar.gz -T - --remove-files 2>/dev/null
  rm -rf icd 2>/dev/null; true )
[ $fail = 0 ] && echo "gpu-check: all passed" || echo "gpu-check: FAILURES (see $out)"
exit $fail
