/* The segmented sorts of a backend against the reference: six key types,
 * keys / pairs (4- and 8-byte values) / permutation, ascending and
 * descending, rows and offsets, in the shapes that stress a segmented
 * sort: no segments, empty ones, one huge one, many of one key, ragged
 * power-law lengths, offsets out of order with gaps; keys with many
 * duplicates (stability) and the float specials. The reference itself is
 * held to the natural order of each type and to stability, independently.
 * On CUDA the device API (gpk/cuda.h) runs the same cases.
 * Usage: test_segmented BACKEND. Exits 77 (skipped) when the backend has no
 * device here, unless GPK_REQUIRE_<BACKEND>=1 says it must run. */
#include "gpk/gen.h"
#include "gpk/sort.h"
#ifdef GPK_HAVE_CUDA
#include "gpk/cuda.h"
#include "core/test_hooks.h"
#include <cuda_runtime_api.h>
#endif
#include "testutil.h"
#include "test_keys.h"

#include <math.h>
#include <string.h>

static gpk_ctx *ctx;
static gpk_backend backend;
static gpk_rng rng;

typedef enum { MODE_KEYS, MODE_PAIRS32, MODE_PAIRS64, MODE_PERM, MODE_COUNT } mode;
static const char *mode_name[] = {"keys", "pairs-u32", "pairs-u64", "perm"};
static const gpk_type types[] = {GPK_U32, GPK_I32, GPK_F32, GPK_U64, GPK_I64, GPK_F64};

/* a <= b in the natural order of sort.h (-0 < +0, NaN last). */
static int nat_le(gpk_type t, const void *a, const void *b)
{
    switch (t) {
    case GPK_U32: return *(const uint32_t *)a <= *(const uint32_t *)b;
    case GPK_I32: return *(const int32_t *)a <= *(const int32_t *)b;
    case GPK_U64: return *(const uint64_t *)a <= *(const uint64_t *)b;
    case GPK_I64: return *(const int64_t *)a <= *(const int64_t *)b;
    case GPK_F32:
    case GPK_F64: {
        const double x = t == GPK_F32 ? *(const float *)a : *(const double *)a;
        const double y = t == GPK_F32 ? *(const float *)b : *(const double *)b;
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
        if (x == 0 && y == 0) return signbit(x) || !signbit(y);
        return x <= y;
    }
    }
    return 0;
}
/* a may come before b in descending order: NaN last, +0 before -0. */
static int nat_desc_ok(gpk_type t, const void *a, const void *b)
{
    if (t == GPK_F32 || t == GPK_F64) {
        const double x = t == GPK_F32 ? *(const float *)a : *(const double *)a;
        const double y = t == GPK_F32 ? *(const float *)b : *(const double *)b;
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
    }
    return nat_le(t, b, a);
}
/* Equal in the order (bitwise equal, but any two NaNs of one sign... are
 * distinct: only bitwise equality counts, as the radix order is total). */
static int same_key(size_t kw, const void *a, const void *b) { return memcmp(a, b, kw) == 0; }

/* Segment shapes. */
typedef enum {
    SHAPE_NONE,     /* count 0 */
    SHAPE_ROWS,     /* rows x len */
    SHAPE_ONES,     /* 2^k rows of 1 */
    SHAPE_EMPTY,    /* offsets, half of them empty */
    SHAPE_HUGE,     /* offsets: one segment over nearly all, with a gap before and after */
    SHAPE_RAGGED,   /* offsets: power-law lengths, in order, with gaps */
    SHAPE_SHUFFLED, /* offsets: power-law lengths, listed out of order */
    SHAPE_COUNT
} shape;
static const char *shape_name[] = {"none", "rows", "ones", "empty", "huge", "ragged", "shuffled"};

typedef struct seglist {
    gpk_segments s;
    uint64_t *begin, *end;
} seglist;

static size_t rnd(size_t m) { return m ? (size_t)(gpk_rng_next(&rng) % m) : 0; }

