/* gpk bench multi: the multi-GPU sort of issue 17 (docs/perf/scale.md).
 *
 *   gpk bench multi [--gpus 1,2] [--devices 0,1] [--n 2G] [--reps 5]
 *                   [--configs u32,u64,u32/u32] [--plans merge,part] [--host] [--json FILE]
 *                   [--seed S]
 *
 * Device-resident: the same n keys (splitmix64 of the index and the seed)
 * sorted on 1 GPU (gpk_cuda_sort_keys / _pairs, out of place) and spread
 * over K GPUs (gpk_sort_shards_*, shard i holding n/K keys on devices[i]),
 * timed on the host clock around the call after every device is idle
 * (the multi-GPU call is synchronous; the 1-GPU one is followed by a
 * stream synchronize); before each rep the K-GPU inputs are restored from
 * a pristine copy on each device (not timed). K GPUs run once per plan of
 * --plans (GPK_MULTI_PLAN, docs/guide.md "Several GPUs"): merge (sort
 * first, then merge), part (partition first, then the buckets: sort_ms is
 * the partition, merge_ms the exchange and bucket sorts) and lsd
 * (distributed LSD passes). The median of --reps runs
 * after one warm-up, the phases of the median run (lsd: host clock until
 * the first counts are in, then the passes with the exchanges; on the GPUs
 * the histogram, the sum of the passes, the last pass; merge: local sorts,
 * splitters, merge), and every result checked on the host: globally sorted, the
 * pairs stable (values are the input indices), the same keys (an
 * order-free checksum). --host adds the host API (gpk_sort_keys on a
 * context of 1 and of K devices, u32 keys, the caller's pageable array).
 * --gpus lists the GPU counts; --devices the devices used (default
 * 0,1,...; "0,0" runs the same GPU twice). JSON: one object per row,
 * appended to FILE. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_hooks.h"
#include "bench_util.h"
#include "gpk/gpk.h"
#include "gpk/sort.h"
#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "gpk/cuda.h"
#endif

int cmd_bench_multi(int argc, char **argv);
void cmd_bench_multi_help(FILE *f);

void cmd_bench_multi_help(FILE *f)
{
    fputs("usage: gpk bench multi [OPTIONS]   the multi-GPU sort (CUDA): the same keys on 1 GPU and\n"
          "spread over K GPUs, device-resident (gpk_sort_shards_*), and the host API\n"
          "  --gpus LIST         GPU counts to run (default 1,2)\n"
          "  --devices LIST      the devices used, in order (default 0,1,...; 0,0 = one GPU twice)\n"
          "  --n N               keys in all (default 2G = 2^31)\n"
          "  --reps R            timed runs after one warm-up; the median is reported (default 5)\n"
          "  --configs LIST      key types, with /VALUE_TYPE for pairs (default u32,u64,u32/u32)\n"
          "  --plans LIST        the plans K > 1 GPUs run, each in turn: merge, part (partition\n"
          "                      first), lsd, lsd:R (lsd with R-bit digits) (default merge,part)\n"
          "  --host              also the host API: gpk_sort_keys of u32 keys on 1 and K GPUs\n"
          "  --json FILE         append one JSON object per row\n"
          "  --seed S            the keys' seed (default: from the clock)\n",
          f);
}

#ifndef GPK_HAVE_CUDA
int cmd_bench_multi(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cmd_bench_multi_help(stdout);
            return 0;
        }
    fprintf(stderr, "gpk bench multi: this gpk was built without CUDA\n");
    return 1;
}
#else

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static size_t parse_count(const char *s)
{
    char *end;
    double x = strtod(s, &end);
    if (*end == '^') { /* 2^31 */
        double e = strtod(end + 1, &end);
        double r = 1;
        for (int i = 0; i < (int)e; i++) r *= x;
        x = r;
    }
    switch (*end) {
    case 'k':
    case 'K': x *= 1024; break;
    case 'm':
    case 'M': x *= 1024 * 1024; break;
    case 'g':
    case 'G': x *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)x;
}

static int parse_ints(const char *s, int *out, int most)
{
    int k = 0;
    while (*s && k < most) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) return 0;
        out[k++] = (int)v;
        if (*end != ',') break;
        s = end + 1;
    }
    return k;
}

#define CUDA_TRY(call)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "gpk bench multi: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

