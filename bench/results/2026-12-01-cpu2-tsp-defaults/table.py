"""The table of docs/perf/search.md from tsp-defaults.jsonl: mean and max gap
per instance over the seeds run, kicks, the load average at the start."""
import collections
import json
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1] if len(sys.argv) > 1 else "tsp-defaults.jsonl"):
    rec = json.loads(line)
    r = rec["run"]
    runs[(r["n"], r["instance"])].append((r["gap_percent"], r["iterations"], rec["load1"], r["algo"], r["nb"],
                                          r["time_limit"], r["check"]))
worst = 0.0
print("| instance | n | seeds | mean gap | max gap | kicks (mean) | load1 |")
print("|---|---|---|---|---|---|---|")
for (n, name), rs in sorted(runs.items()):
    gaps = [g for g, *_ in rs]
    assert all(a == "multistart" and b == "or2opt" and t == 10 and c == "ok" for _, _, _, a, b, t, c in rs)
    mean = sum(gaps) / len(gaps)
    worst = max(worst, mean)
    print(f"| {name} | {n} | {len(rs)} | {mean:.3f} % | {max(gaps):.3f} % | "
          f"{sum(k for _, k, *_ in rs) / len(rs):.0f} | {min(l for *_, l, _, _, _, _ in rs):.1f} - "
          f"{max(l for *_, l, _, _, _, _ in rs):.1f} |")
print(f"\nworst mean gap {worst:.3f} %, {sum(len(r) for r in runs.values())} runs, {len(runs)} instances")
