/* gpk bench sort: the radix sort on each backend against its peers,
 * measured in the same run on the same data, every result checked.
 *
 * Peers:
 *   cpu    -> qsort, std::sort, Highway's vqsort (where found),
 *             __gnu_parallel::sort and IPS4o (where found; host-to-host sorts;
 *             gpk's CPU time is the host gpk_sort_* call as well)
 *   cuda   -> cub::DeviceRadixSort with the same begin/end bits; both
 *             device-resident (gpk__bench_radix, gpk_peer_cub_radix)
 *   opencl -> gpk's CUDA backend, both device-resident
 * Modes: keys, pairs (values of --value-type), perm (keys + sigma). The CPU
 * peers sort keys, and __gnu_parallel::sort also (key, value) records for
 * pairs; for perm, CUB sorts (key, u32 index) pairs, which is the same work.
 *
 * "speedup" is peer time / gpk time: above 1, gpk is faster. On a gpk row it
 * is against its fastest peer; on a peer row, against that peer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "io.h"
#include "gpk/gen.h"
#include "gpk/sort.h"
#include "peers.h"
#include "bench_hooks.h"

enum { MODE_KEYS = 1, MODE_PAIRS = 2, MODE_PERM = 4 };
enum {
    PEER_QSORT = 1,
    PEER_STD = 2,
    PEER_GNU = 4,
    PEER_CUB = 8,
    PEER_CUDA = 16,
    PEER_VQSORT = 32,
    PEER_IPS4O = 64,
    PEER_ALL = 127
};

/* Above this n, qsort and std::sort run once: at 2^28 one qsort takes
 * about a minute, and the comparison still holds with one sample. */
#define SLOW_PEER_N ((size_t)1 << 26)
/* From this n on, each step gets a progress line on stderr. */
#define PROGRESS_N ((size_t)1 << 22)
/* Room for every gpk_backend value (the library's list, gpk_backend_at). */
#define BENCH_BACKENDS 8

typedef struct bench_cfg {
    gpk_backend backends[BENCH_BACKENDS];
    int nbackends;
    gpk_type types[6];
    int ntypes;
    uint64_t ns[64];
    int nns;
    int modes;
    gpk_type vtype;
    unsigned key_bits, radix_bits;
    gpk_dist dist;
    int have_dist;
    unsigned param;
    uint64_t seed;
    int reps_cpu, reps_gpu;
    int threads, device;
    int peers;
    const char *json_path;
    int quiet;
} bench_cfg;

typedef struct bench_row {
    gpk_backend backend;
    gpk_type type;
    size_t n;
    int mode;
    gpk_type vtype;
    unsigned bit_begin, bit_end;
    int is_gpk;
    int reps;
    char impl[128]; /* the peer and, for CUB, its fastest form */
    double ms, gkeys;
    char vs[128];       /* the peer (gpk rows) or the gpk row (peer rows) */
    double ratio;       /* peer ms / gpk ms, 0 when there is none */
    const char *status; /* "ok", "FAIL", "ERROR", "skipped" */
    char note[300];
} bench_row;

typedef struct bench_state {
    bench_cfg cfg;
    gpk_ctx *ctx[BENCH_BACKENDS]; /* by gpk_backend */
    bench_row *rows;
    size_t nrows, caprows;
    int failures;
    double t_start;
    int chatty; /* progress lines for this block: small sizes finish too fast to need them */
} bench_state;

/* One (type, n): the input, the reference and the work buffers. */
typedef struct block {
    gpk_type type;
    size_t n, kw, vw;
    unsigned bit_begin, bit_end; /* bits both gpk and CUB sort */
    void *input, *ref, *vin;
    uint32_t *rsig;
    void *wk, *wv, *pk;
    uint32_t *ws;
    void *cub_ref; /* floats: the order CUB gives (see block_init); NULL: ref */
} block;

static const char *mode_name(int m) { return m == MODE_KEYS ? "keys" : m == MODE_PAIRS ? "pairs" : "perm"; }

void cmd_bench_help(FILE *f)
{
    fprintf(f,
            "usage: gpk bench sort [options]\n"
            "\n"
            "Times gpk's radix sort per backend x type x n x mode against the peers measured in\n"
            "the same run, on the same data: CUDA vs cub::DeviceRadixSort (same begin/end bits,\n"
            "both device-resident; every call a user can make, 32- and 64-bit num_items, in/out\n"
            "arrays and DoubleBuffer, interleaved, the fastest reported and named in the row,\n"
            "all of them in the JSON note), OpenCL vs gpk's CUDA backend (both device-resident), CPU vs\n"
            "qsort, std::sort, Highway's vqsort (one thread, where found when gpk was\n"
            "configured), __gnu_parallel::sort and IPS4o's parallel samplesort (where found;\n"
            "the faster of a call per sort and a kept sorter) (host-to-host). Every result, peers\n"
            "included, is checked against the expected stable order (gpk_sort_reference below\n"
            "2^22 keys; above, the CPU backend's result proven stable-sorted in O(n)); a\n"
            "mismatch prints a FAIL row and\n"
            "the exit status is 1.\n"
            "\n"
            "  --backends LIST   cpu,cuda,opencl (default: every usable backend)\n"
            "  --types LIST      u32,i32,f32,u64,i64,f64 (default u32)\n"
            "  --n LIST          sizes (default 2^20,2^24; 2^28, 256M, 1k ... accepted)\n"
            "  --pairs           also time key/value pairs (values: --value-type, default u32)\n"
            "  --perm            also time keys + permutation sigma\n"
            "  --keys-only / --no-keys   keep / drop the keys-only mode (default: kept)\n"
            "  --value-type T    value type for --pairs\n"
            "  --key-bits b      sort bits [0, b); CUB gets end_bit = b; the default data\n"
            "                    becomes --dist few-bits --param b (integer types only)\n"
            "  --radix-bits r    gpk's bits per pass (default: tuned)\n"
            "  --dist D          uniform (default), random-bits, few-bits, equal, sorted,\n"
            "                    reverse, float-specials\n"
            "  --param P         distribution parameter; --seed S (default 1)\n"
            "  --reps R          repetitions, median reported (default 5 on CPU, 20 on GPU;\n"
            "                    qsort and std::sort run once when n >= 2^26)\n"
            "  --threads T       CPU threads for gpk, __gnu_parallel::sort and IPS4o (default: all)\n"
            "  --device D        CUDA / OpenCL device index\n"
            "  --peers LIST      all (default), none, or qsort,std-sort,vqsort,gnu-parallel,\n"
            "                    ips4o,cub,cuda\n"
            "  --json FILE       write machine info, the configuration and every row\n"
            "  -q, --quiet       no progress lines on stderr\n"
            "\n"
            "examples (the GPU-machine runs of docs/cli.md):\n"
            "  gpk bench sort --backends cuda,opencl --types u32,u64 --n 2^24,2^28 --pairs \\\n"
            "      --json bench/results/radix-gpu.json\n"
            "  gpk bench sort --backends cuda,opencl --n 2^28 --key-bits 10 --perm \\\n"
            "      --json bench/results/radix-gpu-10bit.json\n"
            "  gpk bench sort --backends cpu --n 2^24,2^28 --json bench/results/radix-cpu.json\n");
}

