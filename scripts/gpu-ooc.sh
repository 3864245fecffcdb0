#!/usr/bin/env bash
# Issue 16, out-of-core host sorts on the GPU machine (one H100, 16 cores,
# 128 GiB RAM): forced-budget correctness on CUDA, then the goal benchmark.
#   scripts/gpu-ooc.sh [build] [test] [link] [goal] [more]
#   (default: all; about 5 minutes)
# build: configures $GPK_GPU_BUILD (default build-gpu, sm_90) when it has no
#        CMake cache, builds test_ooc, test_api, gpk_ooc_bench.
# test:  test_ooc cuda (every type, pairs, perm, records, run boundaries,
#        skew, injected failures; slots of 40009 elements), test_api cuda,
#        2^28 u32 keys / 2^27 f64+u64 pairs through the real driver under a
#        1 GiB / 2 GiB device budget, and (last) test_ooc cpu, the CI fake.
# link:  H2D, D2H and both-at-once speed (pinned), cudaHostRegister speed
#        and a 16-thread pageable->pinned copy (the staging alternative).
# goal:  12 x 2^30 u32 keys (48 GiB) in host memory: the CUDA host API 3
#        times in one context (the first call allocates and locks the extra
#        buffer, the context keeps it for the next two), 3 times with the
#        input page-locked by the caller (--pin: no staging), twice each of
#        those with GPK_OOC_RESIDENT=0 (no run kept on the device: run 5's
#        plan), and later the same input (same seed) on the CPU backend (16
#        threads) once, in its own process.
# more:  skewed u32 keys (90% one value, 48 GiB), u64 keys and u32/u32
#        pairs of the same 48 GiB, twice each (first call, then kept
#        buffer), u64 and pairs again with the input page-locked.
# Logs and JSON go to $OUT (or ./gpu-ooc-out); the table comes last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-ooc-out}
build=${GPK_GPU_BUILD:-$root/build-gpu}
mkdir -p "$out/logs"
stages=${*:-build test link goal more}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
export PATH="$PATH:/usr/local/cuda/bin"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
json=$out/ooc.json
: >"$json"
start=$(date +%s)
note "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -n 1)"
note "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"

if has build; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/logs/configure.log" 2>&1 \
      || note "build: configure FAILED (logs/configure.log)"
  fi
  if cmake --build "$build" -j16 --target test_ooc test_api gpk_ooc_bench gpk_cli >"$out/logs/build.log" 2>&1; then
    note "build: ok"
  else
    note "build: FAILED (logs/build.log)"; tail -n 30 "$out/logs/build.log"
  fi
fi
bench=$build/gpk_ooc_bench

# Every step stops at its own timeout and at the script's deadline
# (GPK_OOC_DEADLINE seconds after the start, default 540), so the whole
# stays inside one 10-minute device call.
deadline=$(( start + ${GPK_OOC_DEADLINE:-540} ))
runlog() { # name timeout command...
  local name=$1 t=$2; shift 2
  local s=$(date +%s)
  local left=$(( deadline - s ))
  if [ "$left" -lt 20 ]; then note "$name: SKIPPED (deadline)"; return 1; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout "$t" "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - s )) s) $(grep -E 'test_ooc:|test_api:|checks' "$out/logs/$name.log" | tail -n 1)"
  return $rc
}

