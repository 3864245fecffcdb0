#!/bin/sh
# Reliability of the gpk CLI's files (issue 19, items 2, 3, 4 and 6):
# outputs go through a temporary file and a rename, so a failed write keeps
# the old file; links, devices and pipes given as outputs are never removed;
# all outputs are checked before any work (usage error, exit 2); inputs
# whose header or size cannot be right are refused before any allocation.
#   usage: cli_reliability_test.sh PATH/TO/gpk
# Exits non-zero on any failure and keeps its work directory then.
set -u
GPK=${1:?usage: cli_reliability_test.sh PATH/TO/gpk}
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
. "$(dirname "$0")/cli_lib.sh"
cli_workdir gpk_rel_test

# same FILE SUM DESCRIPTION: FILE still has checksum SUM.
same() {
    if [ "$(cksum <"$1" 2>/dev/null)" = "$2" ]; then pass; else fail "$3: $1 changed or vanished"; fi
}
no_temps() {
    if ls -A | grep -q '\.gpk-'; then fail "$1: a temporary file was left: $(ls -A | grep '\.gpk-')"; else pass; fi
}

SEED=${GPK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "cli_reliability_test: seed $SEED"

"$GPK" sort --gen uniform --n 1000 --seed "$SEED" -o old.npy -q || fail "setup: gpk sort"
OLD=$(cksum <old.npy)

# -- item 2: a failed write keeps the old file ------------------------------------
# 100 blocks of 512 bytes: 4M keys do not fit.
(ulimit -f 100 && exec "$GPK" sort --gen uniform --n 4M --seed "$SEED" -o old.npy -q) >out.txt 2>err.txt
rc=$?
if [ "$rc" -ne 1 ]; then fail "ulimit -f: exit $rc, expected 1"; sed 's/^/    stderr: /' err.txt >&2; else pass; fi
grep -q "File too large" err.txt && pass || fail "ulimit -f: no 'File too large' message"
same old.npy "$OLD" "ulimit -f"
no_temps "ulimit -f"

# The mode of a replaced file is kept.
chmod 640 old.npy
run 0 "sort in place" "" -- "$GPK" sort old.npy -o old.npy -q
[ "$(stat -c %a old.npy)" = 640 ] && pass || fail "the mode of old.npy became $(stat -c %a old.npy)"
"$GPK" sort --gen uniform --n 1000 --seed "$SEED" -o old.npy -q
same old.npy "$OLD" "rewrite"

# A symbolic link as -o: its target gets the data, the link stays.
ln -s old.npy link.npy
run 0 "-o a symlink" "" -- "$GPK" sort --gen reverse --n 77 -o link.npy -q
[ -L link.npy ] && pass || fail "-o link.npy: the link was replaced by a file"
[ "$(stat -c %s old.npy)" = $((128 + 77 * 4)) ] && pass || fail "-o link.npy: the target did not get the keys"
"$GPK" sort --gen uniform --n 1000 --seed "$SEED" -o old.npy -q
ln -s new-target.npy dangling.npy
run 0 "-o a dangling symlink" "" -- "$GPK" sort --gen reverse --n 77 -o dangling.npy -q
[ -L dangling.npy ] && [ -f new-target.npy ] && pass || fail "-o dangling.npy: the link was replaced"
rm -f dangling.npy new-target.npy

# A device that fails every write (a copy of /dev/full) is not removed.
if mknod full c 1 7 2>/dev/null; then
    run 2 "-o a full device (found before the work)" "No space left" -- "$GPK" sort --gen uniform --n 100000 -o full -q
    [ -c full ] && pass || fail "-o full: the device node was removed"
    run 2 "--out a full device (found before the work)" "No space left" -- "$GPK" octree --n 1000 --svg full
    [ -c full ] && pass || fail "--svg full: the device node was removed"
else
    echo "cli_reliability_test: mknod not permitted, device checks skipped"
fi
# Killed mid-write: the -o temporary file exists while --perm's fifo,
# with no reader yet, holds the run; SIGTERM then must leave old.npy whole
# and no temporary file behind.
mkfifo stall
"$GPK" sort --gen uniform --n 100000 -o old.npy --perm stall -q 2>/dev/null &
pid=$!
i=0
# (the temporary file may have no name yet: O_TMPFILE shows as "#NNN (deleted)")
while [ $i -lt 100 ] && ! ls -A | grep -q '^\.old\.npy\.gpk-' &&
    ! ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$WORK/#.*(deleted)"; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
same old.npy "$OLD" "SIGTERM mid-write"
no_temps "SIGTERM mid-write"
rm -f stall
# A pipe is written in place.
mkfifo fifo
cat fifo >from_fifo.npy &
run 0 "-o a fifo" "" -- "$GPK" sort --gen uniform --n 1000 --seed "$SEED" -o fifo --format npy -q
wait
cmp -s from_fifo.npy old.npy && pass || fail "-o fifo: the reader did not get the keys"
[ -p fifo ] && pass || fail "-o fifo: the fifo is gone"
# stdout, '-'
"$GPK" sort --gen uniform --n 1000 --seed "$SEED" -o - --format npy -q >stdout.npy
cmp -s stdout.npy old.npy && pass || fail "-o -: stdout did not get the keys"
no_temps "links, devices and pipes"

# -- item 3: every output is checked before the work --------------------------------
run 2 "-o X --perm X" "same file" -- "$GPK" sort --gen uniform --n 100 -o old.npy --perm old.npy
same old.npy "$OLD" "-o X --perm X"
run 2 "-o X --perm ./X" "same file" -- "$GPK" sort --gen uniform --n 100 -o old.npy --perm ./old.npy
ln old.npy hard.npy
run 2 "-o X --perm (a hard link of X)" "same file" -- "$GPK" sort --gen uniform --n 100 -o old.npy --perm hard.npy
rm hard.npy
run 2 "-o - --perm -" "same file" -- "$GPK" sort --gen uniform --n 100 -o - --perm -
run 2 "-o A --perm nodir/B" "does not exist" -- "$GPK" sort --gen uniform --n 100 -o old.npy --perm nodir/b.npy
same old.npy "$OLD" "-o A --perm nodir/B"
run 2 "-o /nonexistent/x" "does not exist" -- "$GPK" sort --gen uniform --n 100 -o /nonexistent/x
run 2 "-o a directory" "directory" -- "$GPK" sort --gen uniform --n 100 -o .
run 2 "--perm is the input" "is the input" -- "$GPK" sort old.npy -o new.npy --perm old.npy
[ -e new.npy ] && fail "--perm is the input: new.npy was written" || pass
"$GPK" sort --gen uniform --n 1000 --seed 3 -o vals.npy -q
run 2 "--values-out is the key input" "is the input" -- "$GPK" sort old.npy --values vals.npy --values-out old.npy
run 0 "--values-out over its own input" "" -- "$GPK" sort old.npy --values vals.npy --values-out vals.npy -q
run 0 "-o over its own input" "" -- "$GPK" sort old.npy -o old.npy -q
"$GPK" sort --gen uniform --n 1000 --seed "$SEED" -o old.npy -q
# Permissions are not the superuser's to check.
if [ "$(id -u)" != 0 ]; then
    chmod 500 .
    run 2 "-o in a read-only directory" "cannot create files" -- "$GPK" sort --gen uniform --n 10 -o ro.npy
    chmod 700 .
    cp old.npy ro.npy && chmod 444 ro.npy
    run 2 "-o a read-only file" "not writable" -- "$GPK" sort --gen uniform --n 10 -o ro.npy
    same ro.npy "$OLD" "-o a read-only file"
    rm -f ro.npy
fi

# qap / tsp / octree outputs. A 3-facility QAPLIB instance keeps the run short.
printf '3\n\n0 1 2\n1 0 1\n2 1 0\n\n0 5 2\n5 0 3\n2 3 0\n' >tiny.dat
run 2 "qap --out /nonexistent/x" "does not exist" -- "$GPK" qap tiny.dat --out /nonexistent/x.sln
run 2 "qap --out the instance" "is the input" -- "$GPK" qap tiny.dat --out tiny.dat
run 0 "qap --out" "" -- "$GPK" qap tiny.dat --out tiny.sln -q --iters 10
head -1 tiny.sln | grep -q '^3 ' && pass || fail "qap --out: tiny.sln lacks its header"
printf 'NAME : sq\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 0 10\n3 10 10\n4 10 0\nEOF\n' >sq.tsp
run 2 "tsp --out X --svg X" "same file" -- "$GPK" tsp sq.tsp --out a.tour --svg a.tour
run 2 "tsp --svg nodir" "does not exist" -- "$GPK" tsp sq.tsp --svg nodir/a.svg
run 0 "tsp --out --svg" "" -- "$GPK" tsp sq.tsp --out sq.tour --svg sq.svg -q --iters 10
grep -q TOUR_SECTION sq.tour && grep -q '</svg>' sq.svg && pass || fail "tsp --out --svg: files incomplete"
run 2 "octree --svg nodir" "does not exist" -- "$GPK" octree --n 1000 --svg nodir/o.svg
no_temps "outputs"

# -- item 6: inputs are held to their size before allocating --------------------------
# Under AddressSanitizer (make asan-check) an address-space limit stops the
# program from starting: the checks then run without the limit.
LIM="ulimit -v 1000000;"
if ! sh -c "$LIM exec \"\$0\" --version" "$GPK" >/dev/null 2>&1; then
    LIM=""
    echo "cli_reliability_test: gpk cannot start under ulimit -v (a sanitizer build?): checks run without it"
fi
# A 169-byte .npy whose header claims 10^9 u32 (4 GB): refused from its size,
# as a file and through a pipe, under a 1 GB address-space limit that a 4 GB
# allocation would hit.
printf "{'descr': '<u4', 'fortran_order': False, 'shape': (1000000000,), }" >hdr.txt
pad=$((117 - $(wc -c <hdr.txt)))
{ printf '\223NUMPY\001\000v\000'; cat hdr.txt; head -c $pad /dev/zero | tr '\0' ' '; printf '\n'
  head -c 40 /dev/zero; } >big.npy
[ "$(wc -c <big.npy)" = 168 ] || fail "setup: big.npy is $(wc -c <big.npy) bytes"
run 1 "a .npy claiming 4 GB" "truncated .npy" -- sh -c "$LIM"' exec "$0" sort big.npy' "$GPK"
run 1 "a .npy claiming 4 GB, piped" "truncated .npy" -- sh -c "$LIM"' cat big.npy | "$0" sort -' "$GPK"
# Endless sources end in a message, not in the out-of-memory killer.
run 1 "/dev/zero as raw input" "more than 1000000 bytes" -- \
    sh -c "$LIM"' GPK_MAX_INPUT=1000000 exec "$0" sort /dev/zero --type u32' "$GPK"
run 1 "an endless pipe" "more than 1000000 bytes" -- \
    sh -c "$LIM"' yes | GPK_MAX_INPUT=1000000 "$0" sort - --type u32' "$GPK"
# The instance readers too.
run 1 "qap /dev/zero" "input limit" -- sh -c "$LIM"' GPK_MAX_INPUT=1000000 exec "$0" qap /dev/zero' "$GPK"
mkfifo endless
(yes >endless 2>/dev/null &)
run 1 "tsp from an endless pipe" "input limit" -- \
    sh -c "$LIM"' GPK_MAX_INPUT=1000000 exec "$0" tsp endless' "$GPK"
rm -f endless
run 1 "a pipe .npy over the limit" "more than the 1000 that" -- \
    sh -c 'cat old.npy | GPK_MAX_INPUT=1000 "$0" sort -' "$GPK"
# ... and honest ones still read, in full.
head -c 40000 /dev/urandom >r.bin
run 0 "raw from a pipe" "" -- sh -c 'cat r.bin | "$0" sort - --type u32 -o r.npy -q' "$GPK"
[ "$(wc -c <r.npy)" = $((128 + 40000)) ] && pass || fail "raw from a pipe: r.npy has $(wc -c <r.npy) bytes"
run 0 ".npy from a pipe" "" -- sh -c 'cat old.npy | "$0" sort - -o p.npy -q' "$GPK"
cmp -s p.npy old.npy && pass || fail ".npy from a pipe: the sorted keys differ"
run 1 "a truncated .npy" "truncated" -- sh -c 'head -c 1000 old.npy >t.npy; "$0" sort t.npy' "$GPK"
run 1 "a .npy with extra bytes" "mismatched" -- sh -c 'cat old.npy r.bin >m.npy; "$0" sort m.npy' "$GPK"

# -- records (gpk sort --record-size / --key): the same writer and checks ----------
head -c 12000 /dev/urandom >rec.bin
"$GPK" sort rec.bin --record-size 12 --key-type u32 -o rec_old.bin -q || fail "setup: records sort"
ROLD=$(cksum <rec_old.bin)
(ulimit -f 10 && exec "$GPK" sort rec.bin --record-size 12 --key-type u32 -o rec_old.bin -q) >/dev/null 2>&1
head -c 1200000 /dev/urandom >rec_big.bin
(ulimit -f 100 && exec "$GPK" sort rec_big.bin --record-size 12 --key-type u32 -o rec_old.bin -q) >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 1 ] && grep -q "File too large" err.txt && pass || fail "records ulimit -f: exit $rc, $(cat err.txt)"
same rec_old.bin "$ROLD" "records ulimit -f"
no_temps "records ulimit -f"
run 2 "records -o /nonexistent/x" "does not exist" -- "$GPK" sort rec.bin --record-size 12 --key-type u32 -o /nonexistent/x
run 2 "records -o a directory" "directory" -- "$GPK" sort rec.bin --record-size 12 --key-type u32 -o .
run 0 "records -o over its own input" "" -- "$GPK" sort rec.bin --record-size 12 --key-type u32 -o rec.bin -q
if [ "$(id -u)" != 0 ]; then
    cp rec_old.bin ro.bin && chmod 444 ro.bin
    run 2 "records -o a read-only file" "not writable" -- "$GPK" sort rec.bin --record-size 12 --key-type u32 -o ro.bin
    same ro.bin "$ROLD" "records -o a read-only file"
    rm -f ro.bin
