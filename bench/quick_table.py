#!/usr/bin/env python3
"""Prints `gpk bench quicksort --json` results as short tables: one line per
(kind, type, n, distribution), one column per implementation (ms, median),
then gpk quicksort's throughput over its peer's (q/peer: cub::DeviceMergeSort
for keys, CUB radix sort of (key, index) plus a gather for records) and over
gpk radix's (q/radix); > 1: quicksort faster. Rows whose check is not "ok" show their
status instead of a time.

usage: quick_table.py RESULTS.json [...]
"""
import json
import sys

COLS = ["quick", "quick-recursive", "radix", "cub-merge", "thrust", "cub-radix",
        "cub-index", "thrust-index", "qsort", "std-sort", "gnu-parallel", "qsort-records", "quick-host"]
SHORT = {"quick": "quick", "quick-recursive": "q-rec", "radix": "radix", "cub-merge": "cubmerge",
         "thrust": "thrust", "cub-radix": "cubradix", "cub-index": "cub+gath",
         "thrust-index": "thr+gath", "qsort": "qsort", "std-sort": "std::sort",
         "gnu-parallel": "gnu-par", "qsort-records": "qsort-rec", "quick-host": "q-host"}


def size(n):
    for p in range(40, 9, -1):
        if n == 1 << p:
            return f"2^{p}"
    return str(n)


def main(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        dev = doc["devices"][0]["device"] if doc.get("devices") else "?"
        print(f"# {path}: {dev}; ms (median); q/peer, q/radix = throughput ratios")
        groups = {}
        for r in doc["rows"]:
            kind = "keys" if r["kind"] == "keys" else f"rec{r['record_size']}"
            key = (r["backend"], kind, r["type"], r["n"])
            groups.setdefault(key, {}).setdefault(r["dist"], {})[r["impl_id"]] = r
        for (be, kind, t, n), dists in groups.items():
            present = [c for c in COLS if any(c in d for d in dists.values())]
            print(f"{be} {kind} {t} n={size(n)}")
            print("  " + f"{'dist':<13}" + "".join(f"{SHORT[c]:>10}" for c in present)
                  + f"{'q/peer':>9}{'q/radix':>9}")
            for dist, impls in dists.items():
                cells = []
                for c in present:
                    r = impls.get(c)
                    if r is None:
                        cells.append(f"{'':>10}")
                    elif r["check"] != "ok":
                        cells.append(f"{r['check']:>10}")
                    else:
                        cells.append(f"{r['ms']:>10.3f}")

                def ratio(a, b):
                    ra, rb = impls.get(a), impls.get(b)
                    if not ra or not rb or ra["check"] != "ok" or rb["check"] != "ok" or not ra["ms"]:
                        return f"{'-':>9}"
                    return f"{rb['ms'] / ra['ms']:>9.2f}"
                peer = "cub-merge" if kind == "keys" else "cub-index"
                print("  " + f"{dist:<13}" + "".join(cells) + ratio("quick", peer) + ratio("quick", "radix"))
        if doc.get("failures"):
            print(f"FAILURES: {doc['failures']}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