if has test; then
  GPK_REQUIRE_CUDA=1 runlog test_ooc_cuda 150 "$build/tests/test_ooc" cuda
  GPK_REQUIRE_CUDA=1 runlog test_api_cuda 30 "$build/tests/test_api" cuda
  runlog forced_u32 40 "$bench" --n 256M --budget 1G --reps 1 --json "$json.forced"
  grep -E "rep|out of core" "$out/logs/forced_u32.log" | tee -a "$summary"
  runlog forced_f64_pairs 40 "$bench" --type f64 --values 8 --n 128M --budget 2G --reps 1 --json "$json.forced"
  grep -E "rep|out of core" "$out/logs/forced_f64_pairs.log" | tee -a "$summary"
  # gpk sort on CUDA: a mapped output file (256 MiB of keys) under a 512 MiB budget, against the CPU
  tmpd=$(mktemp -d "${TMPDIR:-/tmp}/gpk_ooc.XXXXXX")
  if "$build/gpk" sort --gen uniform --n 64M --type u32 --seed 3 -o "$tmpd/in.npy" -q --backend cpu &&
     "$build/gpk" sort "$tmpd/in.npy" -o "$tmpd/ref.npy" -q --backend cpu &&
     GPK_DEVICE_BUDGET=512M runlog cli_cuda 60 "$build/gpk" sort "$tmpd/in.npy" -o "$tmpd/out.npy" --backend cuda; then
    if cmp -s "$tmpd/out.npy" "$tmpd/ref.npy"; then note "cli_cuda: same as the CPU sort"; else note "cli_cuda: DIFFERS from the CPU sort"; fi
  else
    note "cli_cuda: FAILED ($(tail -n 1 "$out/logs/cli_cuda.log" 2>/dev/null))"
  fi
  rm -rf "$tmpd"
fi

if has link; then
  runlog link 60 "$bench" --link --n 1K --reps 0 --json "$json"
  grep '^link' "$out/logs/link.log" | tee -a "$summary"
fi

seed=${GPK_OOC_SEED:-$start}
# A card larger than the issue's H100 (an H200: 48 GiB of keys and their
# scratch fit on it) sorts the goal's inputs in memory, which is not what the
# goal measures (run 2 on an H200 did that: 8.3-9.5 s, pageable transfers):
# the CUDA runs below then get the H100's memory as their device budget
# (GPK_OOC_BUDGET, default 76G); the CPU run never does (on a CPU context a
# budget runs the CI fake).
mem_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n 1)
if { has goal || has more; } && [ -z "${GPK_DEVICE_BUDGET:-}" ] && [ "${mem_mib:-0}" -gt 82000 ]; then
  export GPK_DEVICE_BUDGET=${GPK_OOC_BUDGET:-76G}
  note "device: $mem_mib MiB, larger than an H100: goal runs under GPK_DEVICE_BUDGET=$GPK_DEVICE_BUDGET"
fi
if has goal; then
  # rep 0 is a first call (allocates and locks the extra buffer); reps 1, 2
  # reuse the buffer the context keeps (the default); every run the device
  # memory holds stays there for the merge (GPK_OOC_RESIDENT)
  runlog goal_u32 120 "$bench" --n 12G --reps 3 --seed "$seed" --json "$json"
  grep -E "rep|out of core" "$out/logs/goal_u32.log" | tee -a "$summary"
  # the caller's arrays page-locked by the caller (cudaHostRegister, once,
  # outside the timed calls): no staging copy
  runlog goal_u32_pinned 120 "$bench" --n 12G --reps 3 --seed "$seed" --pin --json "$json.pinned"
  grep -E "pin:|rep|out of core" "$out/logs/goal_u32_pinned.log" | tee -a "$summary"
  # no run kept on the device (run 5's plan: the merge loads every slice from B)
  GPK_OOC_RESIDENT=0 runlog goal_u32_nokept 60 "$bench" --n 12G --reps 2 --seed "$seed" --json "$json.nokept"
  grep -E "rep|out of core" "$out/logs/goal_u32_nokept.log" | tee -a "$summary"
  GPK_OOC_RESIDENT=0 runlog goal_u32_pinned_nokept 60 "$bench" --n 12G --reps 2 --seed "$seed" --pin --json "$json.pinnednokept"
  grep -E "rep|out of core" "$out/logs/goal_u32_pinned_nokept.log" | tee -a "$summary"
fi
if has more; then
  runlog skew_u32 75 "$bench" --dist skew90 --n 12G --reps 2 --json "$json"
  grep -E "rep|out of core" "$out/logs/skew_u32.log" | tee -a "$summary"