fi
if mknod full c 1 7 2>/dev/null || [ -c full ]; then
    run 2 "records -o a full device (found before the work)" "No space left" -- "$GPK" sort rec_big.bin --record-size 12 --key-type u32 -o full -q
    [ -c full ] && pass || fail "records -o full: the device node was removed"
fi
run 1 "records from /dev/zero" "more than 1000000 bytes" -- \
    sh -c "$LIM"' GPK_MAX_INPUT=1000000 exec "$0" sort /dev/zero --record-size 8 --key-type u64' "$GPK"
run 1 "records from an endless pipe" "more than 1000000 bytes" -- \
    sh -c "$LIM"' yes | GPK_MAX_INPUT=1000000 "$0" sort - --record-size 4 --key-type u32 --key-offset 0' "$GPK"
run 0 "records from a pipe" "" -- sh -c 'cat rec_big.bin | "$0" sort - --record-size 12 --key-type u32 -o rp.bin -q' "$GPK"
"$GPK" sort rec_big.bin --record-size 12 --key-type u32 -o rf.bin -q
cmp -s rp.bin rf.bin && pass || fail "records from a pipe: not the records sorted from the file"
no_temps "records"

echo "cli_reliability_test: $TESTS passed, $FAILS failed"
if [ "$FAILS" -ne 0 ]; then
    echo "work directory kept: $WORK" >&2
    exit 1
fi
cd / && rm -rf "$WORK"
