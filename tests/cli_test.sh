#!/bin/sh
# End-to-end tests of the gpk CLI and the pic example.
#   usage: cli_test.sh PATH/TO/gpk PATH/TO/pic
# Runs every check on the CPU backend, and again on OpenCL when
# `gpk info --backend opencl` finds a device (PoCL in CI). Needs coreutils
# (od -w, head -c), awk and cmp. Exits non-zero on any failure and keeps its
# work directory then, so the failing files can be inspected.
set -u

GPK=${1:?usage: cli_test.sh PATH/TO/gpk PATH/TO/pic}
PIC=${2:?usage: cli_test.sh PATH/TO/gpk PATH/TO/pic}
case $GPK in /*) ;; *) GPK=$(pwd)/$GPK ;; esac
case $PIC in /*) ;; *) PIC=$(pwd)/$PIC ;; esac

# The figure script of gpk bench quicksort, next to this file's directory.
PLOT=$(cd "$(dirname "$0")/.." && pwd)/bench/plot_quicksort.py
OPLOT=$(cd "$(dirname "$0")/.." && pwd)/bench/plot_octree.py
# The benchmark instances (QAPLIB, TSPLIB) next to the repository; the
# checks that need them are skipped where they are absent.
DATA=$(cd "$(dirname "$0")/.." && pwd)/../shared/data

. "$(dirname "$0")/cli_lib.sh"
cli_workdir gpk_cli_test

# expect RC DESCRIPTION -- command...: the command must exit with RC.
expect() {
    want=$1
    what=$2
    shift 3
    "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, expected $want: $*"
        sed 's/^/    stderr: /' err.txt >&2
    else
        pass
    fi
}

# expect_err RC DESCRIPTION PATTERN -- command...: exit RC and PATTERN on stderr.
expect_err() {
    want=$1
    what=$2
    pattern=$3
    shift 4
    "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, expected $want: $*"
        sed 's/^/    stderr: /' err.txt >&2
    elif ! grep -q -- "$pattern" err.txt; then
        fail "$what: stderr lacks '$pattern':"
        sed 's/^/    stderr: /' err.txt >&2
    else
        pass
    fi
}

size_of() { wc -c <"$1" | tr -d ' '; }

# One element per line as fixed-width hex of the given byte width (od -v:
# no '*' for repeated lines). Fixed-width hex compares like unsigned numbers.
hexdump_w() { od -An -v -tx"$2" -w"$2" "$1" | tr -d ' '; }

# u32 sigma as decimal, one per line.
u32s() { od -An -v -tu4 -w4 "$1" | tr -d ' '; }

# check_perm IN OUT SIGMA WIDTH: OUT[j] == IN[SIGMA[j]] for all j, and
# SIGMA is a permutation of 0..n-1.
check_perm() {
    hexdump_w "$1" "$4" >in.hex
    hexdump_w "$2" "$4" >out.hex
    u32s "$3" >sig.txt
    awk 'FILENAME == ARGV[1] { a[NR - 1] = $0; n = NR; next }
         FILENAME == ARGV[2] { b[FNR - 1] = $0; next }
         { s = $0 + 0; j = FNR - 1
           if (s < 0 || s >= n || seen[s]++) { print "sigma[" j "] = " s " repeats or is out of range"; bad = 1; exit }
           if ((b[j] "") != (a[s] "")) { print "out[" j "] != in[sigma[" j "]]"; bad = 1; exit }
           m++ }
         END { if (!bad && m != n) { print "sigma has " m " entries, expected " n; bad = 1 } exit bad }' \
        in.hex out.hex sig.txt
}

# check_sorted_unsigned FILE WIDTH: ascending as unsigned integers.
check_sorted_unsigned() {
    hexdump_w "$1" "$2" | awk 'NR > 1 && ($0 "") < prev { print "not sorted at " NR - 1; exit 1 } { prev = $0 "" }'
}

# Raw little-endian .npy writer for crafted headers: mknpy OUT DICT DATAFILE
mknpy() {
    dict=$2
    # total = 10 + len(dict) + 1 newline, padded to a multiple of 64 with spaces
    len=$(printf '%s' "$dict" | wc -c | tr -d ' ')
    pad=$(( (64 - (10 + len + 1) % 64) % 64 ))
    hlen=$((len + pad + 1))
    {
        printf '\223NUMPY\001\000'
        printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
        printf '%s' "$dict"
        printf "%${pad}s" ""
        printf '\n'
        cat "$3"
    } >"$1"
}

# ---- help, version, usage errors -------------------------------------------------
expect 0 "--help" -- "$GPK" --help
grep -q "usage: gpk" out.txt || fail "--help prints no usage"
expect 0 "--version" -- "$GPK" --version
grep -q "gpk [0-9]" out.txt || fail "--version prints no version"
grep -q "backends built: cpu" out.txt || fail "--version does not list the backends"
for c in sort bench pic info octree; do
    expect 0 "help $c" -- "$GPK" help "$c"
    grep -q "usage: gpk $c" out.txt || fail "gpk help $c prints no usage"
    expect 0 "$c --help" -- "$GPK" "$c" --help
done
expect 0 "bench sort --help" -- "$GPK" bench sort --help
expect 0 "bench octree --help" -- "$GPK" bench octree --help
expect 0 "bench search --help" -- "$GPK" bench search --help
grep -q "usage: gpk bench search" out.txt || fail "bench search --help prints no usage"
expect 0 "pic --help" -- "$PIC" --help
# bare `gpk bench` lists the benchmarks in a few lines, as a usage error
expect_err 2 "bare bench" "gpk bench BENCHMARK" -- "$GPK" bench
[ "$(wc -l <err.txt)" -le 15 ] || fail "bare gpk bench prints $(wc -l <err.txt) lines, expected a short list"
grep -q "quicksort" err.txt || fail "bare gpk bench does not list quicksort"
# gpk runs the benchmarks from gpk-bench beside it; a gpk without it (as
# installed by default) says so
cp "$GPK" ./gpk-alone
expect_err 1 "bench without gpk-bench" "gpk-bench" -- ./gpk-alone bench sort --n 1k
expect_err 1 "pic without gpk-bench" "not installed" -- ./gpk-alone pic --n 1k
rm -f ./gpk-alone
expect 2 "no arguments" -- "$GPK"
expect_err 2 "unknown command" "unknown command" -- "$GPK" frobnicate
expect_err 2 "unknown option" "unknown option" -- "$GPK" --frobnicate
expect_err 2 "unknown" "sort: unknown option" -- "$GPK" sort --frobnicate x.bin
expect_err 2 "no input" "no input" -- "$GPK" sort
expect_err 2 "bad size" "bad value" -- "$GPK" sort --gen uniform --n 12Q
expect_err 2 "bad type" "unknown type" -- "$GPK" sort --gen uniform --n 10 --type u16
expect_err 2 "radix bits" "radix-bits" -- "$GPK" sort --gen uniform --n 10 --radix-bits 17
expect_err 2 "key bits" "larger than the 32 bits" -- "$GPK" sort --gen uniform --n 10 --key-bits 33
expect_err 2 "missing value" "needs a value" -- "$GPK" sort --gen uniform --n
expect_err 2 "bench unknown option" "unknown option" -- "$GPK" bench sort --frobnicate
expect_err 2 "pic bad n" "bad --n" -- "$GPK" pic --n -5
expect_err 2 "pic standalone bad option" "unknown option" -- "$PIC" --frobnicate 1
expect 0 "info" -- "$GPK" info
grep -q "^cpu" out.txt || fail "gpk info does not show the CPU backend"
grep -Eq "^ +sort simd (avx512|avx2|portable)" out.txt || fail "gpk info does not show the CPU sort's SIMD level"
expect 0 "info --json" -- "$GPK" info --json
grep -Eq '"cpu_sort_simd": "(avx512|avx2|portable)' out.txt || fail "gpk info --json has no cpu_sort_simd"

# ---- bad input files (the CPU backend reads them) ----------------------------------------
head -c 4000 /dev/urandom >rnd.bin
expect_err 1 "missing file" "missing.bin" -- "$GPK" sort missing.bin --type u32
expect_err 2 "raw needs --type" "give its key type with --type" -- "$GPK" sort rnd.bin
expect_err 2 "raw values need --value-type" "give its type with --value-type" -- "$GPK" sort rnd.bin --type u32 --values rnd.bin
# --param: its range per distribution, and only where it means something
expect_err 2 "param few-bits range" "1..32 random bits" -- "$GPK" sort --gen few-bits --n 10 --param 33
expect_err 2 "param few-bits u64 range" "1..64 random bits" -- "$GPK" sort --gen few-bits --n 10 --type u64 --param 65
expect_err 2 "param staggered range" "an even 2..65536 blocks" -- "$GPK" sort --gen staggered --n 100 --param 3
expect_err 2 "param bucket range" "1..65536 buckets" -- "$GPK" sort --gen bucket --n 100 --param 0
expect_err 2 "param on uniform" "does not apply to uniform" -- "$GPK" sort --gen uniform --n 100 --param 3
expect 0 "param few-bits 64 on u64" -- "$GPK" sort --gen few-bits --n 100 --type u64 --param 64 --check
# options that do not apply to the chosen algorithm or backend are refused
expect_err 2 "quick with radix bits" "apply to the radix sort" -- "$GPK" sort --gen uniform --n 100 --algo quick --radix-bits 4
expect_err 2 "items on cpu" "not the cpu backend" -- "$GPK" sort --gen uniform --n 100 --backend cpu --items 64
expect_err 2 "device on cpu" "the cpu backend has none" -- "$GPK" sort --gen uniform --n 100 --backend cpu --device 0
expect_err 2 "octree victim on static" "only for --scheme steal" -- "$GPK" octree --n 1000 --scheme static --victim rr
expect_err 2 "octree capacity on morton" "morton has no pool" -- "$GPK" octree --n 1000 --scheme morton --capacity 100
expect_err 2 "octree on opencl" "no backend 'opencl' for the octree" -- "$GPK" octree --n 1000 --backend opencl
expect_err 2 "octree device on cpu" "the cpu backend has none" -- "$GPK" octree --n 1000 --backend cpu --device 0
expect_err 2 "pic device on cpu" "the cpu backend has none" -- "$GPK" pic --n 1000 --backend cpu --device 0
expect_err 2 "bench sort device on cpu" "--backends cpu has none" -- "$GPK" bench sort --backends cpu --n 1k --device 0
expect_err 2 "bench quicksort device on cpu" "--backends cpu has none" -- "$GPK" bench quicksort --backends cpu --n 1k --device 0
expect_err 2 "bench octree device on cpu" "the cpu backend has none" -- "$GPK" bench octree --backend cpu --n 1000 --device 0
# the CPU octree has no device time to print
expect 0 "octree cpu summary" -- "$GPK" octree --n 5000 --backend cpu
grep -q "on the device" err.txt && fail "octree on the cpu prints a device time"
grep -q "ms in the pool" err.txt || fail "octree steal on the cpu does not print the pool time"
# GPK_BACKEND names the backend that failed, not auto
if ! "$GPK" --version | grep -q "usable now:.*cuda"; then
    GPK_BACKEND=cuda "$GPK" sort --gen uniform --n 10 >out.txt 2>err.txt
    [ $? -eq 1 ] || fail "GPK_BACKEND=cuda without a device: exit $?, expected 1"
    grep -q "cannot use the cuda backend (GPK_BACKEND=cuda)" err.txt || fail "GPK_BACKEND=cuda failing does not name cuda: $(cat err.txt)"
    GPK_BACKEND=cuda "$GPK" pic --n 1k >out.txt 2>err.txt
    grep -q "cannot create a cuda context" err.txt || fail "GPK_BACKEND=cuda gpk pic does not name cuda: $(cat err.txt)"
fi
# progress: one line rewritten in place on a terminal (script gives a pty),
# nothing in a log
if command -v script >/dev/null 2>&1; then
    script -qec "$GPK sort --gen uniform --n 2^20 --check" /dev/null >tty.txt 2>&1
    grep -q "$(printf '\r')gpk sort: sorting" tty.txt || fail "no progress line on a terminal"
    grep -q "sorting.*check ok" tty.txt && ! grep -q "$(printf '\033')\[K" tty.txt && fail "progress line not cleared"
fi
"$GPK" sort --gen uniform --n 2^16 --check >out.txt 2>err.txt
[ "$(wc -l <err.txt)" -eq 1 ] || fail "sort to a log prints $(wc -l <err.txt) lines, expected only the summary"
head -c 4001 /dev/urandom >odd.bin
expect_err 1 "raw size not a multiple" "odd.bin" -- "$GPK" sort odd.bin --type u64
mknpy good.npy "{'descr': '<u4', 'fortran_order': False, 'shape': (1000,), }" rnd.bin
expect 0 "crafted .npy" -- "$GPK" sort good.npy -o good_out.npy --check
head -c 2000 good.npy >trunc.npy
expect_err 1 "truncated .npy" "trunc.npy: truncated" -- "$GPK" sort trunc.npy
head -c 40 good.npy >trunchdr.npy
expect_err 1 "truncated .npy header" "trunchdr.npy: truncated" -- "$GPK" sort trunchdr.npy
cat good.npy rnd.bin >long.npy
expect_err 1 "too long .npy" "long.npy: mismatched" -- "$GPK" sort long.npy
mknpy short.npy "{'descr': '<u4', 'fortran_order': False, 'shape': (1001,), }" rnd.bin
expect_err 1 "shape larger than data" "short.npy: truncated" -- "$GPK" sort short.npy
mknpy i2.npy "{'descr': '<i2', 'fortran_order': False, 'shape': (2000,), }" rnd.bin
expect_err 1 "wrong dtype" "i2.npy: dtype '<i2' is not supported" -- "$GPK" sort i2.npy
mknpy be.npy "{'descr': '>u4', 'fortran_order': False, 'shape': (1000,), }" rnd.bin
expect_err 1 "big-endian dtype" "be.npy: big-endian" -- "$GPK" sort be.npy
mknpy fo.npy "{'descr': '<u4', 'fortran_order': True, 'shape': (1000,), }" rnd.bin
expect_err 1 "Fortran order" "fo.npy: Fortran" -- "$GPK" sort fo.npy
mknpy twod.npy "{'descr': '<u4', 'fortran_order': False, 'shape': (10, 100), }" rnd.bin
expect_err 1 "2-D array" "twod.npy: the array has 2 dimensions" -- "$GPK" sort twod.npy
mknpy bad.npy "{'descr': '<u4', 'shape': (1000,), }" rnd.bin
expect_err 1 "malformed header" "bad.npy: malformed" -- "$GPK" sort bad.npy
cp rnd.bin fake.npy
expect_err 1 "not a .npy" "fake.npy: not a .npy" -- "$GPK" sort fake.npy
expect_err 1 "type mismatch" "holds u32 but --type f64" -- "$GPK" sort good.npy --type f64
# Checked before the sort: a usage error (issue 19).
expect_err 2 "unwritable output" "does not exist" -- "$GPK" sort good.npy -o "$WORK/no/such/dir/x.npy"
head -c 400 /dev/urandom >v100.bin
expect_err 1 "values count mismatch" "v100.bin holds 100 values" -- "$GPK" sort rnd.bin --type u32 --values v100.bin --value-type u32
expect_err 2 "perm with values" "cannot be combined" -- "$GPK" sort rnd.bin --type u32 --values rnd.bin --value-type u32 --perm p.bin

# ---- sorting on each backend ----------------------------------------------------------------
BACKENDS=cpu
if "$GPK" info --backend opencl >/dev/null 2>&1; then
    BACKENDS="cpu opencl"
    # The bench calls the OpenCL hook only when the CLI itself is compiled
    # with GPK_HAVE_OPENCL; a usable OpenCL without it is a build bug.
    "$GPK" --version | grep -q "backends built:.*opencl" ||
        fail "OpenCL is usable but the CLI was compiled without GPK_HAVE_OPENCL (gpk --version)"
else
    echo "cli_test: OpenCL backend not usable here: OpenCL checks skipped" >&2
fi

N=4099 # not a power of two: partial tiles and groups
for B in $BACKENDS; do
    for T in u32 i32 f32 u64 i64 f64; do
        case $T in *32) W=4 ;; *) W=8 ;; esac
        # Random bytes: every bit pattern, NaNs, infinities and denormals included.
        head -c $((N * W)) /dev/urandom >in_$T.bin
        tag="$B $T"

        expect 0 "$tag raw sort" -- "$GPK" sort in_$T.bin --type $T --backend $B -o out_$T.bin --perm sig_$T.bin --check
        [ "$(size_of out_$T.bin)" -eq $((N * W)) ] || fail "$tag: output size"
        [ "$(size_of sig_$T.bin)" -eq $((N * 4)) ] || fail "$tag: sigma size"
        check_perm in_$T.bin out_$T.bin sig_$T.bin $W >perm.txt || fail "$tag: $(cat perm.txt)"
        pass
        case $T in u*) check_sorted_unsigned out_$T.bin $W >s.txt || fail "$tag: $(cat s.txt)" ;; esac

        # .npy output, then .npy input: sorting sorted data changes nothing.
        expect 0 "$tag to .npy" -- "$GPK" sort in_$T.bin --type $T --backend $B -o out_$T.npy -q
        tail -c $((N * W)) out_$T.npy | cmp -s - out_$T.bin || fail "$tag: .npy data differs from raw"
        expect 0 "$tag .npy round trip" -- "$GPK" sort out_$T.npy --backend $B -o again_$T.npy --perm again_sig.npy --check
        cmp -s out_$T.npy again_$T.npy || fail "$tag: .npy -> .npy changed the file"
        expect 0 "$tag .npy to raw" -- "$GPK" sort out_$T.npy --backend $B -o again_$T.bin --format raw -q
        cmp -s out_$T.bin again_$T.bin || fail "$tag: .npy -> raw changed the data"

        # stdin to stdout.
        "$GPK" sort - --type $T --backend $B -o - -q <in_$T.bin >pipe_$T.bin 2>err.txt || fail "$tag: pipe: $(cat err.txt)"
        cmp -s pipe_$T.bin out_$T.bin || fail "$tag: stdin/stdout result differs"
        pass

        # Pairs: values follow the stable order, i.e. sigma.
        case $T in *32) VT=u64; VW=8 ;; *) VT=u32; VW=4 ;; esac
        head -c $((N * VW)) /dev/urandom >val_$T.bin
        expect 0 "$tag pairs" -- "$GPK" sort in_$T.bin --type $T --backend $B --values val_$T.bin --value-type $VT --values-out valout_$T.bin -o pk_$T.bin --check
        cmp -s pk_$T.bin out_$T.bin || fail "$tag: pair keys differ from the keys-only sort"
        check_perm val_$T.bin valout_$T.bin sig_$T.bin $VW >perm.txt || fail "$tag pairs: $(cat perm.txt)"
        pass

        # Generated data, several distributions, (b, r) with r not dividing b.
        for D in uniform few-bits equal sorted reverse float-specials; do
            expect 0 "$tag gen $D" -- "$GPK" sort --gen $D --n 3000 --type $T --backend $B --perm g.bin --check -q
        done
        expect 0 "$tag radix bits 3" -- "$GPK" sort in_$T.bin --type $T --backend $B --radix-bits 3 --check -q
        expect 0 "$tag key bits 12 radix 5" -- "$GPK" sort in_$T.bin --type $T --backend $B --key-bits 12 --radix-bits 5 --perm kb.bin --check -q
    done

    # n = 0 and n = 1, raw and .npy.
    : >empty.bin
    expect 0 "$B n=0" -- "$GPK" sort empty.bin --type u32 --backend $B -o e.npy --perm ep.bin --check
    [ "$(size_of ep.bin)" -eq 0 ] || fail "$B n=0: sigma not empty"
    expect 0 "$B n=0 .npy" -- "$GPK" sort e.npy --backend $B -o e2.bin --check
    head -c 8 /dev/urandom >one.bin
    expect 0 "$B n=1" -- "$GPK" sort one.bin --type f64 --backend $B -o one_out.bin --perm one_sig.bin --check
    cmp -s one.bin one_out.bin || fail "$B n=1 changed the key"
    [ "$(u32s one_sig.bin)" = 0 ] || fail "$B n=1: sigma is not [0]"

    # JSON result.
    expect 0 "$B json" -- "$GPK" sort --gen uniform --n 1k --backend $B --json --check
    grep -q '"check": "ok"' out.txt || fail "$B: --json lacks the check result"
    grep -q "\"backend\": \"$B\"" out.txt || fail "$B: --json lacks the backend"

    # pic through the CLI.
    expect 0 "$B gpk pic" -- "$GPK" pic --n 256k --backend $B --reps 2 --json
    grep -q '"check": "ok"' out.txt || fail "$B: gpk pic --json lacks check ok"
done

# ---- bench ---------------------------------------------------------------------------------
# ---- records: raw with --record-size/--key-offset/--key-type, structured .npy by --key ----
# An independent reference in perl: a stable sort of the records by the key
# (unpacked at its offset), byte for byte what the radix sort must give.
RSEED=${GPK_TEST_SEED:-$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')}
echo "cli_test: records seed $RSEED (GPK_TEST_SEED=$RSEED repeats it)"
# mkrecs OUT N SIZE SEED: N records of SIZE random bytes, but 3 bits of
# entropy in the byte at 5, so that many keys are equal
mkrecs() { perl -e 'my ($n, $s, $seed) = @ARGV; srand($seed);
    for (1..$n) { my @b = map { int(rand(256)) } 1..$s; $b[5] = int(rand(8)) if $s > 5;
      $b[$_] = 0 for (6..8); print pack("C*", @b) }' "$2" "$3" "$4" >"$1"; }
# refsort IN OUT SIZE OFFSET PACK SKIP: stable sort by unpack(PACK) at OFFSET after SKIP header bytes
refsort() { perl -e 'use sort "stable"; my ($in, $out, $s, $o, $p, $skip) = @ARGV;
    open(my $f, "<:raw", $in) or die; local $/; my $d = <$f>; my $h = substr($d, 0, $skip, "");
    my @r = map { substr($d, $_ * $s, $s) } 0 .. length($d) / $s - 1;
    my @k = map { unpack($p, substr($_, $o)) } @r;
    my @i = sort { $k[$a] <=> $k[$b] } 0 .. $#r;
    open(my $g, ">:raw", $out) or die; print $g $h, map { $r[$_] } @i' "$@"; }
for B in $BACKENDS; do
    for n in 0 1 2 31 1024 1025 65537; do
        mkrecs rec.bin $n 12 $((RSEED + n))
        expect 0 "$B records n=$n radix" -- "$GPK" sort rec.bin --record-size 12 --key-offset 5 --key-type u32 \
            --algo radix --backend $B --check -o rec_out.bin
        refsort rec.bin rec_ref.bin 12 5 V 0
        cmp -s rec_out.bin rec_ref.bin || fail "$B records n=$n: not the stable order of the reference"
    done
    # a record of 1..256 bytes whose key ends the record, signed
    mkrecs rec.bin 3001 23 $RSEED
    expect 0 "$B records i64 at 15 of 23" -- "$GPK" sort rec.bin --record-size 23 --key-offset 15 --key-type i64 \
        --algo radix --backend $B --check -o rec_out.bin
    refsort rec.bin rec_ref.bin 23 15 q 0
    cmp -s rec_out.bin rec_ref.bin || fail "$B records i64: not the stable order of the reference"
done
# quicksort: not stable, so the same records with the same keys in order
mkrecs rec.bin 5000 12 $RSEED
expect 0 "records quick" -- "$GPK" sort rec.bin --record-size 12 --key-offset 5 --key-type u32 --algo quick --check -o rec_q.bin --json
grep -q '"algorithm": "quick"' out.txt || fail "records --algo quick did not run quicksort"
refsort rec.bin rec_ref.bin 12 5 V 0
od -An -v -tx1 -w12 rec_q.bin | sort >q.txt
od -An -v -tx1 -w12 rec_ref.bin | sort >r.txt
cmp -s q.txt r.txt || fail "records quick: not the input's records"
refsort rec_q.bin rec_q2.bin 12 5 V 0
cmp -s rec_q.bin rec_q2.bin || fail "records quick: keys not in order"
# structured .npy: fields id <u4, x <f8, tag S3 (15 bytes), sorted by x
perl -e 'srand($ARGV[0]); for (1..777) { print pack("V", $_), pack("d<", int(rand(50)) - 25), "abc" }' $RSEED >recs.raw
mknpy recs.npy "{'descr': [('id', '<u4'), ('x', '<f8'), ('tag', 'S3')], 'fortran_order': False, 'shape': (777,), }" recs.raw
HL=$(( $(size_of recs.npy) - 777 * 15 ))
expect 0 "structured .npy --key x" -- "$GPK" sort recs.npy --key x --algo radix --check -o recs_out.npy
refsort recs.npy recs_ref.npy 15 4 'd<' $HL
cmp -s recs_out.npy recs_ref.npy || fail "structured .npy: not the stable order by x, or the header changed"
expect 0 "structured .npy --key id" -- "$GPK" sort recs_out.npy --key id --check -o recs_back.npy
cmp -s recs_back.npy recs.npy || fail "structured .npy: sorting back by id does not give the input"
# every truncation of the file through its header and first records fails
# cleanly (exit 1, a message), never crashes or sorts
k=0
while [ $k -lt $((HL + 31)) ]; do
    head -c $k recs.npy >cut.npy
    "$GPK" sort cut.npy --key x -o cut_out.npy >out.txt 2>err.txt
    rc=$?
    { [ $rc -eq 1 ] || [ $rc -eq 2 ]; } && [ -s err.txt ] || { fail "structured .npy cut at $k bytes: exit $rc"; break; }
    k=$((k + 1))
done
[ -e cut_out.npy ] && fail "a truncated structured .npy was written out"
expect_err 1 "structured .npy unknown field" "no field 'y' (fields: id, x, tag)" -- "$GPK" sort recs.npy --key y
expect_err 1 "structured .npy bytes field" "has dtype 'S3'" -- "$GPK" sort recs.npy --key tag
expect_err 2 "records without --key-type" "need --key-type" -- "$GPK" sort rec.bin --record-size 12
expect_err 2 "records: key beyond the record" "does not fit" -- "$GPK" sort rec.bin --record-size 12 --key-offset 9 --key-type u32
expect_err 2 "records: option that does not apply" "does not apply to records" -- "$GPK" sort rec.bin --record-size 12 --key-type u32 --perm p.bin
expect_err 2 "records: --key and --record-size" "one or the other" -- "$GPK" sort recs.npy --key x --record-size 15
expect_err 2 "records: raw options on a .npy" "with --key NAME" -- "$GPK" sort recs.npy --record-size 15 --key-type u32
expect_err 1 "records: size not a multiple" "whole number of 7-byte records" -- "$GPK" sort rec.bin --record-size 7 --key-type u32
expect_err 1 "keys: a structured .npy names --key" "--key" -- "$GPK" sort recs.npy

BL=$(echo $BACKENDS | tr ' ' ',')
expect 0 "bench sort" -- "$GPK" bench sort --backends "$BL" --types u32,i64,f32 --n 1000,2^12 --pairs --perm --reps 2 --json bench.json -q
grep -q "FAIL\|ERROR" out.txt && fail "bench printed a FAIL row"
grep -q "qsort" out.txt || fail "bench lacks the qsort peer"
grep -q "std::sort" out.txt || fail "bench lacks the std::sort peer"
grep -q "__gnu_parallel::sort" out.txt || fail "bench lacks the __gnu_parallel::sort peer"
for key in '"hostname"' '"cpu_model"' '"logical_cores"' '"command"' '"date"' '"rows"' '"devices"'; do
    grep -q "$key" bench.json || fail "bench JSON lacks $key"
done
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rows"] and d["failures"] == 0' bench.json ||
        fail "bench JSON does not parse or records failures"
fi
# From 2^22 keys on, the expected order comes from the CPU backend proven in O(n).
expect 0 "bench large n (O(n) order proof)" -- "$GPK" bench sort --backends cpu --types f64 --dist float-specials --n 2^22 --perm --pairs --reps 1 -q
grep -q "FAIL\|ERROR" out.txt && fail "bench at 2^22 printed a FAIL row"
expect 0 "bench key bits" -- "$GPK" bench sort --backends "$BL" --types u32,u64 --n 5000 --key-bits 10 --perm --reps 1 -q
expect_err 2 "bench key bits above data" "differs above bit 10" -- "$GPK" bench sort --backends cpu --n 5000 --key-bits 10 --dist uniform -q

# ---- quicksort: --algo, the paper's distributions, gpk bench quicksort -----------------------
# in_T.bin (random bits: NaNs, infinities, denormals) and out_T.bin (its
# radix-sorted keys) are left by the backend loop above. Quicksort is not
# stable, so only the keys must match the radix sort; sigma must be a
# permutation naming each output key (check_perm), and --check knows that.
for A in quick quick-recursive radix auto; do
    for T in u32 i32 f32 u64 i64 f64; do
        case $T in *32) W=4 ;; *) W=8 ;; esac
        expect 0 "sort --algo $A $T" -- "$GPK" sort in_$T.bin --type $T --backend cpu --algo $A -o qa_$T.bin --perm qs_$T.bin --check
        cmp -s qa_$T.bin out_$T.bin || fail "--algo $A $T: keys differ from the radix sort's"
        check_perm in_$T.bin qa_$T.bin qs_$T.bin $W >perm.txt || fail "--algo $A $T: $(cat perm.txt)"
        pass
    done
done
expect 0 "sort --algo quick reports it" -- "$GPK" sort --gen uniform --n 5000 --backend cpu --algo quick --json --check
grep -q '"algorithm": "quick"' out.txt || fail "sort --algo quick: the JSON does not say quick ran"
grep -q '"check": "ok"' out.txt || fail "sort --algo quick: the JSON lacks check ok"
grep -q ", quick:" err.txt || fail "sort --algo quick: the summary line does not name the algorithm"
expect 0 "sort --algo radix reports it" -- "$GPK" sort --gen uniform --n 5000 --backend cpu --algo radix --json
grep -q '"algorithm": "radix"' out.txt || fail "sort --algo radix: the JSON does not say radix ran"
expect 0 "sort --algo auto names its pick" -- "$GPK" sort --gen uniform --n 5000 --backend cpu --json
grep -q '"algorithm": "\(radix\|quick\)"' out.txt || fail "sort --algo auto: the JSON does not name the algorithm that ran"
# Pairs after quicksort: the values of equal keys may come in any order.
head -c $((3000 * 4)) /dev/urandom >qv.bin
"$GPK" sort --gen few-bits --param 4 --n 3000 -o qk.bin -q 2>err.txt || fail "few-bits keys: $(cat err.txt)"
expect 0 "sort --algo quick pairs" -- "$GPK" sort qk.bin --type u32 --backend cpu --algo quick --values qv.bin --value-type u32 --values-out qvo.bin --check
expect_err 2 "bad --algo" "unknown algorithm 'bogosort'" -- "$GPK" sort --gen uniform --n 10 --algo bogosort
expect_err 2 "--algo without value" "needs a value" -- "$GPK" sort --gen uniform --n 10 --algo

# The paper's distributions (Figure 8) and the adversarial ones, every type,
# both algorithms; n not a multiple of 4 or of p^2.
for D in gaussian bucket staggered zero-entropy organ-pipe mo3-killer; do
    for T in u32 i32 f32 u64 i64 f64; do
        for A in quick radix; do
            expect 0 "gen $D $T $A" -- "$GPK" sort --gen $D --n 3001 --type $T --backend cpu --algo $A --perm g.bin --check -q
        done
    done
done
# Seeded: the same seed gives the same data, another seed other data.
"$GPK" sort --gen gaussian --n 1000 --seed 7 --format raw --algo radix -o - -q >g1.bin 2>/dev/null
"$GPK" sort --gen gaussian --n 1000 --seed 7 --format raw --algo radix -o - -q >g2.bin 2>/dev/null
"$GPK" sort --gen gaussian --n 1000 --seed 8 --format raw --algo radix -o - -q >g3.bin 2>/dev/null
cmp -s g1.bin g2.bin || fail "gen gaussian: the same seed gave different data"
cmp -s g1.bin g3.bin && fail "gen gaussian: seeds 7 and 8 gave the same data"
pass
# zero-entropy is one value; the killer is a permutation of 0..n-1 (n = 4000).
"$GPK" sort --gen zero-entropy --n 1000 -o ze.bin -q 2>/dev/null || fail "gen zero-entropy failed"
[ "$(u32s ze.bin | sort -u | wc -l | tr -d ' ')" = 1 ] || fail "gen zero-entropy holds more than one value"
"$GPK" sort --gen mo3-killer --n 4000 -o mk.bin -q 2>/dev/null || fail "gen mo3-killer failed"
u32s mk.bin >mk.txt
seq 0 3999 | cmp -s - mk.txt || fail "gen mo3-killer is not a permutation of 0..3999"
pass
# u32 values of the paper's distributions stay below 2^31, as in the paper.
"$GPK" sort --gen staggered --n 5000 -o st.bin -q 2>/dev/null || fail "gen staggered failed"
[ "$(hexdump_w st.bin 4 | tail -n 1 | cut -c1)" \< 8 ] || fail "gen staggered: u32 values reach 2^31"
pass
expect 0 "gen bucket p=1000" -- "$GPK" sort --gen bucket --param 1000 --n 3000 --check -q
expect_err 2 "gen staggered odd p" "an even 2..65536 blocks" -- "$GPK" sort --gen staggered --param 5 --n 100
expect_err 2 "gen unknown dist" "unknown distribution" -- "$GPK" sort --gen gauss --n 100

# gpk bench quicksort on the CPU: every row checked, JSON, figures.
expect 0 "bench quicksort --help" -- "$GPK" bench quicksort --help
grep -q "usage: gpk bench quicksort" out.txt || fail "bench quicksort --help prints no usage"
expect 0 "bench quicksort cpu" -- "$GPK" bench quicksort --backends cpu --n 2^12 --types u32,f64 --reps 1 --records --json bq.json -q
grep -q "FAIL\|ERROR" out.txt && fail "bench quicksort printed a FAIL row"
for impl in "gpk quick" "gpk radix" "qsort" "std::sort" "__gnu_parallel::sort" "qsort (records)"; do
    grep -q "$impl" out.txt || fail "bench quicksort lacks $impl"
done
for D in uniform gaussian sorted zero-entropy bucket staggered; do
    grep -q " $D " out.txt || fail "bench quicksort lacks the $D distribution"
done
for key in '"hostname"' '"cpu_model"' '"logical_cores"' '"command"' '"date"' '"rows"' '"devices"'; do
    grep -q "$key" bq.json || fail "bench quicksort JSON lacks $key"
done
if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert d["tool"] == "gpk bench quicksort" and d["failures"] == 0
assert all(r["check"] == "ok" for r in rows)
assert {r["dist"] for r in rows} == {"uniform", "gaussian", "sorted", "zero-entropy", "bucket", "staggered"}
assert {r["record_size"] for r in rows if r["kind"] == "records"} == {24, 40, 72}
assert {r["type"] for r in rows if r["kind"] == "keys"} == {"u32", "f64"}
' bq.json || fail "bench quicksort JSON does not parse, records failures or lacks rows"
    mkdir -p figs
    python3 "$PLOT" bq.json figs >plot.txt 2>err.txt || fail "plot_quicksort.py: $(cat err.txt)"
    for f in cpu-u32-fig13 cpu-f64-fig14 cpu-records-u64-p32; do
        [ -s figs/quicksort-$f.svg ] || fail "plot_quicksort.py wrote no quicksort-$f.svg"
    done
    python3 -c 'import sys, xml.dom.minidom as m; [m.parse(f) for f in sys.argv[1:]]' figs/*.svg ||
        fail "plot_quicksort.py wrote malformed SVG"
    pass
fi
# From 2^22 keys on, the expected order is the CPU radix sort proven in O(n).
expect 0 "bench quicksort 2^22" -- "$GPK" bench quicksort --backends cpu --types u32 --dists staggered,mo3-killer --n 2^22 --reps 1 --impls quick,radix -q
grep -q "FAIL\|ERROR" out.txt && fail "bench quicksort at 2^22 printed a FAIL row"
expect_err 2 "bench quicksort opencl" "cuda or cpu" -- "$GPK" bench quicksort --backends opencl
expect_err 2 "bench quicksort bad payload" "bad --payloads" -- "$GPK" bench quicksort --backends cpu --payloads 4
expect_err 2 "bench quicksort bad dist" "bad --dists" -- "$GPK" bench quicksort --backends cpu --dists gauss
expect_err 2 "bench quicksort bad impl" "bad --impls" -- "$GPK" bench quicksort --backends cpu --impls bogus
expect_err 2 "bench quicksort unknown option" "unknown option" -- "$GPK" bench quicksort --frobnicate
expect_err 2 "unknown benchmark" "unknown benchmark" -- "$GPK" bench frobnicate

# ---- octrees and task pools -----------------------------------------------------------------------
for S in static queue lockfree steal morton; do
    expect 0 "octree $S" -- "$GPK" octree --dist tube --n 30000 --threshold 20 --scheme $S --backend cpu --threads 3
    grep -q "check ok" err.txt || fail "octree $S does not report check ok"
done
expect 0 "octree steal random victims, plummer, json" -- "$GPK" octree --dist plummer --n 20000 --scheme steal --victim random --backend cpu --json
grep -q '"check": "ok"' out.txt || fail "octree --json does not say check ok"
expect 0 "octree svg" -- "$GPK" octree --n 5000 --backend cpu --svg tree.svg
grep -q "<svg" tree.svg && grep -q "<rect" tree.svg || fail "octree --svg wrote no drawing"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' tree.svg || fail "octree --svg is malformed"
fi
expect 0 "octree n=0" -- "$GPK" octree --n 0 --backend cpu
expect_err 2 "octree threshold 0" "bad --threshold" -- "$GPK" octree --threshold 0
expect_err 2 "octree bad scheme" "unknown --scheme" -- "$GPK" octree --scheme roundrobin
expect_err 2 "octree bad victim" "unknown --victim 'lifo' (rr, random)" -- "$GPK" octree --victim lifo
expect_err 2 "octree dist without a value" "--dist needs a value" -- "$GPK" octree --dist
expect_err 2 "octree --blocks on host pools" "--blocks, --block-threads, --grid-split:" -- "$GPK" octree --blocks 8 --backend cpu
expect_err 2 "octree --grid-split on morton" "--blocks, --block-threads, --grid-split:" -- "$GPK" octree --grid-split pool --scheme morton --backend cpu
expect_err 1 "octree tiny capacity" "full" -- "$GPK" octree --n 20000 --scheme lockfree --capacity 2 --backend cpu
expect 0 "bench octree" -- "$GPK" bench octree --n 10000,30000 --dists uniform,tube --threads 1,2 --reps 1 --pools --json octree.json
grep -q "FAIL\|ERROR" out.txt && fail "bench octree printed a FAIL row"
grep -q '"pools"' octree.json || fail "bench octree JSON has no pools"
if command -v python3 >/dev/null 2>&1; then
    python3 "$OPLOT" octree.json --out ofigs --prefix t >/dev/null || fail "plot_octree.py failed"
    python3 -c 'import sys, xml.dom.minidom as m; [m.parse(f) for f in sys.argv[1:]]' ofigs/t-fig4.svg ofigs/t-fig5.svg ||
        fail "plot_octree.py wrote malformed SVG"
    pass
fi

# ---- local search: gpk qap, gpk tsp, gpk ppp ------------------------------------------------
for c in qap tsp ppp; do
    expect 0 "help $c" -- "$GPK" help "$c"
    grep -q "usage: gpk $c" out.txt || fail "gpk help $c prints no usage"
done
# json_int KEY: the integer value of "KEY" in out.txt (one JSON line).
json_int() { sed -n "s/.*\"$1\": \(-\{0,1\}[0-9][0-9]*\).*/\1/p" out.txt; }
# check_perm_lines FILE N: FILE holds each of 1..N exactly once.
check_perm_lines() {
    awk -v n="$2" '{ for (k = 1; k <= NF; k++) { v = $k + 0; if (v < 1 || v > n || seen[v]++) bad = 1; c++ } }
                   END { exit bad || c != n }' "$1"
}
# check_sln FILE COST N: QAPLIB .sln, "n cost" then a permutation of 1..n.
check_sln() {
    [ "$(head -n 1 "$1" | awk '{ print $1, $2 }')" = "$3 $2" ] || return 1
    tail -n +2 "$1" >sln_perm.txt && check_perm_lines sln_perm.txt "$3"
}
# check_tour FILE N: TSPLIB .tour, DIMENSION N, a permutation of 1..N, -1, EOF.
check_tour() {
    grep -q "^TYPE : TOUR" "$1" && grep -q "^DIMENSION : $2\$" "$1" && [ "$(tail -n 1 "$1")" = EOF ] &&
        sed -n '/^TOUR_SECTION/,/^-1/p' "$1" | sed '1d;$d' >tour_perm.txt && check_perm_lines tour_perm.txt "$2"
}
check_svg() {
    grep -q "<polygon" "$1" || return 1
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$1" || return 1
    fi
}

