#!/usr/bin/env bash
# Per-kernel device times of one quicksort (Nsight Compute, gpu__time_duration),
# summed by kernel name: where the time of gpk bench quicksort goes.
#   bench/qprof.sh GPK TYPE N DIST [IMPL]   (IMPL: quick (default) or quick-recursive)
#   TYPE records:P: records of a u64 key and a P-byte payload instead of keys
# QPROF_EACH=1 also lists every launch in order (the partition levels one by one).
set -u
gpk=$1 type=$2 n=$3 dist=$4 impl=${5:-quick}
export PATH="$PATH:/usr/local/cuda/bin"
what=(--types "$type")
case $type in records:*) what=(--records-only --payloads "${type#records:}") ;; esac
ncu --metrics gpu__time_duration.sum --csv --launch-skip 0 \
  "$gpk" bench quicksort "${what[@]}" --n "$n" --dists "$dist" --impls "$impl" --reps 1 -q 2>/dev/null |
python3 -c '
import csv, sys, collections, os
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value"); u = hdr.index("Metric Unit")
scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}
tot = collections.OrderedDict(); cnt = collections.Counter()
for r in rows[1:]:
    name = r[k].replace("(anonymous namespace)::", "").replace("<unnamed>::", "").replace("void ", "").split("<")[0].split("(")[0]
    t = float(r[v].replace(",", "")) * scale.get(r[u], 1.0)
    if os.environ.get("QPROF_EACH"): print(f"    {name:28s} {t/1e3:9.1f} us")
    tot[name] = tot.get(name, 0.0) + t; cnt[name] += 1
s = sum(tot.values())
for name, t in tot.items(): print(f"  {name:28s} {cnt[name]:5d} launches {t/1e3:9.1f} us")
print("  %-28s %5d launches %9.1f us" % ("total", sum(cnt.values()), s / 1e3))
'
