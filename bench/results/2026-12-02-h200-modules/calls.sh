#!/usr/bin/env bash
# The device calls of 2026-12-02 (modules): part 1 = d4, part 2 = d5, part 3 = d6.

# ===== part: d4.sh
# Early call: the CUDA module split built with CUDA, OpenCL, MPI; the whole
# ctest suite at small sizes with CUDA and OpenCL required (the static
# library's built-in module and, through gpk/libgpk.so, the dlopen'd one);
# gpk-cub-alone (libgpk.so -> module) at 2^28.
set -u
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s)
b=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
nvlib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
[ -n "$nvlib" ] && mkdir -p /etc/OpenCL/vendors && echo "$nvlib" >/etc/OpenCL/vendors/nvidia.icd
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_FUZZ=OFF >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
cmake --build $b -j16 >$o/build.log 2>&1 || { grep -B3 -A12 -m3 "error" $o/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - T0 )) s" | tee -a $S
ls -la $b/libgpk.so.0.1.0 $b/libgpk_cuda.so | awk '{print $5, $NF}' | tee -a $S
$b/gpk info 2>&1 | head -8 | tee -a $S
$b/gpk sort --gen uniform --n 16777216 --type u32 --backend cuda --check --json 2>&1 | tr ',' '\n' | grep -E '"(backend|check|ms|path)"' | tr '\n' ' ' | tee -a $S; echo | tee -a $S
for c in "u32 28 0" "u32 28 4"; do
  timeout 40 $b/gpk-cub-alone $c uniform 9 asc >$o/alone_${c// /_}.log 2>&1
  echo "$c: $(grep '^gpk_cuda_sort' $o/alone_${c// /_}.log | awk '{print $2, $NF}') | $(grep '^gpk / best' $o/alone_${c// /_}.log)" | tee -a $S
done
t0=$(date +%s)
GPK_TEST_SMALL=1 GPK_REQUIRE_CUDA=1 GPK_REQUIRE_OPENCL=1 OMP_WAIT_POLICY=passive timeout ${CT:-300} ctest --test-dir $b -j10 --timeout 250 \
  >$o/ctest.log 2>&1
echo "ctest rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S
grep -E 'tests passed|tests failed|\*\*\*|Failed|Timeout|Not Run' $o/ctest.log | sed 's/  */ /g' | head -30 | tee -a $S
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
cd $o && tar czf logs.tgz *.log && rm -f *.log

# ===== part: d5.sh
# Final call: the merged tree (modules for CUDA and OpenCL, duplicates
# work, the CPU vector sort's pairs/permutations) built with CUDA, OpenCL,
# MPI; the whole ctest suite at small sizes with CUDA and OpenCL required;
# gpk-cub-alone through libgpk.so (the CUDA module); the 16-thread CPU
# bench (u32 2^28, u64 2^27: keys, pairs, permutation) with its peers;
# the CUDA tile sort (n <= 4096) against CUB.
set -u
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s)
b=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
echo "tree: $(cat .devrun/TREE 2>/dev/null)" | tee -a $S
nvlib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
[ -n "$nvlib" ] && mkdir -p /etc/OpenCL/vendors && echo "$nvlib" >/etc/OpenCL/vendors/nvidia.icd
if [ ! -x $b/gpk ] || [ "${REBUILD:-1}" = 1 ]; then
  cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_FUZZ=OFF >$o/cmake.log 2>&1 || { tail -20 $o/cmake.log; exit 1; }
  cmake --build $b -j16 >$o/build.log 2>&1 || { grep -B3 -A12 -m3 "error" $o/build.log | head -80; exit 1; }
