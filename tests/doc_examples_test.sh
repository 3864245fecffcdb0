#!/bin/sh
# Runs the examples of README.md, docs/tutorial.md and docs/guide.md as a
# fresh clone would: every line of their ```sh blocks, in order, in a
# scratch directory laid out like the clone after `make` (build/ is the
# build tree, data/ a copy of the repository's data/). Their ```python
# blocks run too when PYTHON (default python3) imports numpy and gpk;
# when it does not, each such block and the rest of its section are skipped,
# said so (python/tests/test_doc_examples.py runs the Python blocks in
# `make python-check`).
#
# Not run, and said so: the build and install steps (make, cmake, pip,
# python3 -m venv, git, apt-get, sudo, export, cc: CI runs those itself),
# lines for a backend this build has no device for (naming cuda or opencl)
# and MPI lines. A line must exit 0, or 2 when its comment says "exit 2".
# The tutorial's sample outputs (```-blocks without a language, lines
# starting "gpk sort:", "gpk tsp", "gpk qap:", "gpk octree:" or naming a
# tour) must be lines that the commands printed, numbers and device names
# masked as in doc_samples_test.sh; skipped when a CUDA device is present
# (AUTO then picks it and the lines name cuda).
#   usage: doc_examples_test.sh BUILD_DIR SOURCE_DIR [CC]
set -u
BUILD=${1:?usage: doc_examples_test.sh BUILD_DIR SOURCE_DIR}
SRC=${2:?usage: doc_examples_test.sh BUILD_DIR SOURCE_DIR}
PYTHON=${PYTHON:-python3}
CC=${3:-${CC:-cc}}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpk_doc_examples.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
fails=0 ran=0 skipped=0
fail() { fails=$((fails + 1)); echo "FAIL: $*" >&2; }

mkdir -p "$WORK/clone" || exit 1
ln -s "$(cd "$BUILD" && pwd)" "$WORK/clone/build" || exit 1
# data/ as a clone has it: the files git tracks (all of it outside a git
# checkout), so an example naming an uncommitted file fails here too.
if tracked=$(git -C "$SRC" ls-files data 2>/dev/null) && [ -n "$tracked" ]; then
    (cd "$SRC" && printf '%s\n' "$tracked" | while IFS= read -r f; do
        mkdir -p "$WORK/clone/$(dirname "$f")" && cp "$f" "$WORK/clone/$f" || exit 1
    done) || exit 1
else
    cp -R "$SRC/data" "$WORK/clone/data" || exit 1
fi
ln -s "$(cd "$SRC" && pwd)/python" "$WORK/clone/python" || exit 1
[ -x "$WORK/clone/build/gpk" ] || { echo "no gpk in $BUILD" >&2; exit 1; }

info=$("$WORK/clone/build/gpk" info 2>&1)
have_opencl=0; printf '%s\n' "$info" | grep -Eq '^opencl +[^ n]' && have_opencl=1
have_cuda=0; printf '%s\n' "$info" | grep -Eq '^cuda +[^ n]' && have_cuda=1
have_python=0; "$PYTHON" -c 'import numpy, gpk' >/dev/null 2>&1 && have_python=1
echo "doc_examples_test: opencl $have_opencl, cuda $have_cuda, python with numpy and gpk $have_python"

