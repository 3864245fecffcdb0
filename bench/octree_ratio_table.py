#!/usr/bin/env python3
"""Static list against work stealing in `gpk bench octree` JSON files: per
file and cell, device ms and pool-kernel ms of both, and static / steal of
the device time (above 1: stealing faster). Usage: octree_ratio_table.py F..."""
import json
import os
import sys

for f in sys.argv[1:]:
    rows = json.load(open(f))["rows"]
    t = {(r["dist"], r["n"], r["scheme"]): r for r in rows}
    print("%s (victim %s)" % (os.path.basename(f), json.load(open(f)).get("victim")))
    print("  %-8s %5s %15s %15s %7s %7s" % ("dist", "n", "static dev/pool", "steal dev/pool", "morton", "st/stl"))
    worst = None
    for (d, n, s), r in sorted(t.items()):
        if s != "static" or (d, n, "steal") not in t:
            continue
        q = t[(d, n, "steal")]
        m = t.get((d, n, "morton"), {}).get("device_ms", 0.0)
        ratio = r["device_ms"] / q["device_ms"] if q["device_ms"] else 0.0
        worst = ratio if worst is None else min(worst, ratio)
        print("  %-8s %4dM %7.2f/%6.2f %7.2f/%6.2f %7.2f %7.2f" % (d, n >> 20, r["device_ms"], r.get("pool_ms", 0),
                                                               q["device_ms"], q.get("pool_ms", 0), m, ratio))
    if worst is not None:
        print("  lowest static / steal: %.2f" % worst)
