/* Descending order (gpk_radix_opts.descending) of every sort call against
 * the reference in either order: six key types, keys / copying sort /
 * pairs (4- and 8-byte values) / permutations (u32 and u64) / records,
 * several sizes and distributions (every bit random with NaN, inf and
 * denormals; few distinct values for stability; the float specials), the
 * radix sort and the quicksort where the backend has it, key_bits. The
 * reference itself is held to the descending natural order (NaN last, +0
 * before -0) and to stability, independently.
 * Usage: test_descending BACKEND. Exits 77 (skipped) when the backend has
 * no device here, unless GPK_REQUIRE_<BACKEND>=1 says it must run. */
#include "gpk/gen.h"
#include "gpk/sort.h"
#ifdef GPK_HAVE_CUDA
#include "gpk/cuda.h"
#include <cuda_runtime_api.h>
#endif
#include "core/test_hooks.h"
#include "sort/radix_cpu_hooks.h"
#include "testutil.h"
#include "test_keys.h"

#include <math.h>
#include <string.h>

typedef enum {
    MODE_KEYS,
    MODE_KEYS_TO,
    MODE_PAIRS32,
    MODE_PAIRS64,
    MODE_PERM,
    MODE_PERM64,
    MODE_RECORDS,
    MODE_COUNT
} mode;
static const char *mode_name[] = {"keys", "keys-to", "pairs-u32", "pairs-u64", "perm", "perm64", "records"};
static const gpk_type types[] = {GPK_U32, GPK_I32, GPK_F32, GPK_U64, GPK_I64, GPK_F64};

static gpk_ctx *ctx;
static gpk_backend backend;
static gpk_rng rng;
static const char *cpu_path = "auto"; /* the CPU radix path forced (cpu_radix_path), for the messages */

/* b may follow a in descending natural order: NaN last, +0 before -0. */
static int desc_ok(gpk_type t, const void *a, const void *b)
{
    switch (t) {
    case GPK_U32: return *(const uint32_t *)a >= *(const uint32_t *)b;
    case GPK_I32: return *(const int32_t *)a >= *(const int32_t *)b;
    case GPK_U64: return *(const uint64_t *)a >= *(const uint64_t *)b;
    case GPK_I64: return *(const int64_t *)a >= *(const int64_t *)b;
    case GPK_F32:
    case GPK_F64: {
        const double x = t == GPK_F32 ? *(const float *)a : *(const double *)a;
        const double y = t == GPK_F32 ? *(const float *)b : *(const double *)b;
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
        if (x == 0 && y == 0) return !signbit(x) || signbit(y);
        return x >= y;
    }
    }
    return 0;
}

enum { REC = 24, REC_KEY = 5, REC_IDX = 16 }; /* records: an unaligned key, the input index */

