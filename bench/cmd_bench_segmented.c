/* gpk bench segmented: the segmented sort against sorting each segment on
 * its own, in the shapes of docs/perf/segmented.md: rows of 256, 4096 and
 * 2^20 keys, and ragged segments with power-law lengths, n keys in all.
 * CPU backend: gpk_sort_segmented_* against a loop of std::sort over the
 * segments (one thread, as a loop of numpy.sort; and the segments spread
 * over the threads) and a loop of gpk_sort_keys calls. CUDA backend: the
 * device API on device-resident data against cub::DeviceSegmentedSort
 * (SortKeys, StableSortKeys) and cub::DeviceSegmentedRadixSort, each at
 * its DoubleBuffer call. Every result is checked: each segment in order,
 * and, ascending, the same keys as the peer's. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gpk/gen.h"
#include "gpk/gpk.h"
#include "gpk/sort.h"
#include "peers_segmented.h"
#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "gpk/cuda.h"
#endif

int cmd_bench_segmented(int argc, char **argv);
void cmd_bench_segmented_help(FILE *f);

void cmd_bench_segmented_help(FILE *f)
{
    fputs("usage: gpk bench segmented [OPTIONS]   many sorts at once: gpk's segmented sort against\n"
          "a loop of one sort per segment (CPU) or CUB's segmented sorts (CUDA)\n"
          "  --backend B         cpu or cuda (default cpu)\n"
          "  --type T            key type (default u32)\n"
          "  --pairs             u32 values with the keys\n"
          "  --descending        descending order\n"
          "  --cases LIST        several runs in one process, each T[-pairs][-desc] (e.g.\n"
          "                      u32,u32-desc,f32-pairs); 'goals' = u32,u32-desc,f32,f32-desc,\n"
          "                      u32-pairs,u32-pairs-desc, the cases of docs/perf/segmented.md; a\n"
          "                      descending case after its ascending twin prints desc / asc\n"
          "  --n N               keys in all (default 2^28)\n"
          "  --shapes LIST       row lengths and/or 'ragged' (power-law lengths: Pareto, alpha 1.1,\n"
          "                      at least 16, at most 2^22) (default 256,4096,2^20,ragged)\n"
          "  --reps R            timed runs after one warm-up; the median (default 5)\n"
          "  --threads T         CPU threads (default all)\n"
          "  --small-max N, --large-min N   gpk_segmented_opts (default 0: tuned)\n"
          "  --no-loop           CPU: leave out the gpk_sort_keys loop (slow with many segments)\n"
          "  --seed S            the keys' seed (default: from the clock)\n",
          f);
}

typedef struct shape {
    char name[32];
    size_t count, used; /* segments, keys in them */
    uint64_t length;    /* rows: the length; 0: ragged */
    uint64_t *begin, *end;
} shape;

static int make_shape(const char *spec, size_t n, uint64_t seed, shape *s)
{
    memset(s, 0, sizeof *s);
    if (!strcmp(spec, "ragged")) {
        snprintf(s->name, sizeof s->name, "ragged");
        s->begin = malloc(n * sizeof(uint64_t) / 16 + 64);
        s->end = malloc(n * sizeof(uint64_t) / 16 + 64);
        if (!s->begin || !s->end) return -1;
        gpk_rng r;
        gpk_rng_seed(&r, seed ^ 0x5E6);
        size_t at = 0, c = 0;
        while (at < n) {
            double len = 16.0 / pow(1.0 - gpk_rng_uniform(&r), 1.0 / 1.1);
            if (len > 4194304.0) len = 4194304.0;
            size_t l = (size_t)len;
            if (l > n - at) l = n - at;
            s->begin[c] = at;
            s->end[c] = at + l;
            at += l;
            c++;
        }
        s->count = c;
        s->used = n;
        return 0;
    }
    uint64_t len;
    if (cli_parse_size(spec, &len) != 0 || len == 0 || len > n) return -1;
    s->length = len;
    s->count = n / len;
    s->used = s->count * len;
    snprintf(s->name, sizeof s->name, "%zux%s", s->count, spec);
    s->begin = malloc(s->count * sizeof(uint64_t) + 8);
    s->end = malloc(s->count * sizeof(uint64_t) + 8);
    if (!s->begin || !s->end) return -1;
    for (size_t i = 0; i < s->count; i++) {
        s->begin[i] = i * len;
        s->end[i] = (i + 1) * len;
    }
    return 0;
}

