#!/usr/bin/env bash
# run 16 (2 GPUs): where the part plan starts to pay: MPI (2 ranks, 2^24..2^29 keys a rank, part and merge forced,
# beside one GPU on the same total) and in process (gpk bench multi, 2^24..2^30 in all, merge and part).
set -u
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; W=$O/w; mkdir -p $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGPK_WITH_CUDA_OCTREE=OFF -DGPK_WITH_CDP=OFF -DGPK_WITH_OPENCL=OFF >$W/cfg.log 2>&1 &&
  cmake --build build-gpu -j32 --target gpk_bench gpk_mpi_bench test_multi test_mpi_sort >$W/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"
B=build-gpu/gpk-mpi-sort-bench
M="mpiexec --bind-to none"
: >$W/mpi.json
for lg in 24 25 26 27 28 29; do
  n=$((1 << lg))
  timeout 30 $M -n 1 $B --mode device --single $((2 * n)) --reps 5 --label "1 GPU" >$W/m1-$lg.log 2>&1
  grep '^{"bench"' $W/m1-$lg.log >>$W/mpi.json
  for plan in part merge; do
    GPK_MPI_DEVICE_PLAN=$plan timeout 30 $M -n 2 -x GPK_MPI_DEVICE_PLAN $B --mode device --n-per-rank $n --reps 5 --label "$plan" >$W/m2-$lg-$plan.log 2>&1
    grep '^{"bench"' $W/m2-$lg-$plan.log >>$W/mpi.json
  done
done
echo "mpi rows $(( $(date +%s)-t0 )) s"
python3 - $W/mpi.json <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
one={r['n_total']:r['ms_median'] for r in rows if r['peer']}
for r in rows:
    if r['peer']: continue
    ph=r['phases_ms_max_over_ranks']
    print(f"mpi u32 N=2^{r['n_total'].bit_length()-1} {r['label']:6} {r['ms_median']:8.3f} ms  1GPU {one.get(r['n_total'],0):8.3f} ms  {one.get(r['n_total'],0)/r['ms_median']:.2f}x  phases {ph['sort']:.2f}/{ph['split']:.2f}/{ph['exchange']:.2f}/{ph['merge']:.2f} {r['check']}")
PY
for lg in 24 26 27 28 29 30; do
  timeout 60 build-gpu/gpk-bench bench multi --gpus 1,2 --devices 0,1 --n $((1 << lg)) --reps 5 --configs u32 --plans merge,part --json $W/multi-$lg.json >$W/multi-$lg.txt 2>&1
  echo "multi 2^$lg rc=$?"; grep -E "^device" $W/multi-$lg.txt
done
(cd $W && tar czf $O/run16-logs.tgz *.log *.txt *.json)
echo "total $(( $(date +%s)-t0 )) s"
