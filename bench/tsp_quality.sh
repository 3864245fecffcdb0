#!/bin/sh
# The issue-18 TSP quality sweep: gpk tsp --nb or2opt --algo multistart on
# every TSPLIB instance of ../shared/data/tsplib with MIN..MAX cities, SEEDS
# seeds each, under a time limit; one JSON result per run into OUT (a JSON
# array), and a table of mean / worst gap per instance on stdout.
#   usage: bench/tsp_quality.sh GPK OUT.json [LIMIT_S] [THREADS] [SEEDS] [MIN] [MAX]
# The goal (issue 18): LIMIT_S 10, THREADS 16, SEEDS 5, 100..1000: every
# instance's mean gap at most 1%.
# Serially that is 39 x 5 x 10 s = 33 min; scripts/search-quality.sh tsp
# shows the goal in about 9 min (a 1 s screen, 10 s reruns of the pairs not
# optimal at 1 s; docs/perf/search.md says why the screen's figures hold).
set -u
GPK=${1:?usage: tsp_quality.sh GPK OUT.json [LIMIT_S] [THREADS] [SEEDS] [MIN] [MAX]}
OUT=${2:?usage: tsp_quality.sh GPK OUT.json [LIMIT_S] [THREADS] [SEEDS] [MIN] [MAX]}
LIMIT=${3:-10}
THREADS=${4:-16}
SEEDS=${5:-5}
MIN=${6:-100}
MAX=${7:-1000}
DATA=${GPK_TSPLIB:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data/tsplib}
TMP=$OUT.part
: >"$TMP"
for f in "$DATA"/*.tsp; do
    n=$(sed -n 's/^DIMENSION *: *\([0-9]*\).*/\1/p' "$f" | head -n 1)
    [ -n "$n" ] && [ "$n" -ge "$MIN" ] && [ "$n" -le "$MAX" ] || continue
    s=1
    while [ $s -le "$SEEDS" ]; do
        "$GPK" tsp "$f" --nb or2opt --algo multistart --threads "$THREADS" --time-limit "$LIMIT" --seed $s -q \
            --json >>"$TMP" || echo "FAILED: $f seed $s" >&2
        s=$((s + 1))
    done
done
python3 - "$TMP" "$OUT" <<'PY'
import json, sys, collections
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump(runs, open(sys.argv[2], "w"), indent=1)
by = collections.OrderedDict()
for r in runs:
    by.setdefault(r["instance"], []).append(r)
worst = 0.0
print("%-12s %6s %10s %9s %9s %8s" % ("instance", "n", "optimum", "mean gap", "max gap", "kicks"))
for name, rs in by.items():
    g = [r["gap_percent"] for r in rs if r["gap_percent"] is not None]
    if not g:
        print("%-12s %6d %10s" % (name, rs[0]["n"], "-"))
        continue
    m = sum(g) / len(g)
    worst = max(worst, m)
    print("%-12s %6d %10d %8.3f%% %8.3f%% %8.0f" % (name, rs[0]["n"], rs[0]["best_known"], m, max(g),
                                                  sum(r["iterations"] for r in rs) / len(rs)))
print("instances %d, runs %d, worst mean gap %.3f%%" % (len(by), len(runs), worst))
PY
rm -f "$TMP"