/* key a may come before b: the benchmark's keys hold no NaN */
static int in_order(gpk_type t, const void *k, size_t i, int desc)
{
    double a, b;
    switch (t) {
    case GPK_U32: a = ((const uint32_t *)k)[i], b = ((const uint32_t *)k)[i + 1]; break;
    case GPK_I32: a = ((const int32_t *)k)[i], b = ((const int32_t *)k)[i + 1]; break;
    case GPK_F32: a = ((const float *)k)[i], b = ((const float *)k)[i + 1]; break;
    case GPK_U64: {
        const uint64_t x = ((const uint64_t *)k)[i], y = ((const uint64_t *)k)[i + 1];
        return desc ? x >= y : x <= y;
    }
    case GPK_I64: {
        const int64_t x = ((const int64_t *)k)[i], y = ((const int64_t *)k)[i + 1];
        return desc ? x >= y : x <= y;
    }
    default: a = ((const double *)k)[i], b = ((const double *)k)[i + 1]; break;
    }
    return desc ? a >= b : a <= b;
}

static const char *check(gpk_type t, const shape *s, const void *got, const void *peer, int desc)
{
    for (size_t i = 0; i < s->count; i++)
        for (uint64_t j = s->begin[i]; j + 1 < s->end[i]; j++)
            if (!in_order(t, got, j, desc)) return "a segment out of order";
    if (peer && !desc && memcmp(got, peer, s->used * gpk_type_size(t)) != 0)
        return "keys differ from the peer's";
    return NULL;
}

static double median(double *v, int n) { return cli_median(v, (size_t)n); }

typedef struct bench_cfg {
    gpk_ctx *ctx;
    gpk_backend backend;
    gpk_type type;
    int pairs, desc, reps, threads, loop;
    gpk_segmented_opts opts;
} bench_cfg;

static void print_peer(const char *name, double ms, double gpk_ms)
{
    printf("    %-36s %10.3f ms  gpk %.2fx\n", name, ms, ms / gpk_ms);
}

static int bench_cpu(const bench_cfg *c, const shape *s, const void *keys, const uint32_t *vals,
                     double *gpk_ms)
{
    const size_t kw = gpk_type_size(c->type), n = s->used;
    void *work = malloc(n * kw), *peer = malloc(n * kw);
    uint32_t *wv = c->pairs ? malloc(n * 4) : NULL;
    double *t = malloc((size_t)(c->reps + 1) * sizeof(double));
    int rc = 1;
    char err[256] = "";
    if (!work || !peer || !t || (c->pairs && !wv)) goto done;
    gpk_segments seg = {s->count, s->length ? NULL : s->begin, s->length ? NULL : s->end, s->length};
    for (int r = 0; r <= c->reps; r++) {
        memcpy(work, keys, n * kw);
        if (wv) memcpy(wv, vals, n * 4);
        const double a = cli_now_ms();
        gpk_status st = c->pairs
            ? gpk_sort_segmented_pairs(c->ctx, c->type, work, GPK_U32, wv, n, &seg, &c->opts)
            : gpk_sort_segmented_keys(c->ctx, c->type, work, n, &seg, &c->opts);
        const double b = cli_now_ms();
        if (st != GPK_OK) {
            fprintf(stderr, "gpk bench segmented: %s\n", gpk_last_error(c->ctx));
            goto done;
        }
        if (r > 0) t[r - 1] = b - a;
    }
    const double gms = median(t, c->reps);
    printf("  %-18s %9zu segs  gpk %10.3f ms  %7.3f Gkey/s\n", s->name, s->count, gms, (double)n / gms / 1e6);
    *gpk_ms = gms;
    double ms;
    if (gpk_peer_segments_std_sort(c->type, keys, peer, n, s->count, s->begin, s->end, 0, c->reps, &ms, err,
                                   sizeof err) == 0)
        print_peer("std::sort loop, 1 thread", ms, gms);
    const char *bad = check(c->type, s, work, c->pairs ? NULL : peer, c->desc);
    if (gpk_peer_segments_std_sort(c->type, keys, peer, n, s->count, s->begin, s->end, c->threads, c->reps,
                                   &ms, err, sizeof err) == 0) {
        char name[64];
        snprintf(name, sizeof name, "std::sort loop, %d threads", c->threads);
        print_peer(name, ms, gms);
    }
    if (c->loop && !c->pairs) {
        /* one gpk_sort_keys call per segment, in the same order */
        memcpy(peer, keys, n * kw);
        gpk_radix_opts po = GPK_RADIX_OPTS_INIT;
        po.descending = c->desc;
        const double a = cli_now_ms();
        for (size_t i = 0; i < s->count; i++)
            if (gpk_sort_keys(c->ctx, c->type, (char *)peer + s->begin[i] * kw, s->end[i] - s->begin[i],
                              &po) != GPK_OK) {
                fprintf(stderr, "gpk bench segmented: %s\n", gpk_last_error(c->ctx));
                goto done;
            }
        print_peer("gpk_sort_keys loop (once)", cli_now_ms() - a, gms);
    }
    if (bad) {
        fprintf(stderr, "gpk bench segmented: %s: %s\n", s->name, bad);
        goto done;
    }
    rc = 0;
done:
    free(work);
    free(peer);
    free(wv);
    free(t);
    return rc;
}