# Small instances written here, so that these checks run without the data.
cat >mini.dat <<'EOF'
5
0 5 2 4 1
5 0 3 0 2
2 3 0 0 0
4 0 0 0 5
1 2 0 5 0

0 1 1 2 3
1 0 2 1 2
1 2 0 1 2
2 1 1 0 1
3 2 2 1 0
EOF
expect 0 "qap hc --out" -- "$GPK" qap mini.dat --algo hc --seed 3 --out mini-hc.sln --json
grep -q '"check": "ok"' out.txt || fail "qap hc: the JSON lacks check ok"
grep -q '"local_optimum": true' out.txt || fail "qap hc: no local optimum reported"
check_sln mini-hc.sln "$(json_int best)" 5 || fail "qap --out: mini-hc.sln is not a .sln of the reported cost"
expect 0 "qap multistart" -- "$GPK" qap mini.dat --algo multistart --starts 2 --global 2 --iters 50 -q --json
grep -q '"gap_percent": null' out.txt || fail "qap: a gap without a best-known value"
cat >mini.tsp <<'EOF'
NAME: mini
TYPE: TSP
DIMENSION: 8
EDGE_WEIGHT_TYPE: EUC_2D
NODE_COORD_SECTION
1 0 0
2 10 0
3 20 5
4 20 15
5 10 20
6 0 20
7 -5 10
8 12 9
EOF
expect 0 "tsp swap tabu --out --svg" -- "$GPK" tsp mini.tsp --nb swap --algo tabu --iters 200 --out mini.tour --svg mini.svg
check_tour mini.tour 8 || fail "tsp --out: mini.tour is not a TSPLIB tour of 8 cities"
check_svg mini.svg || fail "tsp --svg: mini.svg is not a well-formed drawing"
expect 0 "ppp 21x21 solved" -- "$GPK" ppp --m 21 --n 21 --seed 1 --out ppp.bits --json
[ "$(json_int best)" = 0 ] || fail "ppp 21-21-1: fitness $(json_int best), expected 0"
grep -q "(solved)" err.txt || fail "ppp: the summary does not say solved"
[ "$(tr -d '01' <ppp.bits)" = "" ] && [ "$(awk '{ print length($0) }' ppp.bits)" = 21 ] ||
    fail "ppp --out: ppp.bits is not 21 bits"
