/* gpk sort: sort a key file (raw little-endian or .npy) or generated keys. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "gpk/gen.h"
#include "gpk/sort.h"
#include "io.h"
#include "sort_segments.h"

void cmd_sort_help(FILE *f)
{
    fprintf(f,
            "usage: gpk sort [IN] [-o OUT] [--type T] [--perm FILE] [options]\n"
            "       gpk sort --gen DIST --n N [--seed S] [--type T] [-o OUT] [options]\n"
            "       gpk sort IN.npy --key NAME [-o OUT] [options]\n"
            "       gpk sort IN --record-size S --key-type T [--key-offset K] [-o OUT] [options]\n"
            "\n"
            "Sorts keys ascending with gpk's radix sort (stable) or quicksort (not stable),\n"
            "as --algo says. IN is raw little-endian binary (needs --type) or .npy (type from\n"
            "the header: <u4 <i4 <f4 <u8 <i8 <f8, 1-D, C order); '-' is stdin. OUT gets the\n"
            "sorted keys in the input's format, or .npy when its name ends in .npy ('-' is\n"
            "stdout). Without -o nothing is written (useful with --check and --json).\n"
            "\n"
            "input and output:\n"
            "  -o, --output OUT    sorted keys\n"
            "  --type T            key type: u32 i32 f32 u64 i64 f64 (raw input, --gen)\n"
            "  --perm FILE         write the permutation sigma (u32; u64 from 2^32 keys on):\n"
            "                      out[j] = in[sigma[j]]\n"
            "  --format raw|npy    format of every output, overriding the rule above\n"
            "  --values FILE       values to move with the keys (raw needs --value-type)\n"
            "  --value-type T      value type of a raw --values file (any 4- or 8-byte type)\n"
            "  --values-out FILE   sorted values (format rules as for OUT)\n"
            "  --gen DIST          generate the keys instead of reading them: uniform,\n"
            "                      random-bits, few-bits, equal, sorted, reverse, float-specials;\n"
            "                      the paper's gaussian, bucket, staggered, zero-entropy; the\n"
            "                      quicksort adversaries organ-pipe, mo3-killer (see gpk/gen.h)\n"
            "  --n N               number of generated keys (2^28, 256M, 1k, 1000 ...)\n"
            "  --seed S            generator seed (default 1)\n"
            "  --param P           distribution parameter (few-bits: the bit count, default 10;\n"
            "                      bucket, staggered: the number of groups p, default 32)\n"
            "sort options:\n"
            "  --algo A            auto (default: the faster one measured for the type and\n"
            "                      size), radix, quick, quick-recursive (CUDA dynamic\n"
            "                      parallelism; on the CPU the same as quick). The one that ran\n"
            "                      is in the summary line and the JSON (\"algorithm\")\n"
            "  --backend B         auto (default; GPK_BACKEND overrides), cpu, cuda, opencl\n"
            "  --device D          CUDA / OpenCL device index\n"
            "  --devices LIST      several GPUs, such as 0,1: the radix sort spread over them\n"
            "                      (as GPK_DEVICES; from 2^22 keys)\n"
            "  --threads T         CPU threads (default: all cores)\n"
            "  --key-bits b        radix: sort bits [0, b) of the mapped key (default 0: detect)\n"
            "  --radix-bits r      bits per pass, 1..16 (default 0: tuned)\n"
            "  --items I, --groups G, --scan-split s   the paper's tunables (0: tuned)\n"
            "  --reps R            sort R times from the same input, report the median (default 1)\n"
            "reporting:\n"
            "  --check             verify the result in bounded memory: the order, the keys\n"
            "                      (and values) those of the input by a hash of the multiset,\n"
            "                      sigma a permutation naming each key, stable after the radix\n"
            "                      sort (after quicksort equal keys' indices in any order)\n"
            "  --json              print a JSON result on stdout\n"
            "  -q, --quiet         no summary line on stderr\n"
            "\n"
            "distributed (gpk built with MPI; run under mpiexec -n P):\n"
            "  --mpi               gpk sort --mpi IN -o OUT [--type T] [--check]: each rank reads\n"
            "                      its slice of IN, the ranks sort with gpk_mpi_sort_keys (rank r\n"
            "                      ends with keys [r N/P, (r+1) N/P) of the order), each writes its\n"
            "                      slice of OUT; --check verifies the order across ranks. Takes\n"
            "                      --backend, --device (default: the rank on its node), --threads,\n"
            "                      --json, -q, --mpi-timeout S (a rank waiting S seconds,\n"
            "                      default 300, for a silent rank names it and ends the job)\n"
            "\n"
            "The time is the host-to-host gpk_sort_* call (on a GPU it includes transfers).\n"
            "Floats sort as -inf < ... < -0.0 < +0.0 < ... < +inf < NaN (see gpk(1)).\n\n");
    fputs("segmented sorts (many sorts at once; sort_segments.c):\n", f);
    sort_seg_help(f);
    fputc('\n', f);
    cmd_sort_records_help(f);
}

typedef struct sort_args {
    const char *in, *out, *perm, *values, *values_out, *gen;
    const char *devices; /* --devices: a CUDA device list, as GPK_DEVICES */
    int have_type, have_vtype, have_n, have_seed, have_param;
    gpk_type type, vtype;
    gpk_backend backend;
    int device, threads, reps;
    gpk_radix_opts ro;
    uint64_t n, seed, param;
    int json, check, quiet;
    int have_format;
    io_format format;  /* --format: the output format, overriding the name rule */
    sort_seg_args seg; /* --rows, --segments, --descending */
} sort_args;