/* ---- parsing ------------------------------------------------------------------- */

static int add_backend(const char *s, void *arg)
{
    bench_cfg *c = arg;
    gpk_backend b;
    if (gpk_backend_parse(s, &b) != GPK_OK || b == GPK_BACKEND_AUTO || (int)b >= BENCH_BACKENDS) return -1;
    for (int i = 0; i < c->nbackends; i++)
        if (c->backends[i] == b) return 0;
    c->backends[c->nbackends++] = b;
    return 0;
}

static int add_type(const char *s, void *arg)
{
    bench_cfg *c = arg;
    gpk_type t;
    if (gpk_type_parse(s, &t) != GPK_OK || c->ntypes >= 6) return -1;
    c->types[c->ntypes++] = t;
    return 0;
}

static int add_n(const char *s, void *arg)
{
    bench_cfg *c = arg;
    uint64_t v;
    if (cli_parse_size(s, &v) != 0 || c->nns >= 64) return -1;
    c->ns[c->nns++] = v;
    return 0;
}

static int add_peer(const char *s, void *arg)
{
    bench_cfg *c = arg;
    static const struct {
        const char *name;
        int bit;
    } names[] = {{"all", PEER_ALL},       {"none", 0},
                 {"qsort", PEER_QSORT},   {"std-sort", PEER_STD},
                 {"std::sort", PEER_STD}, {"gnu-parallel", PEER_GNU},
                 {"cub", PEER_CUB},       {"cuda", PEER_CUDA},
                 {"vqsort", PEER_VQSORT}, {"ips4o", PEER_IPS4O}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            c->peers |= names[i].bit;
            return 0;
        }
    return -1;
}

/* The flags that take no value. Returns 1 when `a` was one, else 0. */
static int parse_bench_flag(const char *a, bench_cfg *c, int *want_keys)
{
    if (cli_flag(a, NULL, "--pairs")) {
        c->modes |= MODE_PAIRS;
        return 1;
    }
    if (cli_flag(a, NULL, "--perm")) {
        c->modes |= MODE_PERM;
        return 1;
    }
    if (cli_flag(a, NULL, "--keys-only")) {
        *want_keys = 1;
        return 1;
    }
    if (cli_flag(a, NULL, "--no-keys")) {
        *want_keys = 0;
        return 1;
    }
    if (cli_flag(a, "-q", "--quiet")) {
        c->quiet = 1;
        return 1;
    }
    return 0;
}

/* The comma-separated lists (--backends, --types, --n, --peers). Returns 1
 * when argv[*i] was one (and *i is past its value), 0 when not, -1 on a
 * usage error (already reported). */
static int parse_bench_list_opt(const char *cmd, int argc, char **argv, int *i, bench_cfg *c,
                                int *peers_given)
{
    const char *val;
    int m;
#define LIST_OPT(name, fn, what)                                               \
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, name, &val)) != 0) {      \
        if (m < 0) return -1;                                                  \
        if (bench_for_each_item(val, fn, c) != 0) {                            \
            cli_error(cmd, "bad %s list '%s' (expected %s)", name, val, what); \
            return -1;                                                         \
        }                                                                      \
        return 1;                                                              \
    }
    LIST_OPT("--backends", add_backend, "cpu,cuda,opencl")
    LIST_OPT("--types", add_type, "u32,i32,f32,u64,i64,f64")
    LIST_OPT("--n", add_n, "sizes such as 2^20,16M,1000")
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--peers", &val)) != 0) {
        if (m < 0) return -1;
        *peers_given = 1;
        if (bench_for_each_item(val, add_peer, c) != 0) {
            cli_error(cmd,
                      "bad --peers '%s' (all, none, or qsort,std-sort,vqsort,"
                      "gnu-parallel,ips4o,cub,cuda)",
                      val);
            return -1;
        }
        return 1;
    }
#undef LIST_OPT
    return 0;
}

/* --value-type, --dist and --json. Returns as parse_bench_list_opt. */
static int parse_bench_text_opt(const char *cmd, int argc, char **argv, int *i, bench_cfg *c)
{
    const char *val;
    int m;
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--value-type", &val)) != 0) {
        if (m < 0) return -1;
        if (gpk_type_parse(val, &c->vtype) != GPK_OK) {
            cli_error(cmd, "unknown value type '%s'", val);
            return -1;
        }
        return 1;
    }
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--dist", &val)) != 0) {
        if (m < 0) return -1;
        if (gpk_dist_parse(val, &c->dist) != GPK_OK) {
            cli_error(cmd, "unknown distribution '%s'", val);
            return -1;
        }
        c->have_dist = 1;
        return 1;
    }
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--json", &val)) != 0) {
        if (m < 0) return -1;
        c->json_path = val;
        return 1;
    }
    return 0;
}

/* The numeric options, each checked against its range. Returns as
 * parse_bench_list_opt. */
static int parse_bench_number_opt(const char *cmd, int argc, char **argv, int *i, bench_cfg *c)
{
    static const cli_uint_opt nums[] = {
        {"--key-bits", 0, 64}, {"--radix-bits", 0, 16},   {"--param", 0, 64},      {"--seed", 0, UINT64_MAX},
        {"--reps", 1, 100000}, {"--threads", 0, 1 << 20}, {"--device", 0, 1 << 20}};
    uint64_t v;
    const int k = cli_opt_uint_of(cmd, argc, argv, i, nums, sizeof nums / sizeof nums[0], &v);
    if (k == -1) return -1;
    switch (k) {
    case 0: c->key_bits = (unsigned)v; break;
    case 1: c->radix_bits = (unsigned)v; break;
    case 2: c->param = (unsigned)v; break;
    case 3: c->seed = v; break;
    case 4: c->reps_cpu = c->reps_gpu = (int)v; break;
    case 5: c->threads = (int)v; break;
    case 6: c->device = (int)v; break;
    }
    return k >= 0;
}