expect 0 "ppp flip2 hc" -- "$GPK" ppp --m 15 --n 11 --nb flip2 --algo hc -q --json
grep -q '"check": "ok"' out.txt || fail "ppp flip2 hc: the JSON lacks check ok"

expect_err 2 "qap no file" "no instance file" -- "$GPK" qap --algo hc
expect_err 2 "tsp no file" "no instance file" -- "$GPK" tsp
expect_err 2 "search bad --algo" "unknown --algo 'annealing'" -- "$GPK" qap mini.dat --algo annealing
expect_err 2 "qap --nb 2opt" "not a neighbourhood of gpk qap" -- "$GPK" qap mini.dat --nb 2opt
expect_err 2 "tsp --nb flip1" "not a neighbourhood of gpk tsp" -- "$GPK" tsp mini.tsp --nb flip1
expect_err 2 "tsp bad --time-limit" "bad --time-limit" -- "$GPK" tsp mini.tsp --time-limit 0
expect_err 2 "tsp or2opt --tenure" "no tabu list" -- "$GPK" tsp mini.tsp --nb or2opt --tenure 5
expect 0 "tsp or2opt multistart" -- "$GPK" tsp mini.tsp --nb or2opt --algo multistart --starts 3 --iters 20 -q --json
grep -q '"check": "ok"' out.txt || fail "tsp or2opt multistart: the JSON lacks check ok"
expect 0 "tsp --random" -- "$GPK" tsp --random 3000 --seed 7 --nb or2opt --algo hc --out r3000.tour -q --json
grep -q '"best_known_kind": "EST"' out.txt || fail "tsp --random: no EST reference"
grep -q '"local_optimum": true' out.txt || fail "tsp --random or2opt hc: no local optimum"
check_tour r3000.tour 3000 || fail "tsp --random --out: not a tour of 3000 cities"
expect_err 2 "tsp --random with a file" "no instance file" -- "$GPK" tsp mini.tsp --random 100
expect_err 2 "ppp --nb swap" "not a neighbourhood of gpk ppp" -- "$GPK" ppp --m 21 --n 21 --nb swap
expect_err 2 "ppp even n" "must be odd" -- "$GPK" ppp --m 21 --n 20
expect_err 2 "ppp without --m" "needs --m and --n" -- "$GPK" ppp --n 21
expect_err 2 "search --gpus with --backend cpu" "gpus is for the CUDA backend" -- "$GPK" qap mini.dat --backend cpu --gpus 2
expect_err 2 "search --eval with --backend cpu" "eval is for the CUDA backend" -- "$GPK" qap mini.dat --backend cpu --eval paper
expect_err 2 "search bad --eval" "unknown --eval 'fast'" -- "$GPK" qap mini.dat --eval fast
expect_err 2 "search --backend opencl" "no backend 'opencl'" -- "$GPK" qap mini.dat --backend opencl
expect_err 2 "search bad --qap-delta" "unknown --qap-delta" -- "$GPK" qap mini.dat --qap-delta fast
expect_err 2 "tsp --qap-delta" "unknown option" -- "$GPK" tsp mini.tsp --qap-delta formula
expect 0 "qap tabu --qap-delta table" -- "$GPK" qap mini.dat --backend cpu --algo tabu --iters 300 --seed 5 -q --json
QT=$(json_int best)
expect 0 "qap tabu --qap-delta formula" -- "$GPK" qap mini.dat --backend cpu --algo tabu --iters 300 --seed 5 --qap-delta formula -q --json
[ "$(json_int best)" = "$QT" ] || fail "qap --qap-delta formula found $(json_int best), the table $QT (the same deltas)"
grep -q '"qap_delta": "formula"' out.txt || fail "qap --qap-delta formula: not in the JSON"
if "$GPK" info 2>/dev/null | grep -q "^cuda  *[A-Z]"; then :; else
    # no GPU here: --backend cuda and --gpus fail with a clear message (exit 1), or exit 2 in a build without it
    "$GPK" qap mini.dat --backend cuda -q >out.txt 2>err.txt; rc=$?
    { [ $rc = 1 ] && grep -q "cannot use the cuda backend" err.txt; } ||
        { [ $rc = 2 ] && grep -q "not in this build" err.txt; } || fail "qap --backend cuda without a GPU: exit $rc, $(cat err.txt)"
