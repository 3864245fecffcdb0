#!/bin/sh
# Builds bench/radix_cuda_tune.cu once per tuning variant of the CUDA radix
# sort, in a CMake build folder with CUDA:
#   sh bench/radix_cuda_tune.sh BUILD [NAME[:NVCC_FLAGS]] ...
# e.g. sh bench/radix_cuda_tune.sh build default matchany:-DGPK_RADIX_CUDA_MATCH_ANY \
#        'v2:-DGPK_RADIX_CUDA_TUNING="my_table.h"'
# gives BUILD/tune/radix_cuda_tune_NAME for each, linked against that
# build's libgpk.a (CMake option GPK_RADIX_CUDA_TUNE; CMakeLists.txt).
set -e
build=${1:?usage: radix_cuda_tune.sh BUILD [NAME[:FLAGS]] ...}
shift
[ $# -gt 0 ] || set -- default
root=$(cd "$(dirname "$0")/.." && pwd)
variants=
targets=
for v in "$@"; do
  variants=${variants:+$variants;}$v
  targets="$targets radix_cuda_tune_${v%%:*}"
done
cmake -S "$root" -B "$build" -DGPK_RADIX_CUDA_TUNE="$variants" >/dev/null
for t in $targets; do
  cmake --build "$build" -j "$(nproc)" --target "$t"
done
ls "$build"/tune/radix_cuda_tune_*
