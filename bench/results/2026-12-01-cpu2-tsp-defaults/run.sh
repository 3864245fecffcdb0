#!/bin/sh
# gpk tsp FILE with no options (the default: multistart over or2opt on all
# cores for 10 s) on every tsplib/ instance of 100 to 1000 cities, seeds
# given as arguments (default 1); one JSON line per run, with the load
# average when the run began.
#   run.sh GPK DATA OUT.jsonl [SEED...]
set -u
GPK=$1 DATA=$2 OUT=$3
shift 3
[ $# -gt 0 ] || set -- 1
: >"$OUT"
for s in "$@"; do
    for f in "$DATA"/tsplib/*.tsp; do
        n=$(grep -m1 DIMENSION "$f" | tr -dc 0-9)
        [ "$n" -ge 100 ] && [ "$n" -le 1000 ] || continue
        load=$(cut -d' ' -f1 /proc/loadavg)
        if [ "$s" = 1 ]; then j=$("$GPK" tsp "$f" -q --json); else j=$("$GPK" tsp "$f" -q --json --seed "$s"); fi
        printf '{"load1": %s, "run": %s}\n' "$load" "$j" >>"$OUT"
    done
done