/* The options' combinations, after parsing: 0, or -1 (said). */
static int check_combinations(const char *cmd, sort_args *a)
{
    if (a->in && a->gen) {
        cli_error(cmd, "give an input file or --gen, not both");
        return -1;
    }
    if (!a->in && !a->gen) {
        cli_error(cmd, "no input: give a file (raw with --type, or .npy) or --gen DIST --n N");
        return -1;
    }
    if (a->gen && !a->have_n) {
        cli_error(cmd, "--gen needs --n N");
        return -1;
    }
    if (!a->gen && (a->have_n || a->have_seed || a->have_param)) {
        cli_error(cmd, "--n, --seed and --param go with --gen");
        return -1;
    }
    if (a->values && a->gen) {
        cli_error(cmd, "--values needs an input key file (not --gen)");
        return -1;
    }
    if (!a->values && (a->have_vtype || a->values_out)) {
        cli_error(cmd, "--value-type and --values-out go with --values");
        return -1;
    }
    if (a->values && a->perm) {
        cli_error(cmd,
                  "--perm and --values cannot be combined: sigma already orders the "
                  "values (values_out[j] = values[sigma[j]])");
        return -1;
    }
    if (a->json &&
        ((a->out && strcmp(a->out, "-") == 0) || (a->perm && strcmp(a->perm, "-") == 0) ||
         (a->values_out && strcmp(a->values_out, "-") == 0))) {
        cli_error(cmd, "--json and an output to '-' would both write to stdout");
        return -1;
    }
    if (a->in && a->values && strcmp(a->in, "-") == 0 && strcmp(a->values, "-") == 0) {
        cli_error(cmd, "keys and values cannot both come from stdin");
        return -1;
    }
    if (!a->have_type && a->gen) a->type = GPK_U32;
    if (a->have_param) {
        gpk_dist d;
        gpk_dist_parse(a->gen, &d);
        const uint64_t bits = 8 * gpk_type_size(a->type);
        if (d == GPK_DIST_FEW_BITS && (a->param < 1 || a->param > bits)) {
            cli_error(cmd, "--param %llu is out of range for few-bits with %s keys: 1..%llu random bits",
                      (unsigned long long)a->param, gpk_type_name(a->type), (unsigned long long)bits);
            return -1;
        }
        if (d == GPK_DIST_BUCKET && (a->param < 1 || a->param > 65536)) {
            cli_error(cmd, "--param %llu is out of range for bucket: 1..65536 buckets",
                      (unsigned long long)a->param);
            return -1;
        }
        if (d == GPK_DIST_STAGGERED && (a->param < 2 || a->param > 65536 || a->param % 2)) {
            cli_error(cmd, "--param %llu is out of range for staggered: an even 2..65536 blocks",
                      (unsigned long long)a->param);
            return -1;
        }
        if (d != GPK_DIST_FEW_BITS && d != GPK_DIST_BUCKET && d != GPK_DIST_STAGGERED) {
            cli_error(cmd, "--param does not apply to %s (only to few-bits, bucket and staggered)", a->gen);
            return -1;
        }
    }
    /* The quicksort sorts whole keys in one way: the radix tunables would be
     * ignored, so they are refused. */
    if ((a->ro.algorithm == GPK_SORT_QUICK || a->ro.algorithm == GPK_SORT_QUICK_RECURSIVE) &&
        (a->ro.key_bits || a->ro.radix_bits || a->ro.items || a->ro.groups || a->ro.scan_split)) {
        cli_error(cmd,
                  "--key-bits, --radix-bits, --items, --groups and --scan-split apply to the radix sort, "
                  "not to --algo %s",
                  gpk_sort_algo_name(a->ro.algorithm));
        return -1;
    }
    /* All outputs are checked before the sort, so that none is written
     * when another cannot be, and none overwrites an input. */
    const char *outs[3] = {a->out, a->perm, a->values_out};
    const char *out_roles[3] = {"-o", "--perm", "--values-out"};
    const char *ins[2] = {a->in, a->values};
    const char *in_roles[2] = {"(keys)", "--values"};
    const int own[3] = {0, -1, 1}; /* sorting a file in place is fine */
    char err[600];
    if (io_check_outputs(outs, out_roles, own, 3, ins, in_roles, 2, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        return -1;
    }
    return 0;
}

/* Parses one numeric option into *dst. Returns 1 when argv[*i] was `name`,
 * 0 when not, -1 on a usage error (already reported). */
static int opt_uint(const char *cmd, int argc, char **argv, int *i, const char *name, uint64_t lo,
                    uint64_t hi, int sizes, uint64_t *dst)
{
    const char *val;
    int m = cli_opt_value(cmd, argc, argv, i, NULL, name, &val);
    if (m <= 0) return m;
    uint64_t v;
    int bad = sizes ? cli_parse_size(val, &v) != 0 || v < lo || v > hi : cli_parse_uint(val, lo, hi, &v) != 0;
    if (bad) {
        cli_error(cmd, "bad value '%s' for %s (expected %llu..%llu)", val, name, (unsigned long long)lo,
                  (unsigned long long)hi);
        return -1;
    }
    *dst = v;
    return 1;
}

/* Options naming files, formats, types and algorithms. Returns 1 when
 * argv[*i] was one (and *i is past its value), 0 when not, -1 on a usage
 * error (already reported). */
static int parse_text_opt(const char *cmd, int argc, char **argv, int *i, sort_args *a)
{
    const char *val = NULL;
    int m;
#define STR_OPT(shortname, name, field)                                        \
    if ((m = cli_opt_value(cmd, argc, argv, i, shortname, name, &val)) != 0) { \
        if (m < 0) return -1;                                                  \
        a->field = val;                                                        \
        return 1;                                                              \
    }
    STR_OPT("-o", "--output", out)
    STR_OPT(NULL, "--perm", perm)
    STR_OPT(NULL, "--values", values)
    STR_OPT(NULL, "--values-out", values_out)
    STR_OPT(NULL, "--devices", devices)
#undef STR_OPT
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--gen", &val)) != 0) {
        gpk_dist d;
        if (m < 0) return -1;
        if (gpk_dist_parse(val, &d) != GPK_OK) {
            cli_error(cmd,
                      "unknown distribution '%s' (uniform, random-bits, few-bits, "
                      "equal, sorted, reverse, float-specials, gaussian, bucket, "
                      "staggered, zero-entropy, organ-pipe, mo3-killer)",
                      val);
            return -1;
        }
        a->gen = val;
        return 1;
    }
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--format", &val)) != 0) {
        if (m < 0) return -1;
        if (strcmp(val, "raw") == 0) a->format = IO_RAW;
        else if (strcmp(val, "npy") == 0) a->format = IO_NPY;
        else {
            cli_error(cmd, "unknown --format '%s' (raw or npy)", val);
            return -1;
        }
        a->have_format = 1;
        return 1;
    }
    if ((m = cli_opt_type(cmd, argc, argv, i, "--type", "type", &a->type)) != 0) {
        if (m < 0) return -1;
        a->have_type = 1;
        return 1;
    }
    if ((m = cli_opt_type(cmd, argc, argv, i, "--value-type", "value type", &a->vtype)) != 0) {
        if (m < 0) return -1;
        a->have_vtype = 1;
        return 1;
    }
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--algo", &val)) != 0) {
        if (m < 0) return -1;
        if (gpk_sort_algo_parse(val, &a->ro.algorithm) != GPK_OK) {
            cli_error(cmd, "unknown algorithm '%s' (auto, radix, quick, quick-recursive)", val);
            return -1;
        }
        return 1;
    }
    if ((m = cli_opt_backend(cmd, argc, argv, i, &a->backend)) != 0) {
        if (m < 0) return -1;
        return 1;
    }
    return 0;
}