static void run_case(gpk_type t, mode m, size_t n, int kind, gpk_sort_algo algo, unsigned key_bits)
{
    const size_t kw = gpk_type_size(t);
    const size_t vw = m == MODE_PAIRS32 ? 4 : m == MODE_PAIRS64 ? 8 : 0;
    const uint64_t seed = gpk_rng_next(&rng);
    int stable = algo != GPK_SORT_QUICK;
    void *keys = malloc(n * kw + 8), *ref = malloc(n * kw + 8), *orig = malloc(n * kw + 8);
    void *vals = malloc(n * 8 + 8), *rvals = malloc(n * 8 + 8);
    uint64_t *sigma = malloc(n * 8 + 8);
    uint32_t *rsigma = malloc(n * 4 + 4);
    unsigned char *rec = malloc(n * REC + 1);
    char what[256];
    snprintf(what, sizeof what, "%s %s n=%zu kind=%d %s key_bits=%u cpu path %s seed=%llu", gpk_type_name(t),
             mode_name[m], n, kind, gpk_sort_algo_name(algo), key_bits, cpu_path, (unsigned long long)seed);
    if (!keys || !ref || !orig || !vals || !rvals || !sigma || !rsigma || !rec) {
        TU_CHECK(0, "%s: out of memory", what);
        goto done;
    }
    make_keys(t, keys, n, kind, seed);
    if (key_bits) /* keys below 2^key_bits in mapped form: unsigned types only here */
        for (size_t i = 0; i < n; i++) {
            if (kw == 4) ((uint32_t *)keys)[i] &= (1u << key_bits) - 1u;
            else ((uint64_t *)keys)[i] &= (1ull << key_bits) - 1ull;
        }
    memcpy(orig, keys, n * kw);
    memcpy(ref, keys, n * kw);
    for (size_t i = 0; i < n; i++) {
        if (vw == 8) ((uint64_t *)vals)[i] = ((uint64_t)i << 32) | (uint64_t)(i * 7u);
        else ((uint32_t *)vals)[i] = (uint32_t)i;
    }
    memcpy(rvals, vals, n * 8);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = 1;
    o.algorithm = algo;
    o.key_bits = key_bits;
    gpk_status s = GPK_OK;
    void *out = keys;
    switch (m) {
    case MODE_KEYS: s = gpk_sort_keys(ctx, t, keys, n, &o); break;
    case MODE_KEYS_TO:
        out = malloc(n * kw + 8);
        if (!out) {
            TU_CHECK(0, "%s: out of memory", what);
            goto done;
        }
        memset(out, 0xA5, n * kw);
        s = gpk_sort_keys_to(ctx, t, keys, out, n, &o);
        TU_CHECK(memcmp(keys, orig, n * kw) == 0, "%s: the input changed", what);
        break;
    case MODE_PAIRS32:
    case MODE_PAIRS64: s = gpk_sort_pairs(ctx, t, keys, vw == 4 ? GPK_U32 : GPK_U64, vals, n, &o); break;
    case MODE_PERM: s = gpk_sort_perm(ctx, t, keys, (uint32_t *)sigma, n, &o); break;
    case MODE_PERM64: s = gpk_sort_perm64(ctx, t, keys, sigma, n, &o); break;
    case MODE_RECORDS:
        for (size_t i = 0; i < n; i++) {
            memset(rec + i * REC, (int)(i & 0xFF), REC);
            memcpy(rec + i * REC + REC_KEY, (char *)keys + i * kw, kw);
            const uint64_t ix = i;
            memcpy(rec + i * REC + REC_IDX, &ix, 8);
        }
        s = gpk_sort_records(ctx, rec, n, REC, REC_KEY, t, &o);
        for (size_t i = 0; i < n; i++) memcpy((char *)keys + i * kw, rec + i * REC + REC_KEY, kw);
        break;
    default: break;
    }
    /* AUTO may pick the quicksort (records, small inputs) */
    if (s == GPK_OK && n >= 2 && gpk_last_sort_algo(ctx) != GPK_SORT_RADIX) stable = 0;
    const gpk_status rs = gpk_sort_reference_ordered(t, ref, vw, vw ? rvals : NULL, rsigma, n, key_bits, 1);
    TU_CHECK(s == GPK_OK, "%s: status %s (%s)", what, gpk_status_string(s), gpk_last_error(ctx));
    TU_CHECK(rs == GPK_OK, "%s: reference status %s", what, gpk_status_string(rs));
    if (s == GPK_OK && rs == GPK_OK) {
        size_t bad = tu_first_difference(out, ref, n, kw);
        TU_CHECK(bad == n, "%s: keys differ from the reference at %zu", what, bad);
        if (stable && vw)
            TU_CHECK(memcmp(vals, rvals, n * vw) == 0, "%s: values differ from the reference", what);
        if (m == MODE_PERM || m == MODE_PERM64 || m == MODE_RECORDS) {
            bad = n;
            for (size_t i = 0; i < n && bad == n; i++) {
                uint64_t sg;
                if (m == MODE_PERM) sg = ((uint32_t *)sigma)[i];
                else if (m == MODE_PERM64) sg = sigma[i];
                else memcpy(&sg, rec + i * REC + REC_IDX, 8);
                /* stable: the reference's sigma; else: a key equal to the output's */
                if (stable ? sg != rsigma[i]
                           : sg >= n || memcmp((char *)orig + sg * kw, (char *)out + i * kw, kw) != 0)
                    bad = i;
                if (m == MODE_RECORDS && bad == n && sg < n && rec[i * REC] != (unsigned char)(sg & 0xFF))
                    bad = i;
            }
            TU_CHECK(bad == n, "%s: sigma (or record) differs at %zu", what, bad);
        }
        /* the reference, independently: in order and stable */
        int order_ok = 1, stable_ok = 1;
        for (size_t j = 0; j + 1 < n; j++) {
            const char *x = (char *)ref + j * kw, *y = x + kw;
            if (!key_bits && !desc_ok(t, x, y)) order_ok = 0;
            if (memcmp(x, y, kw) == 0 && rsigma[j] >= rsigma[j + 1]) stable_ok = 0;
        }
        TU_CHECK(order_ok, "%s: the reference is out of order", what);
        TU_CHECK(stable_ok, "%s: the reference is not stable", what);
    }
    if (out != keys) free(out);
done:
    free(keys);
    free(ref);
    free(orig);
    free(vals);
    free(rvals);
    free(sigma);
    free(rsigma);
    free(rec);
}

