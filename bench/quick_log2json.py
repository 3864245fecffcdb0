#!/usr/bin/env python3
"""Turns the rows printed by `gpk bench quicksort` (its stdout) into the JSON
layout of --json, for a run cut off before it wrote its file: every complete
row, machine fields taken from a --json file of the same machine.

usage: quick_log2json.py LOG SAME_MACHINE.json OUT.json
"""
import json
import re
import sys

IMPLS = {"gpk quick": "quick", "gpk quick recursive": "quick-recursive", "gpk radix": "radix",
         "cub::DeviceMergeSort": "cub-merge", "thrust::sort": "thrust", "cub::DeviceRadixSort": "cub-radix",
         "cub::DeviceRadixSort::SortPairs+gather": "cub-index",
         "thrust::sort_by_key+thrust::gather": "thrust-index"}
ROW = re.compile(r"^(cuda|cpu)\s+(\w+)\s+([\w-]+)\s+2\^(\d+)\s+(keys|rec(\d+))\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+.*\s(\S+)$")


def main(log, like, out):
    doc = json.load(open(like))
    rows, dists = [], []
    for line in open(log):
        m = ROW.match(line.rstrip())
        if not m or m.group(7) not in IMPLS:
            continue
        be, t, d, p, kind, rs, impl, ms, gk, check = m.groups()
        rec = int(rs) if rs else 0
        rows.append({"backend": be, "type": t, "dist": d, "n": 1 << int(p),
                     "kind": "keys" if kind == "keys" else "records", "record_size": rec,
                     "payload_bytes": rec - 8 if rec else 0, "impl_id": IMPLS[impl], "impl": impl,
                     "is_gpk": impl.startswith("gpk"), "host_to_host": False, "ms": float(ms),
                     "gkeys_per_s": float(gk), "check": check})
        if d not in dists:
            dists.append(d)
    doc["rows"] = rows
    doc["config"]["dists"] = dists
    doc["config"]["n"] = sorted({r["n"] for r in rows})
    doc["command"] = "rows of %s (cut off before --json was written)" % log
    json.dump(doc, open(out, "w"), indent=1)
    print("%d rows" % len(rows))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
