#!/bin/sh
# QAP quality on the tai*a instances of ../shared/data/qaplib up to n = MAX:
# gpk qap (iterated tabu, the default budget) over SEEDS seeds; one JSON
# result per run into OUT (a JSON array) and the mean gap per instance.
#   usage: bench/qap_quality.sh GPK OUT.json [SEEDS] [MAX] [extra gpk qap options...]
set -u
GPK=${1:?usage: qap_quality.sh GPK OUT.json [SEEDS] [MAX] [options]}
OUT=${2:?usage: qap_quality.sh GPK OUT.json [SEEDS] [MAX] [options]}
SEEDS=${3:-5}
MAX=${4:-100}
shift 4 2>/dev/null || shift $#
DATA=${GPK_QAPLIB:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data/qaplib}
TMP=$OUT.part
: >"$TMP"
for f in "$DATA"/tai*a.dat; do
    n=$(awk 'NF { print $1; exit }' "$f")
    [ "$n" -le "$MAX" ] || continue
    s=1
    while [ $s -le "$SEEDS" ]; do
        "$GPK" qap "$f" --seed $s -q --json "$@" >>"$TMP" || echo "FAILED: $f seed $s" >&2
        s=$((s + 1))
    done
done
python3 - "$TMP" "$OUT" <<'PY'
import json, sys, collections
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump(runs, open(sys.argv[2], "w"), indent=1)
by = collections.OrderedDict()
for r in sorted(runs, key=lambda r: r["n"]):
    by.setdefault(r["instance"], []).append(r)
means = []
print("%-9s %4s %10s %9s %9s %8s" % ("instance", "n", "best", "mean gap", "max gap", "s/run"))
for name, rs in by.items():
    g = [r["gap_percent"] for r in rs]
    means.append(sum(g) / len(g))
    print("%-9s %4d %10d %8.3f%% %8.3f%% %8.2f" % (name, rs[0]["n"], rs[0]["best_known"], means[-1], max(g),
                                                  sum(r["ms"] for r in rs) / len(rs) / 1e3))
print("instances %d, runs %d, average of the mean gaps %.3f%%" % (len(by), len(runs), sum(means) / len(means)))
PY
rm -f "$TMP"