/* Numeric options: sizes, seeds, the radix tunables, devices, threads and
 * repetitions. Returns as parse_text_opt. */
static int parse_number_opt(const char *cmd, int argc, char **argv, int *i, sort_args *a)
{
    /* sizes: the value may be written as a size (1M, 2^20). --param goes up
     * to bucket's and staggered's 65536 groups (gpk_generate checks each
     * distribution's own range; few-bits: the key width); --key-bits
     * against the key type is checked once the type is known. */
    static const struct {
        const char *name;
        uint64_t lo, hi;
        int sizes;
    } nums[] = {{"--n", 0, UINT64_MAX, 1},     {"--seed", 0, UINT64_MAX, 0},     {"--param", 0, 65536, 0},
                {"--key-bits", 0, 64, 0},      {"--radix-bits", 0, 16, 0},       {"--items", 0, 1u << 20, 1},
                {"--groups", 0, 1u << 30, 1},  {"--scan-split", 0, 1u << 30, 1}, {"--device", 0, 1u << 20, 0},
                {"--threads", 0, 1u << 20, 0}, {"--reps", 1, 100000, 0}};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        uint64_t v = 0;
        const int m = opt_uint(cmd, argc, argv, i, nums[k].name, nums[k].lo, nums[k].hi, nums[k].sizes, &v);
        if (m <= 0) {
            if (m < 0) return -1;
            continue;
        }
        switch (k) {
        case 0: a->n = v, a->have_n = 1; break;
        case 1: a->seed = v, a->have_seed = 1; break;
        case 2: a->param = v, a->have_param = 1; break;
        case 3: a->ro.key_bits = (unsigned)v; break;
        case 4: a->ro.radix_bits = (unsigned)v; break;
        case 5: a->ro.items = (unsigned)v; break;
        case 6: a->ro.groups = (unsigned)v; break;
        case 7: a->ro.scan_split = (unsigned)v; break;
        case 8: a->device = (int)v; break;
        case 9: a->threads = (int)v; break;
        case 10: a->reps = (int)v; break;
        }
        return 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, sort_args *a)
{
    const char *cmd = "sort";
    memset(a, 0, sizeof *a);
    a->backend = GPK_BACKEND_AUTO;
    a->device = -1;
    a->reps = 1;
    a->seed = 1;
    gpk_radix_opts ro = GPK_RADIX_OPTS_INIT;
    a->ro = ro;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int m;
        if (cli_is_help(arg)) {
            cmd_sort_help(stdout);
            return 1;
        }
        if (cli_output_flag(arg, &a->check, &a->json, &a->quiet)) continue;
        /* the segmented sort's options (sort_segments.c) */
        if ((m = sort_seg_parse(cmd, argc, argv, &i, &a->seg)) != 0) {
            if (m < 0) return -1;
            continue;
        }
        if ((m = parse_text_opt(cmd, argc, argv, &i, a)) != 0 ||
            (m = parse_number_opt(cmd, argc, argv, &i, a)) != 0) {
            if (m < 0) return -1;
            continue;
        }
        if (arg[0] == '-' && arg[1] != '\0') {
            cli_error(cmd, "unknown option '%s' (see gpk sort --help)", arg);
            return -1;
        }
        if (a->in) {
            cli_error(cmd, "more than one input file ('%s' and '%s')", a->in, arg);
            return -1;
        }
        a->in = arg;
    }

    return check_combinations(cmd, a);
}

/* --check in bounded memory: no copy of the input and no reference sort
 * (a 2^28-key check took 5x the sort's memory and 12x its time so). Before
 * the sort, order-independent hashes of the input: of the multiset of
 * (key, value) and of (index, key). After it, one pass checks the order of
 * the mapped keys (gpk/sort.h; key_bits as the radix sort took them), the
 * same multiset of (key, value) (so each value moved with its key), and for
 * sigma the multiset of (sigma[j], out[j]), which equals that of
 * (i, in[i]) exactly when sigma is a permutation with out[j] =
 * in[sigma[j]]; after the stable radix sort, equal keys' sigma rises. A
 * corrupted output matches the 128-bit hashes by chance with probability
 * about 2^-128. The values of equal keys are held to their multiset only. */
#define CHECK_BYTES_PER_KEY 0.0

