#!/bin/sh
# gpk sort --mpi under mpiexec -n 1..4: the output equals gpk sort's
# (non-MPI) byte for byte, for .npy and raw, n not divisible by P, an empty
# input; --check; failures exit non-zero on every rank and leave the
# user's files as they were, with no temporary file behind.
#   usage: cli_sort_mpi_test.sh PATH/TO/gpk MPIEXEC [MPIEXEC flags...]
set -u
GPK=${1:?usage: cli_sort_mpi_test.sh PATH/TO/gpk MPIEXEC [flags]}
shift
MPIEXEC="$*"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GPK_THREADS=2 OMP_WAIT_POLICY=passive
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpk_cli_sort_mpi.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "seed $seed"

"$GPK" sort --gen uniform --n 100003 --seed "$seed" --type u32 -o in.npy -q || fail "gen in.npy"
"$GPK" sort --gen float-specials --n 77777 --seed "$seed" --type f64 -o in.f64 --format raw -q || fail "gen in.f64"
"$GPK" sort --gen few-bits --param 2 --n 4099 --seed "$seed" --type i64 -o few.npy -q || fail "gen few.npy"
# unsorted inputs: the generator's order is the input order; sort a copy for the reference
"$GPK" sort in.npy -o ref.npy -q || fail "reference sort"
"$GPK" sort in.f64 --type f64 -o ref.f64 -q || fail "reference sort f64"
"$GPK" sort few.npy -o ref_few.npy -q || fail "reference sort few"
"$GPK" sort --gen uniform --n 0 -o empty.npy -q || fail "gen empty"

for np in 1 2 3 4; do
    $MPIEXEC -n $np "$GPK" sort --mpi in.npy -o out.npy --check -q || fail "np $np: npy u32"
    cmp -s out.npy ref.npy || fail "np $np: npy u32 output differs from gpk sort's"
    $MPIEXEC -n $np "$GPK" sort --mpi in.f64 --type f64 -o out.f64 --check -q || fail "np $np: raw f64"
    cmp -s out.f64 ref.f64 || fail "np $np: raw f64 output differs"
    $MPIEXEC -n $np "$GPK" sort --mpi few.npy -o out_few.npy --check -q || fail "np $np: few i64"
    cmp -s out_few.npy ref_few.npy || fail "np $np: few i64 output differs"
    $MPIEXEC -n $np "$GPK" sort --mpi empty.npy -o out_empty.npy --check -q || fail "np $np: empty"
    cmp -s out_empty.npy empty.npy || fail "np $np: empty output differs"
done
# in place (the output is the input): safe through the temporary file
cp in.npy inplace.npy
$MPIEXEC -n 3 "$GPK" sort --mpi inplace.npy -o inplace.npy -q || fail "in place"
cmp -s inplace.npy ref.npy || fail "in place: output differs"
# --json from rank 0 only
n_json=$($MPIEXEC -n 3 "$GPK" sort --mpi in.npy --check --json -q | grep -c '"mpi_ranks": 3')
[ "$n_json" = 1 ] || fail "--json: $n_json JSON lines, expected 1"

