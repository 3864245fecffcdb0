/* Check and tune driver for the CUDA radix sort, built once per tuning
 * variant of src/sort/radix_cuda.cu (-DGPK_RADIX_CUDA_TUNING=..., other
 * build switches) by bench/radix_cuda_tune.sh; the variant's objects
 * replace the library's in the link against libgpk.a:
 *
 *   radix_cuda_tune [--check] [--perf] [--n N] [--reps R] [--label L]
 *
 * --check: the host-pointer API, the bench hook and the device-pointer API
 *          against gpk_sort_reference on every type, many sizes,
 *          distributions and (b, r) pairs.
 * --perf:  n = 2^28 (or --n): u32 keys, u64 keys, u32/u32 pairs, 10-bit keys,
 *          and variants, each against cub::DeviceRadixSort in the same run,
 *          plus the device-to-device copy bandwidth; a table last.
 *
 * See docs/perf/radix.md for the build line and the recorded runs. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "gpk/cuda.h"
#include "gpk/sort.h"
#include "peers.h"
#include "sort/radix_internal.h"
#include "core/cuda_internal.h"

/* ---- tiny random source (splitmix64) ------------------------------------ */
static uint64_t rng_state;
static uint64_t rnd()
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum Dist { UNIFORM, FEW_BITS, EQUAL, SORTED, REVERSE, SPECIALS, DIST_COUNT };
static const char *dist_name[] = {"uniform", "few_bits", "equal", "sorted", "reverse", "specials"};

static size_t tsize(gpk_type t) { return t <= GPK_F32 ? 4 : 8; }
static const char *tname(gpk_type t)
{
    static const char *n[] = {"u32", "i32", "f32", "u64", "i64", "f64"};
    return n[t];
}

static uint64_t mapped(gpk_type t, const void *keys, size_t i)
{
    return gpk__mapped_key_at(t, keys, i, ~0ull);
}

static void put(gpk_type t, void *keys, size_t i, uint64_t raw)
{
    if (tsize(t) == 4) {
        uint32_t x = (uint32_t)raw;
        memcpy((char *)keys + 4 * i, &x, 4);
    } else memcpy((char *)keys + 8 * i, &raw, 8);
}

static uint64_t special(gpk_type t)
{
    static const uint32_t f32[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u,
                                   0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                   0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,
                                   0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u};
    static const uint64_t f64[] = {0x7ff8000000000000ull,
                                   0xfff8000000000000ull,
                                   0x7ff0000000000001ull,
                                   0xfff0000000000123ull,
                                   0ull,
                                   0x8000000000000000ull,
                                   0x7ff0000000000000ull,
                                   0xfff0000000000000ull,
                                   1ull,
                                   0x8000000000000001ull,
                                   0x000fffffffffffffull,
                                   0x800fffffffffffffull,
                                   0x7fefffffffffffffull,
                                   0xffefffffffffffffull,
                                   0x3ff0000000000000ull,
                                   0xbff0000000000000ull};
    static const uint64_t ints[] = {
        0, 1, ~0ull, 0x80000000ull, 0x7fffffffull, 0x8000000000000000ull, 0x7fffffffffffffffull, 2};
    if (t == GPK_F32) return f32[rnd() % 16];
    if (t == GPK_F64) return f64[rnd() % 16];
    return ints[rnd() % 8];
}

static void generate(gpk_type t, Dist d, void *keys, size_t n, unsigned few_bits)
{
    const uint64_t same = rnd();
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rnd();
        switch (d) {
        case FEW_BITS: x &= (1ull << few_bits) - 1; break;
        case EQUAL: x = same; break;
        case SPECIALS:
            if (rnd() % 2) x = special(t);
            break;
        default: break;
        }
        put(t, keys, i, x);
    }
    if (d == SORTED || d == REVERSE) {
        /* sort by mapped key with a stable sort of indices */
        std::vector<size_t> idx(n);
        for (size_t i = 0; i < n; i++) idx[i] = i;
        std::stable_sort(idx.begin(), idx.end(),
                         [&](size_t a, size_t b) { return mapped(t, keys, a) < mapped(t, keys, b); });
        if (d == REVERSE) std::reverse(idx.begin(), idx.end());
        std::vector<char> copy((char *)keys, (char *)keys + n * tsize(t));
        for (size_t j = 0; j < n; j++)
            memcpy((char *)keys + j * tsize(t), copy.data() + idx[j] * tsize(t), tsize(t));
    }
}