typedef struct check_sums {
    uint64_t kv[2], ik[2]; /* the (key, value) and (index, key) multisets */
} check_sums;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t load_word(const void *p, size_t i, size_t w)
{
    if (w == 4) {
        uint32_t x;
        memcpy(&x, (const char *)p + 4 * i, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, (const char *)p + 8 * i, 8);
    return x;
}

/* The mapped key of gpk/sort.h: signed flip the sign bit; floats flip all
 * bits of negatives and the sign bit of the others, minus 2^23-1 / 2^52-1. */
static uint64_t mapped_key(gpk_type t, uint64_t x)
{
    switch (t) {
    case GPK_I32: return x ^ 0x80000000u;
    case GPK_I64: return x ^ 0x8000000000000000ull;
    case GPK_F32: return (uint32_t)((uint32_t)(x ^ ((x >> 31) ? 0xFFFFFFFFu : 0x80000000u)) - 0x007FFFFFu);
    case GPK_F64: return (x ^ ((x >> 63) ? ~0ull : 0x8000000000000000ull)) - 0x000FFFFFFFFFFFFFull;
    default: return x;
    }
}

static void check_progress(int quiet, const char *what, size_t i, size_t n)
{
    if (!quiet && (i & ((1u << 22) - 1)) == 0 && n > ((size_t)1 << 22))
        cli_progress("sort", "%s %3.0f%%", what, 100.0 * (double)i / (double)n);
}

/* The sums of n keys (and values, vw > 0), with indices sigma[j] (sw
 * bytes each) or, sigma NULL, j. */
static void check_sums_of(const void *keys, size_t kw, const void *vals, size_t vw, const void *sigma,
                          size_t sw, size_t n, int quiet, const char *what, check_sums *c)
{
    memset(c, 0, sizeof *c);
    for (size_t j = 0; j < n; j++) {
        check_progress(quiet, what, j, n);
        const uint64_t k = load_word(keys, j, kw), v = vw ? load_word(vals, j, vw) : 0;
        const uint64_t idx = sigma ? load_word(sigma, j, sw) : j;
        const uint64_t a = mix64(k ^ mix64(v + 0x9E3779B97F4A7C15ull)),
                       b = mix64(k + mix64(idx ^ 0xD1B54A32D192ED03ull));
        c->kv[0] += a;
        c->kv[1] += mix64(a + 0x632BE59BD9B4E019ull);
        c->ik[0] += b;
        c->ik[1] += mix64(b ^ 0x8CB92BA72F3D8DD7ull);
    }
}

/* Holds the sorted output to the input's sums (check_sums_of before the
 * sort). stable: the radix sort ran (key_bits as given; quicksort sorts
 * whole keys and keeps no order among equal ones). */
static int check_result(const sort_args *a, gpk_type t, const check_sums *in, const void *keys, size_t n,
                        size_t vw, const void *vals, const void *sigma, size_t sw, int stable, char *why,
                        size_t whylen)
{
    const size_t kw = gpk_type_size(t);
    const unsigned bits = stable && a->ro.key_bits ? a->ro.key_bits : (unsigned)(8 * kw);
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t prev = 0, prev_idx = 0;
    int prev_nan = 0;
    for (size_t j = 0; j < n; j++) {
        check_progress(a->quiet, "checking the order", j, n);
        const uint64_t x = load_word(keys, j, kw), m = mapped_key(t, x) & mask;
        const uint64_t idx = sigma ? load_word(sigma, j, sw) : 0;
        /* descending: the reverse order, but NaNs last (ascending among themselves) */
        const int nan = bits == 8 * kw &&
            ((t == GPK_F32 && (x & 0x7FFFFFFFu) > 0x7F800000u) ||
             (t == GPK_F64 && (x & ~(1ull << 63)) > 0x7FF0000000000000ull));
        const int wrong = !a->ro.descending ? m < prev
            : prev_nan != nan               ? prev_nan
            : nan                           ? m < prev
                                            : m > prev;
        if (j > 0 && wrong) {
            snprintf(why, whylen, "keys %zu and %zu are out of order", j - 1, j);
            return 0;
        }
        if (j > 0 && sigma && stable && m == prev && idx <= prev_idx) {
            snprintf(why, whylen,
                     "sigma[%zu] = %llu does not follow sigma[%zu] = %llu for equal keys: not stable", j,
                     (unsigned long long)idx, j - 1, (unsigned long long)prev_idx);
            return 0;
        }
        prev = m;
        prev_idx = idx;
        prev_nan = nan;
    }
    check_sums out;
    check_sums_of(keys, kw, vals, vw, sigma, sw, n, a->quiet, "checking the contents", &out);
    if (out.kv[0] != in->kv[0] || out.kv[1] != in->kv[1]) {
        snprintf(why, whylen,
                 vw ? "the (key, value) pairs are not those of the input"
                    : "the keys are not a permutation of the input's");
        return 0;
    }
    if (sigma && (out.ik[0] != in->ik[0] || out.ik[1] != in->ik[1])) {
        snprintf(why, whylen, "sigma is not a permutation with out[j] = in[sigma[j]]");
        return 0;
    }
    return 1;
}

/* For the tests of --check alone (GPK_TEST_CORRUPT_SORT): spoils the
 * sorted output the way a faulty sort could, between the sort and the
 * check. order: the first and last keys swapped; key: a key replaced by
 * its neighbour; value: the values of two different keys swapped; sigma:
 * two entries of sigma for different keys swapped; stable: two entries of
 * sigma for equal keys swapped. */
static void corrupt_for_test(const char *how, gpk_type t, void *keys, size_t n, size_t vw, void *vals,
                             void *sigma, size_t sw)
{
    const size_t kw = gpk_type_size(t);
    char *k = keys, *v = vals, *g = sigma, tmp[8];
    if (n < 2) return;
    /* j, j+1: the first adjacent pair of different (or, for stable, equal) keys */
    const int want_equal = strcmp(how, "stable") == 0;
    size_t j = 0;
    while (j + 1 < n && (memcmp(k + j * kw, k + (j + 1) * kw, kw) == 0) != want_equal) j++;
    if (j + 1 >= n) return;
#define SWAP(base, w, x, y)                                                                     \
    (memcpy(tmp, (base) + (x) * (w), (w)), memcpy((base) + (x) * (w), (base) + (y) * (w), (w)), \
     memcpy((base) + (y) * (w), tmp, (w)))
    if (strcmp(how, "order") == 0) SWAP(k, kw, j, j + 1);
    else if (strcmp(how, "key") == 0) memcpy(k + j * kw, k + (j + 1) * kw, kw);
    else if (strcmp(how, "value") == 0 && v) SWAP(v, vw, j, j + 1);
    else if ((strcmp(how, "sigma") == 0 || want_equal) && g) SWAP(g, sw, j, j + 1);
#undef SWAP
}

/* The progress line of a sort that lasts more than a second gets a bar:
 * a thread redraws it from the fraction the library reports (out-of-core
 * sorts, gpk_ctx_set_progress) or, without one, adds the time so far.
 * cli_progress draws only on a terminal. */
typedef struct sort_bar {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int on, stop;
    double done, t0;
    char what[160]; /* the progress line's text */
} sort_bar;

static void bar_progress(void *user, double done)
{
    sort_bar *b = user;
    pthread_mutex_lock(&b->mu);
    b->done = done;
    pthread_mutex_unlock(&b->mu);
}

static void *bar_run(void *user)
{
    sort_bar *b = user;
    pthread_mutex_lock(&b->mu);
    while (!b->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
        const double sec = (cli_now_ms() - b->t0) / 1e3;
        if (b->stop || sec < 1.0) continue;
        if (b->done > 0) {
            const int width = 30, fill = (int)(b->done * width + 0.5);
            cli_progress("sort", "%s [%.*s%*s] %3.0f%% %.1f s", b->what, fill,
                         "##############################", width - fill, "", 100.0 * b->done, sec);
        } else {
            cli_progress("sort", "%s, %.1f s", b->what, sec);
        }
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

static void bar_start(sort_bar *b, gpk_ctx *ctx, int wanted, const char *what)
{
    memset(b, 0, sizeof *b);
    if (!wanted || !cli_stderr_is_tty()) return;
    snprintf(b->what, sizeof b->what, "%s", what);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->t0 = cli_now_ms();
    if (pthread_create(&b->thread, NULL, bar_run, b) != 0) {
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->cv);
        return;
    }
    b->on = 1;
    gpk_ctx_set_progress(ctx, bar_progress, b);
}

/* Stops the redrawing (the line stays until the next message clears it). */
static void bar_stop(sort_bar *b, gpk_ctx *ctx)
{
    if (!b->on) return;
    gpk_ctx_set_progress(ctx, NULL, NULL);
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    b->on = 0;
}

/* Large keys from a regular file to a regular -o, nothing else asked that
 * needs a copy (--reps, --values): the output file is mapped and
 * the input read straight into it, and the sort runs there, so the keys
 * are held once (in the page cache, which the system may write back)
 * instead of in memory and again in the output. From 64 MiB of keys. */
#define SORT_MAP_MIN ((size_t)64 << 20)

static int mappable(const sort_args *a)
{
    return !a->gen && a->in && strcmp(a->in, "-") != 0 && a->out && strcmp(a->out, "-") != 0 && !a->values &&
        a->reps == 1;
}

/* 0: keys->data is the mapped output, filled with the input; 1: not
 * mapped (read the usual way); -1: failed, with err. */
static int read_keys_mapped(const sort_args *a, io_array *keys, io_out *out, io_map *map, char *err,
                            size_t errlen)
{
    long long offset = 0;
    if (!mappable(a) || io_probe(a->in, a->have_type ? &a->type : NULL, keys, &offset) != 0) return 1;
    const size_t bytes = keys->n * gpk_type_size(keys->type);
    if (bytes < SORT_MAP_MIN) return 1;
    const io_format kf = a->have_format ? a->format : io_output_format(a->out, keys->format);
    if (io_out_open(out, a->out, err, errlen) != 0) return -1;
    const int m = io_out_map(out, kf, keys->type, keys->n, map, err, errlen);
    if (m == 0 && io_read_into(a->in, offset, map->data, bytes, err, errlen) == 0) {
        keys->data = map->data;
        return 0;
    }
    io_out_unmap(map, err, errlen);
    io_out_abort(out);
    return m > 0 ? 1 : -1;
}

/* 1 when path is a readable regular file without the .npy magic: raw
 * data, whose type must then be given (a usage error when it is not).
 * Only a regular file is looked into: a pipe, a FIFO, /dev/stdin or a
 * <(...) can be read once, and opening a FIFO waits for its writer, so
 * those (and stdin, and unreadable files) are left to io_read, which
 * opens them once and tells .npy from raw by the bytes it reads. */
static int is_raw_file(const char *path)
{
    size_t len = strlen(path);
    struct stat st;
    if (strcmp(path, "-") == 0 || (len >= 4 && strcmp(path + len - 4, ".npy") == 0)) return 0;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char head[6] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    return !(got == sizeof head && memcmp(head, "\x93NUMPY", 6) == 0);
}

/* A record option (and no --help) hands the command to cmd_sort_records. */
static int wants_records(int argc, char **argv)
{
    static const char *const opts[] = {"--key", "--record-size", "--key-offset", "--key-type"};
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) return 0;
    for (int i = 1; i < argc; i++)
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            size_t l = strlen(opts[k]);
            if (strncmp(argv[i], opts[k], l) == 0 && (argv[i][l] == '\0' || argv[i][l] == '=')) return 1;
        }
    return 0;
}