fi
if has goal; then # the same input on the CPU backend, 16 threads, once
  ( unset GPK_DEVICE_BUDGET; runlog cpu_u32 180 "$bench" --backend cpu --n 12G --reps 1 --seed "$seed" --json "$json" )
  grep -E "rep" "$out/logs/cpu_u32.log" | tee -a "$summary"
fi
if has more; then
  runlog u64 60 "$bench" --type u64 --n 6G --reps 2 --json "$json"
  grep -E "rep|out of core" "$out/logs/u64.log" | tee -a "$summary"
  runlog pairs_u32 60 "$bench" --values 4 --n 6G --reps 2 --json "$json"
  grep -E "rep|out of core" "$out/logs/pairs_u32.log" | tee -a "$summary"
  runlog u64_pinned 60 "$bench" --type u64 --n 6G --reps 2 --pin --json "$json.pinned"
  grep -E "pin:|rep|out of core" "$out/logs/u64_pinned.log" | tee -a "$summary"
  runlog pairs_u32_pinned 60 "$bench" --values 4 --n 6G --reps 2 --pin --json "$json.pinned"
  grep -E "pin:|rep|out of core" "$out/logs/pairs_u32_pinned.log" | tee -a "$summary"
fi
if has test; then # the CI fake, last: it needs no GPU
  GPK_TEST_SMALL=1 runlog test_ooc_cpu 60 "$build/tests/test_ooc" cpu
fi

tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$out/logs"
note "total: $(( $(date +%s) - start )) s"

# the table: best CUDA time per case against the goal and the CPU
python3 - "$json" <<'EOF' | tee -a "$summary" || true
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for ext, tag in ((".nokeep", " KEEP=0"), (".ahead", " LOCK=ahead"), (".pinned", " pinned"),
                 (".nokept", " RESIDENT=0"), (".pinnednokept", " pinned RESIDENT=0")):
    if os.path.exists(sys.argv[1] + ext):
        for l in open(sys.argv[1] + ext):
            if l.strip():
                r = json.loads(l); r["dist"] += tag; rows.append(r)
link = [r for r in rows if r["what"] == "link"]
if link:
    l = link[-1]
    print(f"link: H2D {l['h2d_gbs']:.1f} GB/s, D2H {l['d2h_gbs']:.1f} GB/s, both {l['both_gbs']:.1f} GB/s")
cpu = {}
for r in rows:
    if r["what"] == "sort" and r["backend"] == "cpu":
        for tag in ("", " pinned", " RESIDENT=0", " pinned RESIDENT=0"):
            cpu[(r["type"], r["value_bytes"], r["n"], r["dist"] + tag)] = r["s"]
print(f"{'case':<40} {'GiB':>5} {'best s':>7} {'first s':>7} {'runs ms':>8} {'merge ms':>8} {'lock ms':>7} {'unlk ms':>7} {'ok':>3} {'vs cpu':>7}")
cases = {}
for r in rows:
    if r["what"] == "sort" and r["backend"] == "cuda":
        cases.setdefault((r["type"], r["value_bytes"], r["n"], r["dist"]), []).append(r)
for k, rs in cases.items():
    best = min(rs, key=lambda r: r["s"])
    gib = k[2] * ((4 if k[0].endswith("32") else 8) + k[1]) / 2**30
    name = f"{k[0]}{'/u%d' % (8 * k[1]) if k[1] else ''} {k[3]} n={k[2]}"
    c = cpu.get(k)
    print(f"{name:<40} {gib:5.1f} {best['s']:7.3f} {rs[0]['s']:7.3f} {best['runs_ms']:8.0f} {best['merge_ms']:8.0f} "
          f"{best.get('lock_ms', 0):7.0f} {best.get('unlock_ms', 0):7.0f} {min(r['ok'] for r in rs):3d} "
          f"{('%.1fx' % (c / best['s'])) if c else '-':>7}")
print("goal: 12 x 2^30 u32 keys <= 3.75 s and >= 10x the 16-thread CPU; skew90 within 2x of uniform")
EOF
