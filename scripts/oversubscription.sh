#!/bin/sh
# Local search on idle and on loaded cores (issue 19, item 5): an iterated
# tabu search on an 80-facility QAPLIB instance (tai80a) and on a 100-city
# TSP (rd100), with each thread count of THREADS, first on the machine as
# it is ("idle": its load average is printed, since a shared machine is
# never quite idle), then beside LOAD busy processes (default: one per
# core). Prints one line per run: the wall time and the best found, which
# must be the same for every thread count.
#   scripts/oversubscription.sh [GPK [DATA]]
#   THREADS="1 2 16" LOAD=16 scripts/oversubscription.sh build/gpk
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
GPK=${1:-$root/build/gpk}
DATA=${2:-$root/../shared/data}
THREADS=${THREADS:-"1 2 16"}
CORES=$(nproc 2>/dev/null || echo 2)
LOAD=${LOAD:-$CORES}
QAP=$DATA/qaplib/tai80a.dat
TSP=$DATA/tsplib/rd100.tsp
for f in "$GPK" "$QAP" "$TSP"; do
    [ -e "$f" ] || { echo "oversubscription.sh: $f not found" >&2; exit 2; }
done

busy=""
stop_load() {
    for p in $busy; do kill "$p" 2>/dev/null; done
    for p in $busy; do wait "$p" 2>/dev/null; done
    busy=""
}
trap stop_load EXIT INT TERM

# run STATE: every instance and thread count once.
run() {
    for t in $THREADS; do
        for inst in "qap $QAP" "tsp $TSP"; do
            set -- $inst
            out=$("$GPK" "$1" "$2" --backend cpu --threads "$t" --json -q 2>&1)
            ms=$(printf '%s\n' "$out" | sed -n 's/.*"ms": \([0-9.]*\).*/\1/p')
            best=$(printf '%s\n' "$out" | sed -n 's/.*"best": \([0-9-]*\).*/\1/p')
            thr=$(printf '%s\n' "$out" | sed -n 's/.*"threads": \([0-9]*\).*/\1/p')
            printf '%-7s %-4s %-7s threads %3s (context: %3s)  %10.1f ms  best %s\n' "$STATE" "$1" \
                "$(basename "$2" | sed 's/\..*//')" "$t" "${thr:-?}" "${ms:-0}" "${best:-FAILED: $out}"
        done
    done
}

echo "gpk oversubscription: $(uname -n), $CORES cores, threads: $THREADS; $("$GPK" --version 2>&1 | head -1)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
STATE=idle
run
i=0
while [ "$i" -lt "$LOAD" ]; do
    sh -c 'while :; do :; done' &
    busy="$busy $!"
    i=$((i + 1))
done
sleep 1
echo "loaded: $LOAD busy processes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
STATE=loaded
run
stop_load
