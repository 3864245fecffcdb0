/* gpk bench quicksort: Manca et al. 2015, Figures 12-15, in one run.
 *
 * For every type x distribution x n, the same generated input goes to every
 * implementation, and every result is checked:
 *   cuda -> gpk quicksort (iterative and recursive) and gpk radix sort,
 *           device-resident through the bench hooks (upload once, sort the
 *           device copy `reps` times); cub::DeviceMergeSort, thrust::sort
 *           and cub::DeviceRadixSort, device-resident as well (bench/peers.h)
 *   cpu    -> gpk quicksort and gpk radix sort (host calls), qsort,
 *           std::sort, __gnu_parallel::sort
 * Records (--records, Figure 15's long keys): n records of 8 + payload
 * bytes with a 64-bit key at offset 0, sorted by gpk_sort_records QUICK
 * (CUDA: device-resident) and RADIX (a host-to-host call: the records
 * interface sorts (key, index) pairs and gathers on the host), against
 * sorting (key, index) with cub::DeviceRadixSort or thrust::sort_by_key and
 * gathering (both device-resident); on the CPU against qsort of the records.
 *
 * The checks are exact and at most O(n) per result after one O(n log n)
 * (or O(n) proven) expected order per input:
 *   keys: the output equals the expected sorted keys byte for byte. Being
 *         sorted, the expected keys are the unique ordered permutation of
 *         the input, so equality proves "ordered and a permutation". CUDA
 *         peers order floats by operator< (-0.0 == +0.0, NaNs anywhere), so
 *         where they differ byte-wise they are held to that order and to
 *         the multiset of the input instead.
 *   records: every payload carries its record's input index, so the output
 *         is checked to name every input record once, unchanged, with keys
 *         in order: the multiset of records is the input's.
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

/* Implementations, in the column order of the paper's figures. */
enum impl_id {
    I_QUICK = 0,  /* gpk quicksort (iterative) */
    I_QUICK_REC,  /* gpk quicksort, recursive (CUDA dynamic parallelism) */
    I_RADIX,      /* gpk radix sort */
    I_CUB_MERGE,  /* cub::DeviceMergeSort */
    I_THRUST,     /* thrust::sort */
    I_CUB_RADIX,  /* cub::DeviceRadixSort */
    I_QSORT,      /* C qsort */
    I_STD_SORT,   /* std::sort */
    I_GNU,        /* __gnu_parallel::sort */
    I_REC_CUB,    /* records: cub::DeviceRadixSort of (key, index) + gather */
    I_REC_THRUST, /* records: thrust::sort_by_key of (key, index) + gather */
    I_REC_QSORT,  /* records: qsort of the records */
    I_QUICK_HOST, /* records on CUDA: gpk quicksort through gpk_sort_records, host to host */
    I_COUNT_
};

/* Short names (--impls, JSON "impl_id", the plot's legend key) and row labels. */
static const struct {
    const char *id, *label;
} impls[I_COUNT_] = {
    {"quick", "gpk quick"},
    {"quick-recursive", "gpk quick recursive"},
    {"radix", "gpk radix"},
    {"cub-merge", "cub::DeviceMergeSort"},
    {"thrust", "thrust::sort"},
    {"cub-radix", "cub::DeviceRadixSort"},
    {"qsort", "qsort"},
    {"std-sort", "std::sort"},
    {"gnu-parallel", "__gnu_parallel::sort"},
    {"cub-index", "cub radix (key,index)+gather"},
    {"thrust-index", "thrust sort_by_key+gather"},
    {"qsort-records", "qsort (records)"},
    {"quick-host", "gpk quick (host to host)"},
};

/* The paper's six distributions, in the order of Figures 13 and 14. */
static const gpk_dist paper_dists[6] = {GPK_DIST_UNIFORM,      GPK_DIST_GAUSSIAN, GPK_DIST_SORTED,
                                        GPK_DIST_ZERO_ENTROPY, GPK_DIST_BUCKET,   GPK_DIST_STAGGERED};

/* From this n on qsort and std::sort run once: a qsort of 2^25 keys takes
 * seconds, and one sample still places it. */
#define QB_SLOW_PEER_N ((size_t)1 << 24)
/* From this n on, each step gets a progress line on stderr. */
#define QB_PROGRESS_N ((size_t)1 << 22)
/* Below this n the expected order is the sequential reference merge sort;
 * from it on, the CPU radix sort with sigma, proven right in O(n). */
#define QB_REF_FAST ((size_t)1 << 22)

typedef struct qb_cfg {
    gpk_backend backend;
    int have_backend;
    gpk_type types[6];
    int ntypes;
    gpk_dist dists[GPK_DIST_COUNT_];
    int ndists;
    uint64_t ns[64];
    int nns;
    unsigned payloads[8];
    int npayloads;
    gpk_type record_key;
    int keys, records; /* which kinds of rows run */
    unsigned impl_mask;
    unsigned param;
    uint64_t seed;
    int reps, have_reps;
    int threads, device;
    const char *json_path;
    int quiet;
} qb_cfg;

typedef struct qb_row {
    gpk_backend backend;
    gpk_type type;
    gpk_dist dist;
    size_t n;
    size_t record_size; /* 0: keys */
    int impl;
    int is_gpk;
    int reps;
    int host_timed; /* a host-to-host time where the others are device-resident */
    char label[64];
    double ms, gkeys;
    double speedup;  /* gpk rows: best peer ms / this ms; peer rows: this ms / gpk quick ms */
    double vs_merge; /* gpk rows: cub::DeviceMergeSort ms / this ms (the floor), or 0 */
    char vs[64];
    const char *status; /* "ok", "FAIL", "ERROR", "n/a", "skipped" */
    char note[300];
} qb_row;

typedef struct qb_state {
    qb_cfg cfg;
    gpk_ctx *ctx; /* the benchmarked backend */
    gpk_ctx *cpu; /* the CPU backend: the expected order for large n */
    qb_row *rows;
    size_t nrows, caprows;
    int failures;
    double t_start;
    int chatty;
} qb_state;

