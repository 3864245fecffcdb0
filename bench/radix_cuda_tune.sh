#!/bin/sh
# Builds bench/radix_cuda_tune.cu outside CMake, once per tuning variant:
#   sh bench/radix_cuda_tune.sh OUTDIR [NAME[:NVCC_FLAGS]] ...
# e.g. sh bench/radix_cuda_tune.sh build/tune default matchany:-DGPK_RADIX_CUDA_MATCH_ANY \
#        'v2:-DGPK_RADIX_CUDA_TUNING="my_table.h"'
# gives OUTDIR/radix_cuda_tune_NAME for each (and OUTDIR/radix_cuda_NAME.log,
# the compiler's output for that variant). NVCC and CC may be overridden.
set -e
out=${1:?usage: radix_cuda_tune.sh OUTDIR [NAME[:FLAGS]] ...}
shift
[ $# -gt 0 ] || set -- default
root=$(cd "$(dirname "$0")/.." && pwd)
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
CC=${CC:-cc}
mkdir -p "$out"
inc="-I$root/include -I$root/src -I$root/bench"
nvflags="-arch=sm_90 -std=c++17 -O3 -DGPK_HAVE_CUDA=1 $inc"
$CC -O2 -std=c11 -I"$root/include" -c "$root/src/core/error.c" -o "$out/error.o"
$CC -O2 -std=c11 -I"$root/include" -c "$root/src/sort/radix_reference.c" -o "$out/radix_reference.o"
cuda_inc=$(dirname "$(command -v "$NVCC")")/../include
$CC -O2 -std=c11 -fopenmp -I"$root/include" -I"$cuda_inc" -c "$root/src/core/cuda_staging.c" -o "$out/cuda_staging.o"
$CC -O2 -std=c11 -fopenmp -I"$root/include" -c "$root/src/core/host_mem.c" -o "$out/host_mem.o"
$CC -O2 -std=c11 -I"$root/include" -I"$root/src" -I"$cuda_inc" -c "$root/src/sort/radix_cuda_limits.c" -o "$out/radix_cuda_limits.o"
$CC -O2 -std=c11 -I"$root/include" -c "$root/src/core/test_hooks.c" -o "$out/test_hooks.o"
$NVCC $nvflags -c "$root/src/core/cuda_ctx.cu" -o "$out/cuda_ctx.o" &
$NVCC $nvflags -c "$root/bench/radix_cuda_tune.cu" -o "$out/tune.o" &
[ -f "$out/peers_cub.o" ] || $NVCC $nvflags -c "$root/bench/peers_cub.cu" -o "$out/peers_cub.o" &
for v in "$@"; do
  name=${v%%:*}
  flags=""
  case "$v" in *:*) flags=${v#*:} ;; esac
  # each variant's compiler output (e.g. -Xptxas -v) in its own log
  ( eval "$NVCC $nvflags $flags -c '$root/src/sort/radix_cuda.cu' -o '$out/radix_cuda_$name.o'" \
      >"$out/radix_cuda_$name.log" 2>&1 || { cat "$out/radix_cuda_$name.log" >&2; exit 1; } ) &
done
wait
for v in "$@"; do
  name=${v%%:*}
  $NVCC -arch=sm_90 -o "$out/radix_cuda_tune_$name" "$out/tune.o" "$out/radix_cuda_$name.o" \
    "$out/cuda_ctx.o" "$out/cuda_staging.o" "$out/host_mem.o" "$out/peers_cub.o" "$out/error.o" "$out/radix_reference.o" \
    "$out/radix_cuda_limits.o" "$out/test_hooks.o" -Xcompiler -fopenmp
done
ls "$out"/radix_cuda_tune_*