fi
expect_err 2 "search --tenure with hc" "tenure is for" -- "$GPK" ppp --m 21 --n 21 --algo hc --tenure 5
expect_err 2 "search --starts without multistart" "starts is for" -- "$GPK" qap mini.dat --starts 4
expect_err 1 "qap missing file" "nosuch.dat: cannot open" -- "$GPK" qap nosuch.dat
# The defaults (what a user meets first): TSP multistart over or2opt for
# 10 s (stopped here by SIGINT after 1 s: the JSON still says what ran),
# --paper the paper's its / 2opt 10 x 1000, and a given --time-limit used
# to its end when no count is given (its 2opt on 8 cities took ms before).
"$GPK" tsp mini.tsp -q --json >out.txt 2>err.txt &
dpid=$!
sleep 1
kill -INT $dpid
wait $dpid
grep -q '"algo": "multistart", "nb": "or2opt"' out.txt && grep -q '"time_limit": 10,' out.txt ||
    fail "tsp default: not multistart/or2opt for 10 s: $(cat out.txt)"
expect 0 "tsp --paper" -- "$GPK" tsp mini.tsp --paper -q --json
grep -q '"algo": "its", "nb": "2opt", "seed": 1, "iters": 1000, "global": 10' out.txt ||
    fail "tsp --paper: not its/2opt 10 x 1000: $(cat out.txt)"