void cmd_bench_quick_help(FILE *f)
{
    fprintf(f,
            "usage: gpk bench quicksort [options]\n"
            "\n"
            "Reproduces Manca et al. 2015 (CUDA-quicksort), Figures 12-15: gpk's quicksort\n"
            "(iterative and recursive) and radix sort against cub::DeviceMergeSort,\n"
            "thrust::sort and cub::DeviceRadixSort, in the same run on the same data, all\n"
            "device-resident; on the CPU against qsort, std::sort and __gnu_parallel::sort.\n"
            "Every result is checked (keys: ordered and a permutation of the input; records:\n"
            "the multiset of records unchanged); a mismatch prints a FAIL row and the exit\n"
            "status is 1. A variant the backend lacks prints an n/a row; a peer that is not\n"
            "built in, a skipped row.\n"
            "\n"
            "  --backends B      cuda (default when usable) or cpu\n"
            "  --types LIST      key types (default u32,f64: the paper's)\n"
            "  --dists LIST      distributions (default: the paper's six, uniform,gaussian,\n"
            "                    sorted,zero-entropy,bucket,staggered; also any of gpk sort\n"
            "                    --gen, e.g. organ-pipe,mo3-killer); 'paper' = the six\n"
            "  --n LIST          sizes (default 2^20,2^21,...,2^25; 2^28, 256M accepted)\n"
            "  --records         also sort records (Figure 15): key + payload\n"
            "  --records-only    only records\n"
            "  --payloads LIST   record payload bytes, 8..248 (default 16,32,64; record\n"
            "                    size = key bytes + payload)\n"
            "  --record-key T    record key type: u64 (default: the paper's long keys),\n"
            "                    i64, f64, u32, i32, f32\n"
            "  --impls LIST      all (default) or some of quick,quick-recursive,radix,\n"
            "                    cub-merge,thrust,cub-radix,qsort,std-sort,gnu-parallel,\n"
            "                    cub-index,thrust-index,qsort-records,quick-host (records\n"
            "                    on CUDA: gpk_sort_records QUICK timed host to host)\n"
            "  --param P         bucket / staggered groups (default 32); --seed S (default 1)\n"
            "  --reps R          repetitions, median reported (default 10 on CUDA, 3 on the\n"
            "                    CPU; qsort and std::sort run once from n = 2^24)\n"
            "  --threads T       CPU threads (default: all)\n"
            "  --device D        CUDA device index\n"
            "  --json FILE       write machine info, the configuration and every row\n"
            "                    (bench/plot_quicksort.py draws the figures from it)\n"
            "  -q, --quiet       no progress lines on stderr\n"
            "\n"
            "examples:\n"
            "  gpk bench quicksort --records --json bench/results/quicksort-h200.json\n"
            "  gpk bench quicksort --n 2^28 --json bench/results/quicksort-h200-256M.json\n"
            "  gpk bench quicksort --backends cpu --n 2^20,2^24 --records\n");
}

/* ---- parsing ------------------------------------------------------------------- */

static int qb_add_type(const char *s, void *arg)
{
    qb_cfg *c = arg;
    gpk_type t;
    if (gpk_type_parse(s, &t) != GPK_OK || c->ntypes >= 6) return -1;
    for (int i = 0; i < c->ntypes; i++)
        if (c->types[i] == t) return 0;
    c->types[c->ntypes++] = t;
    return 0;
}

static int qb_add_dist_one(qb_cfg *c, gpk_dist d)
{
    for (int i = 0; i < c->ndists; i++)
        if (c->dists[i] == d) return 0;
    if (c->ndists >= GPK_DIST_COUNT_) return -1;
    c->dists[c->ndists++] = d;
    return 0;
}

static int qb_add_dist(const char *s, void *arg)
{
    qb_cfg *c = arg;
    if (strcmp(s, "paper") == 0 || strcmp(s, "all") == 0) {
        for (int i = 0; i < 6; i++)
            if (qb_add_dist_one(c, paper_dists[i]) != 0) return -1;
        return 0;
    }
    /* The paper's name for it. */
    if (strcmp(s, "zero") == 0) return qb_add_dist_one(c, GPK_DIST_ZERO_ENTROPY);
    gpk_dist d;
    if (gpk_dist_parse(s, &d) != GPK_OK) return -1;
    return qb_add_dist_one(c, d);
}

static int qb_add_n(const char *s, void *arg)
{
    qb_cfg *c = arg;
    uint64_t v;
    if (cli_parse_size(s, &v) != 0 || c->nns >= 64) return -1;
    c->ns[c->nns++] = v;
    return 0;
}

static int qb_add_payload(const char *s, void *arg)
{
    qb_cfg *c = arg;
    uint64_t v;
    /* >= 8: the payload carries the record's input index for the check. */
    if (cli_parse_uint(s, 8, 248, &v) != 0 || c->npayloads >= 8) return -1;
    c->payloads[c->npayloads++] = (unsigned)v;
    return 0;
}

static int qb_add_impl(const char *s, void *arg)
{
    qb_cfg *c = arg;
    if (strcmp(s, "all") == 0) {
        c->impl_mask = (1u << I_COUNT_) - 1;
        return 0;
    }
    for (int i = 0; i < I_COUNT_; i++)
        if (strcmp(s, impls[i].id) == 0) {
            c->impl_mask |= 1u << i;
            return 0;
        }
    return -1;
}

static int qb_parse(int argc, char **argv, qb_cfg *c)
{
    const char *cmd = "bench";
    memset(c, 0, sizeof *c);
    c->device = -1;
    c->seed = 1;
    c->record_key = GPK_U64;
    c->keys = 1;
    /* argv[0] = "bench", argv[1] = "quicksort". */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        uint64_t v;
        if (cli_is_help(a)) {
            cmd_bench_quick_help(stdout);
            return 1;
        }
        if (cli_flag(a, NULL, "--records")) {
            c->records = 1;
            continue;
        }
        if (cli_flag(a, NULL, "--records-only")) {
            c->records = 1;
            c->keys = 0;
            continue;
        }
        if (cli_flag(a, "-q", "--quiet")) {
            c->quiet = 1;
            continue;
        }

#define QB_LIST(name, fn, what)                                                \
    if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, name, &val)) != 0) {     \
        if (m < 0) return -1;                                                  \
        if (bench_for_each_item(val, fn, c) != 0) {                            \
            cli_error(cmd, "bad %s list '%s' (expected %s)", name, val, what); \
            return -1;                                                         \
        }                                                                      \
        continue;                                                              \
    }
        QB_LIST("--types", qb_add_type, "u32,i32,f32,u64,i64,f64")
        QB_LIST("--dists", qb_add_dist,
                "paper, or uniform,gaussian,sorted,zero-entropy,bucket,"
                "staggered,organ-pipe,mo3-killer,...")
        QB_LIST("--n", qb_add_n, "sizes such as 2^20,32M,1000")
        QB_LIST("--payloads", qb_add_payload, "payload bytes 8..248 such as 16,32,64")
        QB_LIST("--impls", qb_add_impl,
                "all, or quick,quick-recursive,radix,cub-merge,thrust,"
                "cub-radix,qsort,std-sort,gnu-parallel,cub-index,"
                "thrust-index,qsort-records,quick-host")
