#!/bin/sh
# End-to-end tests of `gpk qap|tsp|ppp --mpi` under mpiexec (CPU backend).
#   usage: cli_mpi_test.sh MPIEXEC PATH/TO/gpk DATA_DIR
# The result on 1 to 4 ranks must be the one-process multistart's for the
# same seed and --starts (best, and the solution written by rank 0 only);
# a rank reading another instance or none, bad arguments, a signal to one
# rank and a time limit must end every rank (no hang) with one clear
# message. The seed is fresh per run and printed (GPK_TEST_SEED replays).
set -u

MPIEXEC=${1:?usage: cli_mpi_test.sh MPIEXEC PATH/TO/gpk DATA_DIR}
GPK=${2:?usage: cli_mpi_test.sh MPIEXEC PATH/TO/gpk DATA_DIR}
DATA=${3:?usage: cli_mpi_test.sh MPIEXEC PATH/TO/gpk DATA_DIR}
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
case $DATA in /*) ;; *) DATA=$(pwd)/$DATA ;; esac
Q=$DATA/qaplib
T=$DATA/tsplib
if [ ! -f "$Q/tai12a.dat" ] || [ ! -f "$T/burma14.tsp" ]; then
    echo "instances not found under $DATA: skipped"
    exit 77
fi
# Open MPI: more ranks than cores, and root in CI.
EXTRA=
if "$MPIEXEC" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then EXTRA=--oversubscribe; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

SEED=${GPK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "seed $SEED (replay with GPK_TEST_SEED=$SEED)"

. "$(dirname "$0")/cli_lib.sh"
cli_workdir gpk_cli_mpi_test
check() { # check CONDITION-COMMAND... -- DESCRIPTION via $what
    if "$@"; then pass; else fail "$what"; fi
}
# A JSON number field of the file.
field() { sed -n "s/.*\"$2\": \\([-0-9.]*\\).*/\\1/p" "$1"; }
mpi() { # mpi NP gpk-arguments...: under mpiexec, at most 120 s
    np=$1
    shift
    timeout 120 "$MPIEXEC" -n "$np" $EXTRA "$GPK" "$@"
}

# ---- the same result as one process --------------------------------------------------------
S1=$((SEED % 1000))
"$GPK" qap "$Q/tai12a.dat" --algo multistart --starts 5 --iters 40 --global 2 --seed $S1 --threads 2 --json -q \
    >one.json 2>one.err
ONE=$(field one.json best)
"$GPK" ppp --m 21 --n 21 --algo multistart --starts 4 --iters 30 --global 2 --seed $((S1 + 1)) --threads 2 --json \
    -q >pone.json 2>pone.err
PONE=$(field pone.json best)
what="one-process references ran ($ONE, $PONE)"
check test -n "$ONE" -a -n "$PONE"
TREF=
for np in 1 2 3 4; do
    mpi $np qap "$Q/tai12a.dat" --mpi --algo multistart --starts 5 --iters 40 --global 2 --seed $S1 --json -q \
        --out q$np.sln >q$np.json 2>q$np.err
    rc=$?
    got=$(field q$np.json best)
    what="qap --mpi on $np ranks: rc $rc, best '$got', one process $ONE ($(head -c 300 q$np.err))"
    check test $rc -eq 0 -a "$got" = "$ONE"
    what="qap --mpi on $np ranks: one JSON line (rank 0 alone prints)"
    check test "$(grep -c command q$np.json)" -eq 1
    # the .sln: written once, its cost the best, and gpk agrees when evaluating it
    "$GPK" qap "$Q/tai12a.dat" --eval q$np.sln --json >e$np.json 2>&1
    what="qap --mpi on $np ranks: --out q$np.sln holds cost $(head -1 q$np.sln) evaluating to $(field e$np.json cost)"
    check test "$(head -1 q$np.sln)" = "12 $ONE" -a "$(field e$np.json cost)" = "$ONE"
    what="qap --mpi on $np ranks: no temporary files left ($(ls))"
    check test "$(ls -a | grep -c '^\.q')" -eq 0
    mpi $np ppp --m 21 --n 21 --mpi --algo multistart --starts 4 --iters 30 --global 2 --seed $((S1 + 1)) --json -q \
        >p$np.json 2>p$np.err
    rc=$?
    what="ppp --mpi on $np ranks: rc $rc, best '$(field p$np.json best)', one process $PONE"
    check test $rc -eq 0 -a "$(field p$np.json best)" = "$PONE"
    # tabu runs, 3 starts: the ranks do not divide them; every rank count the same
    mpi $np tsp "$T/burma14.tsp" --mpi --algo tabu --starts 3 --iters 60 --seed $((S1 + 2)) --json -q >t$np.json \
        2>t$np.err
    rc=$?
    got="$(field t$np.json best) run $(field t$np.json best_run)"
    [ -z "$TREF" ] && TREF=$got
    what="tsp --mpi tabu on $np ranks: rc $rc, best $got, on 1 rank $TREF"
    check test $rc -eq 0 -a "$got" = "$TREF"
