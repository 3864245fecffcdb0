#!/bin/sh
# What a user meets first: inputs that are not plain files, outputs that
# cannot be written found before the work, nothing left behind by a signal,
# stdout that fails, memory limits, and the messages of small mishaps.
#   usage: cli_io_test.sh PATH/TO/gpk
# Exits non-zero on any failure and keeps its work directory then.
set -u
GPK=${1:?usage: cli_io_test.sh PATH/TO/gpk}
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
. "$(dirname "$0")/cli_lib.sh"
cli_workdir gpk_io_test

# each command gets 60 s (run, cli_lib.sh): a hang is a failure
CLI_RUN_TIMEOUT=60
no_temps() {
    if ls -A | grep -q '\.gpk-'; then fail "$1: a temporary file was left: $(ls -A | grep '\.gpk-')"; else pass; fi
}
# wait_writing PID: until PID has an output's temporary file open (named,
# or without a name: O_TMPFILE shows as "#NNN (deleted)"), at most 10 s.
wait_writing() {
    i=0
    while [ $i -lt 100 ]; do
        ls -A | grep -q '\.gpk-' && return 0
        ls -l "/proc/$1/fd" 2>/dev/null | grep -q "$WORK/#.*(deleted)" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

SEED=${GPK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "cli_io_test: seed $SEED"
"$GPK" sort --gen uniform --n 5000 --seed "$SEED" --format npy -o sorted.npy -q || fail "setup"
head -c 20000 /dev/urandom >keys.bin
"$GPK" sort keys.bin --type u32 -o keys_sorted.npy -q || fail "setup: sort keys.bin"
# keys.npy: the raw keys behind a .npy header (the sorted file's, same n)
{ head -c 128 keys_sorted.npy; cat keys.bin; } >keys.npy

# -- inputs that are not plain files: opened once, .npy told from raw by content --
mkfifo kf
(cat keys.npy >kf &)
run 0 ".npy from a FIFO" "" -- "$GPK" sort kf -o from_fifo.npy -q
cmp -s from_fifo.npy keys_sorted.npy && pass || fail ".npy from a FIFO: not the sorted keys"
(cat keys.bin >kf &)
run 0 "raw from a FIFO" "" -- "$GPK" sort kf --type u32 -o from_fifo.bin -q
[ "$(tail -c 20000 keys_sorted.npy | cksum)" = "$(cksum <from_fifo.bin)" ] && pass || fail "raw from a FIFO: not the sorted keys"
(cat keys.npy >kf &)
run 0 ".npy from a FIFO with --type" "" -- "$GPK" sort kf --type u32 -o from_fifo2.npy -q
cmp -s from_fifo2.npy keys_sorted.npy && pass || fail ".npy from a FIFO with --type: not the sorted keys"
run 0 ".npy from /dev/stdin" "" -- sh -c 'cat keys.npy | "$0" sort /dev/stdin -o from_stdin.npy -q' "$GPK"
cmp -s from_stdin.npy keys_sorted.npy && pass || fail ".npy from /dev/stdin: not the sorted keys"
(cat keys.npy >kf &)
run 0 "--values from a FIFO" "" -- "$GPK" sort keys.npy --values kf --values-out v.npy -o k2.npy -q
cmp -s k2.npy keys_sorted.npy && pass || fail "--values from a FIFO: keys not sorted"
rm -f kf

# -- readers: headers that cannot be right are refused ------------------------------
# mkhdr DICT: a .npy v1.0 header holding DICT (a printf format: \000 is a NUL).
mkhdr() {
    printf "$1" >hdr.bin
    l=$(wc -c <hdr.bin)
    pad=$(((64 - (10 + l + 1) % 64) % 64))
    total=$((l + pad + 1))
    printf '\223NUMPY\001\000'
    printf "\\$(printf %03o $((total % 256)))\\$(printf %03o $((total / 256)))"
    cat hdr.bin
    head -c $pad /dev/zero | tr '\0' ' '
    printf '\n'
}
{ mkhdr "{'descr': '<u4\\000junk', 'fortran_order': False, 'shape': (3,), }"; head -c 12 /dev/urandom; } >nul.npy
run 1 "a .npy descr with a NUL" "malformed" -- "$GPK" sort nul.npy -o x.npy
# the subarray's shape multiplies to 2^64, which wraps to a field of 0 bytes
{ mkhdr "{'descr': [('a', '<u4'), ('b', '<u4', (65536, 65536, 65536, 65536))], 'fortran_order': False, 'shape': (3,), }"
  head -c 12 /dev/urandom; } >wrap.npy
run 1 "records: a field shape past 2^64" "malformed" -- "$GPK" sort wrap.npy --key a -o x.npy
{ mkhdr "{'descr': [('a', '<u4'), ('a', '<u4')], 'fortran_order': False, 'shape': (3,), }"; head -c 24 /dev/urandom; } >dup.npy
run 1 "records: a field named twice" "twice" -- "$GPK" sort dup.npy --key a -o x.npy
{ mkhdr "{'descr': [('a', '<u4\\000x'), ('b', '<u4')], 'fortran_order': False, 'shape': (3,), }"; head -c 24 /dev/urandom; } >recnul.npy
run 1 "records: a field dtype with a NUL" "malformed" -- "$GPK" sort recnul.npy --key b -o x.npy
{ mkhdr "{'descr': [('', '|V4'), ('k', '<u4'), ('', '|V4')], 'fortran_order': False, 'shape': (3,), }"; head -c 36 /dev/urandom; } >pad.npy
run 0 "records: padding fields ('') may repeat" "" -- "$GPK" sort pad.npy --key k -o x.npy -q
[ -e x.npy ] && [ "$(wc -c <x.npy)" = "$(wc -c <pad.npy)" ] && pass || fail "records with padding: not written"
rm -f x.npy

# -- outputs that cannot be written are found before the work (exit 2) ----------
run 2 "-o /proc/x" "cannot create files" -- "$GPK" sort --gen uniform --n 1000 -o /proc/x
run 2 "-o /dev/full" "No space left" -- "$GPK" sort --gen uniform --n 1000 -o /dev/full
ln -s selfloop selfloop
run 2 "-o a self-referencing symlink" "symbolic links" -- "$GPK" sort --gen uniform --n 1000 -o selfloop
[ -L selfloop ] && pass || fail "-o selfloop: the link is gone"
printf 'NAME : sq\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 0 10\n3 10 10\n4 10 0\nEOF\n' >sq.tsp
run 2 "tsp --out /dev/full" "No space left" -- "$GPK" tsp sq.tsp --out /dev/full --iters 10
run 2 "octree --svg /proc/x" "cannot create files" -- "$GPK" octree --n 1000 --svg /proc/x
# A 254-character name is a valid name: its temporary file must fit NAME_MAX too.
LONG=$(printf '%0250d' 0).npy
run 0 "-o a 254-character name" "" -- "$GPK" sort --gen uniform --n 5000 --seed "$SEED" -o "$LONG" -q
cmp -s "$LONG" sorted.npy && pass || fail "-o a 254-character name: not written"
rm -f "$LONG"
no_temps "outputs"

# -- stdout that cannot be written is a failure ------------------------------------
if [ -w /dev/full ]; then
    run 1 "--json to a full stdout" "stdout" -- sh -c '"$0" sort --gen uniform --n 100 --json -q >/dev/full' "$GPK"
    run 1 "info --json to a full stdout" "stdout" -- sh -c '"$0" info --json >/dev/full' "$GPK"
    run 1 "--help to a full stdout" "stdout" -- sh -c '"$0" --help >/dev/full' "$GPK"
    run 1 "sort --help to a full stdout" "stdout" -- sh -c '"$0" sort --help >/dev/full' "$GPK"
fi

# -- a replaced file keeps its owner, group and mode -------------------------------
if [ "$(id -u)" = 0 ]; then
    cp sorted.npy owned.npy && chown 1234:2345 owned.npy && chmod 640 owned.npy
    run 0 "root replacing a user's file" "" -- "$GPK" sort keys.npy -o owned.npy -q
    [ "$(stat -c '%u:%g %a' owned.npy)" = "1234:2345 640" ] && pass ||
        fail "root replacing a user's file: owned.npy is now $(stat -c '%u:%g %a' owned.npy)"
else
    echo "cli_io_test: not root, the owner check skipped"
fi

# -- killed by any signal: nothing left beside the output --------------------------
# --perm's FIFO, with no reader, holds the run while -o's temporary file is open.
# (a background job of sh ignores SIGINT and SIGQUIT: those are not sent)
for sig in KILL USR1 TERM HUP; do
    cp sorted.npy victim.npy
    mkfifo stall
    "$GPK" sort --gen uniform --n 100000 -o victim.npy --perm stall -q 2>/dev/null &
    pid=$!
    wait_writing $pid || fail "SIG$sig: the output was never opened"
    kill -$sig $pid 2>/dev/null
    wait $pid 2>/dev/null
    rm -f stall
    cmp -s victim.npy sorted.npy && pass || fail "SIG$sig mid-write: victim.npy changed"
    no_temps "SIG$sig mid-write"
done

# Where the file system has no O_TMPFILE the temporary file has a name from
# the start: every signal that ends gpk and can be caught removes it.
for sig in USR1 USR2 ALRM TERM HUP; do
    cp sorted.npy victim.npy
    mkfifo stall
    GPK_TEST_NAMED_TEMP=1 "$GPK" sort --gen uniform --n 100000 -o victim.npy --perm stall -q 2>/dev/null &
    pid=$!
    wait_writing $pid || fail "named, SIG$sig: the output was never opened"
    # the check of the output before the work makes and removes a probe
    # file that wait_writing may have seen: wait for the real one
    i=0
    while [ $i -lt 100 ] && ! ls -A | grep -q '\.victim\.npy\.gpk-'; do sleep 0.1; i=$((i + 1)); done
    ls -A | grep -q '\.victim\.npy\.gpk-' && pass || fail "named, SIG$sig: no named temporary file"
    kill -$sig $pid 2>/dev/null
    wait $pid 2>/dev/null
    rm -f stall
    cmp -s victim.npy sorted.npy && pass || fail "named, SIG$sig mid-write: victim.npy changed"
    no_temps "named, SIG$sig mid-write"
done

# -- the mapped output (from 64 MiB of keys) on a full disk: said before the sort --
mkdir small
if mount -t tmpfs -o size=16M tmpfs small 2>/dev/null; then
    head -c 80000000 /dev/urandom >big.bin
    run 1 "a mapped output on a full disk" "cannot write small/o.bin.*No space left" -- \
        "$GPK" sort big.bin --type u32 -o small/o.bin -q
    grep -q "Bad address" err.txt && fail "a mapped output on a full disk: blamed on the input" || pass
    umount small
    rm -f big.bin
else
    echo "cli_io_test: cannot mount a tmpfs (not root?): the full-disk check skipped"
fi

# -- small things: what a run says -------------------------------------------------
run 0 "sort without -o" "nothing written" -- "$GPK" sort keys.npy
run 0 "sort -o says nothing of that" "" -- "$GPK" sort keys.npy -o x.npy
grep -q "nothing written" err.txt && fail "sort -o: says nothing was written" || pass
run 0 "a thread count cut to 4 a core" "threads 100000 is more than" -- "$GPK" sort --gen uniform --n 1000 --threads 100000 -q
run 0 "GPK_THREADS cut to 4 a core" "GPK_THREADS 100000 is more than" -- env GPK_THREADS=100000 "$GPK" sort --gen uniform --n 1000 -q
"$GPK" info >info.txt 2>&1
if grep -q "not available" info.txt; then
    grep "not available" info.txt | grep -vq "not available: ." && fail "gpk info: a backend missing without a reason: $(cat info.txt)" || pass
fi
if ! "$GPK" info | head -1 | grep -q cuda; then
    run 1 "info --backend cuda, not built" "cuda backend: " -- "$GPK" info --backend cuda
    grep -qi "cuda backend: cuda backend" err.txt && fail "gpk info --backend cuda: the prefix said twice: $(cat err.txt)" || pass
fi
# a signal says the run was stopped (the --perm FIFO holds it while writing)
mkfifo stall
"$GPK" sort --gen uniform --n 1000 -o stopped.npy --perm stall 2>stop_err.txt &
pid=$!
wait_writing $pid || fail "stopped run: the output was never opened"
kill -TERM $pid
wait $pid
rc=$?
rm -f stall
[ $rc = 143 ] && grep -q "stopped by SIGTERM" stop_err.txt && pass || fail "SIGTERM: exit $rc, stderr: $(cat stop_err.txt)"
[ -e stopped.npy ] && fail "SIGTERM: stopped.npy was written" || pass

# The search's own stop handler gives the previous ones back when the search
# ends: a signal while --svg waits for its FIFO's reader is then main's
# (which says so and removes temporary files), not the default's silence.
mkfifo svg_stall
"$GPK" tsp sq.tsp --iters 10 -q --out after.tour --svg svg_stall 2>search_err.txt &
pid=$!
i=0
while [ $i -lt 100 ] && ! [ -s after.tour ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
kill -TERM $pid
wait $pid
rc=$?
rm -f svg_stall
[ $rc = 143 ] && grep -q "stopped by SIGTERM" search_err.txt && pass ||
    fail "tsp: SIGTERM after the search: exit $rc, stderr: $(cat search_err.txt)"

# -- --check: bounded memory, and it finds what a faulty sort would do --------------
# GPK_TEST_CORRUPT_SORT spoils the output between the sort and the check.
"$GPK" sort --gen few-bits --param 6 --n 10000 --seed "$SEED" -o fb.bin -q
head -c 40000 /dev/urandom >fbv.bin
for algo in radix quick; do
    run 0 "--check $algo passes" "check ok" -- "$GPK" sort fb.bin --type u32 --perm p.bin --check --algo $algo
    run 0 "--check $algo pairs passes" "check ok" -- "$GPK" sort fb.bin --type u32 --values fbv.bin --value-type u32 --check --algo $algo
    run 1 "--check $algo: keys out of order" "out of order" -- env GPK_TEST_CORRUPT_SORT=order "$GPK" sort fb.bin --type u32 --check --algo $algo
    run 1 "--check $algo: a key replaced" "not a permutation" -- env GPK_TEST_CORRUPT_SORT=key "$GPK" sort fb.bin --type u32 --check --algo $algo
    run 1 "--check $algo: values swapped" "pairs are not those" -- \
        env GPK_TEST_CORRUPT_SORT=value "$GPK" sort fb.bin --type u32 --values fbv.bin --value-type u32 --check --algo $algo
done
run 1 "--check quick: sigma wrong" "sigma is not a permutation" -- \
    env GPK_TEST_CORRUPT_SORT=sigma "$GPK" sort fb.bin --type u32 --perm p.bin --check --algo quick
run 1 "--check radix: sigma not stable" "not stable" -- \
    env GPK_TEST_CORRUPT_SORT=stable "$GPK" sort fb.bin --type u32 --perm p.bin --check --algo radix
run 0 "--check quick: equal keys in any order" "check ok" -- \
    env GPK_TEST_CORRUPT_SORT=stable "$GPK" sort fb.bin --type u32 --perm p.bin --check --algo quick
for T in i32 f32 i64 f64; do
    run 0 "--check $T float-specials" "check ok" -- "$GPK" sort --gen float-specials --type $T --n 5000 --seed "$SEED" --perm p.bin --check
done
# --check holds no copy of the input: its peak memory is the sort's (2^22 keys:
# 16 MiB each; the reference check took about 3.5x).
if [ -x /usr/bin/time ] && [ -z "${GPK_TEST_SANITIZER:-}" ]; then
    /usr/bin/time -f %M -o rss1.txt "$GPK" sort --gen uniform --n 2^22 --perm p.bin -q
    /usr/bin/time -f %M -o rss2.txt "$GPK" sort --gen uniform --n 2^22 --perm p.bin --check -q
    a=$(tail -1 rss1.txt) b=$(tail -1 rss2.txt)
    [ "$b" -le $((a + a / 8)) ] && pass || fail "--check: peak $b KB against the sort's $a KB"
fi

# -- memory limits: the control group's, not the machine's ---------------------------
# A child control group of this process's own, with a 600 MiB limit (v1 or
# v2); without one (not root, no cgroup file system) the checks are skipped.
CG=
cg_line=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | head -1)
if [ -n "$cg_line" ]; then
    ctl=$(echo "$cg_line" | cut -d: -f2) dir=$(echo "$cg_line" | cut -d: -f3-)
    for base in "/sys/fs/cgroup/$ctl$dir" "/sys/fs/cgroup/$ctl"; do
        if mkdir "$base/gpk_io_test.$$" 2>/dev/null; then
            CG="$base/gpk_io_test.$$"
            echo 600M >"$CG/memory.limit_in_bytes" 2>/dev/null || { rmdir "$CG"; CG=; }
            break
        fi
    done
elif grep -q '^0::' /proc/self/cgroup; then
    dir=$(grep '^0::' /proc/self/cgroup | cut -d: -f3-)
    if mkdir "/sys/fs/cgroup$dir/gpk_io_test.$$" 2>/dev/null; then
        CG="/sys/fs/cgroup$dir/gpk_io_test.$$"
        echo 600M >"$CG/memory.max" 2>/dev/null || { rmdir "$CG"; CG=; }
    fi
fi
# sh -c "$IN_CG" "$CG" COMMAND...: runs it inside the 600 MiB group
IN_CG='echo $$ >"$0/cgroup.procs" && exec "$@"'
if [ -n "$CG" ] && [ -z "${GPK_TEST_SANITIZER:-}" ]; then
    run 1 "/dev/zero in a 600 MiB group" "more than 314572800 bytes" -- sh -c "$IN_CG" "$CG" "$GPK" sort /dev/zero --type u32
    run 1 "--gen 1G keys in a 600 MiB group" "nothing generated" -- sh -c "$IN_CG" "$CG" "$GPK" sort --gen uniform --n 1G
    run 1 "octree of 256M particles in a 600 MiB group" "control group" -- sh -c "$IN_CG" "$CG" "$GPK" octree --n 256M
    run 0 "a sort that fits the group" "" -- sh -c "$IN_CG" "$CG" "$GPK" sort --gen uniform --n 1M --check -q
    # the group empties as its last process is reaped: a few tries
    i=0
    while ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    [ -d "$CG" ] && echo "cli_io_test: could not remove $CG" >&2
else
    echo "cli_io_test: no control group of our own (not root, or a sanitizer build): memory-limit checks skipped"
fi

echo "cli_io_test: $TESTS passed, $FAILS failed"
if [ "$FAILS" -ne 0 ]; then
    echo "work directory kept: $WORK" >&2
    exit 1
fi
cd / && rm -rf "$WORK"