#ifdef GPK_HAVE_CUDA
#define CU(x)                                                                             \
    do {                                                                                  \
        cudaError_t e_ = (x);                                                             \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "gpk bench segmented: %s: %s\n", #x, cudaGetErrorString(e_)); \
            goto done;                                                                    \
        }                                                                                 \
    } while (0)

static int bench_cuda(const bench_cfg *c, const shape *s, const void *keys, const uint32_t *vals,
                      double *gpk_ms)
{
    const size_t kw = gpk_type_size(c->type), n = s->used;
    void *d_kin = NULL, *d_kout = NULL, *d_vin = NULL, *d_vout = NULL, *d_temp = NULL;
    uint64_t *d_off = NULL;
    cudaEvent_t ea = NULL, eb = NULL;
    void *got = malloc(n * kw), *peer = malloc(n * kw);
    double *t = malloc((size_t)(c->reps + 1) * sizeof(double));
    int rc = 1;
    char err[256] = "";
    gpk_ctx_info info;
    gpk_ctx_info_get(c->ctx, &info);
    if (!got || !peer || !t) goto done;
    CU(cudaSetDevice(info.devices[0]));
    CU(cudaEventCreate(&ea));
    CU(cudaEventCreate(&eb));
    CU(cudaMalloc(&d_kin, n * kw + 8));
    CU(cudaMalloc(&d_kout, n * kw + 8));
    if (c->pairs) {
        CU(cudaMalloc(&d_vin, n * 4 + 8));
        CU(cudaMalloc(&d_vout, n * 4 + 8));
        CU(cudaMemcpy(d_vin, vals, n * 4, cudaMemcpyHostToDevice));
    }
    CU(cudaMemcpy(d_kin, keys, n * kw, cudaMemcpyHostToDevice));
    gpk_segments seg = {s->count, NULL, NULL, s->length};
    if (!s->length) {
        CU(cudaMalloc((void **)&d_off, 2 * s->count * 8 + 8));
        CU(cudaMemcpy(d_off, s->begin, s->count * 8, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(d_off + s->count, s->end, s->count * 8, cudaMemcpyHostToDevice));
        seg.begin = d_off;
        seg.end = d_off + s->count;
    }
    size_t bytes = 0;
    gpk_status st = c->pairs
        ? gpk_cuda_sort_segmented_pairs(c->ctx, NULL, &bytes, c->type, d_kin, d_kout, 4, d_vin, d_vout, n,
                                        &seg, &c->opts, 0)
        : gpk_cuda_sort_segmented_keys(c->ctx, NULL, &bytes, c->type, d_kin, d_kout, n, &seg, &c->opts, 0);
    if (st != GPK_OK) {
        fprintf(stderr, "gpk bench segmented: %s\n", gpk_last_error(c->ctx));
        goto done;
    }
    CU(cudaMalloc(&d_temp, bytes));
    for (int r = 0; r <= c->reps; r++) {
        CU(cudaEventRecord(ea, 0));
        st = c->pairs ? gpk_cuda_sort_segmented_pairs(c->ctx, d_temp, &bytes, c->type, d_kin, d_kout, 4,
                                                      d_vin, d_vout, n, &seg, &c->opts, 0)
                      : gpk_cuda_sort_segmented_keys(c->ctx, d_temp, &bytes, c->type, d_kin, d_kout, n, &seg,
                                                     &c->opts, 0);
        if (st != GPK_OK) {
            fprintf(stderr, "gpk bench segmented: %s\n", gpk_last_error(c->ctx));
            goto done;
        }
        CU(cudaEventRecord(eb, 0));
        CU(cudaEventSynchronize(eb));
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, ea, eb));
        if (r > 0) t[r - 1] = ms;
    }
    CU(cudaMemcpy(got, d_kout, n * kw, cudaMemcpyDeviceToHost));
    const double gms = median(t, c->reps);
    printf("  %-18s %9zu segs  gpk %10.3f ms  %7.3f Gkey/s\n", s->name, s->count, gms, (double)n / gms / 1e6);
    *gpk_ms = gms;
    int have_peer = 0;
    for (int which = 0; which < 3; which++) {
        double ms;
        const int prc = gpk_peer_cub_segmented(info.devices[0], which, c->type, keys, c->pairs ? vals : NULL,
                                               have_peer ? NULL : peer, n, s->count, s->begin, s->end,
                                               c->desc, c->reps, &ms, err, sizeof err);
        if (prc == 0) {
            print_peer(gpk_peer_cub_segmented_name(which), ms, gms);
            have_peer = 1;
        } else {
            printf("    %-36s failed: %s\n", gpk_peer_cub_segmented_name(which), err);
        }
    }
    const char *bad = check(c->type, s, got, have_peer && !c->pairs ? peer : NULL, c->desc);
    if (bad) {
        fprintf(stderr, "gpk bench segmented: %s: %s\n", s->name, bad);
        goto done;
    }
    rc = 0;