mask() {
    sed -E 's/^(gpk [a-z]+: [a-z]+) \(([^()]|\([^()]*\))*\)/\1 (DEV)/
            s/threads? \(([^()]|\([^()]*\))*\)/threads (DEV)/
            s/[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?/#/g
            s/ +/ /g; s/ $//'
}

# One record a line: "S<TAB>command" (sh, continuation lines joined),
# "P<TAB>file" (a python block written to file), "O<TAB>line" (a sample
# output line), "H<TAB>heading" (a new section).
extract() {
    awk -v dir="$WORK" -v tag="$2" '
        /^```/ {
            if (!inblock) {
                inblock = 1; lang = substr($0, 4)
                if (lang == "python") { npy++; pyfile = dir "/" tag "-" npy ".py"; printf "" > pyfile }
                if (lang == "c") { nc++; cfile = dir "/" tag "-" nc ".frag"; printf "" > cfile }
                next
            }
            inblock = 0
            if (lang == "python") { close(pyfile); print "P\t" pyfile }
            if (lang == "c") { close(cfile); print "C\t" cfile }
            next
        }
        !inblock && /^#+ / { print "H\t" $0; next }
        !inblock { next }
        lang == "sh" {
            line = pending $0
            if (line ~ /\\$/) { pending = substr(line, 1, length(line) - 1); next }
            pending = ""
            if (line ~ /^[ \t]*(#.*)?$/) next
            print "S\t" line; next
        }
        lang == "python" { print >> pyfile; next }
        lang == "c" { print >> cfile; next }
        lang == "" { print "O\t" $0 }
    ' "$1"
}

# A C fragment as the body of a function; its #include lines go first.
compile_fragment() {
    cc=$CC
    if grep -q 'cuda[A-Z]' "$2"; then
        echo "  skip (calls the CUDA runtime): C block $(basename "$2")"; skipped=$((skipped + 1)); return
    fi
    if grep -q '<gpk/mpi.h>' "$2"; then
        if ! command -v mpicc >/dev/null 2>&1; then
            echo "  skip (no mpicc): C block $(basename "$2")"; skipped=$((skipped + 1)); return
        fi
        cc=mpicc
    fi
    {
        printf '#include <signal.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n'
        printf '#include <gpk/gpk.h>\n#include <gpk/sort.h>\n#include <gpk/search.h>\n'
        grep '^#include' "$2"
        printf 'volatile sig_atomic_t stop_flag;\n'
        printf 'void example(int argc, char **argv, uint32_t *keys, uint32_t *sigma, size_t n, size_t n_local);\n'
        printf 'void example(int argc, char **argv, uint32_t *keys, uint32_t *sigma, size_t n, size_t n_local)\n{\n'
        printf '(void)argc; (void)argv; (void)keys; (void)sigma; (void)n; (void)n_local;\n'
        grep -v '^#include' "$2"
        printf '}\n'
    } >"$2.c"
    ran=$((ran + 1))
    if "$cc" -std=c11 -Wall -Wextra -Werror -Wno-unused-variable -Wno-unused-but-set-variable \
            -fsyntax-only -I"$SRC/include" "$2.c" >"$WORK/cc.out" 2>&1; then
        echo "  ok: C block $(basename "$2") compiles"
    else
        fail "$doc: a C block does not compile:"
        sed 's/^/    /' "$2" >&2
        head -20 "$WORK/cc.out" | sed 's/^/    /' >&2
    fi
}

run_doc() {
    doc=$1 tag=$2
    [ -f "$SRC/$doc" ] || { fail "$doc is missing"; return; }
    extract "$SRC/$doc" "$tag" >"$WORK/$tag.records" || { fail "cannot read $doc"; return; }
    : >"$WORK/$tag.out"
    : >"$WORK/$tag.samples"
    skip_section=""
    section_skipped=0
    while IFS="$(printf '\t')" read -r kind text; do
        case $kind in
        H) skip_section=""; section_skipped=0; continue ;;
        O) [ $section_skipped = 0 ] && printf '%s\n' "$text" >>"$WORK/$tag.samples"; continue ;;
        C) compile_fragment "$doc" "$text"; continue ;;
        P)
            if [ $have_python = 0 ]; then
                echo "  skip ($doc: Python without numpy and gpk): python block $(basename "$text")"
                skipped=$((skipped + 1)); skip_section="needs the Python block above"; section_skipped=1
                continue
            fi
            ran=$((ran + 1))
            if ! (cd "$WORK/clone" && "$PYTHON" "$text") >>"$WORK/$tag.out" 2>&1; then
                fail "$doc: a python block failed:"
                sed 's/^/    /' "$text" >&2
                tail -5 "$WORK/$tag.out" >&2
            fi
            continue ;;
        esac
        why=""
        case $text in
        make|make\ *|cmake\ *|sudo\ *|apt-get\ *|git\ *|pip\ *|*/pip\ *|python3\ -m\ venv*|export\ *|cc\ *|c++\ *|man\ *)
            why="a build or install step" ;;
        *mpiexec*|*mpirun*|*--mpi*) why="MPI" ;;
        *cuda*) [ $have_cuda = 1 ] || why="no CUDA device" ;;
        *opencl*) [ $have_opencl = 1 ] || why="no OpenCL device" ;;
        esac
        [ -z "$why" ] && [ -n "$skip_section" ] && why=$skip_section
        if [ -n "$why" ]; then
            echo "  skip ($why): $text"
            skipped=$((skipped + 1)); section_skipped=1
            continue
        fi
        want=0
        case $text in *"exit 2"*) want=2 ;; esac
        ran=$((ran + 1))
        (cd "$WORK/clone" && timeout 300 sh -c "$text") >"$WORK/line.out" 2>&1 </dev/null
        rc=$?
        cat "$WORK/line.out" >>"$WORK/$tag.out"
        if [ $rc -ne $want ]; then
            fail "$doc: exit $rc (expected $want): $text"
            tail -5 "$WORK/line.out" | sed 's/^/    /' >&2
        else
            echo "  ok: $text"
        fi
    done <"$WORK/$tag.records"

    [ $have_cuda = 1 ] && return
    mask <"$WORK/$tag.out" | sort -u >"$WORK/$tag.got"
    grep -E '^(gpk (sort|tsp|qap|octree)(:| \[)|[a-z0-9]+ [^ ]+\.tour: length)' "$WORK/$tag.samples" |
    while IFS= read -r line; do
        if ! printf '%s\n' "$line" | mask | grep -qxF -f - "$WORK/$tag.got"; then
            echo "FAIL: $doc shows a line its commands no longer print:" >&2
            echo "    doc:    $line" >&2
            echo "    masked: $(printf '%s\n' "$line" | mask)" >&2
            echo x
        fi
    done >"$WORK/$tag.bad"
    nbad=$(wc -l <"$WORK/$tag.bad")
    fails=$((fails + nbad))
}

for d in README.md:readme docs/tutorial.md:tutorial docs/guide.md:guide; do
    echo "$d:"
    run_doc "${d%%:*}" "${d##*:}"
done
echo "doc_examples_test: $ran example(s) ran, $skipped skipped, $fails failure(s)"
[ $fails -eq 0 ]
