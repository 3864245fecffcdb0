#!/usr/bin/env bash
# run 17 (2 GPUs): build; tests (test_cuda_api, test_multi default/part, test_mpi_sort np2); the launch memo A/B
# (gpk bench sort u32, small path off, memo off/on alternated); where part pays, after the memo: MPI 2^24..2^30 a
# rank, multi 2^26..2^31 in all.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j32 --target gpk_bench gpk_mpi_bench test_multi test_mpi_sort test_cuda_api test_radix >$W/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"
export GPK_REQUIRE_CUDA=1
s=$(date +%s); timeout 120 build-gpu/tests/test_cuda_api >$W/cuda_api.log 2>&1
echo "test_cuda_api rc=$? $(( $(date +%s)-s )) s: $(tail -1 $W/cuda_api.log)"; grep FAIL $W/cuda_api.log | head -3
s=$(date +%s); GPK_TEST_SMALL=1 timeout 120 build-gpu/tests/test_radix cuda >$W/radix.log 2>&1
echo "test_radix cuda rc=$? $(( $(date +%s)-s )) s: $(tail -1 $W/radix.log)"; grep FAIL $W/radix.log | head -3
for p in default part; do
  s=$(date +%s); e=""; [ $p != default ] && e="GPK_MULTI_PLAN=$p"
  env $e GPK_TEST_MULTI_QUICK=1 GPK_TEST_SMALL=1 timeout 45 build-gpu/tests/test_multi cuda 0,1 >$W/multi-$p.log 2>&1
  echo "test_multi $p rc=$? $(( $(date +%s)-s )) s: $(tail -2 $W/multi-$p.log | tr '\n' ' ')"; grep FAIL $W/multi-$p.log | head -3
done
s=$(date +%s); timeout 120 mpiexec --bind-to none -n 2 build-gpu/tests/test_mpi_sort cuda >$W/mpi.log 2>&1
echo "test_mpi_sort np2 rc=$? $(( $(date +%s)-s )) s: $(grep -E 'moved by|^passed|^FAILED' $W/mpi.log | tr '\n' ' ')"; grep -E "FAIL" $W/mpi.log | head -6
for rep in 1 2; do for memo in 0 1; do
  GPK_RADIX_CUDA_SMALL=0 GPK_RADIX_CUDA_LAUNCH_MEMO=$memo timeout 60 build-gpu/gpk-bench bench sort --backends cuda --types u32 --n 65536,1048576,16777216 --peers cub -q --json $W/memo$memo-$rep.json >$W/memo$memo-$rep.txt 2>&1
  echo "sort memo=$memo rep $rep rc=$?"; grep -E "u32" $W/memo$memo-$rep.txt | head -8
done; done
B=build-gpu/gpk-mpi-sort-bench; M="mpiexec --bind-to none"; : >$W/mpi.json
for lg in 24 26 27 28 29 30; do
  n=$((1 << lg))
  timeout 30 $M -n 1 $B --mode device --single $((2 * n)) --reps 5 --label "1 GPU" >$W/m1-$lg.log 2>&1; grep '^{"bench"' $W/m1-$lg.log >>$W/mpi.json
  for plan in part merge; do
    GPK_MPI_DEVICE_PLAN=$plan timeout 30 $M -n 2 -x GPK_MPI_DEVICE_PLAN $B --mode device --n-per-rank $n --reps 5 --label "$plan" >$W/m2-$lg-$plan.log 2>&1
    grep '^{"bench"' $W/m2-$lg-$plan.log >>$W/mpi.json
  done
done
python3 - $W/mpi.json <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
one={r['n_total']:r['ms_median'] for r in rows if r['peer']}
for r in rows:
    if r['peer']: continue
    ph=r['phases_ms_max_over_ranks']
    print(f"mpi u32 N=2^{r['n_total'].bit_length()-1} {r['label']:6} {r['ms_median']:8.3f} ms  1GPU {one.get(r['n_total'],0):8.3f} ms  {one.get(r['n_total'],0)/r['ms_median']:.2f}x  phases {ph['sort']:.2f}/{ph['split']:.2f}/{ph['exchange']:.2f}/{ph['merge']:.2f} {r['check']}")
PY
for lg in 26 28 29 30 31; do
  timeout 70 build-gpu/gpk-bench bench multi --gpus 1,2 --devices 0,1 --n $((1 << lg)) --reps 5 --configs u32 --plans merge,part --json $W/multi-$lg.json >$W/multi-$lg.txt 2>&1
  echo "multi 2^$lg rc=$?"; grep -E "^device" $W/multi-$lg.txt
done
(cd $W && tar czf $O/run17-logs.tgz *.log *.txt *.json)
echo "total $(( $(date +%s)-t0 )) s"