done:
    cudaFree(d_kin);
    cudaFree(d_kout);
    cudaFree(d_vin);
    cudaFree(d_vout);
    cudaFree(d_off);
    cudaFree(d_temp);
    if (ea) cudaEventDestroy(ea);
    if (eb) cudaEventDestroy(eb);
    free(got);
    free(peer);
    free(t);
    return rc;
}
#endif

/* One run of --cases: "u32", "f32-pairs", "u64-pairs-desc", ... */
typedef struct bench_case {
    gpk_type type;
    int pairs, desc;
} bench_case;

static int parse_case(const char *spec, bench_case *bc)
{
    char t[32];
    const char *dash = strchr(spec, '-');
    const size_t len = dash ? (size_t)(dash - spec) : strlen(spec);
    if (len == 0 || len >= sizeof t) return -1;
    memcpy(t, spec, len);
    t[len] = 0;
    if (gpk_type_parse(t, &bc->type) != GPK_OK) return -1;
    bc->pairs = bc->desc = 0;
    for (const char *p = dash; p && *p;) {
        const char *next = strchr(p + 1, '-');
        const size_t l = next ? (size_t)(next - p) : strlen(p);
        if (l == 6 && !strncmp(p, "-pairs", 6)) bc->pairs = 1;
        else if (l == 5 && !strncmp(p, "-desc", 5)) bc->desc = 1;
        else return -1;
        p = next;
    }
    return 0;
}