/* --mpi (and no --help) hands the command to cmd_sort_mpi. */
static int wants_mpi(int argc, char **argv)
{
    int mpi = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return 0;
        if (strcmp(argv[i], "--mpi") == 0) mpi = 1;
    }
    return mpi;
}

/* One gpk sort call's state, from the inputs to the report. */
typedef struct sort_run {
    char err[600];
    io_array keys, vals;
    void *orig_keys, *orig_vals; /* the input again, for --reps and the segmented check */
    uint32_t *sigma;
    double *times;
    gpk_ctx *ctx;
    gpk_ctx_info info;
    io_out mapped_out; /* the output file the keys were read into (mapped) */
    io_map map;
    int mapped;
    sort_bar bar;
    check_sums in_sums;
    const char *check_state;
    char why[300];
    gpk_type t;
    size_t n, kw, vw, nb;
    int sigma64; /* sigma is u64: past 2^32 - 1 keys, not segmented */
    double ms;
    gpk_sort_algo ran;
} sort_run;

/* The keys (read, mapped into the output, or generated later) and the
 * values. 0, or the exit code. */
static int load_inputs(const char *cmd, sort_args *a, sort_run *r)
{
    if (a->in && !a->have_type && is_raw_file(a->in)) {
        cli_error(cmd, "%s is raw binary: give its key type with --type (u32 i32 f32 u64 i64 f64), or a .npy",
                  a->in);
        return CLI_USAGE;
    }
    if (a->values && !a->have_vtype && is_raw_file(a->values)) {
        cli_error(cmd,
                  "--values %s is raw binary: give its type with --value-type (any 4- or 8-byte type), "
                  "or a .npy",
                  a->values);
        return CLI_USAGE;
    }
    if (!a->gen && !a->quiet) cli_progress(cmd, "reading %s", a->in);
    if (a->gen) {
        size_t w = gpk_type_size(a->type);
        if (a->n > SIZE_MAX / w) {
            cli_error(cmd, "--n %llu is too large", (unsigned long long)a->n);
            return CLI_USAGE;
        }
        r->keys.type = a->type;
        r->keys.n = (size_t)a->n;
        r->keys.format = IO_RAW;
        /* generated once the context is known: what the sort will need is
         * checked before any key is made */
    } else {
        const int m = read_keys_mapped(a, &r->keys, &r->mapped_out, &r->map, r->err, sizeof r->err);
        r->mapped = m == 0;
        if (m < 0 ||
            (m > 0 && io_read(a->in, a->have_type ? &a->type : NULL, &r->keys, r->err, sizeof r->err) != 0)) {
            cli_error(cmd, "%s", r->err);
            return CLI_FAIL;
        }
    }
    r->t = r->keys.type;
    r->n = r->keys.n;
    r->kw = gpk_type_size(r->t);
    r->nb = r->n ? r->n : 1;
    if (a->ro.key_bits > 8 * r->kw) {
        cli_error(cmd, "--key-bits %u is larger than the %u bits of %s", a->ro.key_bits,
                  (unsigned)(8 * r->kw), gpk_type_name(r->t));
        return CLI_USAGE;
    }
    if (a->seg.on && sort_seg_prepare(cmd, &a->seg, r->n) != 0) return CLI_USAGE;
    if (a->values) {
        if (io_read(a->values, a->have_vtype ? &a->vtype : NULL, &r->vals, r->err, sizeof r->err) != 0) {
            cli_error(cmd, "%s", r->err);
            return CLI_FAIL;
        }
        if (r->vals.n != r->n) {
            cli_error(cmd, "%s holds %zu values but the keys number %zu", a->values, r->vals.n, r->n);
            return CLI_FAIL;
        }
        r->vw = gpk_type_size(r->vals.type);
    }
    return 0;
}