static gpk_ctx *make_ctx()
{
    gpk_ctx *ctx = NULL;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CUDA) != GPK_OK) {
        fprintf(stderr, "ctx init: %s\n", gpk_last_error(NULL));
        exit(2);
    }
    return ctx;
}

static int failures = 0, checks = 0;
#define CHECK(cond, ...)                                \
    do {                                                \
        checks++;                                       \
        if (!(cond)) {                                  \
            if (++failures <= 40) {                     \
                fprintf(stderr, "FAIL %d: ", __LINE__); \
                fprintf(stderr, __VA_ARGS__);           \
                fprintf(stderr, "\n");                  \
            }                                           \
        }                                               \
    } while (0)

#define CU(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(3);                                                                              \
        }                                                                                         \
    } while (0)

/* ---- check ---------------------------------------------------------------- */
struct Case {
    gpk_type t;
    size_t n;
    Dist d;
    unsigned b, r;
    int mode; /* 0 keys, 1 pairs v4, 2 pairs v8, 3 perm, 4 perm with a u64 sigma */
    int api;  /* 0 host, 1 bench hook, 2 device out-of-place, 3 device in-place, 4 device detect in-place */
};

static void run_case(gpk_ctx *ctx, const Case &c)
{
    const size_t kw = tsize(c.t), n = c.n;
    const size_t vw = c.mode == 1 ? 4 : c.mode == 2 ? 8 : 0;
    std::vector<char> keys(n * kw + 8), ref(n * kw + 8);
    generate(c.t, c.d, keys.data(), n, 1 + (unsigned)(rnd() % 12));
    /* with an explicit b, keys must be < 2^b in mapped form: the test keeps
     * higher bits anyway in half of the cases (they must not take part) */
    std::vector<char> vals(n * vw + 8), vref(n * vw + 8);
    for (size_t i = 0; i < n * vw; i++) vals[i] = (char)rnd();
    memcpy(ref.data(), keys.data(), n * kw);
    memcpy(vref.data(), vals.data(), n * vw);
    std::vector<uint32_t> sigma(n + 1, 0xdeadbeef), sref(n + 1);
    std::vector<uint64_t> sigma64(n + 1, 0xdeadbeefdeadbeefull);
    const unsigned ref_bits = c.b ? c.b : 0;
    gpk_sort_reference(c.t, ref.data(), vw, vref.data(), c.mode >= 3 ? sref.data() : NULL, n, ref_bits);

    char what[200];
    snprintf(what, sizeof what, "api %d %s n=%zu %s b=%u r=%u mode=%d", c.api, tname(c.t), n, dist_name[c.d],
             c.b, c.r, c.mode);
    gpk_status s = GPK_OK;
    if (c.api <= 1) {
        gpk_radix_job job;
        memset(&job, 0, sizeof job);
        job.key_type = c.t;
        job.key_width = (unsigned)kw;
        job.keys = keys.data();
        job.values = vw ? vals.data() : NULL;
        job.value_width = (unsigned)vw;
        job.sigma = c.mode == 3 ? (void *)sigma.data() : c.mode == 4 ? (void *)sigma64.data() : NULL;
        job.sigma_width = c.mode == 4 ? 8 : 4;
        job.n = n;
        job.key_bits = c.b;
        job.radix_bits = c.r;
        if (n < 2) {
            if (n == 1 && job.sigma) sigma[0] = 0, sigma64[0] = 0;
        } else if (c.api == 0) s = gpk__radix_sort_cuda(ctx, &job);
        else {
            double ms;
            s = gpk__radix_bench_cuda(ctx, &job, 2, &ms);
        }
    } else {
        /* device-pointer API */
        void *dk = NULL, *dk2 = NULL, *dv = NULL, *dv2 = NULL, *temp = NULL;
        CU(cudaMalloc(&dk, n * kw + 1));
        CU(cudaMalloc(&dk2, n * kw + 1));
        CU(cudaMemcpy(dk, keys.data(), n * kw, cudaMemcpyHostToDevice));
        CU(cudaMemset(dk2, 0x5a, n * kw + 1));
        if (vw) {
            CU(cudaMalloc(&dv, n * vw + 1));
            CU(cudaMalloc(&dv2, n * vw + 1));
            CU(cudaMemcpy(dv, vals.data(), n * vw, cudaMemcpyHostToDevice));
        }
        gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
        o.key_bits = c.b;
        o.radix_bits = c.r;
        const bool in_place = c.api >= 3;
        const unsigned flags = c.api == 4 ? GPK_CUDA_DETECT_BITS : 0;
        void *kout = in_place ? dk : dk2, *vout = in_place ? dv : dv2;
        size_t tb = 0;
        cudaStream_t stream;
        CU(cudaStreamCreate(&stream));
        if (vw) s = gpk_cuda_sort_pairs(ctx, NULL, &tb, c.t, dk, kout, vw, dv, vout, n, &o, flags, stream);
        else s = gpk_cuda_sort_keys(ctx, NULL, &tb, c.t, dk, kout, n, &o, flags, stream);
        CHECK(s == GPK_OK, "%s: temp query: %s", what, ctx->err);
        CU(cudaMalloc(&temp, tb));
        if (vw) s = gpk_cuda_sort_pairs(ctx, temp, &tb, c.t, dk, kout, vw, dv, vout, n, &o, flags, stream);
        else s = gpk_cuda_sort_keys(ctx, temp, &tb, c.t, dk, kout, n, &o, flags, stream);
        CU(cudaStreamSynchronize(stream));
        CU(cudaMemcpy(keys.data(), kout, n * kw, cudaMemcpyDeviceToHost));
        if (vw) CU(cudaMemcpy(vals.data(), vout, n * vw, cudaMemcpyDeviceToHost));
        if (!in_place && n > 0) {
            std::vector<char> back(n * kw);
            CU(cudaMemcpy(back.data(), dk, n * kw, cudaMemcpyDeviceToHost));
            std::vector<char> orig(n * kw);
            /* regenerate is not possible; compare against the reference's multiset instead:
             * the input must still be a permutation of the sorted output */
            std::vector<uint64_t> a(n), b(n);
            for (size_t i = 0; i < n; i++) {
                a[i] = mapped(c.t, back.data(), i);
                b[i] = mapped(c.t, ref.data(), i);
            }
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            CHECK(a == b, "%s: input changed", what);
        }
        CU(cudaStreamDestroy(stream));
        cudaFree(dk);
        cudaFree(dk2);
        cudaFree(dv);
        cudaFree(dv2);
        cudaFree(temp);
    }
    CHECK(s == GPK_OK, "%s: status %d: %s", what, (int)s, ctx->err);
    if (s != GPK_OK) return;
    bool ok = memcmp(keys.data(), ref.data(), n * kw) == 0;
    if (!ok) {
        size_t i = 0;
        while (i < n && memcmp(keys.data() + i * kw, ref.data() + i * kw, kw) == 0) i++;
        CHECK(ok, "%s: keys differ at %zu (got %016" PRIx64 " want %016" PRIx64 ")", what, i,
              mapped(c.t, keys.data(), i), mapped(c.t, ref.data(), i));
    } else CHECK(ok, "%s", what);
    if (vw) CHECK(memcmp(vals.data(), vref.data(), n * vw) == 0, "%s: values differ", what);
    if (c.mode == 3) CHECK(memcmp(sigma.data(), sref.data(), n * 4) == 0, "%s: sigma differs", what);
    if (c.mode == 4) {
        size_t i = 0;
        while (i < n && sigma64[i] == sref[i]) i++;
        CHECK(i == n, "%s: u64 sigma differs at %zu", what, i);
    }
}

