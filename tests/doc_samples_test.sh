#!/bin/sh
# Keeps docs/cli.md's sample outputs what gpk prints now: every sample line
# of a summary, progress line or table header in the doc is compared with
# the line the command prints today, numbers and device names masked (they
# depend on the machine), and bare `gpk bench` with the doc's block exactly.
# Samples that need a GPU (naming cuda) are skipped; a sample line that no
# command below produces fails, so a new sample gets its command here.
#   usage: doc_samples_test.sh PATH/TO/gpk PATH/TO/docs/cli.md DATA_DIR
set -u
GPK=${1:?usage: doc_samples_test.sh PATH/TO/gpk PATH/TO/cli.md DATA_DIR}
DOC=${2:?usage: doc_samples_test.sh PATH/TO/gpk PATH/TO/cli.md DATA_DIR}
DATA=${3:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpk_doc_test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
fails=0
fail() { fails=$((fails + 1)); echo "FAIL: $*" >&2; }

# Masks what depends on the machine and the run: the device after the
# backend ("cpu (AMD EPYC)"), the CPU named after the threads, numbers,
# runs of spaces.
mask() {
    sed -E 's/^(gpk [a-z]+: [a-z]+) \([^)]*\)/\1 (DEV)/
            s/threads? \([^)]*\)/threads (DEV)/
            s/[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?/#/g
            s/ +/ /g; s/ $//'
}

# What the samples come from (all on the CPU backend). stderr and stdout
# together: the summaries and progress lines are on stderr.
{
    "$GPK" sort --gen uniform --n 1M --check --backend cpu
    head -c 12000 /dev/urandom >"$WORK/rec.bin"
    "$GPK" sort "$WORK/rec.bin" --record-size 12 --key-offset 5 --key-type u32 --check --backend cpu
    "$GPK" octree --dist tube --backend cpu
    "$GPK" octree --scheme morton --backend cpu
    "$GPK" ppp --m 21 --n 21 --backend cpu
    "$GPK" tsp --random 2000 --backend cpu --time-limit 2.5
    "$GPK" bench sort --backends cpu --n 2^10 --types u32 --reps 1
    "$GPK" bench quicksort --backends cpu --n 2^10 --types u32 --dists uniform --reps 1
} >"$WORK/out.txt" 2>&1 || fail "a sample command failed: $(tail -3 "$WORK/out.txt")"
if [ -n "$DATA" ] && [ -f "$DATA/qaplib/nug12.dat" ]; then
    "$GPK" qap "$DATA/qaplib/nug12.dat" --backend cpu >>"$WORK/out.txt" 2>&1 || fail "gpk qap nug12 failed"
    have_qap=1
else
    echo "doc_samples_test: no nug12.dat in '$DATA': the qap summary sample is skipped"
    have_qap=0
fi
have_opencl=0
if "$GPK" info 2>/dev/null | grep -q '^opencl  [^n]'; then
    "$GPK" pic --n 1M --backend opencl >>"$WORK/out.txt" 2>&1 || fail "gpk pic failed"
    have_opencl=1
fi
mask <"$WORK/out.txt" | sort -u >"$WORK/got.txt"

# The doc's sample lines: inside ``` blocks, summaries, progress lines and
# the benchmark tables' header lines.
awk '/^```/ { inblock = !inblock; next }
     inblock && (/^gpk [a-z]+: [a-z]+ \(/ || /^gpk [a-z]+ \[[a-z]+[, ]/ || /^gpk (qap|tsp|ppp): / || /^gpk pic: / || /^backend +type/)' \
    "$DOC" >"$WORK/samples.txt"
[ -s "$WORK/samples.txt" ] || fail "no sample lines found in $DOC"
checked=0
while IFS= read -r line; do
    case $line in
    *cuda*) continue ;;
    "gpk pic:"*) [ $have_opencl = 1 ] || continue ;;
    "gpk qap:"*) [ $have_qap = 1 ] || continue ;;
    esac
    want=$(printf '%s\n' "$line" | mask)
    if grep -qxF -- "$want" "$WORK/got.txt"; then
        checked=$((checked + 1))
    else
        fail "docs/cli.md shows a line gpk no longer prints:"
        echo "    doc:    $line" >&2
        echo "    masked: $want" >&2
        prefix=$(printf '%s\n' "$want" | cut -c1-12)
        grep -F -- "$prefix" "$WORK/got.txt" | head -3 | sed 's/^/    now:    /' >&2
    fi
done <"$WORK/samples.txt"

# bare gpk bench: the doc's block, exactly
"$GPK" bench >"$WORK/bench.txt" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "bare gpk bench: exit $rc, expected 2 (a usage error)"
awk '/^```/ { if (inblock && hit) exit; inblock = !inblock; next }
     inblock && /^usage: gpk bench BENCHMARK/ { hit = 1 }
     inblock && hit' "$DOC" >"$WORK/bench_doc.txt"
if cmp -s "$WORK/bench.txt" "$WORK/bench_doc.txt"; then
    checked=$((checked + 1))
else
    fail "bare gpk bench differs from docs/cli.md (< now, > doc):"
    diff "$WORK/bench.txt" "$WORK/bench_doc.txt" >&2
fi
[ "$(wc -l <"$WORK/bench.txt")" -le 12 ] || fail "bare gpk bench prints $(wc -l <"$WORK/bench.txt") lines: not a short list"

echo "doc_samples_test: $checked sample(s) match, $fails failure(s)"
[ $fails -eq 0 ]