expect_err 2 "tsp --paper --nb" "drop --nb" -- "$GPK" tsp mini.tsp --paper --nb swap
expect 0 "qap default" -- "$GPK" qap mini.dat -q --json
grep -q '"algo": "its", "nb": "swap"' out.txt && grep -q '"time_limit": null' out.txt ||
    fail "qap default: not its/swap without a limit: $(cat out.txt)"
expect 0 "tsp its 2opt --time-limit is a budget" -- "$GPK" tsp mini.tsp --algo its --nb 2opt --time-limit 0.5 -q --json
grep -q '"stopped": "time-limit"' out.txt || fail "tsp its 2opt --time-limit 0.5: ended before the limit: $(cat out.txt)"
# Files beside the instance that the user never named: /dev/zero, a FIFO,
# a directory are passed over with a word (they hung or spun before); a
# value out of range, or one the result disproves, gives no gap.
mkdir -p beside
cp mini.tsp beside/
ln -sf /dev/zero beside/bestSolutions.txt
ln -sf /dev/zero beside/mini.opt.tour
expect_err 0 "tsp beside /dev/zero" "bestSolutions.txt: not a regular file: ignored" -- timeout 60 "$GPK" tsp beside/mini.tsp --algo hc
rm -f beside/bestSolutions.txt beside/mini.opt.tour
if mkfifo beside/bestSolutions.txt 2>/dev/null; then
    expect_err 0 "tsp beside a FIFO" "not a regular file: ignored" -- timeout 60 "$GPK" tsp beside/mini.tsp --algo hc
    rm -f beside/bestSolutions.txt