/* The context, and the options that depend on its backend. */
static int open_context(const char *cmd, const sort_args *a, sort_run *r)
{
    if (a->devices && a->device >= 0) {
        cli_error(cmd, "--device and --devices: give one of them");
        return CLI_USAGE;
    }
    /* the context reads the list where GPK_DEVICES is read (no --device) */
    if (a->devices && setenv("GPK_DEVICES", a->devices, 1) != 0) {
        cli_error(cmd, "--devices %s: cannot set GPK_DEVICES", a->devices);
        return CLI_FAIL;
    }
    if (cli_ctx_create(cmd, &r->ctx, a->backend, a->device, a->threads) != GPK_OK) return CLI_FAIL;
    gpk_ctx_info_get(r->ctx, &r->info);
    if (r->info.backend != GPK_BACKEND_OPENCL && (a->ro.items || a->ro.groups || a->ro.scan_split)) {
        cli_error(cmd, "--items, --groups and --scan-split tune the OpenCL radix sort, not the %s backend",
                  gpk_backend_name(r->info.backend));
        return CLI_USAGE;
    }
    if (r->info.backend == GPK_BACKEND_CPU && a->device >= 0) {
        cli_error(cmd, "--device selects a CUDA or OpenCL device; the cpu backend has none");
        return CLI_USAGE;
    }
    return 0;
}

/* Memory, before anything large is made: the keys (generated; read keys
 * are here already, mapped ones in the output file), sigma or the values,
 * the CPU sort's scratch copy of them all (gpk__sort_mem_check's rule; a
 * GPU sorts in its own memory or out of core), and the copy --reps keeps.
 * --check needs only a few bytes a key (check_prepare). */
static int check_memory(const char *cmd, const sort_args *a, const sort_run *r)
{
    const char *what;
    const uint64_t limit = io_memory_limit(&what);
    const size_t n = r->n;
    const double sw = a->perm ? (n > UINT32_MAX ? 8.0 : 4.0) : 0.0, elem = (double)r->kw + (double)r->vw + sw;
    double need = (double)n * elem * (r->info.backend == GPK_BACKEND_CPU ? 1.0 : 0.0);
    need += (double)n * ((a->gen ? (double)r->kw : 0.0) + sw);
    if (a->reps > 1) need += (double)n * ((double)r->kw + (double)r->vw);
    if (a->check) need += (double)n * CHECK_BYTES_PER_KEY;
    if (need <= (double)limit) return 0;
    cli_error(cmd, "%zu %s keys%s need about %.2f GiB more memory%s; the process may use %.2f GiB (%s)%s", n,
              gpk_type_name(r->t),
              r->vw        ? " and values"
                  : sw > 0 ? " and sigma"
                           : "",
              need / 1073741824.0, a->gen ? " (the keys, the sort's scratch)" : " (the sort's scratch)",
              (double)limit / 1073741824.0, what, a->gen ? ": nothing generated" : "");
    return CLI_FAIL;
}

static int generate_keys(const char *cmd, const sort_args *a, sort_run *r)
{
    gpk_dist d;
    gpk_dist_parse(a->gen, &d);
    if (!a->quiet)
        cli_progress(cmd, "generating %zu %s keys (%s)", r->keys.n, gpk_type_name(a->type), a->gen);
    r->keys.data = malloc(r->nb * r->kw);
    if (!r->keys.data) {
        cli_error(cmd, "out of memory for %zu keys", r->keys.n);
        return CLI_FAIL;
    }
    gpk_status s = gpk_generate(a->type, d, r->keys.data, r->keys.n, a->seed, (unsigned)a->param);
    if (s != GPK_OK) {
        cli_error(cmd, "cannot generate %s data: %s", a->gen, gpk_status_string(s));
        return CLI_FAIL;
    }
    return 0;
}

/* The input's sums for --check, its copy where it is needed again (--reps,
 * the segmented sort's check against its reference), sigma and the times. */