/* Power-law length: about n / count on average, a few much longer. */
static size_t power_len(size_t cap)
{
    const double u = gpk_rng_uniform(&rng);
    double len = 1.0 / pow(1.0 - u * 0.999999, 1.2) - 1.0; /* Pareto, tail index ~0.8 */
    len *= 8;
    if (len > (double)cap) len = (double)cap;
    return (size_t)len;
}

/* Makes the segments of shape sh over n elements (rows: `len` per row). */
static int make_segments(seglist *L, shape sh, size_t n, size_t len)
{
    memset(L, 0, sizeof *L);
    if (sh == SHAPE_NONE) return 1;
    if (sh == SHAPE_ROWS || sh == SHAPE_ONES) {
        L->s.length = sh == SHAPE_ONES ? 1 : len;
        L->s.count = n / L->s.length;
        return 1;
    }
    L->begin = malloc((n + 2) * sizeof(uint64_t));
    L->end = malloc((n + 2) * sizeof(uint64_t));
    if (!L->begin || !L->end) return 0;
    size_t c = 0, at = 0;
    if (sh == SHAPE_HUGE) {
        const size_t gap = n / 16 + 1;
        L->begin[0] = L->end[0] = 0;
        L->begin[1] = gap < n ? gap : n;
        L->end[1] = n > gap ? n - 1 : L->begin[1];
        c = 2;
    } else {
        while (at < n) {
            size_t l = sh == SHAPE_EMPTY ? (rnd(2) ? 0 : 1 + rnd(2 * len)) : power_len(n / 4 + 1);
            if (l > n - at) l = n - at;
            if (sh != SHAPE_EMPTY && rnd(8) == 0 && at < n) at++; /* a gap left alone */
            if (l > n - at) l = n - at;
            L->begin[c] = at;
            L->end[c] = at + l;
            at += l;
            c++;
        }
    }
    if (sh == SHAPE_SHUFFLED)
        for (size_t i = c; i > 1; i--) {
            const size_t j = rnd(i);
            uint64_t t = L->begin[i - 1];
            L->begin[i - 1] = L->begin[j];
            L->begin[j] = t;
            t = L->end[i - 1];
            L->end[i - 1] = L->end[j];
            L->end[j] = t;
        }
    L->s.count = c;
    L->s.begin = L->begin;
    L->s.end = L->end;
    return 1;
}

static void free_segments(seglist *L)
{
    free(L->begin);
    free(L->end);
}

/* Runs one case on the backend (host API, and device API on CUDA) and
 * compares with the reference. */