/* Hand-made float keys whose descending order is known. */
static void float_specials(void)
{
    const float in[] = {1.0f, NAN, -INFINITY, 0.0f, -0.0f, INFINITY, -NAN, -2.5f, 3.0f, 0.0f, -0.0f};
    const size_t n = sizeof in / sizeof in[0];
    float k[sizeof in / sizeof in[0]];
    uint32_t v[sizeof in / sizeof in[0]];
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = 1;
    memcpy(k, in, sizeof k);
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
    const gpk_status st = gpk_sort_pairs(ctx, GPK_F32, k, GPK_U32, v, n, &o);
    TU_CHECK(st == GPK_OK, "float specials: %s", gpk_last_error(ctx));
    /* inf, 3, 1, +0 (3), +0 (9), -0 (4), -0 (10), -2.5, -inf, +NaN, -NaN */
    const uint32_t want[] = {5, 8, 0, 3, 9, 4, 10, 7, 2, 1, 6};
    int ok = st == GPK_OK;
    for (size_t i = 0; i < n; i++) ok &= v[i] == want[i];
    TU_CHECK(ok, "float specials, descending: wrong order (got %u %u %u %u %u %u %u %u %u %u %u)", v[0], v[1],
             v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
    o.descending = 2;
    TU_CHECK(gpk_sort_keys(ctx, GPK_F32, k, n, &o) == GPK_EINVAL, "descending = 2 is accepted");
}

/* The CPU radix sort takes the descending order into its own key map (the
 * first read and the last write of each path): every path forced (the
 * hybrid with its sampled and its counted first level, LSD, in cache),
 * every type and shape, sizes about the paths' limits (the hybrid from
 * 2^18 keys, the in-cache sort up to 1 MiB), every distribution (NaN,
 * inf, -0.0, runs of equal keys for stability), key_bits (an XOR of the
 * low bits), teams of the context's threads whatever the machine's load. */
static void cpu_folded_cases(int small)
{
    static const struct {
        const char *path, *first, *name;
    } cfg[] = {{NULL, NULL, "auto"},
               {"hybrid", NULL, "hybrid"},
               {"hybrid", "count", "hybrid, counted first level"},
               {"lsd", NULL, "lsd"},
               {"cache", NULL, "cache"}};
    const size_t sizes[] = {0, 1, 2, 17, 1000, 4099, 70001, ((size_t)1 << 18) + 3};
    const size_t n_sizes = sizeof sizes / sizeof sizes[0];
    gpk__radix_cpu_ignore_load(1);
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        gpk__test_set("cpu_radix_path", cfg[c].path);
        gpk__test_set("cpu_radix_first_count", cfg[c].first);
        cpu_path = cfg[c].name;
        for (size_t ti = 0; ti < 6; ti++)
            for (int m = 0; m < MODE_RECORDS; m++)
                for (size_t si = 0; si < n_sizes; si++)
                    for (int kind = 0; kind < 3; kind++) {
                        /* big inputs: one shape and distribution each */
                        const size_t pick = ti + (size_t)m + c + si;
                        if (sizes[si] >= 4099 && (size_t)kind != pick % 3) continue;
                        if (sizes[si] >= 70001 && (pick % 2 || (small && pick % 4))) continue;
                        run_case(types[ti], (mode)m, sizes[si], kind, GPK_SORT_RADIX, 0);
                    }
        /* key_bits on the hybrid (b >= 17) and on the LSD passes */
        run_case(GPK_U32, MODE_KEYS, ((size_t)1 << 18) + 5, 0, GPK_SORT_RADIX, 20);
        run_case(GPK_I32, MODE_PERM, 70001, 1, GPK_SORT_RADIX, 24);
        run_case(GPK_F32, MODE_PAIRS64, 4099, 0, GPK_SORT_RADIX, 31);
        run_case(GPK_U64, MODE_PAIRS32, ((size_t)1 << 18) + 5, 1, GPK_SORT_RADIX, 40);
        run_case(GPK_I64, MODE_KEYS_TO, 70001, 0, GPK_SORT_RADIX, 63);
        run_case(GPK_F64, MODE_PERM64, 70001, 2, GPK_SORT_RADIX, 56);
    }
    gpk__test_set("cpu_radix_path", NULL);
    gpk__test_set("cpu_radix_first_count", NULL);
    gpk__radix_cpu_ignore_load(0);
    cpu_path = "auto";
}