fi
mkdir -p beside/mini.opt.tour
expect_err 0 "tsp beside a directory" "mini.opt.tour: a directory: ignored" -- timeout 60 "$GPK" tsp beside/mini.tsp --algo hc
rmdir beside/mini.opt.tour
printf 'mini : 99999999999999999999\n' >beside/bestSolutions.txt
expect_err 0 "tsp best known out of range" "out of range: ignored" -- "$GPK" tsp beside/mini.tsp --algo hc --json
grep -q '"best_known": null' out.txt || fail "tsp best known out of range: used: $(cat out.txt)"
printf 'mini : 9000000000000\n' >beside/bestSolutions.txt
expect_err 0 "tsp best known disproved" "cannot be mini's optimum" -- "$GPK" tsp beside/mini.tsp --algo hc --json
grep -q '"gap_percent": null' out.txt || fail "tsp best known 9e12: a gap was given: $(cat out.txt)"
grep -q "gap -" err.txt && fail "tsp best known 9e12: a negative gap printed: $(cat err.txt)"
# The duration warning measures the kicks' pace, not the first descent's
# (which predicted 2069 s for this 0.8 s run).
expect 0 "tsp its or2opt duration estimate" -- "$GPK" tsp --random 50000 --nb or2opt --algo its --iters 3000 --global 1
grep -q "predicted" err.txt && fail "tsp its or2opt 3000 kicks: $(grep predicted err.txt)"
mkdir -p adir
expect_err 1 "tsp of a directory" "adir: read error: Is a directory" -- "$GPK" tsp adir
expect 0 "bench search file + ppp" -- "$GPK" bench search --instances mini.dat,mini.tsp:swap,21-21:flip2 --iters 10 --reps 1
grep -q "FAIL\|ERROR" out.txt && fail "bench search (files, ppp) printed a FAIL row"
expect_err 2 "bench search bad option" "unknown option" -- "$GPK" bench search --frobnicate
expect_err 2 "bench search --iters 0" "bad --iters" -- "$GPK" bench search --iters 0
expect_err 2 "bench search even PPP" "N odd" -- "$GPK" bench search --instances 21-20
expect_err 2 "bench search bad nb" "not a neighbourhood" -- "$GPK" bench search --instances mini.dat:2opt
expect_err 1 "bench search no instance" "no instance found" -- "$GPK" bench search --data nosuchdir --instances tai30a
head -n 4 mini.dat >trunc.dat
expect_err 1 "qap truncated .dat" "trunc.dat:[0-9]*: truncated" -- "$GPK" qap trunc.dat
sed 's/^3 20 5$/3 twenty 5/' mini.tsp >bad.tsp
expect_err 1 "tsp malformed .tsp" "bad.tsp:8:" -- "$GPK" tsp bad.tsp