done

# ---- failures: every rank ends, one message --------------------------------------------------
echo keep >kept.sln
timeout 120 "$MPIEXEC" -n 1 $EXTRA "$GPK" qap "$Q/tai12a.dat" --mpi --iters 10 --out kept.sln : \
    -n 1 "$GPK" qap "$Q/nug12.dat" --mpi --iters 10 --out kept.sln >mm.out 2>mm.err
rc=$?
what="another instance on rank 1: rc $rc (not 0, not a timeout), message ($(grep gpk mm.err))"
check test $rc -ne 0 -a $rc -ne 124 -a "$(grep -c "rank 1's problem differs" mm.err)" -eq 1
what="another instance on rank 1: --out kept.sln left as it was"
check test "$(cat kept.sln)" = keep
timeout 120 "$MPIEXEC" -n 1 $EXTRA "$GPK" qap "$Q/tai12a.dat" --mpi --iters 10 : \
    -n 1 "$GPK" qap "$Q/not-there.dat" --mpi --iters 10 >nf.out 2>nf.err
rc=$?
what="no instance on rank 1: rc $rc, message ($(grep gpk nf.err))"
check test $rc -ne 0 -a $rc -ne 124 -a "$(grep -c 'rank 1 failed reading the instance' nf.err)" -eq 1
mpi 3 qap "$Q/tai12a.dat" --mpi --iters x >ba.out 2>ba.err
rc=$?
what="a bad argument on 3 ranks: rc $rc, said once ($(grep -c "bad --iters" ba.err) times)"
check test $rc -ne 0 -a $rc -ne 124 -a "$(grep -c "bad --iters" ba.err)" -eq 1
mpi 2 qap "$Q/tai12a.dat" --mpi --eval kept.sln >ev.out 2>ev.err
rc=$?
what="--mpi with --eval FILE refused: rc $rc"
check test $rc -ne 0 -a $rc -ne 124 -a "$(grep -c "drop --mpi" ev.err)" -eq 1

# ---- stops -------------------------------------------------------------------------------------
# A SIGINT to the last rank alone: every rank stops, rank 0 writes the best so far.
T0=$(date +%s)
timeout -s KILL 60 "$MPIEXEC" -n 3 $EXTRA "$GPK" qap "$Q/tai12a.dat" --mpi --algo tabu --iters 1000000000 \
    --starts 4 --threads 1 --out int.sln -q >int.out 2>int.err &
TO=$!
sleep 2
LAST=$(pgrep -P "$(pgrep -P $TO | head -1)" | tail -1)
[ -n "$LAST" ] && kill -INT "$LAST"
wait $TO
rc=$?
T1=$(date +%s)
"$GPK" qap "$Q/tai12a.dat" --eval int.sln --json >int.json 2>&1
what="SIGINT to one rank: ended after $((T1 - T0)) s with rc $rc, --out cost $(head -1 int.sln) evaluating to \
$(field int.json cost)"
check test -n "$LAST" -a $rc -ne 0 -a $((T1 - T0)) -lt 50 -a "$(head -1 int.sln)" = "12 $(field int.json cost)"
# A time limit: every rank returns with its best, rank 0 writes it.
T0=$(date +%s)
mpi 2 qap "$Q/tai12a.dat" --mpi --algo tabu --iters 1000000000 --starts 3 --threads 1 --time-limit 0.5 --json -q \
    --out tl.sln >tl.json 2>tl.err