fi
echo "build $(( $(date +%s) - T0 )) s" | tee -a $S
ls -la $b/libgpk.so.0.1.0 $b/libgpk_cuda.so $b/libgpk_opencl.so | awk '{print $5, $NF}' | tee -a $S
$b/gpk info 2>&1 | head -8 | tee -a $S
for c in "u32 28 0" "u32 28 4"; do
  timeout 40 $b/gpk-cub-alone $c uniform 9 asc >$o/alone_${c// /_}.log 2>&1
  echo "$c: $(grep '^gpk_cuda_sort' $o/alone_${c// /_}.log | awk '{print $2, $NF}') | $(grep '^gpk / best' $o/alone_${c// /_}.log)" | tee -a $S
done
timeout 60 $b/gpk bench sort --backends cuda --types u32 --n 2^10,2^12 --pairs --reps 50 -q >$o/tile.log 2>&1
echo "tile sort rc=$?" | tee -a $S; grep -E '^ *cuda' $o/tile.log | head -6 | tee -a $S
t0=$(date +%s)
timeout 150 $b/gpk bench sort --backends cpu --types u32 --n 2^28 --pairs --perm --reps 3 --peers all -q --json $o/cpu16_u32.json >$o/cpu16_u32.log 2>&1
echo "cpu16 u32 rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S; grep -vE '^\s*$' $o/cpu16_u32.log | tail -12 | tee -a $S
t0=$(date +%s)
timeout 120 $b/gpk bench sort --backends cpu --types u64 --n 2^27 --pairs --reps 3 --peers all -q --json $o/cpu16_u64.json >$o/cpu16_u64.log 2>&1
echo "cpu16 u64 rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S; grep -vE '^\s*$' $o/cpu16_u64.log | tail -8 | tee -a $S
t0=$(date +%s)
GPK_TEST_SMALL=1 GPK_REQUIRE_CUDA=1 GPK_REQUIRE_OPENCL=1 OMP_WAIT_POLICY=passive timeout ${CT:-280} ctest --test-dir $b -j10 --timeout 250 \
  >$o/ctest.log 2>&1
echo "ctest rc=$? ($(( $(date +%s) - t0 )) s)" | tee -a $S
grep -E 'tests passed|tests failed|\*\*\*|Failed|Timeout|Not Run' $o/ctest.log | sed 's/  */ /g' | head -30 | tee -a $S
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
cd $o && tar czf logs.tgz *.log && rm -f *.log

# ===== part: d6.sh
# Second call on the d5 build (rebuilt if the machine went cold): the CUDA
# hybrid radix sort forced on every size (gpu-check's test stage: its
# bucket finish shares the digit-offset scan with the tile sort now);
# racecheck of the segmented medium kernels; 16-thread CPU u32 pairs and
# permutation at 2^28 against __gnu_parallel::sort.
set -u
export PATH=$PATH:/usr/local/cuda/bin
o=${OUT:-/tmp/out}; mkdir -p $o
S=$o/summary.txt; : >$S
T0=$(date +%s)
b=build-gpu
if [ ! -x $b/gpk ]; then
  echo "cold: rebuilding" | tee -a $S
  cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_FUZZ=OFF >$o/cmake.log 2>&1
  cmake --build $b -j16 >$o/build.log 2>&1 || { grep -m3 -A8 error $o/build.log; exit 1; }
fi
echo "ready at $(( $(date +%s) - T0 )) s" | tee -a $S
for hv in "radix_cuda_hybrid_fill=64" "radix_cuda_hybrid_fill=4096"; do
  for tp in "tests/test_radix cuda" "tests/test_cuda_api"; do
    GPK_REQUIRE_CUDA=1 GPK_TEST_SMALL=1 timeout 50 $b/$tp radix_cuda_hybrid=1 radix_cuda_hybrid_min_log=0 $hv >$o/hyb.log 2>&1
    echo "hybrid forced ($hv) $tp: rc=$? $(tail -n 1 $o/hyb.log)" | tee -a $S
  done
done
timeout 50 compute-sanitizer --tool racecheck --error-exitcode 9 $b/gpk bench segmented --backend cuda --n 2^20 --shapes 256,4096,2^17 --cases u32,u32-pairs --reps 1 --seed 7 --large-min 2^30 >$o/race_seg.log 2>&1
echo "racecheck segmented medium rc=$? $(grep -m1 'RACECHECK SUMMARY' $o/race_seg.log)" | tee -a $S
timeout 80 $b/gpk bench sort --backends cpu --types u32 --n 2^28 --pairs --perm --reps 3 --peers gnu-parallel -q >$o/cpu16.log 2>&1
echo "cpu16 u32 rc=$?" | tee -a $S; grep -E '^cpu' $o/cpu16.log | tee -a $S
echo "total $(( $(date +%s) - T0 )) s" | tee -a $S
cd $o && tar czf logs.tgz *.log && rm -f *.log

# ===== part: e1.sh (fifth session, call 1)
#!/usr/bin/env bash
# Call 1: scripts/gpu-check.sh build cudacheck (the tuning drivers now
# CMake targets linked against libgpk.a), then its test stage (the whole
# ctest suite at full sizes, CUDA and OpenCL required, MPI on 1 and 2
# ranks, the hybrid radix forced).
set -u
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
o=${OUT:-/tmp/out}; mkdir -p $o
T0=$(date +%s)
echo "tree: $(cat .devrun/TREE)"
cmake -S . -B build-gpu -DGPK_FUZZ=OFF >/dev/null 2>&1
OUT=$o/a GPK_GPU_BUILD=build-gpu timeout 330 bash scripts/gpu-check.sh build cudacheck >$o/a.txt 2>&1
echo "a rc=$? at $(( $(date +%s) - T0 )) s"
left=$(( 585 - ($(date +%s) - T0) ))
OUT=$o/b GPK_GPU_BUILD=build-gpu timeout $left bash scripts/gpu-check.sh test >$o/b.txt 2>&1
echo "b rc=$? at $(( $(date +%s) - T0 )) s"
[ -f $o/b/summary.txt ] || { cd build-gpu/Testing/Temporary 2>/dev/null && tail -40 LastTest.log; }
cat $o/a/summary.txt; grep -v '^[0-9]*/[0-9]* Test.*Passed' $o/b/summary.txt 2>/dev/null | head -40
grep -c 'Passed' $o/b/summary.txt 2>/dev/null
cd $o && tar czf all.tgz a b a.txt b.txt 2>/dev/null && rm -rf a b a.txt b.txt

# ===== call 2: on the warm build
OUT=$OUT/b GPK_GPU_BUILD=build-gpu timeout 590 bash scripts/gpu-check.sh test

# ===== call 3: IPS4o's headers carried in .devrun/ips4o (Debian libips4o-dev)
cmake -S . -B build-gpu -DGPK_IPS4O_INCLUDE_DIR=$PWD/.devrun/ips4o && cmake --build build-gpu -j16 --target gpk_bench
build-gpu/gpk bench sort --backends cpu --types u32 --n 2^28 --reps 3 --peers ips4o,gnu-parallel
build-gpu/gpk bench sort --backends cpu --types u64 --n 2^27 --reps 3 --peers ips4o,gnu-parallel
OUT=$OUT/c GPK_GPU_BUILD=build-gpu bash scripts/gpu-check.sh bench pic

# ===== sixth session, part f1 (.devrun/c1.sh)
# call 1: build, cudacheck, bench, pic
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mkdir -p $OUT
echo "tree: $(cat .devrun/tree.txt 2>/dev/null)"
t0=$(date +%s)
OUT=$OUT/c1 GPK_GPU_CMAKE_ARGS="-DGPK_IPS4O_INCLUDE_DIR=$PWD/.devrun/ips4o -DGPK_DATA_DIR=$PWD/.devrun/data" timeout 580 scripts/gpu-check.sh build cudacheck bench pic > $OUT/c1.log 2>&1
echo "rc=$? in $(( $(date +%s) - t0 )) s"
tail -n 120 $OUT/c1.log

# ===== part f2 (.devrun/c2.sh)
# call 2: tests, and the compute-sanitizer stages beside them (correctness only)
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mkdir -p $OUT
t0=$(date +%s)
OUT=$OUT/c2t timeout 585 scripts/gpu-check.sh test > $OUT/c2-test.log 2>&1 &
p1=$!
OUT=$OUT/c2s timeout 585 scripts/gpu-check.sh sanitize qsanitize > $OUT/c2-san.log 2>&1 &
p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
echo "test rc=$r1 sanitize rc=$r2 in $(( $(date +%s) - t0 )) s"
echo "== test"; sed -n '/==== gpu-check summary/,$p' $OUT/c2-test.log | grep -v "Test *#" | head -40
echo "== sanitize"; sed -n '/==== gpu-check summary/,$p' $OUT/c2-san.log | head -30

# ===== part f3 (.devrun/c3.sh)
# call 3 (cold): build, the fixed MPI search tests on CUDA, the hybrid radix forced, then python
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mkdir -p $OUT
T0=$(date +%s)
echo "tree: $(cat .devrun/tree.txt)"
OUT=$OUT/b GPK_GPU_CMAKE_ARGS="-DGPK_DATA_DIR=$PWD/.devrun/data" timeout 300 scripts/gpu-check.sh build > $OUT/b.log 2>&1
echo "build rc=$? at $(( $(date +%s) - T0 )) s"; grep "^build" $OUT/b/summary.txt
b=build-gpu
GPK_REQUIRE_CUDA=1 ctest --test-dir $b -R "mpi_search|search_cuda" --output-on-failure > $OUT/mpi.log 2>&1
echo "ctest mpi_search|search_cuda rc=$? at $(( $(date +%s) - T0 )) s"; grep -E "tests passed|Test +#" $OUT/mpi.log
for hv in "radix_cuda_hybrid_fill=64" "radix_cuda_hybrid_fill=4096"; do
  for tp in "tests/test_radix cuda" "tests/test_cuda_api"; do
    GPK_REQUIRE_CUDA=1 timeout 100 $b/$tp radix_cuda_hybrid=1 radix_cuda_hybrid_min_log=0 $hv > $OUT/h.log 2>&1
    echo "hybrid forced ($hv) $tp: rc=$? $(tail -n 1 $OUT/h.log) at $(( $(date +%s) - T0 )) s"
  done
done
left=$(( 360 - ($(date +%s) - T0) ))
OUT=$OUT/p timeout $left scripts/gpu-check.sh python > $OUT/p.log 2>&1
echo "python rc=$? at $(( $(date +%s) - T0 )) s"
grep -E "^python" $OUT/p/summary.txt; tail -n 25 $OUT/p/python-bench.txt 2>/dev/null

# ===== Seventh session (tree 27ff8e4 + this session's CI changes), calls 4-6; each call
# starts as call 3 does (cd, PATH, mkdir $OUT, T0) and builds with
#   OUT=/tmp/b GPK_GPU_CMAKE_ARGS="-DGPK_IPS4O_INCLUDE_DIR=$PWD/.devrun/ips4o -DGPK_DATA_DIR=$PWD/.devrun/data" \
#     timeout 300 scripts/gpu-check.sh build
# call 4 (cold): qbench with 240 s, then python with what is left of 585 s
OUT=$OUT/q GPK_QBENCH_TIMEOUT=240 timeout 260 scripts/gpu-check.sh qbench > $OUT/q.log 2>&1
left=$(( 585 - ($(date +%s) - T0) ))
OUT=$OUT/p timeout $left scripts/gpu-check.sh python > $OUT/p.log 2>&1
# call 5 (cold): qbench at its default sizes with what is left of 585 s
left=$(( 585 - ($(date +%s) - T0) ))
OUT=/tmp/q GPK_QBENCH_TIMEOUT=$(( left - 10 )) timeout $left scripts/gpu-check.sh qbench > /tmp/q.log 2>&1
# call 6 (warm): the same at 2^20..2^24, within 470 s, its logs brought back
left=$(( 470 - ($(date +%s) - T0) ))
OUT=/tmp/q GPK_QBENCH_N=2^20,2^21,2^22,2^23,2^24 GPK_QBENCH_TIMEOUT=$(( left - 10 )) timeout $left \
  scripts/gpu-check.sh qbench > /tmp/q.log 2>&1