typedef struct input {
    gpk_type type;
    unsigned kw, vw;
    size_t n;
    void *keys, *vals; /* host */
    uint64_t sum;      /* order-free checksum of (key, value) */
} input;

static uint64_t key_at(const input *in, const void *keys, size_t i)
{
    return in->kw == 4 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
}

static uint64_t val_at(const input *in, const void *vals, size_t i)
{
    if (!in->vw) return 0;
    return in->vw == 4 ? ((const uint32_t *)vals)[i] : ((const uint64_t *)vals)[i];
}

static uint64_t checksum(const input *in, const void *keys, const void *vals)
{
    uint64_t s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (size_t i = 0; i < in->n; i++)
        s += bench_splitmix64(key_at(in, keys, i) * 0x9E3779B97F4A7C15ull ^ val_at(in, vals, i));
    return s;
}

static void generate(input *in, uint64_t seed)
{
    in->keys = malloc(in->n * in->kw);
    in->vals = in->vw ? malloc(in->n * in->vw) : NULL;
    if (!in->keys || (in->vw && !in->vals)) {
        fprintf(stderr, "gpk bench multi: out of host memory for %zu keys\n", in->n);
        exit(1);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < in->n; i++) {
        const uint64_t x = bench_splitmix64(seed + i);
        if (in->kw == 4) ((uint32_t *)in->keys)[i] = (uint32_t)x;
        else ((uint64_t *)in->keys)[i] = x;
        if (in->vw == 4) ((uint32_t *)in->vals)[i] = (uint32_t)i;
        else if (in->vw == 8) ((uint64_t *)in->vals)[i] = (uint64_t)i;
    }
    in->sum = checksum(in, in->keys, in->vals);
}

/* Sorted (mapped keys nondecreasing), stable (indices increasing on equal
 * keys), the same (key, value) multiset. */