static int prepare_buffers(const char *cmd, const sort_args *a, sort_run *r)
{
    const size_t n = r->n, kw = r->kw, vw = r->vw;
    if (a->check) {
        if (!a->quiet) cli_progress(cmd, "hashing the input for --check");
        check_sums_of(r->keys.data, kw, r->vals.data, vw, NULL, 0, n, a->quiet,
                      "hashing the input for --check", &r->in_sums);
    }
    if (a->reps > 1 || (a->check && a->seg.on)) {
        r->orig_keys = malloc(r->nb * kw);
        r->orig_vals = vw ? malloc(r->nb * vw) : NULL;
        if (!r->orig_keys || (vw && !r->orig_vals)) {
            cli_error(cmd, "out of memory for a copy of the input (--check / --reps)");
            return CLI_FAIL;
        }
        memcpy(r->orig_keys, r->keys.data, n * kw);
        if (vw) memcpy(r->orig_vals, r->vals.data, n * vw);
    }
    /* past 2^32 - 1 keys sigma is u64 (gpk_sort_perm64); the reference's is u32 */
    r->sigma64 = a->perm && n > UINT32_MAX && !a->seg.on; /* segmented: per-segment u32 */
    if (a->perm) {
        r->sigma = malloc(r->nb * (r->sigma64 ? 8 : 4));
        if (!r->sigma) {
            cli_error(cmd, "out of memory for the permutation");
            return CLI_FAIL;
        }
    }
    r->times = malloc((size_t)a->reps * sizeof *r->times);
    if (!r->times) {
        cli_error(cmd, "out of memory");
        return CLI_FAIL;
    }
    return 0;
}

/* The sort, a->reps times from the same input; the median time. */
static int run_sorts(const char *cmd, const sort_args *a, sort_run *r)
{
    const size_t n = r->n, kw = r->kw, vw = r->vw;
    char sorting[160];
    snprintf(sorting, sizeof sorting, "sorting %zu %s keys on %s%s", n, gpk_type_name(r->t),
             gpk_backend_name(r->info.backend), a->reps > 1 ? " (repetitions)" : "");
    bar_start(&r->bar, r->ctx, !a->quiet, sorting);
    for (int rep = 0; rep < a->reps; rep++) {
        if (rep > 0) {
            memcpy(r->keys.data, r->orig_keys, n * kw);
            if (vw) memcpy(r->vals.data, r->orig_vals, n * vw);
        }
        gpk_status s;
        if (!a->quiet) cli_progress(cmd, "%s", sorting);
        double t0 = cli_now_ms();
        if (a->seg.on)
            s = sort_seg_run(r->ctx, &a->seg, r->t, r->keys.data, r->vals.type, vw ? r->vals.data : NULL,
                             r->sigma, n);
        else if (vw) s = gpk_sort_pairs(r->ctx, r->t, r->keys.data, r->vals.type, r->vals.data, n, &a->ro);
        else if (r->sigma64)
            s = gpk_sort_perm64(r->ctx, r->t, r->keys.data, (uint64_t *)(void *)r->sigma, n, &a->ro);
        else if (r->sigma) s = gpk_sort_perm(r->ctx, r->t, r->keys.data, r->sigma, n, &a->ro);
        else s = gpk_sort_keys(r->ctx, r->t, r->keys.data, n, &a->ro);
        r->times[rep] = cli_now_ms() - t0;
        if (s != GPK_OK) {
            bar_stop(&r->bar, r->ctx);
            cli_error(cmd, "sorting %zu %s keys on %s failed: %s", n, gpk_type_name(r->t),
                      gpk_backend_name(r->info.backend), gpk_last_error(r->ctx));
            return CLI_FAIL;
        }
    }
    bar_stop(&r->bar, r->ctx);
    r->ms = cli_median(r->times, (size_t)a->reps);
    r->ran = gpk_last_sort_algo(r->ctx);
    return 0;
}

/* --check: r->check_state "ok" or "FAILED" (r->why says why). */
static void verify(const char *cmd, const sort_args *a, sort_run *r)
{
    const size_t vw = r->vw;
    const char *corrupt =
        getenv("GPK_TEST_CORRUPT_SORT"); /* the CLI's own test hook (tests/cli_io_test.sh) */
    if (corrupt)
        corrupt_for_test(corrupt, r->t, r->keys.data, r->n, vw, r->vals.data, r->sigma, r->sigma64 ? 8 : 4);
    if (!a->quiet) cli_progress(cmd, "checking the result");
    const int ok = a->seg.on
        ? sort_seg_verify(&a->seg, r->t, r->orig_keys, r->keys.data, vw, r->orig_vals,
                          vw ? r->vals.data : NULL, r->sigma, r->n, r->why, sizeof r->why)
        : check_result(a, r->t, &r->in_sums, r->keys.data, r->n, vw, vw ? r->vals.data : NULL, r->sigma,
                       r->sigma64 ? 8 : 4, r->ran == GPK_SORT_RADIX, r->why, sizeof r->why);
    r->check_state = ok ? "ok" : "FAILED";
}

/* The outputs: each written to its temporary file before any replaces its
 * target, so that one failing leaves all as they were. */
static int write_outputs(const char *cmd, const sort_args *a, sort_run *r)
{
    /* Output format: --format, else .npy by name, else the input's. */
    io_format kf = a->have_format ? a->format : io_output_format(a->out ? a->out : "", r->keys.format);
    io_format pf = a->have_format ? a->format : io_output_format(a->perm ? a->perm : "", r->keys.format);
    io_format vf =
        a->have_format ? a->format : io_output_format(a->values_out ? a->values_out : "", r->vals.format);
    if (!a->quiet && (a->out || a->perm || a->values_out)) cli_progress(cmd, "writing the output");
    const char *paths[3] = {a->out, a->perm, a->values_out};
    const io_format fmts[3] = {kf, pf, vf};
    const gpk_type types[3] = {r->t, r->sigma64 ? GPK_U64 : GPK_U32, r->vals.type};
    const void *datas[3] = {r->keys.data, r->sigma, r->vals.data};
    io_out outs[3];
    memset(outs, 0, sizeof outs);
    int ok = 1;
    /* mapped keys are in their output already */
    if (r->mapped) {
        ok = io_out_unmap(&r->map, r->err, sizeof r->err) == 0;
        outs[0] = r->mapped_out;
        memset(&r->mapped_out, 0, sizeof r->mapped_out);
        r->keys.data = NULL;
    }
    for (int k = r->mapped ? 1 : 0; k < 3 && ok; k++)
        if (paths[k])
            ok = io_out_open(&outs[k], paths[k], r->err, sizeof r->err) == 0 &&
                io_write_array(&outs[k], fmts[k], types[k], datas[k], r->n, r->err, sizeof r->err) == 0;
    for (int k = 0; k < 3 && ok; k++)
        if (outs[k].f) ok = io_out_commit(&outs[k], r->err, sizeof r->err) == 0;
    for (int k = 0; k < 3; k++) io_out_abort(&outs[k]);
    if (ok) return 0;
    cli_error(cmd, "%s", r->err);
    return CLI_FAIL;
}