# failures: every rank exits non-zero, the user's file is kept, no temporary left
echo "precious" >keep.npy
rcs=$($MPIEXEC -n 3 sh -c '"$0" sort --mpi in.npy -o nodir/out.npy -q 2>/dev/null; echo "rc=$?"' "$GPK")
[ "$(echo "$rcs" | grep -c 'rc=[12]')" = 3 ] || fail "missing directory: not every rank failed: $rcs"
head -c 1000 in.npy >trunc.npy
rcs=$($MPIEXEC -n 3 sh -c '"$0" sort --mpi trunc.npy -o keep.npy -q 2>/dev/null; echo "rc=$?"' "$GPK")
[ "$(echo "$rcs" | grep -c 'rc=1')" = 3 ] || fail "truncated input: not every rank failed: $rcs"
[ "$(cat keep.npy)" = precious ] || fail "truncated input: keep.npy was changed"
# one rank cannot write its slice (a file-size limit on rank 1 alone: EFBIG
# past 8 MiB, where its half of 16 MiB starts); rank 0 sized the file
"$GPK" sort --gen uniform --n 4M --seed "$seed" --type u32 -o big.npy -q || fail "gen big.npy"
rcs=$($MPIEXEC -n 2 sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; [ "$r" = 1 ] && ulimit -f 8192;
      "$0" sort --mpi big.npy -o keep.npy -q 2>/dev/null; echo "rc=$?"' "$GPK")
[ "$(echo "$rcs" | grep -c 'rc=1')" = 2 ] || fail "a rank's write fails: not every rank failed: $rcs"
[ "$(cat keep.npy)" = precious ] || fail "a rank's write fails: keep.npy was changed"
ls -a | grep -q 'gpk-' && fail "a temporary file was left: $(ls -a | grep gpk-)"
# usage errors
# MPMD: ranks given different options fail on every rank, before any work,
# with a message each (a different -o wrote rank 0's file alone, --check
# on one rank waited forever in its collectives)
rm -f a.npy b.npy
rcs=$(timeout 120 $MPIEXEC -n 1 sh -c '"$0" sort --mpi in.npy -o a.npy -q 2>mpmd_a.txt; echo "rc=$?"' "$GPK" : \
      -n 1 sh -c '"$0" sort --mpi in.npy -o b.npy -q 2>mpmd_b.txt; echo "rc=$?"' "$GPK")
[ "$(echo "$rcs" | grep -c 'rc=2')" = 2 ] || fail "MPMD -o a / -o b: exits $rcs"
[ -e a.npy ] || [ -e b.npy ] && fail "MPMD -o a / -o b: a file was written"
grep -q "rank 0: another rank was given other" mpmd_a.txt && grep -q "rank 1: .*rank 0 has IN in.npy, -o a.npy" mpmd_b.txt ||
    fail "MPMD -o a / -o b: messages: $(cat mpmd_a.txt mpmd_b.txt)"
rcs=$(timeout 120 $MPIEXEC -n 1 sh -c '"$0" sort --mpi in.npy -o a.npy --check -q 2>/dev/null; echo "rc=$?"' "$GPK" : \
      -n 2 sh -c '"$0" sort --mpi in.npy -o a.npy -q 2>/dev/null; echo "rc=$?"' "$GPK")
[ "$(echo "$rcs" | grep -c 'rc=2')" = 3 ] || fail "MPMD --check on one rank: exits $rcs (124: it hung)"
[ -e a.npy ] && fail "MPMD --check on one rank: a.npy was written"
# A rank stopped (SIGSTOP) once the ranks have started: the other waits at
# most --mpi-timeout seconds for it, names it and ends the job; keep.npy is
# as it was and no temporary file is left. Rank 1 is stopped as soon as rank
# 0 has made the temporary file (every rank is past MPI_Init then, and the
# sort of 32M keys is still to come: long enough, even with a vectorised
# local sort on a loaded machine, that rank 1 is stopped before its part).
"$GPK" sort --gen uniform --n 32M --seed "$seed" --type u32 -o huge.npy -q || fail "gen huge.npy"
timeout -s KILL 120 $MPIEXEC -n 2 "$GPK" sort --mpi huge.npy -o keep.npy --mpi-timeout 2 -q >stop.out 2>stop.err &
job=$!
t0=$(date +%s)
while ! ls -a | grep -q '^\.keep\.npy\.gpk-' && kill -0 $job 2>/dev/null; do :; done
stopped=
for p in $(pgrep -f "sort --mpi huge.npy -o keep.npy --mpi-timeout 2"); do
    r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p;s/^PMI_RANK=//p')
    [ "$r" = 1 ] && stopped=$p && kill -STOP "$p"
done
wait $job
rc=$?
t1=$(date +%s)
[ -n "$stopped" ] && kill -KILL "$stopped" 2>/dev/null
[ -n "$stopped" ] || fail "rank 1 stopped: rank 1 not found (the job ended first, rc $rc)"
[ $rc -ne 0 ] && [ $rc -ne 137 ] && [ $((t1 - t0)) -lt 60 ] ||
    fail "rank 1 stopped: rc $rc after $((t1 - t0)) s (137: it hung)"
grep -q "rank 0: .*rank 1 did not answer" stop.err || fail "rank 1 stopped: no message naming it: $(head -c 600 stop.err)"
[ "$(cat keep.npy)" = precious ] || fail "rank 1 stopped: keep.npy was changed"
ls -a | grep -q 'gpk-' && fail "rank 1 stopped: a temporary file was left: $(ls -a | grep gpk-)"
"$GPK" sort --mpi - -o x.npy 2>/dev/null; [ $? = 2 ] || fail "--mpi with stdin: not a usage error"
"$GPK" sort --mpi in.npy --perm p.bin 2>/dev/null; [ $? = 2 ] || fail "--mpi with --perm: not a usage error"
[ -e x.npy ] && fail "x.npy was created"

if [ $fails -ne 0 ]; then
    echo "cli_sort_mpi_test: $fails failure(s)" >&2
    exit 1
fi
echo "cli_sort_mpi_test passed"