# FIXED_EDGES_SECTION (TSPLIB's linhp318): every search's tour holds the
# fixed edge 1-4 (300 long, where the best tour, 800, has no use for it;
# the best with it is 1000: the path 700 and the edge), the
# length reported is the tour's, and the gap is that of the path without
# the fixed edge; a tour without it gets no gap.
printf 'NAME: fx\nTYPE: TSP\nDIMENSION: 8\nEDGE_WEIGHT_TYPE: EUC_2D\nFIXED_EDGES_SECTION\n1 4\n-1\nNODE_COORD_SECTION\n1 0 0\n2 100 0\n3 200 0\n4 300 0\n5 300 100\n6 200 100\n7 100 100\n8 0 100\nEOF\n' >fx.tsp
for how in "--algo its --nb 2opt --iters 50 --global 2" "--algo tabu --nb swap --iters 100" "--algo hc" \
    "--algo multistart --nb or2opt --iters 20 --global 2" "--algo its --nb or2opt --iters 50"; do
    # shellcheck disable=SC2086
    expect 0 "tsp fixed edge $how" -- "$GPK" tsp fx.tsp $how --seed 3 --out fx.tour -q --json
    [ "$(json_int fixed_edges_in_tour)" = 1 ] || fail "tsp fixed edge $how: $(cat out.txt)"
    check_tour fx.tour 8 || fail "tsp fixed edge $how: fx.tour is not a tour"
    awk 'NR == 1 { f = $1 } { if (p != "" && (p + $1 == 5) && (p == 1 || p == 4)) ok = 1; p = $1 }
         END { if ((p == 1 && f == 4) || (p == 4 && f == 1)) ok = 1; exit !ok }' tour_perm.txt ||
        fail "tsp fixed edge $how: 1 and 4 not adjacent in fx.tour"
    [ "$(json_int best)" -ge 1000 ] || fail "tsp fixed edge $how: length $(json_int best) below the best tour with 1-4"
done
expect 0 "tsp fixed edge: the gap of the path" -- "$GPK" tsp fx.tsp --algo its --iters 100 --best-known 700 -q --json
[ "$(json_int best)" = 1000 ] && grep -q '"gap_percent": 0.000000' out.txt || fail "tsp fixed edge: $(cat out.txt)"
grep -q '"fixed_edges": 1, "fixed_edges_in_tour": 1, "fixed_edges_length": 300' out.txt || fail "tsp fixed edge JSON: $(cat out.txt)"
printf 'TYPE : TOUR\nDIMENSION : 8\nTOUR_SECTION\n4\n1\n8\n7\n6\n5\n3\n2\n-1\nEOF\n' >fx1.tour
expect 0 "tsp --eval with the fixed edge" -- "$GPK" tsp fx.tsp --eval fx1.tour --best-known 841
grep -q "length 1141 (path without the 1 fixed edge 841: given 841, gap 0.000%)" out.txt || fail "tsp --eval fixed edge: $(cat out.txt)"
printf 'TYPE : TOUR\nDIMENSION : 8\nTOUR_SECTION\n1\n2\n3\n4\n5\n6\n7\n8\n-1\nEOF\n' >fx2.tour
expect 0 "tsp --eval without the fixed edge" -- "$GPK" tsp fx.tsp --eval fx2.tour --best-known 841 --json
grep -q '"gap_percent": null' out.txt || fail "tsp --eval without the fixed edge gave a gap: $(cat out.txt)"
expect 0 "tsp --eval without the fixed edge, text" -- "$GPK" tsp fx.tsp --eval fx2.tour --best-known 841
grep -q "length 800 (the tour lacks FIXED_EDGES_SECTION edges: no gap)" out.txt || fail "tsp --eval no fixed edge: $(cat out.txt)"