static int verify(const input *in, const void *keys, const void *vals, char *why, size_t len)
{
    long long bad = -1;
#pragma omp parallel for schedule(static) reduction(max : bad)
    for (size_t i = 1; i < in->n; i++) {
        const uint64_t a = in->kw == 4 ? gpk__map_u32(in->type, (uint32_t)key_at(in, keys, i - 1))
                                       : gpk__map_u64(in->type, key_at(in, keys, i - 1));
        const uint64_t b = in->kw == 4 ? gpk__map_u32(in->type, (uint32_t)key_at(in, keys, i))
                                       : gpk__map_u64(in->type, key_at(in, keys, i));
        if (a > b || (a == b && in->vw && val_at(in, vals, i - 1) >= val_at(in, vals, i)))
            if ((long long)i > bad) bad = (long long)i;
    }
    if (bad >= 0) {
        snprintf(why, len, "out of order (or unstable) at %lld", bad);
        return 0;
    }
    if (checksum(in, keys, vals) != in->sum) {
        snprintf(why, len, "the keys differ from the input's (checksum)");
        return 0;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct row {
    const char *mode;
    char plan[24]; /* the plan that ran (K > 1), as the context records it, and :R for --plans lsd:R */
    int gpus;
    double ms, min_ms, sort_ms, split_ms, merge_ms;
    double copy_ms, search_ms, tiles_ms; /* inside the merge, the slowest GPU */
    /* lsd: host clock (counts in, passes); GPU events (histogram, the
     * passes' sum, the last pass) */
    double count_ms, passes_ms, hist_ms, pass_sum_ms, last_ms;
    int passes;
    int ok;
    char why[160];
} row;

static gpk_ctx *open_ctx(const int *devices, int k)
{
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = GPK_BACKEND_CUDA;
    o.n_devices = k;
    o.devices = devices;
    gpk_ctx *ctx = NULL;
    if (gpk_ctx_create_ex(&ctx, &o) != GPK_OK) {
        fprintf(stderr, "gpk bench multi: cannot open %d GPUs: %s\n", k, gpk_last_error(NULL));
        exit(1);
    }
    return ctx;
}

#define PHASES 12

/* The device API on one GPU: the keys (and values) copied there once, one
 * warm-up and reps timed sorts into t[], the result copied back into got
 * (got_v). On a failed sort r->why says why. */
static gpk_status sort_on_one_gpu(gpk_ctx *ctx, const input *in, int device, int reps, double *t,
                                  unsigned char *got, unsigned char *got_v, row *r)
{
    const size_t kw = in->kw, vw = in->vw;
    cudaStream_t st;
    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaStreamCreate(&st));
    void *ki, *ko, *vi = NULL, *vo = NULL, *temp;
    CUDA_TRY(cudaMalloc(&ki, in->n * kw));
    CUDA_TRY(cudaMalloc(&ko, in->n * kw));
    CUDA_TRY(cudaMemset(ko, 0xA5, in->n * kw)); /* not an earlier row's result */
    if (vw) {
        CUDA_TRY(cudaMalloc(&vi, in->n * vw));
        CUDA_TRY(cudaMalloc(&vo, in->n * vw));
        CUDA_TRY(cudaMemset(vo, 0xA5, in->n * vw));
    }
    CUDA_TRY(cudaMemcpy(ki, in->keys, in->n * kw, cudaMemcpyHostToDevice));
    if (vw) CUDA_TRY(cudaMemcpy(vi, in->vals, in->n * vw, cudaMemcpyHostToDevice));
    size_t tb = 0;
    gpk_status s = vw ? gpk_cuda_sort_pairs(ctx, NULL, &tb, in->type, ki, ko, vw, vi, vo, in->n, NULL, 0, st)
                      : gpk_cuda_sort_keys(ctx, NULL, &tb, in->type, ki, ko, in->n, NULL, 0, st);
    if (s != GPK_OK) exit(1);
    CUDA_TRY(cudaMalloc(&temp, tb));
    for (int rep = -1; rep < reps && s == GPK_OK; rep++) {
        CUDA_TRY(cudaDeviceSynchronize());
        const double t0 = now_ms();
        s = vw ? gpk_cuda_sort_pairs(ctx, temp, &tb, in->type, ki, ko, vw, vi, vo, in->n, NULL, 0, st)
               : gpk_cuda_sort_keys(ctx, temp, &tb, in->type, ki, ko, in->n, NULL, 0, st);
        CUDA_TRY(cudaStreamSynchronize(st));
        if (rep >= 0) t[rep] = now_ms() - t0;
    }
    if (s != GPK_OK) snprintf(r->why, sizeof r->why, "%s", gpk_last_error(ctx));
    CUDA_TRY(cudaMemcpy(got, ko, in->n * kw, cudaMemcpyDeviceToHost));
    if (vw) CUDA_TRY(cudaMemcpy(got_v, vo, in->n * vw, cudaMemcpyDeviceToHost));
    cudaFree(ki);
    cudaFree(ko);
    cudaFree(vi);
    cudaFree(vo);
    cudaFree(temp);
    cudaStreamDestroy(st);
    return s;
}

/* K GPUs' shards. Invariant: shard i holds gpk_shard_share(n, K, i) keys,
 * the shards in order make up the input, and pk[i] (pv[i]) keeps shard i's
 * input on its GPU, copied into sh[i].keys (values) before each run. */
typedef struct {
    gpk_shard sh[GPK_MAX_DEVICES];
    void *pk[GPK_MAX_DEVICES], *pv[GPK_MAX_DEVICES];
} shard_set;

/* Allocates the shards (the + 1: a shard of no keys still gets a buffer)
 * and copies each its share of the input. */
static void upload_shards(const input *in, const int *devices, int k, shard_set *S)
{
    const size_t kw = in->kw, vw = in->vw;
    gpk_shard *sh = S->sh;
    memset(sh, 0, sizeof S->sh);
    size_t off = 0;
    for (int i = 0; i < k; i++) {
        const size_t m = gpk_shard_share(in->n, k, i);
        CUDA_TRY(cudaSetDevice(devices[i]));
        sh[i].n = m;
        CUDA_TRY(cudaMalloc(&S->pk[i], m * kw + 1));
        CUDA_TRY(cudaMalloc(&sh[i].keys, m * kw + 1));
        CUDA_TRY(cudaMalloc(&sh[i].keys_out, m * kw + 1));
        /* not a result left there by an earlier row (the allocator reuses memory) */
        CUDA_TRY(cudaMemset(sh[i].keys_out, 0xA5, m * kw + 1));
        CUDA_TRY(cudaMemcpy(S->pk[i], (char *)in->keys + off * kw, m * kw, cudaMemcpyHostToDevice));
        if (vw) {
            CUDA_TRY(cudaMalloc(&S->pv[i], m * vw + 1));
            CUDA_TRY(cudaMalloc(&sh[i].values, m * vw + 1));
            CUDA_TRY(cudaMalloc(&sh[i].values_out, m * vw + 1));
            CUDA_TRY(cudaMemset(sh[i].values_out, 0xA5, m * vw + 1));
            CUDA_TRY(cudaMemcpy(S->pv[i], (char *)in->vals + off * vw, m * vw, cudaMemcpyHostToDevice));
        }
        off += m;
    }
}

/* Copies the sorted shards back into got (got_v), in shard order, and
 * frees them. */
static void download_shards(const input *in, const int *devices, int k, shard_set *S, unsigned char *got,
                            unsigned char *got_v)
{
    const size_t kw = in->kw, vw = in->vw;
    gpk_shard *sh = S->sh;
    size_t off = 0;
    for (int i = 0; i < k; i++) {
        const size_t m = gpk_shard_share(in->n, k, i);
        CUDA_TRY(cudaSetDevice(devices[i]));
        CUDA_TRY(cudaMemcpy(got + off * kw, sh[i].keys_out, m * kw, cudaMemcpyDeviceToHost));
        if (vw) CUDA_TRY(cudaMemcpy(got_v + off * vw, sh[i].values_out, m * vw, cudaMemcpyDeviceToHost));
        off += m;
        cudaFree(S->pk[i]);
        cudaFree(sh[i].keys);
        cudaFree(sh[i].keys_out);
        cudaFree(sh[i].temp);
        if (vw) {
            cudaFree(S->pv[i]);
            cudaFree(sh[i].values);
            cudaFree(sh[i].values_out);
        }
    }
}

/* The shards API on K GPUs: one warm-up and reps timed sorts into t[],
 * each run's PHASES phase times into ph[PHASES * rep], the result copied
 * back into got (got_v). r->plan gets the plan that ran (with ":R" when
 * `digits` names the digit width); on a failed sort r->why says why. */
static gpk_status sort_on_shards(gpk_ctx *ctx, const input *in, const int *devices, int k, int reps,
                                 const gpk_sort_opts *opts, const char *digits, double *t, double *ph,
                                 unsigned char *got, unsigned char *got_v, row *r)
{
    const size_t kw = in->kw, vw = in->vw;
    shard_set S;
    gpk_shard *sh = S.sh;
    upload_shards(in, devices, k, &S);
    gpk_status s = vw ? gpk_sort_shards_pairs(ctx, in->type, vw, sh, opts)
                      : gpk_sort_shards_keys(ctx, in->type, sh, opts);
    if (s != GPK_OK) exit(1);
    for (int i = 0; i < k; i++) {
        CUDA_TRY(cudaSetDevice(devices[i]));
        CUDA_TRY(cudaMalloc(&sh[i].temp, sh[i].temp_bytes));
    }
    for (int rep = -1; rep < reps && s == GPK_OK; rep++) {
        for (int i = 0; i < k; i++) {
            CUDA_TRY(cudaSetDevice(devices[i]));
            CUDA_TRY(cudaMemcpy(sh[i].keys, S.pk[i], sh[i].n * kw, cudaMemcpyDeviceToDevice));
            if (vw) CUDA_TRY(cudaMemcpy(sh[i].values, S.pv[i], sh[i].n * vw, cudaMemcpyDeviceToDevice));
            CUDA_TRY(cudaDeviceSynchronize());
        }
        const double t0 = now_ms();
        s = vw ? gpk_sort_shards_pairs(ctx, in->type, vw, sh, opts)
               : gpk_sort_shards_keys(ctx, in->type, sh, opts);
        if (rep >= 0) {
            const gpk_multi_stats ms = gpk__multi_stats(ctx), *m = &ms;
            const double v[PHASES] = {m->sort_ms,   m->split_ms,    m->merge_ms, m->copy_ms,
                                      m->search_ms, m->tiles_ms,    m->count_ms, m->passes_ms,
                                      m->hist_ms,   m->pass_sum_ms, m->last_ms,  (double)m->passes};
            t[rep] = now_ms() - t0;
            memcpy(ph + (size_t)PHASES * rep, v, sizeof v);
        }
    }
    snprintf(r->plan, sizeof r->plan, "%s%s%s", gpk__multi_stats(ctx).plan ? gpk__multi_stats(ctx).plan : "?",
             digits ? ":" : "", digits ? digits : "");
    if (s != GPK_OK) snprintf(r->why, sizeof r->why, "%s", gpk_last_error(ctx));
    download_shards(in, devices, k, &S, got, got_v);
    return s;
}

/* The median run's time and phases, the fastest run's time, the check of
 * the result and, on K > 1 GPUs, the plan's own phases in r->why. */
static void summarize_runs(const input *in, int k, int reps, const double *t, const double *ph,
                           const unsigned char *got, const unsigned char *got_v, row *r)
{
    double *sorted = malloc((size_t)reps * sizeof *sorted);
    memcpy(sorted, t, (size_t)reps * sizeof *t);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    r->ms = sorted[reps / 2];
    r->min_ms = sorted[0];
    for (int rep = 0; rep < reps; rep++)
        if (t[rep] == r->ms) {
            const double *v = ph + (size_t)PHASES * rep;
            r->sort_ms = v[0];
            r->split_ms = v[1];
            r->merge_ms = v[2];
            r->copy_ms = v[3];
            r->search_ms = v[4];
            r->tiles_ms = v[5];
            r->count_ms = v[6];
            r->passes_ms = v[7];
            r->hist_ms = v[8];
            r->pass_sum_ms = v[9];
            r->last_ms = v[10];
            r->passes = (int)v[11];
        }
    free(sorted);
    r->ok = verify(in, got, got_v, r->why, sizeof r->why);
    if (r->ok && k > 1 && !strncmp(r->plan, "lsd", 3))
        snprintf(r->why, sizeof r->why, "lsd on the GPUs: histogram %.2f + %d passes %.2f (last %.2f) ms",
                 r->hist_ms, r->passes, r->pass_sum_ms, r->last_ms);
    else if (r->ok && k > 1)
        snprintf(r->why, sizeof r->why, "merge: copy %.2f + search %.2f + tiles %.2f ms", r->copy_ms,
                 r->search_ms, r->tiles_ms);
}

/* Device-resident: 1 GPU with the device API, K GPUs with the shards API.
 * got, got_v: host arrays for the result (the caller's, reused from row to
 * row: first-touching 8-16 GiB costs seconds per row) */
static row run_device(const input *in, const int *devices, int k, int reps, const char *plan,
                      unsigned char *got, unsigned char *got_v)
{
    row r;
    memset(&r, 0, sizeof r);
    r.mode = "device";
    r.gpus = k;
    /* "lsd", "merge", or "lsd:R": the lsd plan with R-bit digits */
    char name[16];
    snprintf(name, sizeof name, "%s", plan);
    char *colon = strchr(name, ':');
    gpk_sort_opts opts = GPK_SORT_OPTS_INIT;
    if (colon) {
        *colon = '\0';
        opts.radix_bits = (unsigned)atoi(colon + 1);
    }
    if (k > 1) setenv("GPK_MULTI_PLAN", name, 1);
    gpk_ctx *ctx = open_ctx(devices, k);
    double *t = calloc((size_t)reps, sizeof *t), *ph = calloc((size_t)reps * PHASES, sizeof *ph);
    if (!t || !ph) exit(1);
    const gpk_status s = k == 1
        ? sort_on_one_gpu(ctx, in, devices[0], reps, t, got, got_v, &r)
        : sort_on_shards(ctx, in, devices, k, reps, &opts, colon ? colon + 1 : NULL, t, ph, got, got_v, &r);
    r.ok = s == GPK_OK;
    if (r.ok) summarize_runs(in, k, reps, t, ph, got, got_v, &r);
    free(t);
    free(ph);
    gpk_ctx_destroy(ctx);
    return r;
}

/* The host API on a context of k devices: the caller's pageable array. */
static row run_host(const input *in, const int *devices, int k, int reps, const char *plan)
{
    row r;
    memset(&r, 0, sizeof r);
    r.mode = "host";
    r.gpus = k;
    char name[16];
    snprintf(name, sizeof name, "%s", plan);
    if (strchr(name, ':')) *strchr(name, ':') = '\0'; /* the host API takes the library's digits */
    if (k > 1) setenv("GPK_MULTI_PLAN", name, 1);
    gpk_ctx *ctx = open_ctx(devices, k);
    const size_t kw = in->kw, vw = in->vw;
    unsigned char *keys = malloc(in->n * kw), *vals = vw ? malloc(in->n * vw) : NULL;
    double *t = calloc((size_t)reps, sizeof *t);
    if (!keys || (vw && !vals) || !t) exit(1);
    gpk_status s = GPK_OK;
    for (int rep = -1; rep < reps && s == GPK_OK; rep++) {
        memcpy(keys, in->keys, in->n * kw);
        if (vw) memcpy(vals, in->vals, in->n * vw);
        const double t0 = now_ms();
        s = vw ? gpk_sort_pairs(ctx, in->type, keys, vw == 4 ? GPK_U32 : GPK_U64, vals, in->n, NULL)
               : gpk_sort_keys(ctx, in->type, keys, in->n, NULL);
        if (rep >= 0) t[rep] = now_ms() - t0;
    }
    r.ok = s == GPK_OK;
    if (!r.ok) snprintf(r.why, sizeof r.why, "%s", gpk_last_error(ctx));
    else {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        r.ms = t[reps / 2];
        r.min_ms = t[0];
        r.ok = verify(in, keys, vals, r.why, sizeof r.why);
        if (k > 1)
            snprintf(r.plan, sizeof r.plan, "%s",
                     gpk__multi_stats(ctx).plan ? gpk__multi_stats(ctx).plan : "?");
        snprintf(r.why + strlen(r.why), sizeof r.why - strlen(r.why), "%s%s", r.ok ? "path " : "",
                 r.ok ? gpk_last_sort_path(ctx) : "");
    }
    free(keys);
    free(vals);
    free(t);
    gpk_ctx_destroy(ctx);
    return r;
}

static void report(FILE *json, const input *in, const row *r, double base_ms, const char *device)
{
    const double speedup = base_ms > 0 && r->ms > 0 ? base_ms / r->ms : 0;
    char label[32];
    snprintf(label, sizeof label, "%s%s%s", gpk_type_name(in->type), in->vw ? "/" : "",
             in->vw == 4       ? "u32"
                 : in->vw == 8 ? "u64"
                               : "");
    /* lsd: the phase columns are the host's: counts in, passes (with the
     * exchanges); merge: local sorts, splitters, merge */
    const int lsd = !strncmp(r->plan, "lsd", 3);
    printf("%-7s %-8s %12zu %4d %-6s %10.2f %10.2f %7.3f %8.2fx %9.2f %9.2f %9.2f  %s %s\n", r->mode, label,
           in->n, r->gpus, r->plan[0] ? r->plan : "-", r->ms, r->min_ms,
           r->ms > 0 ? (double)in->n / r->ms / 1e6 : 0, speedup, lsd ? r->count_ms : r->sort_ms,
           lsd ? 0.0 : r->split_ms, lsd ? r->passes_ms : r->merge_ms, r->ok ? "ok" : "FAILED", r->why);
    fflush(stdout);
    if (json) {
        fprintf(
            json,
            "{\"bench\": \"multi\", \"mode\": \"%s\", \"type\": \"%s\", \"values\": %u, \"n\": %zu, "
            "\"gpus\": %d, "
            "\"ms\": %.3f, \"min_ms\": %.3f, \"gkeys_per_s\": %.4f, \"speedup_vs_1\": %.3f, \"sort_ms\": "
            "%.3f, "
            "\"split_ms\": %.3f, \"merge_ms\": %.3f, \"merge_copy_ms\": %.3f, \"merge_search_ms\": %.3f, "
            "\"merge_tiles_ms\": %.3f, \"plan\": \"%s\", \"lsd_count_ms\": %.3f, \"lsd_passes_ms\": %.3f, "
            "\"lsd_hist_ms\": %.3f, \"lsd_pass_sum_ms\": %.3f, \"lsd_last_ms\": %.3f, \"lsd_passes\": %d, "
            "\"exchange\": \"%s\", \"ok\": %s, \"note\": \"%s\", \"device\": \"%s\"}\n",
            r->mode, gpk_type_name(in->type), in->vw, in->n, r->gpus, r->ms, r->min_ms,
            r->ms > 0 ? (double)in->n / r->ms / 1e6 : 0, speedup, r->sort_ms, r->split_ms, r->merge_ms,
            r->copy_ms, r->search_ms, r->tiles_ms, r->plan, r->count_ms, r->passes_ms, r->hist_ms,
            r->pass_sum_ms, r->last_ms, r->passes, "load", r->ok ? "true" : "false", r->why, device);
        fflush(json);
    }
}

/* The peer link between the first two devices: 1 GiB one way, the other
 * way, and both ways at once (cudaMemcpyPeerAsync, best of 3), in GB/s:
 * the rate the model of docs/perf/scale.md takes. Peer access first, as
 * the sort's context enables it: without it the copies are staged through
 * the host (run 1 on 2 H200s measured 38 GB/s so, where the sort's own
 * peer copies moved 2 GiB each way in 5.5 ms, 390 GB/s). */
static void link_rate(const int *devices, FILE *json, const char *device)
{
    const size_t bytes = (size_t)1 << 30;
    gpk_ctx *peers = open_ctx(devices, 2); /* enables peer access between them */
    void *buf[2][2];
    cudaStream_t st[2];
    for (int g = 0; g < 2; g++) {
        CUDA_TRY(cudaSetDevice(devices[g]));
        CUDA_TRY(cudaMalloc(&buf[g][0], bytes));
        CUDA_TRY(cudaMalloc(&buf[g][1], bytes));
        CUDA_TRY(cudaStreamCreate(&st[g]));
    }
    double best[3] = {1e30, 1e30, 1e30};
    for (int rep = 0; rep < 3; rep++)
        for (int mode = 0; mode < 3; mode++) {
            for (int g = 0; g < 2; g++) {
                CUDA_TRY(cudaSetDevice(devices[g]));
                CUDA_TRY(cudaDeviceSynchronize());
            }
            const double t0 = now_ms();
            for (int g = 0; g < 2; g++) {
                if (mode != 2 && mode != g) continue;
                /* g's stream pulls the other device's buffer into its own */
                CUDA_TRY(
                    cudaMemcpyPeerAsync(buf[g][0], devices[g], buf[1 - g][1], devices[1 - g], bytes, st[g]));
            }
            for (int g = 0; g < 2; g++) CUDA_TRY(cudaStreamSynchronize(st[g]));
            const double ms = now_ms() - t0;
            if (ms < best[mode]) best[mode] = ms;
        }
    const double gb = (double)bytes / 1e9;
    printf("link: device %d <- %d %.1f GB/s, %d <- %d %.1f GB/s, both at once %.1f GB/s each way\n",
           devices[0], devices[1], gb / best[0] * 1e3, devices[1], devices[0], gb / best[1] * 1e3,
           gb / best[2] * 1e3);
    if (json)
        fprintf(json,
                "{\"bench\": \"multi\", \"mode\": \"link\", \"gb_per_s_0\": %.2f, \"gb_per_s_1\": %.2f, "
                "\"gb_per_s_both\": %.2f, \"device\": \"%s\"}\n",
                gb / best[0] * 1e3, gb / best[1] * 1e3, gb / best[2] * 1e3, device);
    for (int g = 0; g < 2; g++) {
        CUDA_TRY(cudaSetDevice(devices[g]));
        CUDA_TRY(cudaFree(buf[g][0]));
        CUDA_TRY(cudaFree(buf[g][1]));
        CUDA_TRY(cudaStreamDestroy(st[g]));
    }
    gpk_ctx_destroy(peers);
}

int cmd_bench_multi(int argc, char **argv)
{
    int gpus[8] = {1, 2}, n_gpus = 2, devices[GPK_MAX_DEVICES], n_devices = 0, reps = 5, host = 0;
    size_t n = (size_t)1 << 31;
    const char *configs = "u32,u64,u32/u32", *json_path = NULL, *plans = "merge,part";
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cmd_bench_multi_help(stdout);
            return 0;
        }
        if (!strcmp(a, "--host")) host = 1;
        else if (v && !strcmp(a, "--gpus")) n_gpus = parse_ints(argv[++i], gpus, 8);
        else if (v && !strcmp(a, "--devices")) n_devices = parse_ints(argv[++i], devices, GPK_MAX_DEVICES);
        else if (v && !strcmp(a, "--n")) n = parse_count(argv[++i]);
        else if (v && !strcmp(a, "--reps")) reps = atoi(argv[++i]);
        else if (v && !strcmp(a, "--configs")) configs = argv[++i];
        else if (v && !strcmp(a, "--plans")) plans = argv[++i];
        else if (v && !strcmp(a, "--json")) json_path = argv[++i];
        else if (v && !strcmp(a, "--seed")) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "multi")) continue;
        else {
            fprintf(stderr, "gpk bench multi: bad argument %s\n", a);
            cmd_bench_multi_help(stderr);
            return 2;
        }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, "gpk bench multi: no CUDA device\n");
        return 1;
    }
    int most = 1;
    for (int g = 0; g < n_gpus; g++) most = gpus[g] > most ? gpus[g] : most;
    if (n_devices == 0)
        for (; n_devices < most && n_devices < GPK_MAX_DEVICES; n_devices++)
            devices[n_devices] = n_devices % count;
    if (reps < 1 || n_gpus < 1 || most > n_devices) {
        fprintf(stderr, "gpk bench multi: --gpus asks for %d GPUs, --devices lists %d\n", most, n_devices);
        return 2;
    }
    unsetenv("GPK_DEVICES"); /* the contexts here name their devices */
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, devices[0]));
    char device[300];
    snprintf(device, sizeof device, "%d x %s", most, prop.name);
    FILE *json = json_path ? fopen(json_path, "a") : NULL;
    if (json_path && !json) {
        fprintf(stderr, "gpk bench multi: cannot open %s\n", json_path);
        return 1;
    }
    printf("gpk bench multi: %s, devices", device);
    for (int i = 0; i < n_devices; i++) printf("%s%d", i ? "," : " ", devices[i]);
    printf(", seed %" PRIu64 ", median of %d\n", seed, reps);
    if (most >= 2 && devices[0] != devices[1]) link_rate(devices, json, device);
    printf("%-7s %-8s %12s %4s %-6s %10s %10s %7s %9s %9s %9s %9s\n", "mode", "type", "n", "gpus", "plan",
           "ms", "min_ms", "Gkey/s", "speedup", "sort_ms", "split_ms", "merge_ms");
    printf("(lsd rows: sort_ms = until the first digit counts are in, merge_ms = the passes with their "
           "exchanges)\n");
    int failures = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", configs);
    for (char *c = strtok(list, ","); c; c = strtok(NULL, ",")) {
        input in;
        memset(&in, 0, sizeof in);
        char *slash = strchr(c, '/');
        gpk_type vt = GPK_U32;
        if (slash) {
            *slash = '\0';
            if (gpk_type_parse(slash + 1, &vt) != GPK_OK) return 2;
        }
        if (gpk_type_parse(c, &in.type) != GPK_OK) return 2;
        in.kw = (unsigned)gpk_type_size(in.type);
        in.vw = slash ? (unsigned)gpk_type_size(vt) : 0;
        in.n = n;
        generate(&in, seed);
        double base = 0;
        unsigned char *got = malloc(in.n * in.kw), *got_v = in.vw ? malloc(in.n * in.vw) : NULL;
        if (!got || (in.vw && !got_v)) {
            fprintf(stderr, "gpk bench multi: out of host memory for the results\n");
            return 1;
        }
        for (int g = 0; g < n_gpus; g++) {
            char plan_list[64];
            snprintf(plan_list, sizeof plan_list, "%s", gpus[g] > 1 ? plans : "-");
            char *save = NULL;
            for (char *pl = strtok_r(plan_list, ",", &save); pl; pl = strtok_r(NULL, ",", &save)) {
                row r = run_device(&in, devices, gpus[g], reps, pl, got, got_v);
                if (gpus[g] == 1) base = r.ms;
                report(json, &in, &r, base, device);
                failures += !r.ok;
            }
        }
        free(got);
        free(got_v);
        free(in.keys);
        free(in.vals);
    }
    if (host) {
        input in;
        memset(&in, 0, sizeof in);
        in.type = GPK_U32;
        in.kw = 4;
        in.n = n;
        generate(&in, seed + 1);
        double base = 0;
        const int host_reps = reps < 3 ? reps : 3;
        for (int g = 0; g < n_gpus; g++) {
            char plan_list[64];
            snprintf(plan_list, sizeof plan_list, "%s", gpus[g] > 1 ? plans : "-");
            char *save = NULL;
            for (char *pl = strtok_r(plan_list, ",", &save); pl; pl = strtok_r(NULL, ",", &save)) {
                row r = run_host(&in, devices, gpus[g], host_reps, pl);
                if (gpus[g] == 1) base = r.ms;
                report(json, &in, &r, base, device);
                failures += !r.ok;
            }
        }
        free(in.keys);
    }
    if (json) fclose(json);
    return failures ? 1 : 0;
}
#endif
