#!/bin/sh
# Keeps the man page equal to the CLI: for every ".SS gpk CMD[, gpk CMD2 ...]"
# section of docs/gpk.1, the long options it names (--x) must be exactly
# those of `gpk CMD --help` (the union over the section's commands), and
# every command of `gpk --help` and every benchmark must have a section.
#   usage: man_test.sh PATH/TO/gpk PATH/TO/gpk.1
set -u
GPK=${1:?usage: man_test.sh PATH/TO/gpk PATH/TO/gpk.1}
MAN=${2:?usage: man_test.sh PATH/TO/gpk PATH/TO/gpk.1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpk_man_test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
fails=0
opts() { grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }

# the sections, one file per section title, with \- turned into -
awk -v dir="$WORK" '
    /^\.S[HS] / { out = "" }
    /^\.SS gpk / { n++; out = dir "/sec" n; t = substr($0, 5); print t > (dir "/title" n); next }
    out != "" { gsub(/\\-/, "-"); print > out }' "$MAN"

covered=""
for tf in "$WORK"/title*; do
    k=${tf##*/title}
    title=$(cat "$tf")
    : >"$WORK/help$k"
    # "gpk qap, gpk tsp, gpk ppp" -> "qap", "tsp", "ppp"
    for c in $(echo "$title" | sed 's/, gpk /,/g; s/^gpk //; s/ /_/g; s/,/ /g'); do
        c=$(echo "$c" | tr _ ' ')
        covered="$covered|$c|"
        [ "$c" = bench ] && continue
        # shellcheck disable=SC2086
        if ! "$GPK" $c --help >>"$WORK/help$k" 2>&1; then
            echo "FAIL: gpk $c --help fails (man page section '$title')" >&2
            fails=$((fails + 1))
        fi
    done
    opts <"$WORK/help$k" >"$WORK/h$k"
    opts <"$WORK/sec$k" >"$WORK/m$k"
    if ! cmp -s "$WORK/h$k" "$WORK/m$k"; then
        echo "FAIL: the man page section '$title' and --help differ (< only in --help, > only in the man page):" >&2
        diff "$WORK/h$k" "$WORK/m$k" | grep '^[<>]' >&2
        fails=$((fails + 1))
    fi
done

# every command and every benchmark has its section
cmds=$("$GPK" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
benches=$("$GPK" bench 2>&1 | awk '/^  [a-z]/ { print "bench_" $1 }')
for c in $cmds $benches; do
    [ "$c" = help ] && continue
    c=$(echo "$c" | tr _ ' ')
    case $covered in *"|$c|"*) ;; *)
        echo "FAIL: gpk $c has no section in $MAN" >&2
        fails=$((fails + 1)) ;;
    esac
done
[ -n "$benches" ] || { echo "FAIL: bare gpk bench lists no benchmark" >&2; fails=$((fails + 1)); }
if [ "$fails" -ne 0 ]; then
    echo "man_test: $fails failure(s)" >&2
    exit 1
fi
echo "man_test: every section of $MAN names exactly the options of gpk --help ($(echo $cmds $benches | wc -w) commands)"