# On the benchmark instances, with the gap to the best-known values.
if [ -d "$DATA/qaplib" ] && [ -d "$DATA/tsplib" ]; then
    QI=$DATA/qaplib/nug12.dat
    [ -f "$QI" ] || QI=$DATA/qaplib/chr12a.dat
    expect 0 "qap nug12 hc --out" -- "$GPK" qap "$QI" --algo hc --out q12.sln --json
    check_sln q12.sln "$(json_int best)" 12 || fail "qap --out: q12.sln is not a .sln of the reported cost"
    grep -q '"best_known": [0-9]' out.txt || fail "qap: best-known.csv not found next to $QI"
    grep -q "gap [0-9.]*%" err.txt || fail "qap: the summary line gives no gap"
    expect 0 "tsp burma14 its 2opt --out --svg" -- "$GPK" tsp "$DATA/tsplib/burma14.tsp" --algo its --nb 2opt --out b14.tour --svg b14.svg --json
    check_tour b14.tour 14 || fail "tsp --out: b14.tour is not a TSPLIB tour of 14 cities"
    check_svg b14.svg || fail "tsp --svg: b14.svg is not a well-formed drawing"
    [ "$(json_int best_known)" = 3323 ] || fail "tsp: bestSolutions.txt not read (burma14 : 3323)"
    [ "$(json_int best)" -ge 3323 ] || fail "tsp burma14: length $(json_int best) below the optimum"
    expect_err 2 "tsp --svg of an EXPLICIT instance" "no coordinates" -- "$GPK" tsp "$DATA/tsplib/bays29.tsp" --svg x.svg
    # issue 18: or2opt under a time limit, --init, --eval, --best-known, the
    # .opt.tour beside the instance, and a search stopped by a signal
    # linhp318: TSPLIB's 41345 is the Hamiltonian path without the fixed
    # edge 1-214 (3869): every tour holds the edge, so it is 45214 or more
    if [ -f "$DATA/tsplib/linhp318.tsp" ]; then
        expect 0 "tsp linhp318 fixed edge" -- "$GPK" tsp "$DATA/tsplib/linhp318.tsp" --nb or2opt --algo multistart --threads 2 --time-limit 0.3 -q --json
        [ "$(json_int fixed_edges_in_tour)" = 1 ] && [ "$(json_int fixed_edges_length)" = 3869 ] &&
            [ "$(json_int best_known)" = 41345 ] && [ "$(json_int best)" -ge 45214 ] ||
            fail "tsp linhp318: $(cat out.txt)"
        grep -q '"gap_percent": [0-9]' out.txt || fail "tsp linhp318: no gap (or a negative one): $(cat out.txt)"
    fi
    T280=$DATA/tsplib/a280.tsp
    if [ -f "$T280" ] && [ -f "$DATA/tsplib/a280.opt.tour" ]; then
        expect 0 "tsp a280 or2opt --time-limit" -- "$GPK" tsp "$T280" --nb or2opt --time-limit 0.5 --out a280.tour --json
        grep -q '"stopped": "time-limit"' out.txt || fail "tsp --time-limit: the JSON does not say stopped"
        grep -q "stopped at the time limit" err.txt || fail "tsp --time-limit: the summary does not say stopped"
        check_tour a280.tour 280 || fail "tsp or2opt --out: a280.tour is not a tour of 280 cities"
        [ "$(json_int best)" -ge 2579 ] || fail "tsp a280: length $(json_int best) below the optimum"
        expect 0 "tsp --init optimal tour" -- "$GPK" tsp "$T280" --nb or2opt --algo its --iters 300 --global 1 --init "$DATA/tsplib/a280.opt.tour" -q --json
        [ "$(json_int best)" = 2579 ] || fail "tsp --init of the optimal tour: $(json_int best), not 2579"
        grep -q '"gap_percent": 0.000000' out.txt || fail "tsp --init of the optimal tour: gap not 0"
        expect 0 "tsp --eval" -- "$GPK" tsp "$T280" --eval "$DATA/tsplib/a280.opt.tour"
        grep -q "length 2579 (OPT 2579, gap 0.000%)" out.txt || fail "tsp --eval: $(cat out.txt)"
        expect 0 "tsp --eval of our tour" -- "$GPK" tsp "$T280" --eval a280.tour --json
        grep -q '"cost": [0-9]' out.txt || fail "tsp --eval --json: no cost"
        expect 0 "tsp --best-known" -- "$GPK" tsp "$T280" --nb or2opt --algo hc --best-known 2000 -q --json
        [ "$(json_int best_known)" = 2000 ] || fail "tsp --best-known 2000 not used"
        cp "$T280" "$DATA/tsplib/a280.opt.tour" .
        expect 0 "tsp reference from .opt.tour" -- "$GPK" tsp a280.tsp --nb or2opt --algo hc -q --json
        [ "$(json_int best_known)" = 2579 ] || fail "tsp: a280.opt.tour beside the instance not used as reference"
        expect_err 1 "tsp --init of another size" "280" -- "$GPK" tsp "$DATA/tsplib/burma14.tsp" --init a280.opt.tour
        for sig in INT TERM; do
            "$GPK" tsp "$T280" --nb or2opt --algo its --iters 1000000000 --out sig.tour >out.txt 2>err.txt &
            pid=$!
            sleep 1
            kill -$sig $pid
            wait $pid
            rc=$?
            want=130
            [ $sig = TERM ] && want=143
            [ $rc = $want ] || fail "tsp stopped by SIG$sig: exit $rc, expected $want"
            grep -q "stopped by SIG$sig" err.txt || fail "tsp SIG$sig: the summary does not say stopped"
            check_tour sig.tour 280 || fail "tsp SIG$sig: --out sig.tour is not a valid tour"
            rm -f sig.tour
        done
    fi
    if [ -f "$QI" ] && [ -f "${QI%.dat}.sln" ]; then
        expect 0 "qap --eval .sln" -- "$GPK" qap "$QI" --eval "${QI%.dat}.sln"
        grep -q "gap 0.000%" out.txt || fail "qap --eval of the best-known .sln: $(cat out.txt)"
        expect 0 "qap --init .sln" -- "$GPK" qap "$QI" --init "${QI%.dat}.sln" --algo hc -q --json
        grep -q '"gap_percent": 0.000000' out.txt || fail "qap --init of the best-known solution: gap not 0"
    fi
    # gpk bench search: the speed row and the ITS quality row of one small
    # instance (about a second), checked runs, a gap read from best-known.csv
    expect 0 "bench search nug12 --quality" -- "$GPK" bench search --data "$DATA" --instances nug12 --iters 20 --reps 1 --quality --seeds 2 --json bsearch.json
    grep -q "FAIL\|ERROR" out.txt && fail "bench search printed a FAIL row"
    grep -q "GPU-ours" out.txt || fail "bench search: no GPU column"
    grep -q '"quality": {' bsearch.json || fail "bench search JSON has no quality table"
    grep -q '"best_known": 578' bsearch.json || fail "bench search: best-known.csv not read (nug12 578)"
else
    echo "cli_test: $DATA not found: QAPLIB / TSPLIB checks skipped" >&2
fi

# ---- out of core (issue 16): a mapped output, the CPU fake of a device budget ---------------
# 80 MiB of keys (from 64 MiB the output is mapped and the keys read into it),
# a 16 MiB budget: runs and merge; the result equals the in-memory sort's.
expect 0 "ooc gen" -- "$GPK" sort --gen uniform --n 20M --type u32 --seed 5 -o ooc_in.npy -q --backend cpu
expect 0 "ooc in memory" -- "$GPK" sort ooc_in.npy -o ooc_ref.npy --perm ooc_rsig.bin -q --backend cpu
expect 0 "ooc mapped" -- env GPK_DEVICE_BUDGET=16M "$GPK" sort ooc_in.npy -o ooc_out.npy --perm ooc_sig.bin --backend cpu --json
grep -q '"algorithm": "radix"' out.txt || fail "ooc: not the radix sort"
cmp -s ooc_out.npy ooc_ref.npy || fail "ooc: keys differ from the in-memory sort"
cmp -s ooc_sig.bin ooc_rsig.bin || fail "ooc: sigma differs from the in-memory sort"
expect 0 "ooc raw out" -- env GPK_DEVICE_BUDGET=16M "$GPK" sort ooc_in.npy -o ooc_out.bin --format raw -q --backend cpu
tail -c 83886080 ooc_ref.npy | cmp -s - ooc_out.bin || fail "ooc: raw output differs"
# a failed sort (a budget too small, found after the output is set up; test_ooc
# injects failures midway): the named file stays as it was, no temporary file is left
echo keep >ooc_keep.bin
expect 1 "ooc failure" -- env GPK_DEVICE_BUDGET=1K "$GPK" sort ooc_in.npy -o ooc_keep.bin --backend cpu
grep -q "too small" err.txt || fail "ooc failure: no message"
[ "$(cat ooc_keep.bin)" = keep ] || fail "ooc failure: the output file changed"
ls -a | grep -q 'gpk-' && fail "ooc failure: a temporary file is left"
expect 1 "ooc bad budget" -- env GPK_DEVICE_BUDGET=12x "$GPK" sort ooc_in.npy -o ooc_x.npy --backend cpu
grep -q "GPK_DEVICE_BUDGET" err.txt || fail "ooc: GPK_DEVICE_BUDGET=12x not explained"
rm -f ooc_*

# ---- the standalone pic example ----------------------------------------------------------------
expect 0 "pic example 1M" -- "$PIC" --n 1M --backend cpu --reps 2
grep -q "check ok" out.txt || fail "pic does not report check ok"
grep -q "speedup" out.txt || fail "pic does not report the speedup"
case " $BACKENDS " in *" opencl "*)
    expect 0 "pic example opencl" -- "$PIC" --n 256k --backend opencl --reps 2 ;;
esac

if [ "$FAILS" -ne 0 ]; then
    echo "cli_test: $FAILS failure(s) of $((TESTS + FAILS)) checks; files kept in $WORK" >&2
    exit 1
fi
echo "cli_test: all $TESTS checks passed (backends: $BACKENDS)"
cd / && rm -rf "$WORK"
exit 0
