# The session's final device calls, in order (run from the repository root on
# the device; outputs: call-a-tests.txt, call-b.txt, cub-alone.log, racecheck.txt).
# ---- call A: build with CUDA, OpenCL, MPI and Python; the GPU tests
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

# ---- call B (same build, warm): descending, sanitizers, Python, CUB rows
# Final call B (warm, same build): descending against ascending (and CUB's
# descending), compute-sanitizer on the device API tests, the Python
# segmented CPU goal after the parallel copy, extra CUB rows.
set -u
export PATH=$PATH:/usr/local/cuda/bin
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s); DEADLINE=${DEADLINE:-330}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
b=build-gpu
alone() { # TYPE LOG2N VB DIST ORDER
  [ "$(left)" -lt 25 ] && { echo "$*: SKIP (time)" | tee -a $S; return; }
  timeout 40 $b/gpk-cub-alone $1 $2 $3 $4 9 $5 >$o/alone.tmp 2>&1; local rc=$?
  cat $o/alone.tmp >>$o/alone.log
  echo "$*: rc=$rc gpk $(grep '^gpk_cuda_sort' $o/alone.tmp | awk '{print $2, $NF}') | $(grep '^gpk / best' $o/alone.tmp)" | tee -a $S
}
echo "== descending / ascending, device API, 2^28 (gpk-cub-alone, median of 9)" | tee -a $S
for c in "u32 28 0" "f32 28 0" "i32 28 0" "u32 28 4" "u64 28 0"; do
  alone $c uniform asc; alone $c uniform desc
done
echo "== segmented 2^8 x 2^20, asc and desc" | tee -a $S
timeout 60 $b/gpk bench segmented --backend cuda --n 2^28 --reps 5 --seed 7 --shapes 2^20 \
  --cases u32,u32-desc,f32,f32-desc,u32-pairs,u32-pairs-desc >$o/seg-large.txt 2>&1
echo "rc=$?" | tee -a $S; grep -E 'gpk bench|segs|descending /|best|Radix' $o/seg-large.txt | tee -a $S
for tool in memcheck racecheck; do
  [ "$(left)" -lt 70 ] && { echo "$tool: SKIP (time)" | tee -a $S; continue; }
  t0=$(date +%s)
  GPK_TEST_SMALL=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/tests/test_cuda_api >$o/$tool-api.log 2>&1
  echo "$tool test_cuda_api (small): rc=$? $(grep -E '^test_cuda_api' $o/$tool-api.log | tail -1) $(grep -m1 'ERROR SUMMARY' $o/$tool-api.log) ($(( $(date +%s) - t0 )) s)" | tee -a $S
done
if [ "$(left)" -gt 50 ]; then
  t0=$(date +%s)
  PYTHONPATH=$b/python-pkg timeout $(( $(left) - 30 )) python3 python/bench/segmented.py --n 2^28 --reps 3 >$o/seg-py.txt 2>&1
  echo "python segmented rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S; cat $o/seg-py.txt >>$S
fi
for c in "u32 28 0 reverse" "u32 28 0 equal" "u64 28 8 uniform"; do alone $c asc; done
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S

# ---- call C (same build): racecheck per radix path
for c in "u32 12 0" "u32 18 4" "u32 23 0"; do set -- $c; timeout 70 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/gpk-cub-alone $1 $2 $3 uniform 1; done