#undef QB_LIST
        if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--backends", &val)) != 0 ||
            (m = cli_opt_value(cmd, argc, argv, &i, NULL, "--backend", &val)) != 0) {
            if (m < 0) return -1;
            if (gpk_backend_parse(val, &c->backend) != GPK_OK ||
                (c->backend != GPK_BACKEND_CPU && c->backend != GPK_BACKEND_CUDA)) {
                cli_error(cmd,
                          "bad --backends '%s' (cuda or cpu: the quicksort has no OpenCL "
                          "backend; run one backend per call)",
                          val);
                return -1;
            }
            c->have_backend = 1;
            continue;
        }
        if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--record-key", &val)) != 0) {
            if (m < 0) return -1;
            if (gpk_type_parse(val, &c->record_key) != GPK_OK) {
                cli_error(cmd, "bad --record-key '%s' (u32, i32, f32, u64, i64 or f64)", val);
                return -1;
            }
            continue;
        }
        if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--json", &val)) != 0) {
            if (m < 0) return -1;
            c->json_path = val;
            continue;
        }
        static const cli_uint_opt nums[] = {{"--param", 0, 65536},
                                            {"--seed", 0, UINT64_MAX},
                                            {"--reps", 1, 100000},
                                            {"--threads", 0, 1 << 20},
                                            {"--device", 0, 1 << 20}};
        const int k = cli_opt_uint_of(cmd, argc, argv, &i, nums, sizeof nums / sizeof nums[0], &v);
        if (k == -1) return -1;
        switch (k) {
        case 0: c->param = (unsigned)v; break;
        case 1: c->seed = v; break;
        case 2:
            c->reps = (int)v;
            c->have_reps = 1;
            break;
        case 3: c->threads = (int)v; break;
        case 4: c->device = (int)v; break;
        }
        if (k >= 0) continue;
        cli_error(cmd, "unknown option or argument '%s' (see gpk bench quicksort --help)", a);
        return -1;
    }
    if (c->ntypes == 0) {
        c->types[c->ntypes++] = GPK_U32;
        c->types[c->ntypes++] = GPK_F64;
    }
    if (c->ndists == 0)
        for (int i = 0; i < 6; i++) c->dists[c->ndists++] = paper_dists[i];
    if (c->nns == 0)
        for (unsigned k = 20; k <= 25; k++) c->ns[c->nns++] = (uint64_t)1 << k;
    if (c->npayloads == 0) {
        c->payloads[c->npayloads++] = 16;
        c->payloads[c->npayloads++] = 32;
        c->payloads[c->npayloads++] = 64;
    }
    if (c->impl_mask == 0) c->impl_mask = (1u << I_COUNT_) - 1;
    if (c->device >= 0 && c->have_backend && c->backend == GPK_BACKEND_CPU) {
        cli_error(cmd, "--device selects a CUDA device; --backends cpu has none");
        return -1;
    }
    for (int k = 0; k < c->nns; k++)
        if (c->ns[k] < 2 || c->ns[k] > UINT32_MAX) {
            /* The CUDA peers index with u32 (bench/peers.h), so do the checks. */
            cli_error(cmd, "--n %llu: the bench takes 2 <= n <= 2^32-1", (unsigned long long)c->ns[k]);
            return -1;
        }
    return 0;
}

/* ---- rows ------------------------------------------------------------------------- */

static qb_row *qb_new_row(qb_state *st, gpk_type t, gpk_dist d, size_t n, size_t rs, int impl, int is_gpk)
{
    if (st->nrows == st->caprows) {
        size_t cap = st->caprows ? st->caprows * 2 : 128;
        qb_row *r = realloc(st->rows, cap * sizeof *r);
        if (!r) return NULL;
        st->rows = r;
        st->caprows = cap;
    }
    qb_row *r = &st->rows[st->nrows++];
    memset(r, 0, sizeof *r);
    r->backend = st->cfg.backend;
    r->type = t;
    r->dist = d;
    r->n = n;
    r->record_size = rs;
    r->impl = impl;
    r->is_gpk = is_gpk;
    r->status = "ok";
    snprintf(r->label, sizeof r->label, "%s", impls[impl].label);
    return r;
}

static void qb_header(void)
{
    printf("%-7s %-4s %-12s %-6s %-7s %-30s %10s %8s  %-34s %s\n", "backend", "type", "dist", "n", "kind",
           "impl", "ms", "Gkeys/s", "speedup", "check");
}

static void qb_print(const qb_row *r)
{
    char nb[32], kind[32], sp[80] = "";
    cli_size_str(r->n, nb, sizeof nb);
    if (r->record_size) snprintf(kind, sizeof kind, "rec%zu", r->record_size);
    else snprintf(kind, sizeof kind, "keys");
    if (r->speedup > 0) {
        if (r->is_gpk) snprintf(sp, sizeof sp, "%.2fx vs %s", r->speedup, r->vs);
        else snprintf(sp, sizeof sp, "gpk quick %.2fx", r->speedup);
    }
    if (strcmp(r->status, "ok") == 0 || strcmp(r->status, "FAIL") == 0)
        printf("%-7s %-4s %-12s %-6s %-7s %-30s %10.3f %8.3f  %-34s %s%s\n", gpk_backend_name(r->backend),
               gpk_type_name(r->type), gpk_dist_name(r->dist), nb, kind, r->label, r->ms, r->gkeys, sp,
               r->status, r->host_timed ? " (host-to-host)" : "");
    else
        printf("%-7s %-4s %-12s %-6s %-7s %-30s %10s %8s  %-34s %s\n", gpk_backend_name(r->backend),
               gpk_type_name(r->type), gpk_dist_name(r->dist), nb, kind, r->label, "-", "-", "", r->status);
    if (r->note[0] && strcmp(r->status, "ok") != 0) printf("        %s: %s\n", r->status, r->note);
    fflush(stdout);
}