static void check_suite(gpk_ctx *ctx, bool quick, bool small, size_t max_n)
{
    const size_t sizes[] = {0,    1,     2,     3,     5,     31,     32,      33,      127,    255,
                            256,  257,   1000,  4093,  4095,  4096,   4097,    7681,    8191,   8192,
                            8193, 65521, 65535, 65536, 65537, 131071, 1000003, 1048575, 1048577};
    const unsigned br[][2] = {{0, 0},  {0, 0},  {0, 8},  {0, 5},   {0, 11}, {0, 16},
                              {0, 3},  {10, 0}, {10, 5}, {10, 10}, {13, 4}, {13, 0},
                              {17, 6}, {20, 0}, {24, 9}, {0, 12},  {0, 7}};
    int count = 0;
    for (int ti = 0; ti < 6; ti++) {
        gpk_type t = (gpk_type)ti;
        for (size_t n : sizes) {
            if ((small && n > 70000) || n > max_n) continue;
            const int per = quick ? 2 : (n > 200000 ? 3 : 6);
            for (int k = 0; k < per; k++) {
                Case c;
                c.t = t;
                c.n = n;
                c.d = (Dist)(rnd() % DIST_COUNT);
                const unsigned *p = br[rnd() % (sizeof br / sizeof br[0])];
                c.b = p[0];
                c.r = p[1];
                if (c.b > 8 * tsize(t)) c.b = 0;
                if (c.b == 0 && rnd() % 4 == 0) c.b = (unsigned)(8 * tsize(t));
                c.mode = (int)(rnd() % 5);
                c.api = (int)(rnd() % 5);
                if (c.mode >= 3 && c.api >= 2) c.api = (int)(rnd() % 2); /* sigma: host API only */
                if (c.d == FEW_BITS && rnd() % 2) c.b = 12;
                run_case(ctx, c);
                count++;
            }
        }
        /* every r on one mid size, and the PIC shapes */
        for (unsigned r = 1; r <= 16 && max_n >= 70001; r++) {
            Case c = {t, 70001, UNIFORM, 0, r, (int)(r % 5), (int)(r % 5)};
            if (c.mode >= 3 && c.api >= 2) c.api = 0;
            run_case(ctx, c);
            count++;
        }
    }
    /* larger ones */
    if (small) {
        printf("check: %d cases, %d checks, %d failed\n", count, checks, failures);
        return;
    }
    const Case big[] = {
        {GPK_U32, (1u << 22) + 3, UNIFORM, 0, 0, 0, 0},  {GPK_U32, (1u << 22) + 3, FEW_BITS, 10, 0, 3, 0},
        {GPK_F32, (1u << 21) - 1, SPECIALS, 0, 0, 1, 2}, {GPK_U64, (1u << 21) + 1, UNIFORM, 0, 0, 2, 3},
        {GPK_I64, (1u << 21) + 7, UNIFORM, 0, 11, 1, 1}, {GPK_F64, 3000017, SPECIALS, 0, 0, 0, 4},
        {GPK_U32, 3000017, SORTED, 0, 0, 3, 0},          {GPK_I32, 3000017, REVERSE, 0, 0, 1, 3},
        {GPK_U32, 5000011, FEW_BITS, 0, 0, 3, 1},        {GPK_U32, 5000011, EQUAL, 0, 0, 3, 0},
        {GPK_U32, 5000011, UNIFORM, 0, 0, 4, 0},         {GPK_F64, 3000017, FEW_BITS, 0, 0, 4, 1},
    };
    for (const Case &c : big) {
        run_case(ctx, c);
        count++;
    }
    printf("check: %d cases, %d checks, %d failed\n", count, checks, failures);
}