/* The summary line on stderr and, with --json, the JSON record. */
static void report(const sort_args *a, const sort_run *r)
{
    const size_t n = r->n, vw = r->vw;
    const double mkeys = r->ms > 0 ? (double)n / (r->ms * 1e3) : 0.0;
    const char *mode = vw ? "pairs" : a->perm ? "perm" : "keys";
    if (!a->quiet) {
        fprintf(stderr, "gpk sort: %s (%s), %s: %zu %s keys%s%s in %.3f ms%s (%.2f Mkeys/s)",
                gpk_backend_name(r->info.backend), r->info.device_name, gpk_sort_algo_name(r->ran), n,
                gpk_type_name(r->t),
                vw            ? " + values "
                    : a->perm ? " + permutation"
                              : "",
                vw ? gpk_type_name(r->vals.type) : "", r->ms, a->reps > 1 ? " median" : "", mkeys);
        if (a->check) fprintf(stderr, ", check %s", r->check_state);
        fputc('\n', stderr);
        /* the sorted keys went nowhere: said, unless only the check or the
         * JSON was wanted */
        if (!a->out && !a->perm && !a->values_out && !a->check && !a->json)
            fprintf(stderr, "gpk sort: nothing written (-o OUT writes the sorted keys)\n");
    }
    if (!a->json) return;
    printf("{\"command\": \"sort\", \"gpk_version\": ");
    cli_json_str(stdout, gpk_version());
    printf(", \"backend\": ");
    cli_json_ctx_info(stdout, &r->info);
    printf(", \"input\": ");
    cli_json_str(stdout, a->in ? a->in : a->gen);
    printf(", \"generated\": %s, \"type\": \"%s\", \"n\": %zu, \"mode\": \"%s\"", a->gen ? "true" : "false",
           gpk_type_name(r->t), n, mode);
    printf(", \"algorithm_asked\": \"%s\", \"algorithm\": \"%s\", \"path\": ",
           gpk_sort_algo_name(a->ro.algorithm), gpk_sort_algo_name(r->ran));
    cli_json_str(stdout, gpk_last_sort_path(r->ctx));
    printf(", \"devices\": %u", r->info.n_devices);
    if (vw) printf(", \"value_type\": \"%s\"", gpk_type_name(r->vals.type));
    if (a->gen)
        printf(", \"seed\": %llu, \"param\": %llu", (unsigned long long)a->seed,
               (unsigned long long)a->param);
    printf(", \"key_bits\": %u, \"radix_bits\": %u, \"items\": %u, \"groups\": %u, "
           "\"scan_split\": %u, \"reps\": %d, \"ms\": %.6f, \"mkeys_per_s\": %.4f, "
           "\"check\": \"%s\"",
           a->ro.key_bits, a->ro.radix_bits, a->ro.items, a->ro.groups, a->ro.scan_split, a->reps, r->ms,
           mkeys, r->check_state);
    if (r->why[0]) {
        printf(", \"check_error\": ");
        cli_json_str(stdout, r->why);
    }
    printf("}\n");
}

static void sort_run_free(sort_args *a, sort_run *r)
{
    bar_stop(&r->bar, r->ctx);
    if (r->mapped) {
        io_out_unmap(&r->map, r->err, sizeof r->err);
        io_out_abort(&r->mapped_out); /* not committed: the named file stays as it was */
        r->keys.data = NULL;
    }
    io_array_free(&r->keys);
    io_array_free(&r->vals);
    free(r->orig_keys);
    free(r->orig_vals);
    free(r->sigma);
    free(r->times);
    sort_seg_free(&a->seg);
    gpk_ctx_destroy(r->ctx);
}

/* The steps of a sort, each returning 0 or the exit code. */
static int sort_steps(const char *cmd, sort_args *a, sort_run *r)
{
    int rc;
    if ((rc = load_inputs(cmd, a, r)) != 0 || (rc = open_context(cmd, a, r)) != 0 ||
        (rc = check_memory(cmd, a, r)) != 0 || (a->gen && (rc = generate_keys(cmd, a, r)) != 0) ||
        (rc = prepare_buffers(cmd, a, r)) != 0 || (rc = run_sorts(cmd, a, r)) != 0)
        return rc;
    if (a->check) verify(cmd, a, r);
    /* only a result that passed its check (if asked) is written */
    const int failed = strcmp(r->check_state, "FAILED") == 0;
    if (!failed && (rc = write_outputs(cmd, a, r)) != 0) return rc;
    cli_progress_end();
    report(a, r);
    if (!failed) return 0;
    cli_error(cmd, "check FAILED: %s", r->why);
    return CLI_FAIL;
}

int cmd_sort(int argc, char **argv)
{
    const char *cmd = "sort";
    if (wants_mpi(argc, argv)) {
#if defined(GPK_HAVE_MPI)
        return cmd_sort_mpi(argc, argv);
#elif defined(GPK_MPI_PROGRAM)
        /* gpk links libgpk alone: the program gpk-mpi beside it does --mpi */
        int cli_mpi_forward(const char *cmd, char **argv);
        return cli_mpi_forward(cmd, argv - 1); /* gpk's own argv, as main passed argv + 1 */
#else
        cli_error(cmd,
                  "--mpi: this gpk was built without MPI (configure with MPI installed, GPK_WITH_MPI=ON)");
        return CLI_USAGE;
#endif
    }
    if (wants_records(argc, argv)) return cmd_sort_records(argc, argv);
    sort_args a;
    int pr = parse_args(argc, argv, &a);
    if (pr > 0) return CLI_OK;
    if (pr < 0) return CLI_USAGE;
    /* --descending alone: the plain sort in descending order */
    a.ro.descending = a.seg.descending;
    if (sort_seg_check_opts(cmd, &a.seg, &a.ro,
                            a.ro.key_bits || a.ro.radix_bits || a.ro.items || a.ro.groups ||
                                a.ro.scan_split) != 0)
        return CLI_USAGE;
    sort_run r;
    memset(&r, 0, sizeof r);
    r.check_state = "not run";
    const int rc = sort_steps(cmd, &a, &r);
    sort_run_free(&a, &r);
    return rc ? rc : CLI_OK;
}