int cmd_bench_segmented(int argc, char **argv)
{
    bench_cfg c;
    memset(&c, 0, sizeof c);
    c.backend = GPK_BACKEND_CPU;
    c.type = GPK_U32;
    c.reps = 5;
    c.loop = 1;
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    uint64_t n = (uint64_t)1 << 28, seed = (uint64_t)time(NULL) * 2654435761u, v;
    const char *shapes = "256,4096,2^20,ragged", *cases = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int m;
        if (cli_is_help(a)) {
            cmd_bench_segmented_help(stdout);
            return 0;
        }
        if (!strcmp(a, "segmented")) continue;
        if (!strcmp(a, "--pairs")) c.pairs = 1;
        else if (!strcmp(a, "--descending")) o.descending = 1;
        else if (!strcmp(a, "--no-loop")) c.loop = 0;
        else if ((m = cli_opt_backend("bench segmented", argc, argv, &i, &c.backend)) != 0) {
            if (m < 0) return CLI_USAGE;
        } else if ((m = cli_opt_type("bench segmented", argc, argv, &i, "--type", "key type", &c.type)) !=
                   0) {
            if (m < 0) return CLI_USAGE;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--n", &val)) != 0) {
            if (m < 0 || cli_parse_size(val, &n) != 0 || n < 1) {
                cli_error("bench segmented", "bad --n");
                return CLI_USAGE;
            }
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--cases", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            cases = !strcmp(val, "goals") ? "u32,u32-desc,f32,f32-desc,u32-pairs,u32-pairs-desc" : val;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--shapes", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            shapes = val;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--reps", &val)) != 0) {
            if (m < 0 || cli_parse_uint(val, 1, 1000, &v) != 0) return CLI_USAGE;
            c.reps = (int)v;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--threads", &val)) != 0) {
            if (m < 0 || cli_parse_uint(val, 1, 4096, &v) != 0) return CLI_USAGE;
            c.threads = (int)v;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--small-max", &val)) != 0) {
            if (m < 0 || cli_parse_size(val, &v) != 0) return CLI_USAGE;
            o.small_max = (size_t)v;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--large-min", &val)) != 0) {
            if (m < 0 || cli_parse_size(val, &v) != 0) return CLI_USAGE;
            o.large_min = (size_t)v;
        } else if ((m = cli_opt_value("bench segmented", argc, argv, &i, NULL, "--seed", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            seed = strtoull(val, NULL, 0);
        } else {
            cli_error("bench segmented", "unknown argument '%s'", a);
            cmd_bench_segmented_help(stderr);
            return CLI_USAGE;
        }
    }
    if (c.backend != GPK_BACKEND_CPU && c.backend != GPK_BACKEND_CUDA) {
        cli_error("bench segmented", "--backend must be cpu or cuda");
        return CLI_USAGE;
    }
    /* the cases: --cases, or the one of --type / --pairs / --descending */
    enum { MAX_CASES = 16, MAX_SHAPES = 16 };
    bench_case cs[MAX_CASES];
    int n_cases = 0;
    if (cases) {
        char clist[512];
        snprintf(clist, sizeof clist, "%s", cases);
        for (char *cp = strtok(clist, ","); cp; cp = strtok(NULL, ",")) {
            if (n_cases == MAX_CASES || parse_case(cp, &cs[n_cases]) != 0) {
                cli_error("bench segmented", "bad case '%s' (T[-pairs][-desc], at most %d cases)", cp,
                          MAX_CASES);
                return CLI_USAGE;
            }
            n_cases++;
        }
    } else {
        cs[0].type = c.type;
        cs[0].pairs = c.pairs;
        cs[0].desc = o.descending;
        n_cases = 1;
    }
    if (cli_ctx_create("bench segmented", &c.ctx, c.backend, -1, c.threads) != GPK_OK) return CLI_FAIL;
    gpk_ctx_info info;
    gpk_ctx_info_get(c.ctx, &info);
    c.threads = (int)info.threads;
    int failures = 0;
    double gms[MAX_CASES][MAX_SHAPES] = {{0}};
    for (int k = 0; k < n_cases; k++) {
        c.type = cs[k].type;
        c.pairs = cs[k].pairs;
        c.desc = o.descending = cs[k].desc;
        c.opts = o;
        const size_t kw = gpk_type_size(c.type);
        void *keys = malloc((size_t)n * kw);
        uint32_t *vals = c.pairs ? malloc((size_t)n * 4) : NULL;
        if (!keys || (c.pairs && !vals)) {
            cli_error("bench segmented", "no memory for %" PRIu64 " keys", n);
            free(keys);
            free(vals);
            gpk_ctx_destroy(c.ctx);
            return CLI_FAIL;
        }
        gpk_generate(c.type, GPK_DIST_UNIFORM, keys, (size_t)n, seed, 0);
        for (size_t i = 0; c.pairs && i < n; i++) vals[i] = (uint32_t)i;
        char nb[32];
        printf("gpk bench segmented: %s / %s, %u threads, %s%s %s, n %s, seed %" PRIu64 ", median of %d\n",
               info.device_name, gpk_backend_name(c.backend), info.threads, gpk_type_name(c.type),
               c.pairs ? "/u32" : "", c.desc ? "descending" : "ascending", cli_size_str(n, nb, sizeof nb),
               seed, c.reps);
        /* the ascending twin of a descending case, run before it */
        int twin = -1;
        for (int j = 0; j < k; j++)
            if (cs[k].desc && !cs[j].desc && cs[j].type == cs[k].type && cs[j].pairs == cs[k].pairs) twin = j;
        char list[512];
        snprintf(list, sizeof list, "%s", shapes);
        int q = 0;
        for (char *sp = strtok(list, ","); sp; sp = strtok(NULL, ","), q++) {
            shape s;
            double ms = 0;
            if (make_shape(sp, (size_t)n, seed, &s) != 0) {
                cli_error("bench segmented", "bad shape '%s' (a row length up to n, or ragged)", sp);
                free(s.begin);
                free(s.end);
                failures++;
                continue;
            }
            int rc;
#ifdef GPK_HAVE_CUDA
            if (c.backend == GPK_BACKEND_CUDA) rc = bench_cuda(&c, &s, keys, vals, &ms);
            else
#endif
                rc = bench_cpu(&c, &s, keys, vals, &ms);
            failures += rc != 0;
            if (q < MAX_SHAPES) {
                gms[k][q] = rc == 0 ? ms : 0;
                if (twin >= 0 && ms > 0 && gms[twin][q] > 0)
                    printf("    descending / ascending (gpk)          %10.3f\n", ms / gms[twin][q]);
            }
            free(s.begin);
            free(s.end);
            fflush(stdout);
        }
        free(keys);
        free(vals);
    }
    gpk_ctx_destroy(c.ctx);
    return failures ? CLI_FAIL : CLI_OK;
}