static void qb_progress(const qb_state *st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void qb_progress(const qb_state *st, const char *fmt, ...)
{
    if (st->cfg.quiet || !st->chatty) return;
    va_list ap;
    fprintf(stderr, "gpk bench [%7.1f s] ", (cli_now_ms() - st->t_start) * 1e-3);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Prints rows [from, nrows), counts FAIL and ERROR rows, links speedups:
 * every row against gpk quick (iterative), every gpk row against the
 * fastest peer. */
static void qb_finish_block(qb_state *st, size_t from)
{
    size_t quick = (size_t)-1;
    double best = 0, merge = 0;
    const char *best_label = "";
    for (size_t i = from; i < st->nrows; i++) {
        const qb_row *r = &st->rows[i];
        if (strcmp(r->status, "ok") != 0 || r->ms <= 0) continue;
        if (r->impl == I_QUICK) quick = i;
        if (r->impl == I_CUB_MERGE) merge = r->ms;
        if (!r->is_gpk && (best == 0 || r->ms < best)) {
            best = r->ms;
            best_label = r->label;
        }
    }
    for (size_t i = from; i < st->nrows; i++) {
        qb_row *r = &st->rows[i];
        if (strcmp(r->status, "ok") != 0 || r->ms <= 0) continue;
        if (r->is_gpk && merge > 0) r->vs_merge = merge / r->ms;
        if (r->is_gpk && best > 0) {
            r->speedup = best / r->ms;
            snprintf(r->vs, sizeof r->vs, "%s", best_label);
        } else if (!r->is_gpk && quick != (size_t)-1) {
            r->speedup = r->ms / st->rows[quick].ms;
            snprintf(r->vs, sizeof r->vs, "gpk quick");
        }
    }
    for (size_t i = from; i < st->nrows; i++) {
        const qb_row *r = &st->rows[i];
        qb_print(r);
        if (strcmp(r->status, "FAIL") == 0 || strcmp(r->status, "ERROR") == 0) {
            char nb[32];
            st->failures++;
            char kind[48] = "keys";
            if (r->record_size) snprintf(kind, sizeof kind, "records of %zu bytes", r->record_size);
            fprintf(stderr, "gpk bench: %s: %s %s %s n=%s %s, %s: %s\n", r->status,
                    gpk_backend_name(r->backend), gpk_type_name(r->type), gpk_dist_name(r->dist),
                    cli_size_str(r->n, nb, sizeof nb), kind, r->label, r->note);
        }
    }
}

/* A gpk call's status as a row: unsupported variants are "n/a", not failures. */
static void qb_gpk_status(qb_row *r, gpk_ctx *ctx, gpk_status s)
{
    const char *msg = gpk_last_error(ctx);
    snprintf(r->note, sizeof r->note, "%s", msg && *msg ? msg : gpk_status_string(s));
    r->status = s == GPK_EUNSUPPORTED ? "n/a" : "ERROR";
}

/* A peer's return code as a row (-1: not built in). */
static int qb_peer_status(qb_row *r, int rc, const gpk_peer_result *pr, const char *err)
{
    if (rc == -1) {
        r->status = "skipped";
        snprintf(r->note, sizeof r->note, "not built into this gpk%s%s", err[0] ? ": " : "", err);
        return 0;
    }
    if (rc != 0) {
        r->status = "ERROR";
        snprintf(r->note, sizeof r->note, "%s", err);
        return 0;
    }
    if (pr->name[0]) snprintf(r->label, sizeof r->label, "%s", pr->name);
    r->ms = pr->ms;
    return 1;
}

static void qb_set_rate(qb_row *r, size_t n) { r->gkeys = r->ms > 0 ? (double)n / (r->ms * 1e6) : 0; }

/* ---- keys: expected order and checks ----------------------------------------------- */

static int qb_is_float(gpk_type t) { return t == GPK_F32 || t == GPK_F64; }

/* Natural operator< of the type on elements i and j of p (NaNs compare false). */
static int qb_less_natural(gpk_type t, const void *p, size_t i, const void *q, size_t j)
{
    const char *a = (const char *)p, *b = (const char *)q;
    switch (t) {
    case GPK_U32: {
        uint32_t x, y;
        memcpy(&x, a + 4 * i, 4);
        memcpy(&y, b + 4 * j, 4);
        return x < y;
    }
    case GPK_I32: {
        int32_t x, y;
        memcpy(&x, a + 4 * i, 4);
        memcpy(&y, b + 4 * j, 4);
        return x < y;
    }
    case GPK_F32: {
        float x, y;
        memcpy(&x, a + 4 * i, 4);
        memcpy(&y, b + 4 * j, 4);
        return x < y;
    }
    case GPK_U64: {
        uint64_t x, y;
        memcpy(&x, a + 8 * i, 8);
        memcpy(&y, b + 8 * j, 8);
        return x < y;
    }
    case GPK_I64: {
        int64_t x, y;
        memcpy(&x, a + 8 * i, 8);
        memcpy(&y, b + 8 * j, 8);
        return x < y;
    }
    case GPK_F64: {
        double x, y;
        memcpy(&x, a + 8 * i, 8);
        memcpy(&y, b + 8 * j, 8);
        return x < y;
    }
    }
    return 0;
}

/* The expected sorted keys of input in ref. Below QB_REF_FAST the
 * sequential reference merge sort; above (it takes minutes at 2^28) the CPU
 * radix sort with sigma, proven in O(n): sigma is a permutation, each key is
 * the input key sigma names, mapped keys never decrease. That is the unique
 * sorted permutation, so the proof is as strict as the reference. */
static int qb_expected(qb_state *st, gpk_type t, const void *input, void *ref, size_t n, char *why,
                       size_t len)
{
    const size_t w = gpk_type_size(t);
    memcpy(ref, input, n * w);
    if (n < QB_REF_FAST) {
        gpk_status s = gpk_sort_reference(t, ref, 0, NULL, NULL, n, 0);
        if (s != GPK_OK) snprintf(why, len, "reference sort: %s", gpk_status_string(s));
        return s == GPK_OK;
    }
    uint32_t *sig = malloc(n * sizeof *sig);
    unsigned char *seen = calloc(n / 8 + 1, 1);
    int ok = 0;
    if (!sig || !seen) {
        snprintf(why, len, "out of host memory for the expected order");
        goto done;
    }
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX;
    gpk_status s = gpk_sort_perm(st->cpu, t, ref, sig, n, &o);
    if (s != GPK_OK) {
        snprintf(why, len, "expected order (CPU radix sort): %s", gpk_last_error(st->cpu));
        goto done;
    }
    const unsigned char *in = input, *out = ref;
    for (size_t j = 0; j < n; j++) {
        const size_t i = sig[j];
        if (i >= n || ((seen[i / 8] >> (i % 8)) & 1u) || memcmp(out + j * w, in + i * w, w) != 0) {
            snprintf(why, len,
                     "expected order: sigma[%zu] = %zu is repeated, out of range or "
                     "names another key",
                     j, i);
            goto done;
        }
        seen[i / 8] |= (unsigned char)(1u << (i % 8));
        if (j > 0 && gpk__mapped_key_at(t, out, j, ~0ull) < gpk__mapped_key_at(t, out, j - 1, ~0ull)) {
            snprintf(why, len, "expected order: keys %zu and %zu are out of order", j - 1, j);
            goto done;
        }
    }
    ok = 1;
done:
    free(sig);
    free(seen);
    return ok;
}

/* gpk and CPU peers: byte-identical to the expected keys. CUDA peers with
 * float keys may differ only where operator< cannot tell (-0.0 and +0.0,
 * NaNs): then the output must be in operator< order and, sorted the gpk
 * way, equal the expected keys (the same multiset). */
static int qb_check_keys(gpk_type t, const void *out, const void *ref, size_t n, int lenient, char *why,
                         size_t len)
{
    const size_t w = gpk_type_size(t);
    if (memcmp(out, ref, n * w) == 0) return 1;
    size_t d = 0;
    while (d < n && memcmp((const char *)out + d * w, (const char *)ref + d * w, w) == 0) d++;
    if (!lenient || !qb_is_float(t)) {
        snprintf(why, len, "keys differ from the expected order from index %zu on", d);
        return 0;
    }
    for (size_t j = 1; j < n; j++)
        if (qb_less_natural(t, out, j, out, j - 1)) {
            snprintf(why, len, "keys %zu and %zu are out of order", j - 1, j);
            return 0;
        }
    void *copy = malloc(n * w);
    if (!copy) {
        snprintf(why, len, "out of host memory for the check");
        return 0;
    }
    memcpy(copy, out, n * w);
    int ok = gpk_sort_reference(t, copy, 0, NULL, NULL, n, 0) == GPK_OK && memcmp(copy, ref, n * w) == 0;
    free(copy);
    if (!ok)
        snprintf(why, len,
                 "the keys are not a permutation of the input (first "
                 "difference from the expected order at %zu)",
                 d);
    return ok;
}

/* ---- keys: one (type, dist, n) block ----------------------------------------------- */

typedef struct qb_keys {
    gpk_type t;
    gpk_dist d;
    size_t n, w;
    void *input, *ref, *work;
} qb_keys;

/* Times one gpk variant; fills r. */
static void qb_run_gpk_keys(qb_state *st, qb_keys *b, int impl, qb_row *r)
{
    const qb_cfg *c = &st->cfg;
    gpk_ctx *ctx = st->ctx;
    gpk_status s = GPK_OK;
    double ms = -1;
    r->reps = c->reps;
    memcpy(b->work, b->input, b->n * b->w);
    if (c->backend == GPK_BACKEND_CUDA) {
#ifdef GPK_HAVE_CUDA
        if (impl == I_RADIX) {
            gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
            s = gpk__bench_radix(ctx, b->t, b->work, 0, NULL, NULL, b->n, &o, c->reps, &ms);
        } else {
            s = gpk__bench_quick(ctx, b->t, b->work, b->n, b->w, impl == I_QUICK_REC, c->reps, &ms);
        }
#else
        s = GPK_EUNSUPPORTED;
#endif
    } else {
        gpk_sort_opts o = GPK_SORT_OPTS_INIT;
        o.algorithm = impl == I_RADIX ? GPK_SORT_RADIX
            : impl == I_QUICK_REC     ? GPK_SORT_QUICK_RECURSIVE
                                      : GPK_SORT_QUICK;
        double *t = malloc((size_t)c->reps * sizeof *t);
        if (!t) {
            r->status = "ERROR";
            snprintf(r->note, sizeof r->note, "out of host memory");
            return;
        }
        for (int k = 0; k < c->reps && s == GPK_OK; k++) {
            if (k) memcpy(b->work, b->input, b->n * b->w);
            double t0 = cli_now_ms();
            s = gpk_sort_keys(ctx, b->t, b->work, b->n, &o);
            t[k] = cli_now_ms() - t0;
        }
        if (s == GPK_OK) ms = cli_median(t, (size_t)c->reps);
        free(t);
    }
    if (s != GPK_OK) {
        qb_gpk_status(r, ctx, s);
        return;
    }
    r->ms = ms;
    qb_set_rate(r, b->n);
    char why[200];
    if (!qb_check_keys(b->t, b->work, b->ref, b->n, 0, why, sizeof why)) {
        r->status = "FAIL";
        snprintf(r->note, sizeof r->note, "%s", why);
    }
}

typedef int (*qb_cpu_peer)(gpk_type, const void *, void *, size_t, int, gpk_peer_result *, char *, size_t);

static void qb_run_peer_keys(qb_state *st, qb_keys *b, int impl, qb_row *r)
{
    const qb_cfg *c = &st->cfg;
    gpk_peer_result pr;
    char err[300] = "";
    memset(&pr, 0, sizeof pr);
    int rc = -1, reps = c->reps;
    if (impl == I_QSORT || impl == I_STD_SORT) {
        if (b->n >= QB_SLOW_PEER_N) reps = 1;
        qb_cpu_peer fn = impl == I_QSORT ? gpk_peer_qsort : gpk_peer_std_sort;
        rc = fn(b->t, b->input, b->work, b->n, reps, &pr, err, sizeof err);
    } else if (impl == I_GNU) {
        rc =
            gpk_peer_gnu_parallel_sort(b->t, b->input, b->work, b->n, c->threads, reps, &pr, err, sizeof err);
    } else {
#ifdef GPK_HAVE_CUDA
        int dev = bench_ctx_device(st->ctx);
        if (impl == I_CUB_MERGE)
            rc = gpk_peer_cub_merge_sort(dev, b->t, b->input, b->work, b->n, reps, &pr, err, sizeof err);
        else if (impl == I_THRUST)
            rc = gpk_peer_thrust_sort(dev, b->t, b->input, b->work, b->n, reps, &pr, err, sizeof err);
        else
            rc = gpk_peer_cub_radix(dev, b->t, b->input, b->work, 0, b->n, 0, (int)(8 * b->w), reps, &pr, err,
                                    sizeof err);
#else
        snprintf(err, sizeof err, "CUDA is not built in");
#endif
    }
    r->reps = reps;
    if (!qb_peer_status(r, rc, &pr, err)) return;
    qb_set_rate(r, b->n);
    char why[200];
    int lenient = c->backend == GPK_BACKEND_CUDA;
    if (!qb_check_keys(b->t, b->work, b->ref, b->n, lenient, why, sizeof why)) {
        r->status = "FAIL";
        snprintf(r->note, sizeof r->note, "%s", why);
    }
}

static void qb_keys_block(qb_state *st, gpk_type t, gpk_dist d, size_t n)
{
    const qb_cfg *c = &st->cfg;
    char nb[32], why[300];
    cli_size_str(n, nb, sizeof nb);
    st->chatty = n >= QB_PROGRESS_N;
    size_t first = st->nrows;
    qb_keys b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.d = d;
    b.n = n;
    b.w = gpk_type_size(t);
    b.input = malloc(n * b.w);
    b.ref = malloc(n * b.w);
    b.work = malloc(n * b.w);
    const char *setup = NULL;
    gpk_status s;
    if (!b.input || !b.ref || !b.work) {
        snprintf(why, sizeof why, "out of host memory for n = %s %s", nb, gpk_type_name(t));
        setup = why;
    } else if ((s = gpk_generate(t, d, b.input, n, c->seed, c->param)) != GPK_OK) {
        snprintf(why, sizeof why, "gpk_generate(%s, %s, param %u): %s", gpk_type_name(t), gpk_dist_name(d),
                 c->param, gpk_status_string(s));
        setup = why;
    } else {
        qb_progress(st, "%s %s n=%s: expected order", gpk_type_name(t), gpk_dist_name(d), nb);
        if (!qb_expected(st, t, b.input, b.ref, n, why, sizeof why)) setup = why;
    }
    if (setup) {
        qb_row *r = qb_new_row(st, t, d, n, 0, I_QUICK, 1);
        if (r) {
            snprintf(r->label, sizeof r->label, "(setup)");
            r->status = "ERROR";
            snprintf(r->note, sizeof r->note, "%s", setup);
        }
    } else {
        const int cuda_order[] = {I_QUICK, I_QUICK_REC, I_RADIX, I_CUB_MERGE, I_THRUST, I_CUB_RADIX};
        const int cpu_order[] = {I_QUICK, I_RADIX, I_QSORT, I_STD_SORT, I_GNU};
        const int *order = c->backend == GPK_BACKEND_CUDA ? cuda_order : cpu_order;
        size_t cnt = c->backend == GPK_BACKEND_CUDA ? 6 : 5;
        for (size_t k = 0; k < cnt; k++) {
            int impl = order[k];
            if (!(c->impl_mask & (1u << impl))) continue;
            int is_gpk = impl <= I_RADIX;
            qb_progress(st, "%s %s %s n=%s: %s", gpk_backend_name(c->backend), gpk_type_name(t),
                        gpk_dist_name(d), nb, impls[impl].label);
            qb_row *r = qb_new_row(st, t, d, n, 0, impl, is_gpk);
            if (!r) break;
            if (is_gpk) qb_run_gpk_keys(st, &b, impl, r);
            else qb_run_peer_keys(st, &b, impl, r);
        }
    }
    qb_finish_block(st, first);
    free(b.input);
    free(b.ref);
    free(b.work);
}

/* ---- records ----------------------------------------------------------------------- */

/* Payload filler after the index: bytes of a hash of the index, so records
 * differ everywhere and a torn copy shows. */
static uint64_t qb_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Every output record names an input record (its index at byte 8), each
 * once, is byte-identical to it, and keys are in order: gpk's mapped order
 * (peers: operator<, which may not separate -0.0 and +0.0 or place NaNs). */
static int qb_check_records(gpk_type kt, const unsigned char *in, const unsigned char *out, size_t n,
                            size_t rs, int natural, char *why, size_t len)
{
    unsigned char *seen = calloc(n / 8 + 1, 1);
    if (!seen) {
        snprintf(why, len, "out of host memory for the check");
        return 0;
    }
    int ok = 0;
    for (size_t j = 0; j < n; j++) {
        const unsigned char *o = out + j * rs;
        uint64_t i;
        memcpy(&i, o + gpk_type_size(kt), 8);
        if (i >= n || ((seen[i / 8] >> (i % 8)) & 1u) || memcmp(o, in + i * rs, rs) != 0) {
            snprintf(why, len, "record %zu is not an input record, or repeats one", j);
            goto done;
        }
        seen[i / 8] |= (unsigned char)(1u << (i % 8));
        if (j > 0) {
            int bad = natural
                ? qb_less_natural(kt, o, 0, o - rs, 0)
                : gpk__mapped_key_at(kt, o, 0, ~0ull) < gpk__mapped_key_at(kt, o - rs, 0, ~0ull);
            if (bad) {
                snprintf(why, len, "records %zu and %zu are out of key order", j - 1, j);
                goto done;
            }
        }
    }
    ok = 1;
done:
    free(seen);
    return ok;
}

static gpk_type qb_qsort_key_type; /* qsort has no context argument */
static int qb_cmp_record(const void *a, const void *b)
{
    uint64_t x = gpk__mapped_key_at(qb_qsort_key_type, a, 0, ~0ull);
    uint64_t y = gpk__mapped_key_at(qb_qsort_key_type, b, 0, ~0ull);
    return (x > y) - (x < y);
}

static void qb_records_block(qb_state *st, gpk_dist d, size_t n, size_t payload)
{
    const qb_cfg *c = &st->cfg;
    const gpk_type kt = c->record_key;
    const size_t kw = gpk_type_size(kt), rs = kw + payload;
    char nb[32], why[300];
    cli_size_str(n, nb, sizeof nb);
    st->chatty = n >= QB_PROGRESS_N;
    size_t first = st->nrows;
    unsigned char *in = malloc(n * rs), *work = malloc(n * rs);
    unsigned char *keys = malloc(n * kw);
    const char *setup = NULL;
    gpk_status s;
    if (!in || !work || !keys) {
        snprintf(why, sizeof why, "out of host memory for %s records of %zu bytes", nb, rs);
        setup = why;
    } else if ((s = gpk_generate(kt, d, keys, n, c->seed, c->param)) != GPK_OK) {
        snprintf(why, sizeof why, "gpk_generate(%s, %s): %s", gpk_type_name(kt), gpk_dist_name(d),
                 gpk_status_string(s));
        setup = why;
    } else {
        for (size_t i = 0; i < n; i++) {
            unsigned char *r = in + i * rs;
            uint64_t idx = i, h = qb_mix(i);
            memcpy(r, keys + i * kw, kw);
            memcpy(r + kw, &idx, 8); /* the check finds each record's origin by it */
            for (size_t k = kw + 8; k < rs; k++) r[k] = (unsigned char)(h >> (8 * (k % 8)));
        }
    }
    if (setup) {
        qb_row *r = qb_new_row(st, kt, d, n, rs, I_QUICK, 1);
        if (r) {
            snprintf(r->label, sizeof r->label, "(setup)");
            r->status = "ERROR";
            snprintf(r->note, sizeof r->note, "%s", setup);
        }
    } else {
        const int cuda_order[] = {I_QUICK, I_QUICK_REC, I_RADIX, I_QUICK_HOST, I_REC_CUB, I_REC_THRUST};
        const int cpu_order[] = {I_QUICK, I_RADIX, I_REC_QSORT};
        const int *order = c->backend == GPK_BACKEND_CUDA ? cuda_order : cpu_order;
        size_t cnt = c->backend == GPK_BACKEND_CUDA ? 6 : 3;
        for (size_t k = 0; k < cnt; k++) {
            int impl = order[k];
            if (!(c->impl_mask & (1u << impl))) continue;
            int is_gpk = impl <= I_RADIX || impl == I_QUICK_HOST;
            qb_progress(st, "%s %s n=%s records of %zu bytes: %s", gpk_backend_name(c->backend),
                        gpk_dist_name(d), nb, rs, impls[impl].label);
            qb_row *r = qb_new_row(st, kt, d, n, rs, impl, is_gpk);
            if (!r) break;
            r->reps = c->reps;
            memcpy(work, in, n * rs);
            int natural = 0;
            if (is_gpk && c->backend == GPK_BACKEND_CUDA && impl != I_RADIX && impl != I_QUICK_HOST) {
#ifdef GPK_HAVE_CUDA
                s = gpk__bench_quick(st->ctx, kt, work, n, rs, impl == I_QUICK_REC, c->reps, &r->ms);
                if (s != GPK_OK) {
                    qb_gpk_status(r, st->ctx, s);
                    continue;
                }
#endif
            } else if (is_gpk) {
                /* Host calls: the CPU backend, and on CUDA the records radix
                 * sort (its gather is on the host) and quick-host, both
                 * marked host-to-host. */
                gpk_sort_opts o = GPK_SORT_OPTS_INIT;
                o.algorithm = impl == I_RADIX ? GPK_SORT_RADIX
                    : impl == I_QUICK_REC     ? GPK_SORT_QUICK_RECURSIVE
                                              : GPK_SORT_QUICK;
                r->host_timed = c->backend == GPK_BACKEND_CUDA;
                /* Host-to-host records move n * rs bytes each way per rep:
                 * at 2^24 and above three samples place it well enough. */
                int reps = r->host_timed && n >= QB_SLOW_PEER_N && c->reps > 3 ? 3 : c->reps;
                r->reps = reps;
                double *t = malloc((size_t)reps * sizeof *t);
                s = t ? GPK_OK : GPK_ENOMEM;
                for (int k2 = 0; k2 < reps && s == GPK_OK; k2++) {
                    if (k2) memcpy(work, in, n * rs);
                    double t0 = cli_now_ms();
                    s = gpk_sort_records(st->ctx, work, n, rs, 0, kt, &o);
                    t[k2] = cli_now_ms() - t0;
                }
                if (s == GPK_OK) r->ms = cli_median(t, (size_t)reps);
                free(t);
                if (s != GPK_OK) {
                    qb_gpk_status(r, st->ctx, s);
                    continue;
                }
            } else if (impl == I_REC_QSORT) {
                int reps = n >= QB_SLOW_PEER_N ? 1 : c->reps;
                double *t = malloc((size_t)reps * sizeof *t);
                if (!t) {
                    r->status = "ERROR";
                    snprintf(r->note, sizeof r->note, "out of host memory");
                    continue;
                }
                qb_qsort_key_type = kt;
                for (int k2 = 0; k2 < reps; k2++) {
                    if (k2) memcpy(work, in, n * rs);
                    double t0 = cli_now_ms();
                    qsort(work, n, rs, qb_cmp_record);
                    t[k2] = cli_now_ms() - t0;
                }
                r->ms = cli_median(t, (size_t)reps);
                r->reps = reps;
                free(t);
            } else {
                gpk_peer_result pr;
                char err[300] = "";
                memset(&pr, 0, sizeof pr);
                int rc = -1;
#ifdef GPK_HAVE_CUDA
                if (impl == I_REC_CUB)
                    rc = gpk_peer_records_cub_index(bench_ctx_device(st->ctx), kt, in, work, n, rs, 0,
                                                    c->reps, &pr, err, sizeof err);
                else
                    rc = gpk_peer_records_thrust(bench_ctx_device(st->ctx), kt, in, work, n, rs, 0, c->reps,
                                                 &pr, err, sizeof err);
#else
                snprintf(err, sizeof err, "CUDA is not built in");
#endif
                if (!qb_peer_status(r, rc, &pr, err)) continue;
                natural = 1;
            }
            qb_set_rate(r, n);
            if (!qb_check_records(kt, in, work, n, rs, natural, why, sizeof why)) {
                r->status = "FAIL";
                snprintf(r->note, sizeof r->note, "%s", why);
            }
        }
    }
    qb_finish_block(st, first);
    free(in);
    free(work);
    free(keys);
}

/* ---- JSON --------------------------------------------------------------------------- */

static int qb_write_json(const qb_state *st, int argc, char **argv, const char *date, char *err,
                         size_t errlen)
{
    const qb_cfg *c = &st->cfg;
    io_out out;
    if (io_out_open(&out, c->json_path, err, errlen) != 0) return -1;
    FILE *f = out.f;
    char host[256], model[256];
    int cores;
    unsigned long long mem;
    bench_machine(host, sizeof host, model, sizeof model, &cores, &mem);
    fprintf(f, "{\n  \"tool\": \"gpk bench quicksort\",\n  \"gpk_version\": ");
    cli_json_str(f, gpk_version());
    fprintf(f, ",\n  \"backends_built\": ");
    cli_json_str(f, cli_backends_built());
    fprintf(f, ",\n  \"date\": ");
    cli_json_str(f, date);
    fprintf(f, ",\n  \"command\": ");
    {
        /* argv as one string; cli_json_str escapes it. */
        size_t len = 4;
        for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
        char *line = malloc(len);
        if (line) {
            strcpy(line, "gpk");
            for (int i = 0; i < argc; i++) {
                strcat(line, " ");
                strcat(line, argv[i]);
            }
        }
        cli_json_str(f, line ? line : "gpk bench quicksort");
        free(line);
    }
    fprintf(f, ",\n  \"machine\": {\"hostname\": ");
    cli_json_str(f, host);
    fprintf(f, ", \"cpu_model\": ");
    cli_json_str(f, model);
    fprintf(f, ", \"logical_cores\": %d, \"memory_bytes\": %llu},\n  \"devices\": [", cores, mem);
    gpk_ctx_info info;
    gpk_ctx_info_get(st->ctx, &info);
    fprintf(f, "\n    ");
    cli_json_ctx_info(f, &info);
    if (st->cpu != st->ctx) {
        gpk_ctx_info_get(st->cpu, &info);
        fprintf(f, ",\n    ");
        cli_json_ctx_info(f, &info);
    }
    fprintf(f, "\n  ],\n  \"config\": {\"backend\": \"%s\", \"types\": [", gpk_backend_name(c->backend));
    for (int i = 0; i < c->ntypes; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", gpk_type_name(c->types[i]));
    fprintf(f, "], \"dists\": [");
    for (int i = 0; i < c->ndists; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", gpk_dist_name(c->dists[i]));
    fprintf(f, "], \"n\": [");
    for (int i = 0; i < c->nns; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)c->ns[i]);
    fprintf(f, "], \"keys\": %s, \"records\": %s, \"record_key_type\": \"%s\", \"payloads\": [",
            c->keys ? "true" : "false", c->records ? "true" : "false", gpk_type_name(c->record_key));
    for (int i = 0; i < c->npayloads; i++) fprintf(f, "%s%u", i ? ", " : "", c->payloads[i]);
    fprintf(f,
            "], \"param\": %u, \"seed\": %llu, \"reps\": %d, \"slow_peer_reps_1_from_n\": %zu, "
            "\"threads\": %d},\n",
            c->param, (unsigned long long)c->seed, c->reps, QB_SLOW_PEER_N, c->threads);
    fprintf(f,
            "  \"timing\": \"cuda rows: device-resident sorts, uploads excluded, except rows "
            "with \\\"host_to_host\\\": true; cpu rows: host sort calls; median over reps; "
            "gkeys_per_s counts keys or records; speedup on gpk rows = fastest peer ms / gpk ms, "
            "on peer rows = peer ms / gpk quick ms\",\n");
    fprintf(f, "  \"rows\": [");
    for (size_t i = 0; i < st->nrows; i++) {
        const qb_row *r = &st->rows[i];
        fprintf(f,
                "%s\n    {\"backend\": \"%s\", \"type\": \"%s\", \"dist\": \"%s\", \"n\": %zu, "
                "\"kind\": \"%s\", \"record_size\": %zu, \"payload_bytes\": %zu, \"impl_id\": \"%s\", "
                "\"impl\": ",
                i ? "," : "", gpk_backend_name(r->backend), gpk_type_name(r->type), gpk_dist_name(r->dist),
                r->n, r->record_size ? "records" : "keys", r->record_size,
                r->record_size ? r->record_size - 8 : 0, impls[r->impl].id);
        cli_json_str(f, r->label);
        fprintf(f, ", \"is_gpk\": %s, \"reps\": %d, \"host_to_host\": %s", r->is_gpk ? "true" : "false",
                r->reps, r->host_timed ? "true" : "false");
        if (strcmp(r->status, "ok") == 0 || strcmp(r->status, "FAIL") == 0)
            fprintf(f, ", \"ms\": %.6f, \"gkeys_per_s\": %.6f", r->ms, r->gkeys);
        if (r->speedup > 0) {
            fprintf(f, ", \"vs\": ");
            cli_json_str(f, r->vs);
            fprintf(f, ", \"speedup\": %.4f", r->speedup);
        }
        if (r->vs_merge > 0) fprintf(f, ", \"speedup_vs_cub_merge\": %.4f", r->vs_merge);
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

/* ---- entry ---------------------------------------------------------------------------- */

int cmd_bench_quick(int argc, char **argv)
{
    const char *cmd = "bench";
    qb_state st;
    memset(&st, 0, sizeof st);
    int pr = qb_parse(argc, argv, &st.cfg);
    if (pr > 0) return CLI_OK;
    if (pr < 0) return CLI_USAGE;
    qb_cfg *c = &st.cfg;
    st.t_start = cli_now_ms();
    st.chatty = 1;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    if (!c->have_backend) {
        c->backend = GPK_BACKEND_CPU;
#ifdef GPK_HAVE_CUDA
        if (gpk_backend_available(GPK_BACKEND_CUDA)) c->backend = GPK_BACKEND_CUDA;
#endif
    }
#ifndef GPK_HAVE_CUDA
    if (c->backend == GPK_BACKEND_CUDA) {
        cli_error(cmd, "the CUDA backend is not built into this gpk");
        return CLI_FAIL;
    }
#endif
    if (!c->have_reps) c->reps = c->backend == GPK_BACKEND_CUDA ? 10 : 3;
    int rc = CLI_FAIL;
    if (cli_ctx_create(cmd, &st.cpu, GPK_BACKEND_CPU, -1, c->threads) != GPK_OK) goto done;
    if (c->backend == GPK_BACKEND_CPU) st.ctx = st.cpu;
    else if (cli_ctx_create(cmd, &st.ctx, c->backend, c->device, 0) != GPK_OK) goto done;
    {
        gpk_ctx_info info;
        gpk_ctx_info_get(st.ctx, &info);
        qb_progress(&st, "%s: %s (%s, %u compute units)", gpk_backend_name(info.backend), info.device_name,
                    info.platform, info.compute_units);
    }
    qb_header();
    if (c->keys)
        for (int ti = 0; ti < c->ntypes; ti++)
            for (int di = 0; di < c->ndists; di++)
                for (int ni = 0; ni < c->nns; ni++)
                    qb_keys_block(&st, c->types[ti], c->dists[di], (size_t)c->ns[ni]);
    if (c->records)
        for (int pi = 0; pi < c->npayloads; pi++)
            for (int di = 0; di < c->ndists; di++)
                for (int ni = 0; ni < c->nns; ni++)
                    qb_records_block(&st, c->dists[di], (size_t)c->ns[ni], c->payloads[pi]);
    st.chatty = 1;
    rc = st.failures ? CLI_FAIL : CLI_OK;
    if (st.failures)
        fprintf(stderr, "gpk bench: %d FAILED or ERROR row%s (see above)\n", st.failures,
                st.failures > 1 ? "s" : "");
    if (c->json_path) {
        char err[300];
        if (qb_write_json(&st, argc, argv, date, err, sizeof err) != 0) {
            cli_error(cmd, "%s", err);
            rc = CLI_FAIL;
        } else {
            qb_progress(&st, "wrote %s", c->json_path);
        }
    }
done:
    if (st.ctx != st.cpu) gpk_ctx_destroy(st.ctx);
    gpk_ctx_destroy(st.cpu);
    free(st.rows);
    return rc;
}