/* ---- perf ----------------------------------------------------------------- */
/* phase clocks, present in builds with -DGPK_RADIX_CUDA_PROFILE */
extern "C" int gpk__radix_cuda_profile(unsigned long long out[8]) __attribute__((weak));

struct Row {
    std::string name;
    double ours_ms, cub_ms, floor_bytes_per_key;
    size_t n;
    bool ok;
};

static double copy_bandwidth()
{
    const size_t bytes = (size_t)2 << 30;
    void *a, *b;
    CU(cudaMalloc(&a, bytes));
    CU(cudaMalloc(&b, bytes));
    CU(cudaMemset(a, 1, bytes));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int i = 0; i < 12; i++) {
        CU(cudaEventRecord(e0));
        CU(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
        CU(cudaEventRecord(e1));
        CU(cudaEventSynchronize(e1));
        float ms;
        CU(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cudaFree(a);
    cudaFree(b);
    return 2.0 * bytes / (t[t.size() / 2] * 1e-3) / 1e9; /* read + write, GB/s */
}

/* sorted: ascending keys spread over the whole range (each step random in
 * [0, 2 * range / n)), built directly rather than sorted on the host */
static Row perf_case(gpk_ctx *ctx, const char *name, gpk_type t, size_t n, unsigned few_bits, unsigned b,
                     unsigned r, int mode, int cub_end_bit, int reps, double floor_bpk, bool sorted)
{
    const size_t kw = tsize(t), vw = mode == 1 ? 4 : mode == 2 ? 8 : 0;
    std::vector<char> keys(n * kw), orig;
    const uint64_t step = (kw == 4 ? (1ull << 32) : ~0ull / 2) / (n ? n : 1) * 2;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rnd();
        if (few_bits) x &= (1ull << few_bits) - 1;
        if (sorted) {
            acc += step ? x % step : 0;
            x = acc;
        }
        put(t, keys.data(), i, x);
    }
    orig = keys;
    std::vector<char> vals(n * vw);
    if (vw == 4)
        for (size_t i = 0; i < n; i++) ((uint32_t *)vals.data())[i] = (uint32_t)i;
    if (vw == 8)
        for (size_t i = 0; i < n; i++) ((uint64_t *)vals.data())[i] = (uint64_t)i;
    std::vector<uint32_t> sigma(mode == 3 ? n : 0);
    gpk_radix_job job;
    memset(&job, 0, sizeof job);
    job.key_type = t;
    job.key_width = (unsigned)kw;
    job.keys = keys.data();
    job.values = vw ? vals.data() : NULL;
    job.value_width = (unsigned)vw;
    job.sigma = mode == 3 ? sigma.data() : NULL;
    job.sigma_width = 4;
    job.n = n;
    job.key_bits = b;
    job.radix_bits = r;
    double ours = 0;
    unsigned long long discard[8];
    if (gpk__radix_cuda_profile) gpk__radix_cuda_profile(discard);
    gpk_status s = gpk__radix_bench_cuda(ctx, &job, reps, &ours);
    Row row{name, ours, 0, floor_bpk, n, s == GPK_OK};
    if (s != GPK_OK) {
        printf("%s: ours failed: %s\n", name, ctx->err);
        return row;
    }
    gpk_peer_result pr;
    char err[256];
    std::vector<char> cub_keys(n * kw);
    int cub_vw = mode == 3 ? 4 : (int)vw;
    if (gpk_peer_cub_radix(0, t, orig.data(), cub_keys.data(), cub_vw, n, 0, cub_end_bit, reps, &pr, err,
                           sizeof err) != 0) {
        printf("%s: cub failed: %s\n", name, err);
        row.ok = false;
        return row;
    }
    row.cub_ms = pr.ms;
    /* CUB's keys are the reference for the order (same bits, stable), except
     * for floats: CUB puts negative NaNs first, gpk puts every NaN last */
    bool ok = (t == GPK_F32 || t == GPK_F64) || memcmp(cub_keys.data(), keys.data(), n * kw) == 0;
    if (t == GPK_F32 || t == GPK_F64)
        for (size_t j = 1; j < n && ok; j++)
            if (mapped(t, keys.data(), j - 1) > mapped(t, keys.data(), j)) ok = false;
    if (!ok) {
        size_t i = 0;
        while (i < n && memcmp(cub_keys.data() + i * kw, keys.data() + i * kw, kw) == 0) i++;
        printf("%s: keys differ from CUB's at %zu\n", name, i);
    }
    /* values / sigma: keys[j] == orig[v[j]] and stable (v increasing among equal keys) */
    if (vw || mode == 3) {
        for (size_t j = 0; j < n && ok; j++) {
            uint64_t v = vw == 8 ? ((uint64_t *)vals.data())[j]
                : vw == 4        ? ((uint32_t *)vals.data())[j]
                                 : sigma[j];
            if (v >= n || memcmp(orig.data() + v * kw, keys.data() + j * kw, kw) != 0) ok = false;
            if (j > 0 && memcmp(keys.data() + j * kw, keys.data() + (j - 1) * kw, kw) == 0) {
                uint64_t u = vw == 8 ? ((uint64_t *)vals.data())[j - 1]
                    : vw == 4        ? ((uint32_t *)vals.data())[j - 1]
                                     : sigma[j - 1];
                if (u >= v) ok = false;
            }
            if (!ok) printf("%s: value/sigma wrong at %zu\n", name, j);
        }
    }
    row.ok = ok;
    if (gpk__radix_cuda_profile) {
        unsigned long long ph[8];
        if (gpk__radix_cuda_profile(ph) == 0 && ph[7] > 0) {
            static const char *names[] = {"first load", "rank",         "counts+scan", "rank add+stage",
                                          "look-back",  "stage values", "write-out"};
            double sum = 0;
            for (int k = 0; k < 7; k++) sum += (double)ph[k];
            printf("  phases (%% of pass-kernel block time, %llu blocks):", ph[7]);
            for (int k = 0; k < 7; k++) printf(" %s %.1f", names[k], 100.0 * ph[k] / sum);
            printf("\n");
        }
    }
    printf("%-28s ours %8.3f ms %7.2f Gkeys/s | cub %8.3f ms %7.2f Gkeys/s | ratio %.2f %s\n", name, ours,
           n / ours / 1e6, pr.ms, n / pr.ms / 1e6, pr.ms / ours, ok ? "ok" : "WRONG");
    fflush(stdout);
    return row;
}

int main(int argc, char **argv)
{
    bool check = false, perf = false, quick = false, small = false;
    size_t max_n = (size_t)-1;
    size_t n = (size_t)1 << 28;
    int reps = 15;
    const char *label = "default";
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check")) check = true;
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--small")) small = true;
        else if (!strcmp(argv[i], "--max-n") && i + 1 < argc) max_n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--perf")) perf = true;
        else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--check [--quick] [--small] [--max-n N]] [--perf [--n N] [--reps R] [--only "
                    "a,b]] [--label L]\n",
                    argv[0]);
            return 2;
        }
    }
    const char *seed_env = getenv("GPK_TEST_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    rng_state = seed;
    gpk_ctx *ctx = make_ctx();
    printf("[%s] device %s, %u SMs, %.1f GiB, %s; seed %" PRIu64 "\n", label, ctx->info.device_name,
           ctx->info.compute_units, ctx->info.memory_bytes / 1073741824.0, ctx->info.platform, seed);
    if (check) check_suite(ctx, quick, small || max_n < (size_t)-1, max_n);
    if (perf) {
        const double bw = copy_bandwidth();
        printf("device-to-device copy: %.0f GB/s (read + write)\n", bw);
        struct P {
            const char *key, *name;
            gpk_type t;
            unsigned few, b, r;
            int mode, end_bit;
            double floor;
            bool sorted;
        } cases[] = {
            {"u32", "u32 keys b=32", GPK_U32, 0, 32, 0, 0, 32, 4 + 4 * 8},
            {"u64", "u64 keys b=64", GPK_U64, 0, 64, 0, 0, 64, 8 + 8 * 16},
            {"pairs", "u32/u32 pairs b=32", GPK_U32, 0, 32, 0, 1, 32, 4 + 4 * 16},
            {"pic", "10-bit keys b=10", GPK_U32, 10, 10, 0, 0, 10, 4 + 8},
            {"pic0", "10-bit keys b=0 (detect)", GPK_U32, 10, 0, 0, 0, 10, 4 + 4 + 8},
            {"pic5", "10-bit keys b=10 r=5", GPK_U32, 10, 10, 5, 0, 10, 4 + 2 * 8},
            {"picperm", "10-bit keys+sigma b=10", GPK_U32, 10, 10, 0, 3, 10, 4 + 8 + 4},
            {"u32r11", "u32 keys b=32 r=11", GPK_U32, 0, 32, 11, 0, 32, 4 + 3 * 8},
            {"u64r11", "u64 keys b=64 r=11", GPK_U64, 0, 64, 11, 0, 64, 8 + 6 * 16},
            {"pairs64", "u64/u64 pairs b=64", GPK_U64, 0, 64, 0, 2, 64, 8 + 8 * 32},
            {"f32", "f32 keys", GPK_F32, 0, 32, 0, 0, 32, 4 + 4 * 8},
            {"u32sorted", "u32 keys sorted", GPK_U32, 0, 32, 0, 0, 32, 4 + 4 * 8, true},
            {"pairssorted", "u32/u32 pairs sorted", GPK_U32, 0, 32, 0, 1, 32, 4 + 4 * 16, true},
        };
        std::vector<Row> rows;
        for (const P &c : cases) {
            if (only &&
                !strstr((std::string(",") + only + ",").c_str(), (std::string(",") + c.key + ",").c_str()))
                continue;
            rows.push_back(
                perf_case(ctx, c.name, c.t, n, c.few, c.b, c.r, c.mode, c.end_bit, reps, c.floor, c.sorted));
        }
        printf("\n[%s] n = %zu, copy %.0f GB/s; floor = bytes/key moved at copy bandwidth\n", label, n, bw);
        printf("%-28s %9s %8s %9s %8s %6s %9s %5s\n", "case", "ours ms", "Gkeys/s", "cub ms", "Gkeys/s",
               "x cub", "floor ms", "ok");
        for (const Row &r : rows) {
            const double floor_ms = r.floor_bytes_per_key * r.n / (bw * 1e9) * 1e3;
            printf("%-28s %9.3f %8.2f %9.3f %8.2f %6.2f %9.3f %5s\n", r.name.c_str(), r.ours_ms,
                   r.n / r.ours_ms / 1e6, r.cub_ms, r.cub_ms > 0 ? r.n / r.cub_ms / 1e6 : 0.0,
                   r.ours_ms > 0 ? r.cub_ms / r.ours_ms : 0.0, floor_ms, r.ok ? "ok" : "NO");
        }
    }
    gpk_ctx_destroy(ctx);
    if (check) printf("[%s] check %s\n", label, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
