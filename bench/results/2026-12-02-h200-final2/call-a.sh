#!/usr/bin/env bash
# Final call A: the merged tree built with CUDA, OpenCL, MPI and Python; every
# CUDA/OpenCL-on-NVIDIA/MPI-with-device test (small sizes), in one ctest.
set -u
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s); DEADLINE=${DEADLINE:-560}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
b=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
echo "tree: $(cat .devrun/TREE 2>/dev/null); mpirun: $(command -v mpirun)" | tee -a $S
# OpenCL: register NVIDIA's ICD (as scripts/gpu-check.sh does)
nvlib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
[ -n "$nvlib" ] && mkdir -p /etc/OpenCL/vendors && echo "$nvlib" >/etc/OpenCL/vendors/nvidia.icd
PY=$(command -v python3)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_FUZZ=OFF \
  -DGPK_BUILD_PYTHON=ON -DPython_EXECUTABLE=$PY >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
grep -E 'gpk: CUDA backend|MPI' $o/cmake.log | head -3 | tee -a $S
cmake --build $b -j16 >$o/build.log 2>&1 || { grep -B3 -A12 -m3 "error" $o/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - T0 )) s" | tee -a $S
pkg=$b/python-pkg; rm -rf $pkg; mkdir -p $pkg/gpk; cp python/src/gpk/*.py python/src/gpk/*.pyi $pkg/gpk/; cp $b/python/_gpk*.so $pkg/gpk/
t0=$(date +%s)
GPK_TEST_SMALL=1 GPK_REQUIRE_CUDA=1 timeout $(( $(left) - 10 )) ctest --test-dir $b -j4 --timeout 200 \
  -R '^(ooc_cuda|multi_cuda.*|api_cuda|radix_cuda|radix_cuda_onesweep|quick_cuda|search_cuda|pool_cuda|octree_cuda|cuda_device_api|mpi_sort_cuda_np2|mpi_search_cuda_np2|mpi_sort_np2|segmented_cuda|descending_cuda|no_cuda_runtime|radix_opencl|segmented_opencl|descending_opencl|quick_opencl|bench_sort_hooks|bench_quick_hooks|bench_pic_hooks)$' \
  >$o/ctest.log 2>&1
echo "ctest rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S
grep -E 'Test +#|tests passed|tests failed' $o/ctest.log | sed 's/  */ /g' | tee -a $S
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