/* The defaults of what was not given, and the checks across options. */
static int finish_bench_args(const char *cmd, bench_cfg *c, int want_keys, int peers_given)
{
    if (want_keys) c->modes |= MODE_KEYS;
    if (c->device >= 0 && c->nbackends > 0) {
        int gpu = 0;
        for (int k = 0; k < c->nbackends; k++) gpu |= c->backends[k] != GPK_BACKEND_CPU;
        if (!gpu) {
            cli_error(cmd, "--device selects a CUDA or OpenCL device; --backends cpu has none");
            return -1;
        }
    }
    if (!c->modes) {
        cli_error(cmd, "--no-keys leaves nothing to time: add --pairs or --perm");
        return -1;
    }
    if (!peers_given) c->peers = PEER_ALL;
    if (c->ntypes == 0) c->types[c->ntypes++] = GPK_U32;
    if (c->nns == 0) {
        c->ns[c->nns++] = (uint64_t)1 << 20;
        c->ns[c->nns++] = (uint64_t)1 << 24;
    }
    for (int k = 0; k < c->nns; k++)
        if (c->ns[k] < 2 || c->ns[k] > UINT32_MAX) {
            cli_error(cmd, "--n %llu: the bench takes 2 <= n <= 2^32-1 (sigma is u32)",
                      (unsigned long long)c->ns[k]);
            return -1;
        }
    if (c->key_bits) {
        for (int k = 0; k < c->ntypes; k++) {
            gpk_type t = c->types[k];
            if (t == GPK_F32 || t == GPK_F64) {
                cli_error(cmd,
                          "--key-bits with %s: CUB and gpk map floats differently below "
                          "the full width, so the runs would not sort the same bits; use "
                          "integer types",
                          gpk_type_name(t));
                return -1;
            }
            if (c->key_bits > 8 * gpk_type_size(t)) {
                cli_error(cmd, "--key-bits %u is larger than the %u bits of %s", c->key_bits,
                          (unsigned)(8 * gpk_type_size(t)), gpk_type_name(t));
                return -1;
            }
        }
        if (!c->have_dist) {
            c->dist = GPK_DIST_FEW_BITS;
            if (!c->param) c->param = c->key_bits;
        }
    }
    return 0;
}

static int parse_bench_args(int argc, char **argv, bench_cfg *c)
{
    const char *cmd = "bench";
    memset(c, 0, sizeof *c);
    c->device = -1;
    c->seed = 1;
    c->vtype = GPK_U32;
    c->reps_cpu = 5;
    c->reps_gpu = 20;
    int want_keys = 1, peers_given = 0;
    /* argv[0] = "bench", argv[1] = "sort" (checked by the caller). */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (cli_is_help(a)) {
            cmd_bench_help(stdout);
            return 1;
        }
        if (parse_bench_flag(a, c, &want_keys)) continue;
        if ((m = parse_bench_list_opt(cmd, argc, argv, &i, c, &peers_given)) != 0 ||
            (m = parse_bench_text_opt(cmd, argc, argv, &i, c)) != 0 ||
            (m = parse_bench_number_opt(cmd, argc, argv, &i, c)) != 0) {
            if (m < 0) return -1;
            continue;
        }
        cli_error(cmd, "unknown option or argument '%s' (see gpk bench sort --help)", a);
        return -1;
    }
    return finish_bench_args(cmd, c, want_keys, peers_given);
}

/* ---- rows ------------------------------------------------------------------------------ */

static bench_row *new_row(bench_state *st, const block *b, gpk_backend be, int mode, const char *impl,
                          int is_gpk)
{
    if (st->nrows == st->caprows) {
        size_t cap = st->caprows ? st->caprows * 2 : 64;
        bench_row *r = realloc(st->rows, cap * sizeof *r);
        if (!r) return NULL;
        st->rows = r;
        st->caprows = cap;
    }
    bench_row *r = &st->rows[st->nrows++];
    memset(r, 0, sizeof *r);
    r->backend = be;
    r->type = b->type;
    r->n = b->n;
    r->mode = mode;
    r->vtype = st->cfg.vtype;
    r->bit_begin = b->bit_begin;
    r->bit_end = b->bit_end;
    r->is_gpk = is_gpk;
    r->status = "ok";
    snprintf(r->impl, sizeof r->impl, "%s", impl);
    return r;
}

static void print_header(void)
{
    printf("%-7s %-4s %-6s %-6s %-4s %-28s %10s %8s  %-38s %s\n", "backend", "type", "n", "mode", "bits",
           "impl", "ms", "Gkeys/s", "speedup (peer ms / gpk ms)", "check");
}

static void print_row(const bench_row *r)
{
    char nbuf[32], bits[16], sp[160] = "";
    cli_size_str(r->n, nbuf, sizeof nbuf);
    snprintf(bits, sizeof bits, "%u", r->bit_end - r->bit_begin);
    const char *mode = r->mode == MODE_PAIRS
        ? (r->vtype == GPK_U32 || r->vtype == GPK_I32 || r->vtype == GPK_F32 ? "pairs" : "pairs8")
        : mode_name(r->mode);
    if (r->ratio > 0) {
        if (r->is_gpk) snprintf(sp, sizeof sp, "%.2fx vs %s", r->ratio, r->vs);
        else snprintf(sp, sizeof sp, "gpk %.2fx", r->ratio);
    }
    if (strcmp(r->status, "ok") == 0 || strcmp(r->status, "FAIL") == 0)
        printf("%-7s %-4s %-6s %-6s %-4s %-28s %10.3f %8.3f  %-38s %s\n", gpk_backend_name(r->backend),
               gpk_type_name(r->type), nbuf, mode, bits, r->impl, r->ms, r->gkeys, sp, r->status);
    else
        printf("%-7s %-4s %-6s %-6s %-4s %-28s %10s %8s  %-38s %s\n", gpk_backend_name(r->backend),
               gpk_type_name(r->type), nbuf, mode, bits, r->impl, "-", "-", "", r->status);
    if (r->note[0] && strcmp(r->status, "ok") != 0) printf("        %s: %s\n", r->status, r->note);
    fflush(stdout);
}