rc=$?
T1=$(date +%s)
what="--time-limit 0.5 on 2 ranks: rc $rc after $((T1 - T0)) s, stopped $(grep -o '"stopped": [^,}]*' tl.json)"
check test $rc -eq 0 -a $((T1 - T0)) -lt 30 -a "$(grep -c '"stopped": "time-limit"' tl.json)" -eq 1
what="--time-limit 0.5 on 2 ranks: --out holds the best"
check test "$(head -1 tl.sln)" = "12 $(field tl.json best)"

# The progress lines count every rank's runs, as the summary does (they
# counted rank 0's alone: a third of the summary's rate on 3 ranks).
mpi 3 tsp "$T/burma14.tsp" --mpi --algo tabu --iters 1000000000 --starts 3 --threads 1 --time-limit 3 \
    >pr.out 2>pr.err
rc=$?
tr '\r' '\n' <pr.err | sed -n 's/.*iteration \([0-9]*\):.*, \([0-9.]*\) s$/\1 \2/p' | tail -1 >pr.last
sed -n 's/.*; \([0-9]*\) iterations, [0-9]* moves evaluated in \([0-9.]*\) ms.*/\1 \2/p' pr.err >pr.sum
ratio=$(awk 'NR == FNR { it = $1; t = $2; next } { if (t > 0 && $1 > 0) printf "%.2f", (it / t) / ($1 / ($2 / 1000)) }' \
    pr.last pr.sum)
what="progress lines on 3 ranks: rc $rc, last line $(cat pr.last), summary $(cat pr.sum): rate ratio '$ratio' \
(the totals: about 1)"
near=no
[ -n "$ratio" ] && awk -v r="$ratio" 'BEGIN { exit !(r > 0.7 && r < 1.4) }' && near=yes
check test $rc -eq 0 -a $near = yes

# A rank stopped (SIGSTOP) mid-search: the other gives up after --mpi-timeout
# seconds without a sign of life, names it, and the job ends (no hang).
rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p;s/^PMI_RANK=//p' | head -1; }
T0=$(date +%s)
timeout -s KILL 90 "$MPIEXEC" -n 2 $EXTRA "$GPK" tsp "$T/burma14.tsp" --mpi --algo tabu --iters 1000000000 \
    --time-limit 3 --threads 1 --mpi-timeout 2 >stop.out 2>stop.err &
TO=$!
STOPPED=
for _ in $(seq 300); do # the first progress line: both ranks are in the search
    grep -q iteration stop.err && break
    sleep 0.1
done
for p in $(pgrep -P "$(pgrep -P $TO | head -1)"); do
    if [ "$(rank_of "$p")" = 1 ]; then STOPPED=$p; kill -STOP "$p"; fi
done
wait $TO
rc=$?
T1=$(date +%s)
[ -n "$STOPPED" ] && kill -KILL "$STOPPED" 2>/dev/null
what="rank 1 stopped: rc $rc after $((T1 - T0)) s (bound: 3 s search + 2 s timeout + start), message \
($(grep 'gpk tsp' stop.err | head -2))"
check test -n "$STOPPED" -a $rc -ne 0 -a $rc -ne 137 -a $((T1 - T0)) -lt 40 \
    -a "$(grep -c 'rank 0: .*no sign of life from rank 1 for 2 s' stop.err)" -eq 1
what="--mpi-timeout x: a usage error"
mpi 1 qap "$Q/tai12a.dat" --mpi --mpi-timeout x >bt.out 2>bt.err
check test $? -eq 2 -a "$(grep -c 'bad value .x. for --mpi-timeout' bt.err)" -eq 1

echo "cli_mpi_test: $TESTS passed, $FAILS failed"
if [ $FAILS -eq 0 ]; then
    cd / && rm -rf "$WORK"
else
    echo "work directory kept: $WORK"
fi
[ $FAILS -eq 0 ]