static int run_case(gpk_type t, mode m, int desc, shape sh, size_t n, size_t len, int kind,
                    const gpk_segmented_opts *tune)
{
    const size_t kw = gpk_type_size(t);
    const size_t vw = m == MODE_PAIRS32 ? 4 : m == MODE_PAIRS64 ? 8 : 0;
    const uint64_t seed = gpk_rng_next(&rng);
    seglist L;
    void *keys = malloc(n * kw + 8), *ref = malloc(n * kw + 8), *orig = malloc(n * kw + 8);
    void *vals = malloc(n * 8 + 8), *rvals = malloc(n * 8 + 8);
    uint32_t *sigma = malloc(n * 4 + 4), *rsigma = malloc(n * 4 + 4);
    int ok = 0;
    if (!keys || !ref || !orig || !vals || !rvals || !sigma || !rsigma || !make_segments(&L, sh, n, len)) {
        TU_CHECK(0, "out of memory");
        goto done;
    }
    make_keys(t, keys, n, kind, seed);
    memcpy(orig, keys, n * kw);
    memcpy(ref, keys, n * kw);
    for (size_t i = 0; i < n; i++) {
        if (vw == 8) ((uint64_t *)vals)[i] = ((uint64_t)i << 32) | (uint64_t)(i * 7u);
        else ((uint32_t *)vals)[i] = (uint32_t)i;
        sigma[i] = rsigma[i] = 0xDEADBEEFu; /* outside segments these must stay */
    }
    memcpy(rvals, vals, n * 8);
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    if (tune) o = *tune;
    o.descending = desc;
    gpk_status s;
    /* every other keys case through the copying form, into a poisoned out */
    const int to = m == MODE_KEYS && (seed & 1);
    void *src = to ? malloc(n * kw + 8) : NULL;
    if (to && !src) {
        TU_CHECK(0, "out of memory");
        goto done;
    }
    if (to) {
        memcpy(src, keys, n * kw);
        memset(keys, 0xA5, n * kw);
        s = gpk_sort_segmented_keys_to(ctx, t, src, keys, n, &L.s, &o);
        TU_CHECK(memcmp(src, orig, n * kw) == 0, "keys_to changed its input (seed %llu)",
                 (unsigned long long)seed);
        free(src);
    } else if (m == MODE_KEYS) s = gpk_sort_segmented_keys(ctx, t, keys, n, &L.s, &o);
    else if (m == MODE_PERM) s = gpk_sort_segmented_perm(ctx, t, keys, sigma, n, &L.s, &o);
    else s = gpk_sort_segmented_pairs(ctx, t, keys, vw == 4 ? GPK_U32 : GPK_U64, vals, n, &L.s, &o);
    const gpk_status rs = gpk_sort_segmented_reference(t, ref, vw, vw ? rvals : NULL,
                                                       m == MODE_PERM ? rsigma : NULL, n, &L.s, desc);
    char what[256];
    snprintf(what, sizeof what, "%s %s%s %s %s n=%zu len=%zu kind=%d seed=%llu", gpk_type_name(t),
             mode_name[m], to ? " (to)" : "", desc ? "desc" : "asc", shape_name[sh], n, len, kind,
             (unsigned long long)seed);
    TU_CHECK(s == GPK_OK, "%s: status %s (%s)", what, gpk_status_string(s), gpk_last_error(ctx));
    TU_CHECK(rs == GPK_OK, "%s: reference status %s", what, gpk_status_string(rs));
    if (s != GPK_OK || rs != GPK_OK) goto done;
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (!same_key(kw, (char *)keys + i * kw, (char *)ref + i * kw)) bad = i;
    TU_CHECK(bad == n, "%s: keys differ from the reference at %zu", what, bad);
    if (vw) TU_CHECK(memcmp(vals, rvals, n * vw) == 0, "%s: values differ from the reference", what);
    if (m == MODE_PERM) {
        bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
            if (sigma[i] != rsigma[i]) bad = i;
        TU_CHECK(bad == n, "%s: sigma differs from the reference at %zu (%u, %u)", what, bad,
                 bad < n ? sigma[bad] : 0, bad < n ? rsigma[bad] : 0);
    }
    /* The reference, independently: each segment in order, stable (pairs
     * carry the input index), a permutation of its input (perm: sigma
     * points at the same key). */
    int order_ok = 1, stable_ok = 1, perm_ok = 1;
    for (size_t i = 0; i < L.s.count; i++) {
        uint64_t b, e;
        if (L.s.begin) b = L.s.begin[i], e = L.s.end[i];
        else b = i * L.s.length, e = b + L.s.length;
        for (uint64_t j = b; j + 1 < e; j++) {
            const char *x = (char *)ref + j * kw, *y = x + kw;
            if (!(desc ? nat_desc_ok(t, x, y) : nat_le(t, x, y))) order_ok = 0;
            if (vw == 4 && same_key(kw, x, y) && ((uint32_t *)rvals)[j] >= ((uint32_t *)rvals)[j + 1])
                stable_ok = 0;
        }
        if (m == MODE_PERM)
            for (uint64_t j = b; j < e; j++)
                if (rsigma[j] >= e - b ||
                    !same_key(kw, (char *)ref + j * kw, (char *)orig + (b + rsigma[j]) * kw))
                    perm_ok = 0;
    }
    TU_CHECK(order_ok, "%s: the reference's segments are out of order", what);
    TU_CHECK(stable_ok, "%s: the reference is not stable", what);
    TU_CHECK(perm_ok, "%s: the reference's sigma is not the permutation", what);
    ok = 1;
done:
    free_segments(&L);
    free(keys);
    free(ref);
    free(orig);
    free(vals);
    free(rvals);
    free(sigma);
    free(rsigma);
    return ok;
}