#ifdef GPK_HAVE_CUDA
/* The device calls of gpk/cuda.h, descending: out of place and in place,
 * keys and pairs, against the reference. */
static void device_case(gpk_type t, size_t n, size_t vw, int in_place, unsigned flags, unsigned key_bits)
{
    const size_t kw = gpk_type_size(t);
    const uint64_t seed = gpk_rng_next(&rng);
    char what[160];
    snprintf(what, sizeof what, "device %s n=%zu vw=%zu %s flags=%u key_bits=%u seed=%llu", gpk_type_name(t),
             n, vw, in_place ? "in place" : "out of place", flags, key_bits, (unsigned long long)seed);
    void *keys = malloc(n * kw + 8), *ref = malloc(n * kw + 8), *vals = malloc(n * 8 + 8),
         *rvals = malloc(n * 8 + 8);
    void *dk_in = NULL, *dk_out = NULL, *dv_in = NULL, *dv_out = NULL, *temp = NULL;
    if (!keys || !ref || !vals || !rvals) goto done;
    make_keys(t, keys, n, (int)(seed % 3), seed);
    if (key_bits) /* keys below 2^key_bits: unsigned types only here */
        for (size_t i = 0; i < n; i++) {
            if (kw == 4) ((uint32_t *)keys)[i] &= (1u << key_bits) - 1u;
            else ((uint64_t *)keys)[i] &= (1ull << key_bits) - 1ull;
        }
    memcpy(ref, keys, n * kw);
    for (size_t i = 0; i < n; i++) {
        if (vw == 8) ((uint64_t *)vals)[i] = i * 3u;
        else ((uint32_t *)vals)[i] = (uint32_t)i;
    }
    memcpy(rvals, vals, n * 8);
    TU_CHECK(gpk_sort_reference_ordered(t, ref, vw, vw ? rvals : NULL, NULL, n, key_bits, 1) == GPK_OK,
             "%s: reference", what);
    int ok = cudaMalloc(&dk_in, n * kw + 8) == cudaSuccess && cudaMalloc(&dv_in, n * 8 + 8) == cudaSuccess;
    if (ok && !in_place)
        ok = cudaMalloc(&dk_out, n * kw + 8) == cudaSuccess && cudaMalloc(&dv_out, n * 8 + 8) == cudaSuccess;
    if (in_place) dk_out = dk_in, dv_out = dv_in;
    ok = ok && cudaMemcpy(dk_in, keys, n * kw, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(dv_in, vals, n * 8, cudaMemcpyHostToDevice) == cudaSuccess;
    TU_CHECK(ok, "%s: device memory", what);
    if (!ok) goto done;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = 1;
    o.key_bits = key_bits;
    size_t bytes = 0;
    gpk_status s = vw
        ? gpk_cuda_sort_pairs(ctx, NULL, &bytes, t, dk_in, dk_out, vw, dv_in, dv_out, n, &o, flags, 0)
        : gpk_cuda_sort_keys(ctx, NULL, &bytes, t, dk_in, dk_out, n, &o, flags, 0);
    if (s == GPK_OK && cudaMalloc(&temp, bytes ? bytes : 1) != cudaSuccess) s = GPK_ENOMEM;
    if (s == GPK_OK)
        s = vw ? gpk_cuda_sort_pairs(ctx, temp, &bytes, t, dk_in, dk_out, vw, dv_in, dv_out, n, &o, flags, 0)
               : gpk_cuda_sort_keys(ctx, temp, &bytes, t, dk_in, dk_out, n, &o, flags, 0);
    TU_CHECK(s == GPK_OK, "%s: %s (%s)", what, gpk_status_string(s), gpk_last_error(ctx));
    if (s != GPK_OK) goto done;
    ok = cudaMemcpy(keys, dk_out, n * kw, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(vals, dv_out, n * 8, cudaMemcpyDeviceToHost) == cudaSuccess;
    TU_CHECK(ok, "%s: copy back", what);
    TU_CHECK(ok && memcmp(keys, ref, n * kw) == 0, "%s: keys differ from the reference", what);
    if (vw) TU_CHECK(ok && memcmp(vals, rvals, n * vw) == 0, "%s: values differ from the reference", what);
done:
    cudaFree(temp);
    cudaFree(dk_in);
    cudaFree(dv_in);
    if (!in_place) {
        cudaFree(dk_out);
        cudaFree(dv_out);
    }
    free(keys);
    free(ref);
    free(vals);
    free(rvals);
}

static void device_cases(void)
{
    const size_t sizes[] = {1, 2, 1000, 100003, (size_t)1 << 23 | 5};
    for (size_t ti = 0; ti < 6; ti++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const int in_place = (int)((ti + si) % 2);
            device_case(types[ti], sizes[si], 0, in_place, si % 2 ? GPK_CUDA_DETECT_BITS : 0u, 0);
            device_case(types[ti], sizes[si], ti % 2 ? 8 : 4, !in_place, si % 2 ? 0u : GPK_CUDA_DETECT_BITS,
                        0);
        }
    /* key_bits: the descending step reverses the low bits only (the
     * one-block, small and Onesweep paths) */
    device_case(GPK_U32, 1000, 4, 0, 0u, 12);
    device_case(GPK_U64, 1000, 0, 1, 0u, 40);
    device_case(GPK_U32, 100003, 0, 1, 0u, 20);
    device_case(GPK_U64, 100003, 8, 0, 0u, 33);
    device_case(GPK_U32, (size_t)1 << 21 | 3, 4, 0, 0u, 12);
}
#endif

int main(int argc, char **argv)
{
    int rc = tu_open_backend("test_descending", argc, argv, &ctx, &backend);
    if (rc >= 0) return rc;
    gpk_rng_seed(&rng, tu_seed());
    const int small = getenv("GPK_TEST_SMALL") != NULL;
    const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 70001, 300000};
    const size_t n_sizes = small ? 6 : sizeof sizes / sizeof sizes[0];
    float_specials();
    for (size_t ti = 0; ti < 6; ti++)
        for (int m = 0; m < MODE_COUNT; m++)
            for (size_t si = 0; si < n_sizes; si++)
                for (int kind = 0; kind < 3; kind++) {
                    /* big inputs: one distribution each, to bound the time */
                    if (sizes[si] >= 70001 && kind != (int)((ti + (size_t)m) % 3)) continue;
                    run_case(types[ti], (mode)m, sizes[si], kind, GPK_SORT_AUTO, 0);
                }
    /* the quicksort (not stable: keys and the permutation's keys only) */
    if (backend != GPK_BACKEND_OPENCL)
        for (size_t ti = 0; ti < 6; ti++) {
            run_case(types[ti], MODE_KEYS, 5000, 0, GPK_SORT_QUICK, 0);
            run_case(types[ti], MODE_PERM, 5000, 1, GPK_SORT_QUICK, 0);
            run_case(types[ti], MODE_RECORDS, 3000, 2, GPK_SORT_QUICK, 0);
        }
    /* key_bits: the order of the low bits reversed */
    run_case(GPK_U32, MODE_PAIRS32, 50000, 0, GPK_SORT_RADIX, 12);
    run_case(GPK_U64, MODE_PERM, 50000, 0, GPK_SORT_RADIX, 40);
    if (backend == GPK_BACKEND_CPU) cpu_folded_cases(small);
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) device_cases();
#endif
    gpk_ctx_destroy(ctx);
    return tu_finish("test_descending");
}
