#!/usr/bin/env bash
set -u
export PATH="$PATH:/usr/local/cuda/bin"
cmake --build build-gpu -j32 --target test_mpi_sort gpk_mpi_bench >/tmp/b15.log 2>&1; echo "build rc=$?"
GPK_MPI_SKIP_CPU=1 GPK_MPI_BUDGET=420 bash scripts/gpu-mpi.sh $PWD/build-gpu