/* Hand-made float keys whose descending order is known. */
static void float_specials(void)
{
    const float in[] = {1.0f, NAN, -INFINITY, 0.0f, -0.0f, INFINITY, -NAN, -2.5f, 3.0f, 0.0f, -0.0f};
    const size_t n = sizeof in / sizeof in[0];
    float k[sizeof in / sizeof in[0]];
    uint32_t v[sizeof in / sizeof in[0]];
    uint64_t begin[] = {0}, end[] = {n};
    gpk_segments s = {1, begin, end, 0};
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    o.descending = 1;
    memcpy(k, in, sizeof k);
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
    gpk_status st = gpk_sort_segmented_pairs(ctx, GPK_F32, k, GPK_U32, v, n, &s, &o);
    TU_CHECK(st == GPK_OK, "float specials: %s", gpk_last_error(ctx));
    /* inf, 3, 1, +0 (index 3), +0 (9), -0 (4), -0 (10), -2.5, -inf, NaN, NaN */
    const uint32_t want_idx[] = {5, 8, 0, 3, 9, 4, 10, 7, 2};
    int ok = 1;
    for (size_t i = 0; i < 9; i++) ok &= v[i] == want_idx[i];
    ok &= isnan(k[9]) && isnan(k[10]);
    ok &= v[9] == 1 && v[10] == 6; /* +NaN before -NaN, as in ascending order */
    TU_CHECK(ok, "float specials, descending: wrong order (got indices %u %u %u %u %u %u %u %u %u %u %u)",
             v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
    /* ascending too: -inf, -2.5, -0 (4), -0 (10), +0 (3), +0 (9), 1, 3, inf, NaN, NaN */
    memcpy(k, in, sizeof k);
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
    o.descending = 0;
    st = gpk_sort_segmented_pairs(ctx, GPK_F32, k, GPK_U32, v, n, &s, &o);
    const uint32_t want_asc[] = {2, 7, 4, 10, 3, 9, 0, 8, 5, 1, 6};
    ok = st == GPK_OK;
    for (size_t i = 0; i < n; i++) ok &= v[i] == want_asc[i];
    TU_CHECK(ok, "float specials, ascending: wrong order");
}

/* Invalid segments: EINVAL and nothing touched. */
static void invalid_calls(void)
{
    uint32_t k[8] = {5, 4, 3, 2, 1, 0, 9, 8}, k0[8];
    memcpy(k0, k, sizeof k);
    uint32_t sigma[8];
    struct {
        uint64_t b[2], e[2];
        const char *what;
    } bad[] = {
        {{0, 3}, {2, 2}, "begin > end"},
        {{0, 4}, {2, 9}, "end > n"},
        {{0, 2}, {5, 8}, "overlap in order"},
        {{4, 0}, {8, 5}, "overlap out of order"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpk_segments s = {2, bad[i].b, bad[i].e, 0};
        const gpk_status st = gpk_sort_segmented_keys(ctx, GPK_U32, k, 8, &s, NULL);
        TU_CHECK(st == GPK_EINVAL, "%s: status %s", bad[i].what, gpk_status_string(st));
        TU_CHECK(memcmp(k, k0, sizeof k) == 0, "%s: keys touched", bad[i].what);
        TU_CHECK(gpk_sort_segmented_reference(GPK_U32, k, 0, NULL, NULL, 8, &s, 0) == GPK_EINVAL,
                 "reference accepts %s", bad[i].what);
    }
    gpk_segments rows = {3, NULL, NULL, 3};
    TU_CHECK(gpk_sort_segmented_keys(ctx, GPK_U32, k, 8, &rows, NULL) == GPK_EINVAL,
             "3 rows of 3 in 8 accepted");
    gpk_segments ok_rows = {2, NULL, NULL, 4};
    TU_CHECK(gpk_sort_segmented_perm(ctx, GPK_U32, k, NULL, 8, &ok_rows, NULL) == GPK_EINVAL,
             "NULL sigma accepted");
    TU_CHECK(gpk_sort_segmented_keys(ctx, GPK_U32, k, 8, NULL, NULL) == GPK_EINVAL, "NULL segments accepted");
    uint32_t out[8];
    memset(out, 0x5A, sizeof out);
    TU_CHECK(gpk_sort_segmented_keys_to(ctx, GPK_U32, k, k + 1, 7, &ok_rows, NULL) == GPK_EINVAL,
             "keys_to with out = in + 1 accepted");
    gpk_segments past = {2, NULL, NULL, 5};
    TU_CHECK(gpk_sort_segmented_keys_to(ctx, GPK_U32, k, out, 8, &past, NULL) == GPK_EINVAL,
             "keys_to: 2 rows of 5 in 8 accepted");
    gpk_segmented_opts bad_order = GPK_SEGMENTED_OPTS_INIT;
    bad_order.descending = 2;
    TU_CHECK(gpk_sort_segmented_keys_to(ctx, GPK_U32, k, out, 8, &ok_rows, &bad_order) == GPK_EINVAL,
             "keys_to: descending = 2 accepted");
    TU_CHECK(out[0] == 0x5A5A5A5Au && out[7] == 0x5A5A5A5Au, "keys_to wrote out on a refused call");
    TU_CHECK(gpk_sort_segmented_keys_to(ctx, GPK_U32, NULL, out, 8, &ok_rows, NULL) == GPK_EINVAL,
             "keys_to with in NULL accepted");
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    o.descending = 2;
    TU_CHECK(gpk_sort_segmented_keys(ctx, GPK_U32, k, 8, &ok_rows, &o) == GPK_EINVAL,
             "descending = 2 accepted");
    TU_CHECK(gpk_sort_segmented_keys(ctx, (gpk_type)17, k, 8, &ok_rows, NULL) == GPK_EINVAL,
             "type 17 accepted");
    TU_CHECK(memcmp(k, k0, sizeof k) == 0, "keys touched by a failed call");
    /* touching segments (end == next begin) and rows are fine */
    uint64_t b[2] = {4, 0}, e[2] = {8, 4};
    gpk_segments s = {2, b, e, 0};
    TU_CHECK(gpk_sort_segmented_perm(ctx, GPK_U32, k, sigma, 8, &s, NULL) == GPK_OK, "touching segments: %s",
             gpk_last_error(ctx));
    const uint32_t want[8] = {2, 3, 4, 5, 0, 1, 8, 9}, want_sigma[8] = {3, 2, 1, 0, 1, 0, 3, 2};
    TU_CHECK(memcmp(k, want, sizeof k) == 0 && memcmp(sigma, want_sigma, sizeof sigma) == 0,
             "touching segments: wrong result");
}

#ifdef GPK_HAVE_CUDA
/* The device API out of place (the host API sorts in place): the input
 * must stay as it was, the output outside every segment unwritten, the
 * sorted segments as the reference's; rows and offsets, every kind of
 * segment (thresholds moved so that each path runs). */
static void device_case(gpk_type t, size_t vw, int desc, shape sh, size_t n, size_t len,
                        const gpk_segmented_opts *tune)
{
    const size_t kw = gpk_type_size(t);
    seglist L;
    if (!make_segments(&L, sh, n, len)) {
        TU_CHECK(0, "out of memory");
        return;
    }
    const uint64_t seed = gpk_rng_next(&rng);
    unsigned char *keys = malloc(n * kw + 8), *ref = malloc(n * kw + 8), *got = malloc(n * kw + 8);
    unsigned char *vals = malloc(n * 8 + 8), *rvals = malloc(n * 8 + 8), *gotv = malloc(n * 8 + 8);
    void *d_kin = NULL, *d_kout = NULL, *d_vin = NULL, *d_vout = NULL, *d_temp = NULL;
    uint64_t *d_off = NULL;
    char what[200];
    snprintf(what, sizeof what, "device %s vw=%zu %s %s n=%zu len=%zu seed=%llu", gpk_type_name(t), vw,
             desc ? "desc" : "asc", shape_name[sh], n, len, (unsigned long long)seed);
    if (!keys || !ref || !got || !vals || !rvals || !gotv) {
        TU_CHECK(0, "out of memory");
        goto done;
    }
    make_keys(t, keys, n, (int)(seed % 3), seed);
    memcpy(ref, keys, n * kw);
    for (size_t i = 0; i < n * 8; i++) vals[i] = (unsigned char)(i * 13 + 1);
    memcpy(rvals, vals, n * 8);
    TU_CHECK(gpk_sort_segmented_reference(t, ref, vw, vw ? rvals : NULL, NULL, n, &L.s, desc) == GPK_OK,
             "%s: reference failed", what);
    int ok = cudaMalloc(&d_kin, n * kw + 8) == cudaSuccess &&
        cudaMalloc(&d_kout, n * kw + 8) == cudaSuccess && cudaMalloc(&d_vin, n * 8 + 8) == cudaSuccess &&
        cudaMalloc(&d_vout, n * 8 + 8) == cudaSuccess &&
        cudaMalloc((void **)&d_off, 2 * L.s.count * 8 + 8) == cudaSuccess;
    ok = ok && cudaMemcpy(d_kin, keys, n * kw, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(d_vin, vals, n * 8, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemset(d_kout, 0xA5, n * kw + 8) == cudaSuccess &&
        cudaMemset(d_vout, 0xA5, n * 8 + 8) == cudaSuccess;
    gpk_segments ds = L.s;
    if (ok && L.s.begin) {
        ok = cudaMemcpy(d_off, L.s.begin, L.s.count * 8, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemcpy(d_off + L.s.count, L.s.end, L.s.count * 8, cudaMemcpyHostToDevice) == cudaSuccess;
        ds.begin = d_off;
        ds.end = d_off + L.s.count;
    }
    TU_CHECK(ok, "%s: cuda setup failed", what);
    if (!ok) goto done;
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    if (tune) o = *tune;
    o.descending = desc;
    size_t bytes = 0;
    gpk_status s = vw
        ? gpk_cuda_sort_segmented_pairs(ctx, NULL, &bytes, t, d_kin, d_kout, vw, d_vin, d_vout, n, &ds, &o, 0)
        : gpk_cuda_sort_segmented_keys(ctx, NULL, &bytes, t, d_kin, d_kout, n, &ds, &o, 0);
    TU_CHECK(s == GPK_OK && bytes > 0, "%s: temp query: %s", what, gpk_last_error(ctx));
    if (s != GPK_OK || cudaMalloc(&d_temp, bytes) != cudaSuccess) goto done;
    s = vw ? gpk_cuda_sort_segmented_pairs(ctx, d_temp, &bytes, t, d_kin, d_kout, vw, d_vin, d_vout, n, &ds,
                                           &o, 0)
           : gpk_cuda_sort_segmented_keys(ctx, d_temp, &bytes, t, d_kin, d_kout, n, &ds, &o, 0);
    TU_CHECK(s == GPK_OK, "%s: %s", what, gpk_last_error(ctx));
    ok = cudaDeviceSynchronize() == cudaSuccess &&
        cudaMemcpy(got, d_kout, n * kw, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(gotv, d_vout, n * 8, cudaMemcpyDeviceToHost) == cudaSuccess;
    TU_CHECK(ok, "%s: cuda read-back failed", what);
    if (!ok || s != GPK_OK) goto done;
    /* inside segments: the reference; outside: the poison */
    unsigned char *inside = calloc(n + 1, 1);
    if (!inside) goto done;
    for (size_t i = 0; i < L.s.count; i++) {
        uint64_t b, e;
        if (L.s.begin) b = L.s.begin[i], e = L.s.end[i];
        else b = i * L.s.length, e = b + L.s.length;
        memset(inside + b, 1, e - b);
    }
    size_t bad_k = n, bad_v = n, bad_out = n;
    for (size_t i = 0; i < n; i++) {
        if (inside[i]) {
            if (bad_k == n && memcmp(got + i * kw, ref + i * kw, kw)) bad_k = i;
            if (vw && bad_v == n && memcmp(gotv + i * vw, rvals + i * vw, vw)) bad_v = i;
        } else {
            for (size_t j = 0; j < kw; j++)
                if (got[i * kw + j] != 0xA5 && bad_out == n) bad_out = i;
        }
    }
    free(inside);
    TU_CHECK(bad_k == n, "%s: keys differ from the reference at %zu", what, bad_k);
    TU_CHECK(bad_v == n, "%s: values differ from the reference at %zu", what, bad_v);
    TU_CHECK(bad_out == n, "%s: key %zu outside the segments was written", what, bad_out);
    /* the input as it was */
    ok = cudaMemcpy(got, d_kin, n * kw, cudaMemcpyDeviceToHost) == cudaSuccess &&
        memcmp(got, keys, n * kw) == 0;
    TU_CHECK(ok, "%s: the input keys changed", what);
done:
    cudaFree(d_kin);
    cudaFree(d_kout);
    cudaFree(d_vin);
    cudaFree(d_vout);
    cudaFree(d_off);
    cudaFree(d_temp);
    free_segments(&L);
    free(keys);
    free(ref);
    free(got);
    free(vals);
    free(rvals);
    free(gotv);
}

static void device_cases(void)
{
    gpk_segmented_opts all_large = GPK_SEGMENTED_OPTS_INIT, all_medium = GPK_SEGMENTED_OPTS_INIT;
    all_large.large_min = 2;
    all_medium.small_max = 1;
    all_medium.large_min = (size_t)1 << 40;
    gpk_segmented_opts many_large = GPK_SEGMENTED_OPTS_INIT;
    many_large.large_min = 20000;
    for (size_t ti = 0; ti < 6; ti++)
        for (int desc = 0; desc < 2; desc++) {
            const gpk_type t = types[ti];
            const size_t vw = (size_t)(rnd(3) * 4);
            device_case(t, vw, desc, SHAPE_ROWS, 1000 * 100, 100, NULL);
            device_case(t, vw, desc, SHAPE_ROWS, 50 * 3000, 3000, NULL);
            device_case(t, vw, desc, SHAPE_ROWS, 20 * 9000, 9000, NULL);
            device_case(t, vw, desc, SHAPE_ROWS, 3 * 300000, 300000, NULL);
            device_case(t, vw, desc, SHAPE_ONES, 5000, 1, NULL);
            device_case(t, vw, desc, SHAPE_EMPTY, 20000, 300, NULL);
            device_case(t, vw, desc, SHAPE_SHUFFLED, 400000, 0, NULL);
            device_case(t, vw, desc, SHAPE_HUGE, 600000, 0, NULL);
            /* the medium path's two ways of ranking a tile */
            for (int way = 0; way < 2; way++) {
                gpk__test_set("segmented_cuda_medium_rank", way ? "1" : "0");
                device_case(t, vw, desc, SHAPE_RAGGED, 100000, 0, &all_medium);
                device_case(t, vw, desc, SHAPE_ROWS, 40 * 5000, 5000, &all_medium);
            }
            gpk__test_set("segmented_cuda_medium_rank", NULL);
            device_case(t, vw, desc, SHAPE_SHUFFLED, 30000, 0, &all_large);
            device_case(t, vw, desc, SHAPE_NONE, 100, 0, NULL);
            /* many large segments: sorted side by side on the side streams,
             * more segments than streams (slices reused), ragged lengths
             * (slices sized by the longest) */
            device_case(t, vw, desc, SHAPE_ROWS, 20 * 70001, 70001, &many_large);
            device_case(t, (size_t)(rnd(3) * 4), desc, SHAPE_RAGGED, 1000000, 0, &many_large);
            device_case(t, (size_t)(rnd(3) * 4), desc, SHAPE_SHUFFLED, 1000000, 0, &many_large);
        }
    /* rows past the default large_min, many enough that the rows' cost
     * model sends them to the medium path (one block a row) */
    device_case(GPK_U32, 0, 0, SHAPE_ROWS, (size_t)70 << 18, (size_t)1 << 18, NULL);
    device_case(GPK_F32, 4, 1, SHAPE_ROWS, (size_t)70 << 18, (size_t)1 << 18, NULL);
}
#endif

int main(int argc, char **argv)
{
    const int rc = tu_open_backend("test_segmented", argc, argv, &ctx, &backend);
    if (rc >= 0) return rc;
    const uint64_t seed = tu_seed();
    gpk_rng_seed(&rng, seed);
    float_specials();
    invalid_calls();

    /* GPK_TEST_SMALL=1 (sanitizer builds): the long-segment cases shrink 4x */
    const size_t big = getenv("GPK_TEST_SMALL") && *getenv("GPK_TEST_SMALL") == '1' ? 4 : 1;
    /* Every type x mode x order on the small shapes. */
    for (size_t ti = 0; ti < 6; ti++)
        for (int m = 0; m < MODE_COUNT; m++)
            for (int desc = 0; desc < 2; desc++) {
                const gpk_type t = types[ti];
                const int kind = (int)rnd(3);
                run_case(t, (mode)m, desc, SHAPE_NONE, 100, 0, kind, NULL);
                run_case(t, (mode)m, desc, SHAPE_ROWS, 64 * 37, 37, kind, NULL);
                run_case(t, (mode)m, desc, SHAPE_ROWS, 512 * 8, 8, 1, NULL);
                run_case(t, (mode)m, desc, SHAPE_ONES, 1 << 12, 1, kind, NULL);
                run_case(t, (mode)m, desc, SHAPE_EMPTY, 5000, 40, kind, NULL);
                run_case(t, (mode)m, desc, SHAPE_RAGGED, 30000, 0, kind, NULL);
                run_case(t, (mode)m, desc, SHAPE_SHUFFLED, 30000, 0, 1, NULL);
            }
    /* Longer segments: rows over the medium size, one huge segment (the
     * full parallel sort), and the same with the thresholds moved so that
     * every path meets every shape. */
    gpk_segmented_opts all_large = GPK_SEGMENTED_OPTS_INIT, all_small = GPK_SEGMENTED_OPTS_INIT;
    all_large.large_min = 2;
    all_large.small_max = 1;
    all_small.large_min = (size_t)1 << 40;
    all_small.small_max = (size_t)1 << 40;
    /* many segments from large_min: every thread on each (CPU), side by
     * side on several streams (CUDA) */
    gpk_segmented_opts many_large = GPK_SEGMENTED_OPTS_INIT;
    many_large.large_min = 5000;
    for (size_t ti = 0; ti < 6; ti++) {
        const gpk_type t = types[ti];
        for (int desc = 0; desc < 2; desc++) {
            const mode m = (mode)rnd(MODE_COUNT);
            run_case(t, m, desc, SHAPE_ROWS, 8 * 5000 / big, 5000, (int)rnd(3), NULL);
            run_case(t, m, desc, SHAPE_HUGE, 300000 / big, 0, (int)rnd(3), NULL);
            run_case(t, MODE_PAIRS32, desc, SHAPE_HUGE, 200000 / big, 0, 1, NULL);
            run_case(t, m, desc, SHAPE_HUGE, 300000 / big, 0, (int)rnd(3), &all_small);
            run_case(t, (mode)rnd(MODE_COUNT), desc, SHAPE_RAGGED, 200000 / big, 0, (int)rnd(3), NULL);
            run_case(t, (mode)rnd(MODE_COUNT), desc, SHAPE_SHUFFLED, 20000, 0, (int)rnd(3), &all_large);
            run_case(t, (mode)rnd(MODE_COUNT), desc, SHAPE_ROWS, 40 * 300, 300, 1, &all_large);
            run_case(t, (mode)rnd(MODE_COUNT), desc, SHAPE_ROWS, 12 * 30000 / big, 30000 / big, (int)rnd(3),
                     &many_large);
            run_case(t, (mode)rnd(MODE_COUNT), desc, SHAPE_RAGGED, 400000 / big, 0, (int)rnd(3), &many_large);
        }
    }
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) device_cases();
#endif
    return tu_finish("test_segmented");
}
