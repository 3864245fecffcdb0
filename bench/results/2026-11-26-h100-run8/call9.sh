#!/usr/bin/env bash
# run 9 (H100): the small path on by default (tests + A/B vs CUB), and the 2-opt
# evaluation rate on pla33810, before issue 18 (fb70f09^) and now, alternated.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
O=${OUT:-/tmp/out}; mkdir -p "$O/w"; W=$O/w
t0=$(date +%s)
data=$PWD/.carry/data
( cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j12 --target gpk_bench gpk_cli test_radix test_cuda_api >$W/build.log 2>&1; echo "new build rc=$?" ) &
( cmake -S .scratch/old -B .scratch/old-build -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF \
    -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF >$W/cfg-old.log 2>&1 &&
  cmake --build .scratch/old-build -j4 --target gpk_cli >$W/build-old.log 2>&1; echo "old build rc=$?" ) &
wait
echo "builds $(( $(date +%s)-t0 )) s"; tail -3 $W/build.log
export GPK_REQUIRE_CUDA=1
for t in "radix-default:build-gpu/tests/test_radix cuda" "radix-off:env GPK_RADIX_CUDA_SMALL=0 build-gpu/tests/test_radix cuda" "api:build-gpu/tests/test_cuda_api"; do
  n=${t%%:*}; c=${t#*:}; s=$(date +%s)
  timeout 150 $c >$W/$n.log 2>&1; echo "test $n rc=$? $(( $(date +%s)-s )) s: $(grep -E 'checks' $W/$n.log | tail -1)"
done
B=build-gpu/gpk-bench
for r in 1 2; do for sw in 0 1; do
  GPK_RADIX_CUDA_SMALL=$sw timeout 60 $B bench sort -q --backends cuda --peers cub --reps 30 --types u32,u64,f64,i32 --n 2^20,2^21,2^22,2^23 --json $W/k-$sw-$r.json >$W/k-$sw-$r.txt 2>&1 || echo "bench k $sw $r failed"
  GPK_RADIX_CUDA_SMALL=$sw timeout 60 $B bench sort -q --backends cuda --peers cub --reps 30 --types u32,u64 --n 2^20,2^22 --pairs --no-keys --value-type u32 --json $W/p-$sw-$r.json >$W/p-$sw-$r.txt 2>&1 || echo "bench p $sw $r failed"
done; done
echo "benches $(( $(date +%s)-t0 )) s"
for r in 1 2; do for v in old new; do
  g=build-gpu/gpk; [ $v = old ] && g=.scratch/old-build/gpk
  timeout 90 $g bench search --data $data --instances tai12a --iters 2 --reps 1 --eval-rate pla33810 --eval-seconds 3 --json $W/er-$v-$r.json >$W/er-$v-$r.txt 2>&1
  echo "eval-rate $v $r rc=$?: $(python3 -c "
import json,sys
d=json.load(open('$W/er-$v-$r.json'))
for x in d.get('eval_rate') or []: print(x.get('instance'), '%.4g/s' % (x['evaluations'] / x['ms'] * 1e3), x.get('path'))
" 2>&1 | tr '\n' ' ')"
done; done
python3 - "$W" <<'PY'
import glob, json, os, re, sys, statistics as st
rows = {}
for f in glob.glob(os.path.join(sys.argv[1], "[kp]-*.json")):
    m = re.match(r"([kp])-(\d)-(\d)\.json", os.path.basename(f)); sw = m.group(2)
    for r in json.load(open(f)).get("rows", []):
        if "ms" not in r: print("no time", f, r.get("type"), r.get("n"), r.get("check")); continue
        key = (r["mode"], r["type"], r["n"])
        who = ("on" if sw == "1" else "off") if r.get("is_gpk") else "cub"
        rows.setdefault(key, {}).setdefault(who, []).append(r["ms"])
        if r.get("is_gpk"): rows[key].setdefault("path" + sw, set()).add(r.get("note", "") + ("" if r.get("check") == "ok" else "!" + str(r.get("check"))))
print("%-6s %-5s %-6s %9s %9s %9s %8s %8s  %s" % ("mode", "type", "n", "off ms", "on ms", "CUB ms", "off/CUB", "on/CUB", "paths"))
for k in sorted(rows):
    e = rows[k]; off, on, cub = (st.median(e.get(x, [float("nan")])) for x in ("off", "on", "cub"))
    print("%-6s %-5s 2^%-4d %9.4f %9.4f %9.4f %7.2fx %7.2fx  %s %s" % (k[0], k[1], k[2].bit_length() - 1, off, on, cub, cub / off, cub / on, ",".join(e.get("path0", [])), ",".join(e.get("path1", []))))
PY
(cd $W && tar czf $O/run9-logs.tgz *.log *.txt *.json)
echo "total $(( $(date +%s)-t0 )) s"
