#!/usr/bin/env bash
# Compile-checks the OpenCL radix program with the NVIDIA vendor path
# (GPK_NV_PTX: inline PTX) without an NVIDIA device: clang compiles the
# program as the host assembles it (common part + the template for every
# (key, payload) width) to PTX for OpenCL on NVPTX, and ptxas assembles it
# for sm_90. This checks the syntax and operands of the asm statements and
# the PTX they make, not what NVIDIA's own OpenCL compiler accepts.
#   scripts/check-ocl-ptx.sh [extra clang -D options...]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TMPDIR:-/tmp}/gpk-ocl-ptx.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
python3 - "$root/src/sort/radix.cl" "$tmp/prog.cl" <<'PY'
import sys
src = open(sys.argv[1]).read()
i = src.index('/*@@GPK_TEMPLATE@@')
common, tpl = src[:i], src[i:]
line = src[:i].count('\n') + 1
out = common
for k in (4, 8):
    for v in (0, 4, 8):
        out += '\n#define GPK_KW %d\n#define GPK_VW %d\n#line %d\n' % (k, v, line) + tpl + '\n'
open(sys.argv[2], 'w').write(out)
PY
# NVIDIA's OpenCL C takes asm(); clang's OpenCL mode only __asm__.
clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Dasm=__asm__ -DGPK_NV_PTX \
  -DGPK_KPT4=12 -DGPK_KPT8=6 -DGPK_RANK_BITS=4 -DGPK_OS_KPT4=16 -DGPK_OS_KPT8=8 "$@" \
  -O2 -S -o "$tmp/prog.ptx" "$tmp/prog.cl"
# clang's nvcl target writes PTX 3.2 for sm_20 and leaves the OpenCL
# builtins (get_local_id, ...) as undefined functions: raise the target and
# declare those extern so that ptxas checks the rest.
python3 - "$tmp/prog.ptx" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'^\.version .*$', '.version 8.0', s, flags=re.M)
s = re.sub(r'^\.target .*$', '.target sm_90, texmode_independent', s, flags=re.M)
s = re.sub(r'^(\.func\s+(?:\([^)]*\)\s*)?\w+\s*\([^)]*\)\s*;)', r'.extern \1', s, flags=re.M)
open(p, 'w').write(s)
PY
"$ptxas" -c -arch=sm_90 ${PTXAS_VERBOSE:+-v} "$tmp/prog.ptx" -o "$tmp/prog.o"
echo "check-ocl-ptx: $(grep -c 'vote.sync.ballot' "$tmp/prog.ptx") ballots, $(grep -c 'shfl.sync' "$tmp/prog.ptx") shuffles; ptxas sm_90 ok"
