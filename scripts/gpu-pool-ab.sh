#!/usr/bin/env bash
# A/B of a compile-time pool option on the GPU: the tree as it is (build-gpu)
# against a control build with $GPK_POOL_AB_DEFINE (default
# GPK_POOL_NO_EMPTY_CHECK) in build-ctl, configured alike. Tests of the tree,
# then the pools' own rates and the octree static / steal benches of both
# builds, alternating, $GPK_POOL_AB_ROUNDS rounds (default 2). JSON in $OUT.
set -u
. "$(dirname "$0")/gpu-lib.sh"
gpu_build gpk_cli test_octree test_pool_cuda
run octree_cuda 240 $b/tests/test_octree cuda
TAILN=9 run pool_cuda 120 $b/tests/test_pool_cuda
t0=$(date +%s)
cmake -S . -B build-ctl -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_FLAGS="-D${GPK_POOL_AB_DEFINE:-GPK_POOL_NO_EMPTY_CHECK}" >"$out/cmake-ctl.log" 2>&1 &&
  cmake --build build-ctl -j 16 --target gpk_cli test_pool_cuda >"$out/build-ctl.log" 2>&1 ||
  { tail -n 40 "$out/build-ctl.log"; exit 1; }
echo "control build ok $(( $(date +%s) - t0 )) s"
TAILN=9 run pool_cuda_ctl 120 build-ctl/tests/test_pool_cuda
for r in $(seq 1 "${GPK_POOL_AB_ROUNDS:-2}"); do for v in $b build-ctl; do
  TAILN=0 run "ab-$(basename $v)-$r" 150 $v/gpk bench octree --backend cuda --n 1M,2M,4M,8M,16M \
    --dists uniform,tube --schemes static,steal --victim "${GPK_POOL_AB_VICTIM:-rr}" --reps 5 \
    --json "$out/ab-$(basename $v)-$r.json"
done; done
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("device ms, static / steal (ratio > 1: stealing faster)")
for f in sorted(glob.glob(os.path.join(out, "ab-*.json"))):
    rows = json.load(open(f))["rows"]
    t = {(r["dist"], r["n"], r["scheme"]): r.get("device_ms") for r in rows}
    cells = []
    for (d, n, s), ms in sorted(t.items()):
        if s == "static" and (d, n, "steal") in t and ms and t[(d, n, "steal")]:
            cells.append("%s %dM %.2f/%.2f=%.2f" % (d[:3], n >> 20, ms, t[(d, n, "steal")], ms / t[(d, n, "steal")]))
    print(os.path.basename(f), "|", "; ".join(cells))
PY
cd "$out" && tar czf logs.tar.gz *.log && rm -f *.log && echo "logs in logs.tar.gz"