static void progress(const bench_state *st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void progress(const bench_state *st, const char *fmt, ...)
{
    if (st->cfg.quiet || !st->chatty) return;
    va_list ap;
    fprintf(stderr, "gpk bench [%7.1f s] ", (cli_now_ms() - st->t_start) * 1e-3);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- checks ------------------------------------------------------------------------------ */

static size_t first_diff(const void *a, const void *b, size_t n, size_t w)
{
    const unsigned char *x = a, *y = b;
    if (memcmp(x, y, n * w) == 0) return n;
    for (size_t i = 0; i < n; i++)
        if (memcmp(x + i * w, y + i * w, w) != 0) return i;
    return n;
}

/* gpk results: keys equal the reference; values are those of a stable sort;
 * sigma equals the reference's (stability makes it unique). */
static int check_gpk(const block *b, int mode, char *why, size_t len)
{
    size_t d = first_diff(b->wk, b->ref, b->n, b->kw);
    if (d < b->n) {
        snprintf(why, len, "keys differ from the reference from index %zu on", d);
        return 0;
    }
    if (mode == MODE_PAIRS) {
        const unsigned char *v = b->wv, *vin = b->vin;
        for (size_t j = 0; j < b->n; j++)
            if (memcmp(v + j * b->vw, vin + (size_t)b->rsig[j] * b->vw, b->vw) != 0) {
                snprintf(why, len, "value %zu is not the one a stable sort puts there", j);
                return 0;
            }
    }
    if (mode == MODE_PERM) {
        for (size_t j = 0; j < b->n; j++)
            if (b->ws[j] != b->rsig[j]) {
                snprintf(why, len, "sigma[%zu] = %u, the reference has %u", j, b->ws[j], b->rsig[j]);
                return 0;
            }
    }
    return 1;
}

/* Peer keys must equal `expect` (the reference, or CUB's order of it). */
static int check_peer(const block *b, const void *keys, const void *expect, char *why, size_t len)
{
    size_t d = first_diff(keys, expect, b->n, b->kw);
    if (d < b->n) {
        snprintf(why, len, "keys differ from the reference from index %zu on", d);
        return 0;
    }
    return 1;
}

/* ---- measuring ---------------------------------------------------------------------------- */

static void restore(const block *b, int mode)
{
    memcpy(b->wk, b->input, b->n * b->kw);
    if (mode == MODE_PAIRS) memcpy(b->wv, b->vin, b->n * b->vw);
}

/* gpk on one backend; fills row r. Returns the median ms, or -1. */
static double measure_gpk(bench_state *st, gpk_ctx *ctx, const block *b, int mode, bench_row *r)
{
    gpk_backend be = gpk_ctx_backend(ctx);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = st->cfg.key_bits;
    o.radix_bits = st->cfg.radix_bits;
    size_t vw = mode == MODE_PAIRS ? b->vw : 0;
    uint32_t *sig = mode == MODE_PERM ? b->ws : NULL;
    gpk_status s = GPK_OK;
    double ms = -1;
    if (be == GPK_BACKEND_CPU) {
        int reps = st->cfg.reps_cpu;
        double *t = malloc((size_t)reps * sizeof *t);
        if (!t) {
            snprintf(r->note, sizeof r->note, "out of memory");
            r->status = "ERROR";
            return -1;
        }
        for (int k = 0; k < reps && s == GPK_OK; k++) {
            restore(b, mode);
            double t0 = cli_now_ms();
            if (mode == MODE_PAIRS) s = gpk_sort_pairs(ctx, b->type, b->wk, st->cfg.vtype, b->wv, b->n, &o);
            else if (mode == MODE_PERM) s = gpk_sort_perm(ctx, b->type, b->wk, sig, b->n, &o);
            else s = gpk_sort_keys(ctx, b->type, b->wk, b->n, &o);
            t[k] = cli_now_ms() - t0;
        }
        if (s == GPK_OK) ms = cli_median(t, (size_t)reps);
        free(t);
        r->reps = reps;
    } else {
        restore(b, mode);
        r->reps = st->cfg.reps_gpu;
        s = gpk__bench_radix(ctx, b->type, b->wk, vw, vw ? b->wv : NULL, sig, b->n, &o, r->reps, &ms);
        /* which variant ran (CUDA: the hybrid or the LSD passes; OpenCL:
         * onesweep with or without the vendor path, fast, paper) */
        if (s == GPK_OK) snprintf(r->note, sizeof r->note, "%s", gpk_last_sort_path(ctx));
    }
    if (s != GPK_OK) {
        snprintf(r->note, sizeof r->note, "%s", gpk_last_error(ctx));
        r->status = "ERROR";
        return -1;
    }
    r->ms = ms;
    r->gkeys = ms > 0 ? (double)b->n / (ms * 1e6) : 0;
    char why[200];
    if (!check_gpk(b, mode, why, sizeof why)) {
        snprintf(r->note, sizeof r->note, "%s", why);
        r->status = "FAIL";
    }
    return ms;
}

typedef int (*cpu_peer_fn)(gpk_type, const void *, void *, size_t, int, gpk_peer_result *, char *, size_t);
/* a peer on the CPU threads gpk runs on (--threads) */
typedef int (*threaded_peer_fn)(gpk_type, const void *, void *, size_t, int, int, gpk_peer_result *, char *,
                                size_t);

/* Fills a peer row from a peer call's return code and result. */
static void finish_peer(const block *b, bench_row *r, int rc, const gpk_peer_result *pr, const char *err,
                        const void *expect)
{
    if (rc == -1) {
        r->status = "skipped";
        snprintf(r->note, sizeof r->note, "not built into this gpk");
        return;
    }
    if (rc != 0) {
        r->status = "ERROR";
        snprintf(r->note, sizeof r->note, "%s", err);
        return;
    }
    if (pr->name[0] && pr->form[0]) snprintf(r->impl, sizeof r->impl, "%s (%s)", pr->name, pr->form);
    else if (pr->name[0]) snprintf(r->impl, sizeof r->impl, "%s", pr->name);
    if (pr->forms[0]) snprintf(r->note, sizeof r->note, "fastest of: %s", pr->forms);
    r->ms = pr->ms;
    r->gkeys = pr->ms > 0 ? (double)b->n / (pr->ms * 1e6) : 0;
    char why[200];
    if (!check_peer(b, b->pk, expect, why, sizeof why)) {
        r->status = "FAIL";
        snprintf(r->note, sizeof r->note, "%s", why);
    }
}

static void note_failures(bench_state *st, size_t from)
{
    for (size_t i = from; i < st->nrows; i++) {
        bench_row *r = &st->rows[i];
        if (strcmp(r->status, "FAIL") == 0 || strcmp(r->status, "ERROR") == 0) {
            char nbuf[32];
            st->failures++;
            fprintf(stderr, "gpk bench: %s: %s %s n=%s %s %s: %s\n", r->status, gpk_backend_name(r->backend),
                    gpk_type_name(r->type), cli_size_str(r->n, nbuf, sizeof nbuf), mode_name(r->mode),
                    r->impl, r->note);
        }
    }
}

/* Links gpk row g with peer rows [p0, p1): speedups and the best peer. */
static void link_peers(bench_state *st, size_t g, size_t p0, size_t p1)
{
    bench_row *gr = &st->rows[g];
    if (strcmp(gr->status, "FAIL") != 0 && strcmp(gr->status, "ok") != 0) return;
    double best = 0;
    for (size_t i = p0; i < p1; i++) {
        bench_row *p = &st->rows[i];
        if (strcmp(p->status, "ok") != 0 || p->ms <= 0 || gr->ms <= 0) continue;
        p->ratio = p->ms / gr->ms;
        snprintf(p->vs, sizeof p->vs, "gpk %s", gpk_backend_name(gr->backend));
        if (best == 0 || p->ms < best) {
            best = p->ms;
            gr->ratio = p->ms / gr->ms;
            snprintf(gr->vs, sizeof gr->vs, "%s", p->impl);
        }
    }
}

static void run_mode(bench_state *st, block *b, int mode)
{
    const bench_cfg *c = &st->cfg;
    char nbuf[32];
    cli_size_str(b->n, nbuf, sizeof nbuf);
    size_t first_row = st->nrows;
    double cuda_ms = -1;
    size_t cuda_row = (size_t)-1;
    char err[300];

    for (int k = 0; k < c->nbackends; k++) {
        gpk_backend be = c->backends[k];
        gpk_ctx *ctx = st->ctx[be];
        progress(st, "%s %s n=%s %s: gpk", gpk_backend_name(be), gpk_type_name(b->type), nbuf,
                 mode_name(mode));
        size_t g = st->nrows;
        bench_row *r = new_row(st, b, be, mode, "gpk", 1);
        if (!r) return;
        double ms = measure_gpk(st, ctx, b, mode, r);
        size_t p0 = st->nrows;

        if (be == GPK_BACKEND_CPU && mode == MODE_KEYS) {
            const struct {
                int bit;
                const char *name;
                cpu_peer_fn fn;
            } peers[] = {{PEER_QSORT, "qsort", gpk_peer_qsort},
                         {PEER_STD, "std::sort", gpk_peer_std_sort},
                         {PEER_VQSORT, "vqsort", gpk_peer_vqsort}};
            for (size_t q = 0; q < sizeof peers / sizeof peers[0]; q++) {
                if (!(c->peers & peers[q].bit)) continue;
                /* vqsort is as fast as gpk: its reps stay at every size */
                int reps = b->n >= SLOW_PEER_N && peers[q].bit != PEER_VQSORT ? 1 : c->reps_cpu;
                progress(st, "cpu %s n=%s keys: %s (%d rep%s)", gpk_type_name(b->type), nbuf, peers[q].name,
                         reps, reps > 1 ? "s" : "");
                bench_row *p = new_row(st, b, be, mode, peers[q].name, 0);
                if (!p) return;
                gpk_peer_result pr = {0};
                err[0] = '\0';
                int rc = peers[q].fn(b->type, b->input, b->pk, b->n, reps, &pr, err, sizeof err);
                p->reps = reps;
                finish_peer(b, p, rc, &pr, err, b->ref);
            }
            const struct {
                int bit;
                const char *name;
                threaded_peer_fn fn;
            } threaded[] = {{PEER_GNU, "__gnu_parallel::sort", gpk_peer_gnu_parallel_sort},
                            {PEER_IPS4O, "IPS4o", gpk_peer_ips4o}};
            for (size_t q = 0; q < sizeof threaded / sizeof threaded[0]; q++) {
                if (!(c->peers & threaded[q].bit)) continue;
                progress(st, "cpu %s n=%s keys: %s", gpk_type_name(b->type), nbuf, threaded[q].name);
                bench_row *p = new_row(st, b, be, mode, threaded[q].name, 0);
                if (!p) return;
                gpk_peer_result pr = {0};
                err[0] = '\0';
                int rc = threaded[q].fn(b->type, b->input, b->pk, b->n, c->threads, c->reps_cpu, &pr, err,
                                        sizeof err);
                p->reps = c->reps_cpu;
                finish_peer(b, p, rc, &pr, err, b->ref);
            }
        }
        if (be == GPK_BACKEND_CPU && mode == MODE_PAIRS && (c->peers & PEER_GNU)) {
            progress(st, "cpu %s n=%s pairs: __gnu_parallel::sort of (key, value) records",
                     gpk_type_name(b->type), nbuf);
            bench_row *p = new_row(st, b, be, mode, "__gnu_parallel::sort", 0);
            if (!p) return;
            gpk_peer_result pr = {0};
            err[0] = '\0';
            int rc = gpk_peer_gnu_parallel_sort_pairs(b->type, b->input, b->vin, b->vw, b->pk, b->n,
                                                      c->threads, c->reps_cpu, &pr, err, sizeof err);
            p->reps = c->reps_cpu;
            finish_peer(b, p, rc, &pr, err, b->ref);
        }
        if (be == GPK_BACKEND_CUDA) {
            cuda_ms = ms;
            cuda_row = g;
            if (c->peers & PEER_CUB) {
                size_t vw = mode == MODE_PAIRS ? b->vw : mode == MODE_PERM ? 4 : 0;
                progress(st, "cuda %s n=%s %s: cub::DeviceRadixSort bits [%u, %u)", gpk_type_name(b->type),
                         nbuf, mode_name(mode), b->bit_begin, b->bit_end);
                bench_row *p = new_row(st, b, be, mode, "cub::DeviceRadixSort", 0);
                if (!p) return;
                gpk_peer_result pr = {0};
                err[0] = '\0';
                int rc =
                    gpk_peer_cub_radix(bench_ctx_device(ctx), b->type, b->input, b->pk, vw, b->n,
                                       (int)b->bit_begin, (int)b->bit_end, c->reps_gpu, &pr, err, sizeof err);
                p->reps = c->reps_gpu;
                finish_peer(b, p, rc, &pr, err, b->cub_ref ? b->cub_ref : b->ref);
            }
        }
        if (be == GPK_BACKEND_OPENCL && (c->peers & PEER_CUDA)) {
            if (cuda_ms < 0 && cuda_row == (size_t)-1 && st->ctx[GPK_BACKEND_CUDA]) {
                /* CUDA not in --backends but present: measure it as the peer. */
                progress(st, "cuda %s n=%s %s: gpk (as the OpenCL peer)", gpk_type_name(b->type), nbuf,
                         mode_name(mode));
                bench_row *p = new_row(st, b, GPK_BACKEND_CUDA, mode, "gpk", 0);
                if (!p) return;
                p->reps = c->reps_gpu;
                measure_gpk(st, st->ctx[GPK_BACKEND_CUDA], b, mode, p);
                snprintf(p->impl, sizeof p->impl, "gpk-cuda");
            } else if (cuda_row != (size_t)-1) {
                /* The CUDA row of this block is the peer: link it directly. */
                bench_row *gr = &st->rows[g], *cr = &st->rows[cuda_row];
                if (strcmp(gr->status, "ok") == 0 && strcmp(cr->status, "ok") == 0 && ms > 0 && cuda_ms > 0) {
                    gr->ratio = cuda_ms / ms;
                    snprintf(gr->vs, sizeof gr->vs, "gpk cuda");
                }
            }
        }
        link_peers(st, g, p0, st->nrows);
    }
    for (size_t i = first_row; i < st->nrows; i++) print_row(&st->rows[i]);
    note_failures(st, first_row);
}

/* ---- one (type, n) block ---------------------------------------------------------------- */

static void block_free(block *b)
{
    free(b->input);
    free(b->ref);
    free(b->vin);
    free(b->rsig);
    free(b->wk);
    free(b->wv);
    free(b->pk);
    free(b->ws);
    free(b->cub_ref);
    memset(b, 0, sizeof *b);
}

static int is_zero(gpk_type t, const unsigned char *p)
{
    if (t == GPK_F32) {
        uint32_t x;
        memcpy(&x, p, 4);
        return (x & 0x7FFFFFFFu) == 0;
    }
    uint64_t x;
    memcpy(&x, p, 8);
    return (x & 0x7FFFFFFFFFFFFFFFull) == 0;
}

static int is_neg_nan(gpk_type t, const unsigned char *p)
{
    if (t == GPK_F32) {
        uint32_t x;
        memcpy(&x, p, 4);
        return (x >> 31) && (x & 0x7FFFFFFFu) > 0x7F800000u;
    }
    if (t == GPK_F64) {
        uint64_t x;
        memcpy(&x, p, 8);
        return (x >> 63) && (x & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    }
    return 0;
}

/* The expected order for large n. A sequential merge sort of 2^28 keys takes
 * minutes, so above GPK_BENCH_REF_FAST the CPU backend sorts with sigma and
 * the result is proven right in O(n): sigma is a permutation, every key is
 * the input key sigma names, the mapped keys (masked to key_bits) never
 * decrease, and ties keep sigma increasing. Those four facts pin down the
 * unique stable order, so this is as strict as comparing with the reference. */
#define GPK_BENCH_REF_FAST ((size_t)1 << 22)

static int expected_order(gpk_type t, const void *input, void *ref, uint32_t *rsig, size_t n,
                          unsigned key_bits, char *why, size_t len)
{
    if (n < GPK_BENCH_REF_FAST) {
        memcpy(ref, input, n * gpk_type_size(t));
        gpk_status s = gpk_sort_reference(t, ref, 0, NULL, rsig, n, key_bits);
        if (s != GPK_OK) snprintf(why, len, "the reference sort failed: %s", gpk_status_string(s));
        return s == GPK_OK;
    }
    const size_t w = gpk_type_size(t);
    gpk_ctx *cpu = NULL;
    gpk_status s = gpk_ctx_create(&cpu, GPK_BACKEND_CPU);
    if (s == GPK_OK) {
        gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
        o.key_bits = key_bits;
        memcpy(ref, input, n * w);
        s = gpk_sort_perm(cpu, t, ref, rsig, n, &o);
    }
    if (s != GPK_OK) {
        snprintf(why, len, "the expected order (CPU backend) failed: %s: %s", gpk_status_string(s),
                 gpk_last_error(cpu));
        gpk_ctx_destroy(cpu);
        return 0;
    }
    gpk_ctx_destroy(cpu);
    const uint64_t mask = (key_bits == 0 || key_bits == 64) ? ~0ull : ((1ull << key_bits) - 1);
    unsigned char *seen = calloc((n + 7) / 8, 1);
    if (!seen) {
        snprintf(why, len, "out of host memory for the order check");
        return 0;
    }
    const unsigned char *in = input, *out = ref;
    int ok = 1;
    for (size_t j = 0; j < n && ok; j++) {
        const size_t i = rsig[j];
        if (i >= n || (seen[i / 8] >> (i % 8)) & 1u) {
            snprintf(why, len, "expected order: sigma[%zu] = %zu repeats or is out of range", j, i);
            ok = 0;
            break;
        }
        seen[i / 8] |= (unsigned char)(1u << (i % 8));
        if (memcmp(out + j * w, in + i * w, w) != 0) {
            snprintf(why, len, "expected order: key %zu is not input key sigma[%zu]", j, j);
            ok = 0;
        } else if (j > 0) {
            const uint64_t a = gpk__mapped_key_at(t, out, j - 1, mask),
                           c = gpk__mapped_key_at(t, out, j, mask);
            if (c < a || (c == a && rsig[j] < rsig[j - 1])) {
                snprintf(why, len, "expected order: keys %zu and %zu are out of (stable) order", j - 1, j);
                ok = 0;
            }
        }
    }
    free(seen);
    return ok;
}

/* Returns 0, or -1 with the reason in why (a setup failure), or -2 on a
 * usage problem (keys above --key-bits). */
static int block_init(bench_state *st, block *b, gpk_type t, size_t n, char *why, size_t len)
{
    const bench_cfg *c = &st->cfg;
    memset(b, 0, sizeof *b);
    b->type = t;
    b->n = n;
    st->chatty = n >= PROGRESS_N;
    b->kw = gpk_type_size(t);
    b->vw = gpk_type_size(c->vtype);
    int pairs = c->modes & MODE_PAIRS, perm = c->modes & MODE_PERM;
    b->input = malloc(n * b->kw);
    b->ref = malloc(n * b->kw);
    b->rsig = malloc(n * sizeof *b->rsig);
    b->wk = malloc(n * b->kw);
    b->pk = malloc(n * b->kw);
    b->vin = pairs ? malloc(n * b->vw) : NULL;
    b->wv = pairs ? malloc(n * b->vw) : NULL;
    b->ws = perm ? malloc(n * sizeof *b->ws) : NULL;
    if (!b->input || !b->ref || !b->rsig || !b->wk || !b->pk || (pairs && (!b->vin || !b->wv)) ||
        (perm && !b->ws)) {
        snprintf(why, len, "out of host memory for n = %zu %s", n, gpk_type_name(t));
        return -1;
    }
    gpk_status s = gpk_generate(t, c->dist, b->input, n, c->seed, c->param);
    if (s != GPK_OK) {
        snprintf(why, len, "gpk_generate(%s, %s): %s", gpk_type_name(t), gpk_dist_name(c->dist),
                 gpk_status_string(s));
        return -1;
    }
    if (pairs) {
        /* Distinct values, so a value out of place is always seen. */
        for (size_t i = 0; i < n; i++) {
            if (b->vw == 4) {
                uint32_t v = (uint32_t)i;
                memcpy((char *)b->vin + i * 4, &v, 4);
            } else {
                uint64_t v = ((uint64_t)i << 32) | (uint32_t)~i;
                memcpy((char *)b->vin + i * 8, &v, 8);
            }
        }
    }

    /* The bits both sides sort: [0, b) with --key-bits; else where the
     * mapped keys differ (gpk detects the same range itself). CUB's twiddle
     * equals gpk's map for signed types; for floats it does not, so floats
     * keep the full width. */
    uint64_t and_all = ~0ull, or_all = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t m;
        if (b->kw == 4) {
            uint32_t x;
            memcpy(&x, (char *)b->input + i * 4, 4);
            m = gpk__map_u32(t, x);
        } else {
            uint64_t x;
            memcpy(&x, (char *)b->input + i * 8, 8);
            m = gpk__map_u64(t, x);
        }
        and_all &= m;
        or_all |= m;
    }
    if (b->kw == 4) and_all &= 0xFFFFFFFFull;
    if (c->key_bits) {
        /* Keys that differ only below bit b sort the same by bits [0, b) as
         * by the whole key, so the full-key CPU peers stay comparable. */
        if (c->key_bits < 64 && ((and_all ^ or_all) >> c->key_bits) != 0) {
            snprintf(why, len,
                     "the %s %s data differs above bit %u, so sorting bits [0, %u) "
                     "would not sort it (use --dist few-bits --param %u)",
                     gpk_dist_name(c->dist), gpk_type_name(t), c->key_bits, c->key_bits, c->key_bits);
            return -2;
        }
        b->bit_begin = 0;
        b->bit_end = c->key_bits;
    } else if (t == GPK_F32 || t == GPK_F64) {
        b->bit_begin = 0;
        b->bit_end = (unsigned)(8 * b->kw);
    } else {
        gpk__bench_key_range(and_all, or_all, &b->bit_begin, &b->bit_end);
    }

    char nbuf[32];
    progress(st,
             n < GPK_BENCH_REF_FAST ? "%s n=%s: reference sort (sequential merge sort)"
                                    : "%s n=%s: expected order (CPU backend, checked in O(n))",
             gpk_type_name(t), cli_size_str(n, nbuf, sizeof nbuf));
    if (!expected_order(t, b->input, b->ref, b->rsig, n, c->key_bits, why, len)) return -1;
    /* CUB orders floats its own way: -0.0 and +0.0 are equal keys (so the
     * zeros keep their input order: the sort is stable), and negative NaNs
     * come first where gpk puts them last. Everything else matches, so
     * CUB's exact expected output is the reference with those two changes. */
    if (t == GPK_F32 || t == GPK_F64) {
        size_t w = b->kw, z0 = n, rot = 0;
        const unsigned char *ref = b->ref, *in = b->input;
        for (size_t i = 0; i < n && z0 == n; i++)
            if (is_zero(t, ref + i * w)) z0 = i;
        while (rot < n && is_neg_nan(t, ref + (n - 1 - rot) * w)) rot++;
        if (z0 < n || rot) {
            unsigned char *cr = malloc(n * w);
            if (!cr) {
                snprintf(why, len, "out of host memory for CUB's expected order");
                return -1;
            }
            b->cub_ref = cr;
            memcpy(cr + rot * w, ref, (n - rot) * w);
            memcpy(cr, ref + (n - rot) * w, rot * w);
            for (size_t i = 0, j = z0 + rot; i < n && z0 < n; i++)
                if (is_zero(t, in + i * w)) memcpy(cr + (j++) * w, in + i * w, w);
        }
    }
    return 0;
}

/* ---- JSON --------------------------------------------------------------------------------- */

static int write_json(const bench_state *st, int argc, char **argv, const char *date, char *err,
                      size_t errlen)
{
    const bench_cfg *c = &st->cfg;
    io_out out;
    if (io_out_open(&out, c->json_path, err, errlen) != 0) return -1;
    FILE *f = out.f;
    char host[256], model[256];
    int cores;
    unsigned long long mem;
    bench_machine(host, sizeof host, model, sizeof model, &cores, &mem);

    fprintf(f, "{\n  \"tool\": \"gpk bench sort\",\n  \"gpk_version\": ");
    cli_json_str(f, gpk_version());
    fprintf(f, ",\n  \"backends_built\": ");
    cli_json_str(f, cli_backends_built());
    fprintf(f, ",\n  \"date\": ");
    cli_json_str(f, date);
    fprintf(f, ",\n  \"command\": \"gpk");
    for (int i = 0; i < argc; i++) {
        /* argv as one string, each argument JSON-escaped. */
        fputc(' ', f);
        for (const char *p = argv[i]; *p; p++) {
            if (*p == '"' || *p == '\\') fputc('\\', f);
            if ((unsigned char)*p >= 0x20) fputc(*p, f);
        }
    }
    fprintf(f, "\",\n  \"machine\": {\"hostname\": ");
    cli_json_str(f, host);
    fprintf(f, ", \"cpu_model\": ");
    cli_json_str(f, model);
    fprintf(f, ", \"logical_cores\": %d, \"memory_bytes\": %llu},\n", cores, mem);
    fprintf(f, "  \"devices\": [");
    int first = 1;
    for (int b = 0; b < BENCH_BACKENDS; b++) {
        if (!st->ctx[b]) continue;
        gpk_ctx_info info;
        gpk_ctx_info_get(st->ctx[b], &info);
        fprintf(f, "%s\n    ", first ? "" : ",");
        cli_json_ctx_info(f, &info);
        first = 0;
    }
    fprintf(f, "\n  ],\n  \"config\": {\"dist\": ");
    cli_json_str(f, gpk_dist_name(c->dist));
    fprintf(f,
            ", \"param\": %u, \"seed\": %llu, \"key_bits\": %u, \"radix_bits\": %u, "
            "\"reps_cpu\": %d, \"reps_gpu\": %d, \"slow_peer_reps_1_from_n\": %zu, "
            "\"threads\": %d, \"value_type\": \"%s\"},\n",
            c->param, (unsigned long long)c->seed, c->key_bits, c->radix_bits, c->reps_cpu, c->reps_gpu,
            SLOW_PEER_N, c->threads, gpk_type_name(c->vtype));
    fprintf(f,
            "  \"timing\": \"cpu rows: host-to-host sort calls; cuda and opencl rows: "
            "device-resident sorts (uploads excluded); median over reps; speedup = peer ms / "
            "gpk ms\",\n");
    fprintf(f, "  \"rows\": [");
    for (size_t i = 0; i < st->nrows; i++) {
        const bench_row *r = &st->rows[i];
        fprintf(f, "%s\n    {\"backend\": \"%s\", \"type\": \"%s\", \"n\": %zu, \"mode\": \"%s\"",
                i ? "," : "", gpk_backend_name(r->backend), gpk_type_name(r->type), r->n, mode_name(r->mode));
        if (r->mode == MODE_PAIRS) fprintf(f, ", \"value_type\": \"%s\"", gpk_type_name(r->vtype));
        fprintf(f, ", \"begin_bit\": %u, \"end_bit\": %u, \"impl\": ", r->bit_begin, r->bit_end);
        cli_json_str(f, r->impl);
        fprintf(f, ", \"is_gpk\": %s, \"reps\": %d", r->is_gpk ? "true" : "false", r->reps);
        if (strcmp(r->status, "ok") == 0 || strcmp(r->status, "FAIL") == 0)
            fprintf(f, ", \"ms\": %.6f, \"gkeys_per_s\": %.6f", r->ms, r->gkeys);
        if (r->ratio > 0) {
            fprintf(f, ", \"%s\": ", r->is_gpk ? "peer" : "gpk_row");
            cli_json_str(f, r->vs);
            fprintf(f, ", \"speedup\": %.4f", r->ratio);
        }
        fprintf(f, ", \"check\": \"%s\"", r->status);
        if (r->note[0]) {
            fprintf(f, ", \"note\": ");
            cli_json_str(f, r->note);
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"failures\": %d,\n  \"wall_s\": %.1f\n}\n", st->failures,
            (cli_now_ms() - st->t_start) * 1e-3);
    return io_out_commit(&out, err, errlen);
}

/* ---- entry --------------------------------------------------------------------------------- */

int cmd_bench(int argc, char **argv)
{
    const char *cmd = "bench";
    if (argc < 2 || cli_is_help(argv[1])) {
        cmd_bench_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (strcmp(argv[1], "sort") != 0) {
        cli_error(cmd, "unknown benchmark '%s' (gpk bench sort)", argv[1]);
        return CLI_USAGE;
    }
    bench_state st;
    memset(&st, 0, sizeof st);
    int pr = parse_bench_args(argc, argv, &st.cfg);
    if (pr > 0) return CLI_OK;
    if (pr < 0) return CLI_USAGE;
    bench_cfg *c = &st.cfg;
    st.t_start = cli_now_ms();
    st.chatty = 1;

    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    /* Backends: asked for by name, a backend must work (an incomplete table
     * from a GPU run should not look like a complete one). */
    if (c->nbackends == 0) {
        /* Every usable backend, in the library's order (the CPU first). */
        for (int i = 0; i < gpk_backend_count(); i++) {
            const gpk_backend b = gpk_backend_at(i);
            if ((int)b < BENCH_BACKENDS && gpk_backend_available(b)) c->backends[c->nbackends++] = b;
        }
    } else {
        /* Run in the order cpu, cuda, opencl so OpenCL can use the CUDA time. */
        for (int i = 0; i < c->nbackends; i++)
            for (int j = i + 1; j < c->nbackends; j++)
                if (c->backends[j] < c->backends[i]) {
                    gpk_backend tmp = c->backends[i];
                    c->backends[i] = c->backends[j];
                    c->backends[j] = tmp;
                }
    }
    int rc = CLI_FAIL;
    for (int k = 0; k < c->nbackends; k++) {
        gpk_backend b = c->backends[k];
        if (!gpk_backend_built(b)) {
            cli_error(cmd, "the %s backend is not built into this gpk", gpk_backend_name(b));
            goto done;
        }
        if (cli_ctx_create(cmd, &st.ctx[b], b, c->device, b == GPK_BACKEND_CPU ? c->threads : 0) != GPK_OK)
            goto done;
    }
    /* The OpenCL peer is the CUDA backend, when there is one. */
    int want_opencl = 0;
    for (int k = 0; k < c->nbackends; k++) want_opencl |= c->backends[k] == GPK_BACKEND_OPENCL;
    if (want_opencl && (c->peers & PEER_CUDA) && !st.ctx[GPK_BACKEND_CUDA] &&
        gpk_backend_available(GPK_BACKEND_CUDA))
        cli_ctx_create(cmd, &st.ctx[GPK_BACKEND_CUDA], GPK_BACKEND_CUDA, c->device, 0);

    for (int k = 0; k < BENCH_BACKENDS; k++)
        if (st.ctx[k]) {
            gpk_ctx_info info;
            gpk_ctx_info_get(st.ctx[k], &info);
            progress(&st, "%s: %s (%s, %u compute units)", gpk_backend_name(info.backend), info.device_name,
                     info.platform, info.compute_units);
        }

    print_header();
    for (int ti = 0; ti < c->ntypes; ti++)
        for (int ni = 0; ni < c->nns; ni++) {
            block b;
            char why[300];
            int bi = block_init(&st, &b, c->types[ti], (size_t)c->ns[ni], why, sizeof why);
            if (bi == -2) {
                cli_error(cmd, "%s", why);
                block_free(&b);
                rc = CLI_USAGE;
                goto done;
            }
            if (bi != 0) {
                bench_row *r = new_row(&st, &b, c->backends[0], MODE_KEYS, "(setup)", 0);
                if (r) {
                    r->status = "ERROR";
                    snprintf(r->note, sizeof r->note, "%s", why);
                    print_row(r);
                }
                note_failures(&st, st.nrows - 1);
                block_free(&b);
                continue;
            }
            const int modes[3] = {MODE_KEYS, MODE_PAIRS, MODE_PERM};
            for (int m = 0; m < 3; m++)
                if (c->modes & modes[m]) run_mode(&st, &b, modes[m]);
            block_free(&b);
        }
    st.chatty = 1;
    rc = st.failures ? CLI_FAIL : CLI_OK;
    if (st.failures)
        fprintf(stderr, "gpk bench: %d FAILED or ERROR row%s (see above)\n", st.failures,
                st.failures > 1 ? "s" : "");
    if (c->json_path) {
        char err[300];
        if (write_json(&st, argc, argv, date, err, sizeof err) != 0) {
            cli_error(cmd, "%s", err);
            rc = CLI_FAIL;
        } else {
            progress(&st, "wrote %s", c->json_path);
        }
    }

done:
    for (int k = 0; k < BENCH_BACKENDS; k++) gpk_ctx_destroy(st.ctx[k]);
    free(st.rows);
    return rc;
}
