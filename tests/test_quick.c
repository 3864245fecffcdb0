/* Quicksort and records on every backend against the reference sort: all
 * key types, sizes and distributions (the paper's six and the adversarial
 * ones), keys / pairs / permutation, records of many sizes and key
 * offsets, AUTO, OpenCL's refusal, bad input.
 * Usage: test_quick BACKEND. Exits 77 (skipped) when the backend has no
 * device here, unless GPK_REQUIRE_<BACKEND>=1 says it must run. */
#define _POSIX_C_SOURCE 200809L
#include "gpk/gen.h"
#include "gpk/sort.h"
#include "testutil.h"
#include "core/test_hooks.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

typedef enum {
    MODE_KEYS,
    MODE_KEYS_REC,
    MODE_PERM,
    MODE_PAIRS32,
    MODE_PAIRS64,
    MODE_PERM64,
    MODE_COUNT
} mode;
static const char *mode_name[] = {"keys", "keys-recursive", "perm", "pairs-u32", "pairs-u64", "perm64"};

static gpk_ctx *ctx;
static gpk_backend backend;
static uint64_t seed_base;
/* > 0: run_case replaces the generated keys by this many distinct values
 * spread over the whole key range, each repeated: segments of a few far
 * apart values with many copies each, which the CUDA finish's bucket
 * pass hands to its radix sort (bins too full). */
static uint32_t wide_dups;

/* Keys generated uniform (random bits; floats in [0, 1)) pick their value. */
static void spread_duplicates(gpk_type t, char *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *p = keys + i * gpk_type_size(t);
        switch (t) {
        case GPK_U32:
        case GPK_I32: {
            uint32_t k;
            memcpy(&k, p, 4);
            k = (uint32_t)(k % wide_dups * (0xFFFFFFFFull / wide_dups));
            memcpy(p, &k, 4);
            break;
        }
        case GPK_U64:
        case GPK_I64: {
            uint64_t k;
            memcpy(&k, p, 8);
            k = k % wide_dups * (UINT64_MAX / wide_dups);
            memcpy(p, &k, 8);
            break;
        }
        case GPK_F32: {
            float k;
            memcpy(&k, p, 4);
            k = (float)(uint32_t)(k * (float)wide_dups) * 1000.0f - 5e5f;
            memcpy(p, &k, 4);
            break;
        }
        case GPK_F64: {
            double k;
            memcpy(&k, p, 8);
            k = (double)(uint64_t)(k * wide_dups) * 1000.0 - 5e5;
            memcpy(p, &k, 8);
            break;
        }
        }
    }
}

/* Natural order as sort.h promises it: -0 < +0, every NaN last. */
static int nat_le(gpk_type t, const void *a, const void *b)
{
    switch (t) {
    case GPK_U32: {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x <= y;
    }
    case GPK_I32: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x <= y;
    }
    case GPK_U64: {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x <= y;
    }
    case GPK_I64: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x <= y;
    }
    case GPK_F32: {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
        if (x == 0 && y == 0) return signbit(x) || !signbit(y);
        return x <= y;
    }
    case GPK_F64: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
        if (x == 0 && y == 0) return signbit(x) || !signbit(y);
        return x <= y;
    }
    }
    return 0;
}

static uint64_t case_seed(gpk_type t, int d, size_t n, int m, unsigned extra)
{
    return seed_base ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)t << 40) ^ ((uint64_t)d << 48) ^
        ((uint64_t)m << 56) ^ (extra * 0x2545F4914F6CDD1Dull);
}

/* A quicksort call that may be refused: QUICK_RECURSIVE on CUDA may say it
 * is unsupported (no dynamic parallelism), but only with that reason. */
static int refused_recursive(gpk_sort_algo a, gpk_status s)
{
    if (a != GPK_SORT_QUICK_RECURSIVE || s != GPK_EUNSUPPORTED || backend != GPK_BACKEND_CUDA) return 0;
    const char *msg = gpk_last_error(ctx);
    TU_CHECK(strstr(msg, "recursive") != NULL, "recursive refused without saying why: \"%s\"", msg);
    return 1;
}

static uint32_t v32_of(size_t i) { return (uint32_t)(i * 2654435761u); } /* odd: a bijection */
static uint64_t v64_of(size_t i) { return i * 0x9E3779B97F4A7C15ull + 7; }
/* Inverses, so that a value names the input position it came from. */
static size_t i_of_v32(uint32_t v) { return (size_t)(uint32_t)(v * 244002641u); }
static size_t i_of_v64(uint64_t v) { return (size_t)((v - 7) * 0xF1DE83E19937733Dull); }

/* One keys / perm / pairs case with algorithm a. */
static int run_case(gpk_type t, gpk_dist d, size_t n, mode m, gpk_sort_algo a)
{
    size_t kw = gpk_type_size(t), vw = m == MODE_PAIRS64 ? 8 : (m == MODE_PAIRS32 ? 4 : 0);
    uint64_t seed = case_seed(t, d, n, m, a);
    char *in = malloc(n * kw + 1), *got = malloc(n * kw + 1), *want = malloc(n * kw + 1);
    char *vgot = malloc(n * 8 + 1);
    uint32_t *sg = malloc(n * 4 + 4);
    uint64_t *sg64 = malloc(n * 8 + 8);
    unsigned char *seen = calloc(n + 1, 1);
    int ok = 0;
    char what[200];
    snprintf(what, sizeof what, "%s %s n=%zu %s %s", gpk_type_name(t),
             wide_dups ? "wide-duplicates" : gpk_dist_name(d), n, mode_name[m], gpk_sort_algo_name(a));
    if (wide_dups) snprintf(what + strlen(what), sizeof what - strlen(what), " (%u values)", wide_dups);
    if (!in || !got || !want || !vgot || !sg || !sg64 || !seen) {
        TU_CHECK(0, "out of host memory for n=%zu", n);
        goto out;
    }
    gpk_status gs = gpk_generate(t, d, in, n, seed, 0);
    TU_CHECK(gs == GPK_OK, "%s: generate: %s", what, gpk_status_string(gs));
    if (gs != GPK_OK) goto out;
    if (wide_dups) spread_duplicates(t, in, n);
    for (size_t i = 0; i < n; i++) {
        if (vw == 4) {
            uint32_t v = v32_of(i);
            memcpy(vgot + 4 * i, &v, 4);
        }
        if (vw == 8) {
            uint64_t v = v64_of(i);
            memcpy(vgot + 8 * i, &v, 8);
        }
    }
    memcpy(got, in, n * kw);
    memcpy(want, in, n * kw);
    memset(sg, 0xAB, n * 4); /* poison: every entry must be written */
    memset(sg64, 0xAB, n * 8);

    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = a;
    gpk_status s;
    if (m == MODE_PERM) s = gpk_sort_perm(ctx, t, got, sg, n, &o);
    else if (m == MODE_PERM64) s = gpk_sort_perm64(ctx, t, got, sg64, n, &o);
    else if (vw) s = gpk_sort_pairs(ctx, t, got, vw == 4 ? GPK_U32 : GPK_U64, vgot, n, &o);
    else s = gpk_sort_keys(ctx, t, got, n, &o);
    if (refused_recursive(a, s)) {
        TU_CHECK(memcmp(got, in, n * kw) == 0, "%s: refused but keys changed", what);
        ok = 1;
        goto out;
    }
    TU_CHECK(s == GPK_OK, "%s: status %s: %s", what, gpk_status_string(s), gpk_last_error(ctx));
    if (s != GPK_OK) goto out;
    gpk_sort_algo ran = gpk_last_sort_algo(ctx);
    if (a == GPK_SORT_AUTO)
        TU_CHECK(ran == GPK_SORT_RADIX || ran == GPK_SORT_QUICK, "%s: AUTO ran %s", what,
                 gpk_sort_algo_name(ran));
    else TU_CHECK(ran == a, "%s: last algorithm %s", what, gpk_sort_algo_name(ran));
    TU_CHECK(gpk_sort_reference(t, want, 0, NULL, NULL, n, 0) == GPK_OK, "%s: reference", what);

    size_t bad = tu_first_difference(got, want, n, kw);
    TU_CHECK(bad == n, "%s: keys differ from the reference at %zu", what, bad);
    bad = n;
    for (size_t i = 1; i < n && bad == n; i++)
        if (!nat_le(t, got + (i - 1) * kw, got + i * kw)) bad = i;
    TU_CHECK(bad == n, "%s: not in natural order at %zu", what, bad);
    if (vw || m == MODE_PERM || m == MODE_PERM64) {
        /* Every output (key, value) is an input pair, each input used once:
         * the multiset of pairs is unchanged (order among equal keys free). */
        bad = n;
        for (size_t j = 0; j < n && bad == n; j++) {
            size_t i;
            if (m == MODE_PERM) i = sg[j];
            else if (m == MODE_PERM64) i = sg64[j] < n ? (size_t)sg64[j] : n;
            else if (vw == 4) {
                uint32_t v;
                memcpy(&v, vgot + 4 * j, 4);
                i = i_of_v32(v);
            } else {
                uint64_t v;
                memcpy(&v, vgot + 8 * j, 8);
                i = i_of_v64(v);
            }
            if (i >= n || seen[i] || memcmp(got + j * kw, in + i * kw, kw)) bad = j;
            else seen[i] = 1;
        }
        TU_CHECK(bad == n, "%s: (key, value) pairs not a permutation of the input at %zu", what, bad);
    }
    ok = 1;
out:
    free(in);
    free(got);
    free(want);
    free(vgot);
    free(sg);
    free(sg64);
    free(seen);
    return ok;
}

/* ---- records ---- */

static size_t cmp_size;
static int cmp_bytes(const void *a, const void *b) { return memcmp(a, b, cmp_size); }

static void run_records(gpk_type t, gpk_dist d, size_t n, size_t rs, size_t off, gpk_sort_algo a)
{
    size_t kw = gpk_type_size(t);
    uint64_t seed = case_seed(t, d, n, 9, (unsigned)(rs * 257 + off) ^ ((unsigned)a << 20));
    unsigned char *in = malloc(n * rs + 1), *got = malloc(n * rs + 1), *keys = malloc(n * kw + 1);
    unsigned char *a1 = malloc(n * rs + 1), *a2 = malloc(n * rs + 1);
    uint32_t *sigma = malloc(n * 4 + 4);
    char what[200];
    snprintf(what, sizeof what, "records %s %s n=%zu size=%zu offset=%zu %s", gpk_type_name(t),
             gpk_dist_name(d), n, rs, off, gpk_sort_algo_name(a));
    if (!in || !got || !keys || !a1 || !a2 || !sigma) {
        TU_CHECK(0, "out of host memory");
        goto out;
    }
    gpk_status gs = gpk_generate(t, d, keys, n, seed, 0);
    TU_CHECK(gs == GPK_OK, "%s: generate: %s", what, gpk_status_string(gs));
    if (gs != GPK_OK) goto out;
    gpk_rng rng;
    gpk_rng_seed(&rng, seed + 1);
    for (size_t i = 0; i < n * rs; i++) in[i] = (unsigned char)gpk_rng_next(&rng);
    for (size_t i = 0; i < n; i++) memcpy(in + i * rs + off, keys + i * kw, kw);
    memcpy(got, in, n * rs);

    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = a;
    gpk_status s = gpk_sort_records(ctx, got, n, rs, off, t, &o);
    if (refused_recursive(a, s)) {
        TU_CHECK(memcmp(got, in, n * rs) == 0, "%s: refused but records changed", what);
        goto out;
    }
    TU_CHECK(s == GPK_OK, "%s: status %s: %s", what, gpk_status_string(s), gpk_last_error(ctx));
    if (s != GPK_OK) goto out;
    gpk_sort_algo ran = gpk_last_sort_algo(ctx);
    TU_CHECK(a == GPK_SORT_AUTO ? (ran == GPK_SORT_RADIX || ran == GPK_SORT_QUICK) : ran == a,
             "%s: last algorithm %s", what, gpk_sort_algo_name(ran));

    /* Keys in the reference order. */
    TU_CHECK(gpk_sort_reference(t, keys, 0, NULL, sigma, n, 0) == GPK_OK, "%s: reference", what);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (memcmp(got + i * rs + off, keys + i * kw, kw)) bad = i;
    TU_CHECK(bad == n, "%s: keys out of order at %zu", what, bad);
    if (ran == GPK_SORT_RADIX) { /* stable: exactly the reference's gather */
        bad = n;
        for (size_t j = 0; j < n && bad == n; j++)
            if (memcmp(got + j * rs, in + (size_t)sigma[j] * rs, rs)) bad = j;
        TU_CHECK(bad == n, "%s: radix records not the stable order at %zu", what, bad);
    }
    /* The multiset of records is unchanged: both sorted by all bytes. */
    memcpy(a1, in, n * rs);
    memcpy(a2, got, n * rs);
    cmp_size = rs;
    if (n) {
        qsort(a1, n, rs, cmp_bytes);
        qsort(a2, n, rs, cmp_bytes);
    }
    TU_CHECK(memcmp(a1, a2, n * rs) == 0, "%s: records are not a permutation of the input", what);
out:
    free(in);
    free(got);
    free(keys);
    free(a1);
    free(a2);
    free(sigma);
}

/* ---- OpenCL: no quicksort ---- */

static void opencl_refuses(void)
{
    size_t n = 1000;
    uint32_t *k = malloc(n * 4), *k0 = malloc(n * 4), *v = malloc(n * 4), *v0 = malloc(n * 4);
    unsigned char *r = malloc(n * 16), *r0 = malloc(n * 16);
    if (!k || !k0 || !v || !v0 || !r || !r0) {
        TU_CHECK(0, "out of host memory");
        goto out;
    }
    gpk_generate(GPK_U32, GPK_DIST_UNIFORM, k0, n, seed_base, 0);
    for (size_t i = 0; i < n; i++) v0[i] = (uint32_t)i;
    for (size_t i = 0; i < n * 16; i++) r0[i] = (unsigned char)(i * 131 + 7);
    for (int a = GPK_SORT_QUICK; a <= GPK_SORT_QUICK_RECURSIVE; a++) {
        gpk_sort_opts o = GPK_SORT_OPTS_INIT;
        o.algorithm = (gpk_sort_algo)a;
        for (int call = 0; call < 4; call++) {
            memcpy(k, k0, n * 4);
            memcpy(v, v0, n * 4);
            memcpy(r, r0, n * 16);
            gpk_status s = call == 0 ? gpk_sort_keys(ctx, GPK_U32, k, n, &o)
                : call == 1          ? gpk_sort_pairs(ctx, GPK_U32, k, GPK_U32, v, n, &o)
                : call == 2          ? gpk_sort_perm(ctx, GPK_U32, k, v, n, &o)
                                     : gpk_sort_records(ctx, r, n, 16, 3, GPK_U32, &o);
            TU_CHECK(s == GPK_EUNSUPPORTED, "opencl %s call %d: status %s", gpk_sort_algo_name(o.algorithm),
                     call, gpk_status_string(s));
            TU_CHECK(strstr(gpk_last_error(ctx), "OpenCL") != NULL, "opencl refusal says \"%s\"",
                     gpk_last_error(ctx));
            TU_CHECK(!memcmp(k, k0, n * 4) && !memcmp(v, v0, n * 4) && !memcmp(r, r0, n * 16),
                     "opencl %s call %d: arrays touched", gpk_sort_algo_name(o.algorithm), call);
        }
        /* n = 0 and 1 are refused the same way: the answer does not depend on n. */
        TU_CHECK(gpk_sort_keys(ctx, GPK_U32, k, 1, &o) == GPK_EUNSUPPORTED, "opencl quick n=1");
    }
out:
    free(k);
    free(k0);
    free(v);
    free(v0);
    free(r);
    free(r0);
}

/* ---- bad input ---- */

static void bad_input(void)
{
    unsigned char rec[64 * 300];
    memset(rec, 0x5A, sizeof rec);
    unsigned char copy[sizeof rec];
    memcpy(copy, rec, sizeof rec);
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    gpk_sort_algo algos[] = {GPK_SORT_AUTO, GPK_SORT_RADIX, GPK_SORT_QUICK};

    /* A successful call first, to see that failures leave the last algorithm alone. */
    o.algorithm = GPK_SORT_RADIX;
    TU_CHECK(gpk_sort_records(ctx, rec, 64, 32, 0, GPK_U32, &o) == GPK_OK, "records ok: %s",
             gpk_last_error(ctx));
    TU_CHECK(gpk_last_sort_algo(ctx) == GPK_SORT_RADIX, "last algorithm after radix records");
    memcpy(copy, rec, sizeof rec);

    for (size_t ai = 0; ai < 3; ai++) {
        o.algorithm = algos[ai];
        const char *an = gpk_sort_algo_name(algos[ai]);
        gpk_status s = gpk_sort_records(ctx, rec, 64, 0, 0, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "size"), "%s record size 0: %s \"%s\"", an,
                 gpk_status_string(s), gpk_last_error(ctx));
        s = gpk_sort_records(ctx, rec, 64, 257, 0, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "257"), "%s record size 257: %s \"%s\"", an,
                 gpk_status_string(s), gpk_last_error(ctx));
        for (size_t rs = 1; rs < 8; rs++) {
            s = gpk_sort_records(ctx, rec, 64, rs, 0, GPK_U64, &o);
            TU_CHECK(s == GPK_EINVAL, "%s u64 key in %zu-byte record: %s", an, rs, gpk_status_string(s));
        }
        s = gpk_sort_records(ctx, rec, 64, 16, 13, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "offset"),
                 "%s key at 13 in 16 bytes: %s \"%s\"", an, gpk_status_string(s), gpk_last_error(ctx));
        s = gpk_sort_records(ctx, rec, 64, 16, (size_t)-2, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL, "%s key offset SIZE_MAX-1: %s", an, gpk_status_string(s));
        s = gpk_sort_records(ctx, rec, 64, 256, 256, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL, "%s key at 256 in 256 bytes: %s", an, gpk_status_string(s));
        s = gpk_sort_records(ctx, rec, 64, 16, 0, (gpk_type)17, &o);
        TU_CHECK(s == GPK_EINVAL, "%s unknown key type: %s", an, gpk_status_string(s));
        s = gpk_sort_records(ctx, NULL, 64, 16, 0, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "NULL"), "%s NULL records: %s", an,
                 gpk_status_string(s));
        s = gpk_sort_records(NULL, rec, 64, 16, 0, GPK_U32, &o);
        TU_CHECK(s == GPK_EINVAL, "%s NULL ctx: %s", an, gpk_status_string(s));
        s = gpk_sort_keys(ctx, GPK_U32, NULL, 64, &o);
        TU_CHECK(s == GPK_EINVAL, "%s NULL keys: %s", an, gpk_status_string(s));
        s = gpk_sort_pairs(ctx, GPK_U32, rec, GPK_U32, NULL, 64, &o);
        TU_CHECK(s == GPK_EINVAL, "%s NULL values: %s", an, gpk_status_string(s));
        s = gpk_sort_perm(ctx, GPK_U32, rec, NULL, 64, &o);
        TU_CHECK(s == GPK_EINVAL, "%s NULL sigma: %s", an, gpk_status_string(s));
        /* n = 0 with NULL is nothing to do; n = 0 and 1 succeed. */
        if (!(backend == GPK_BACKEND_OPENCL && algos[ai] == GPK_SORT_QUICK)) {
            TU_CHECK(gpk_sort_records(ctx, NULL, 0, 16, 0, GPK_U32, &o) == GPK_OK, "%s records n=0: %s", an,
                     gpk_last_error(ctx));
            TU_CHECK(gpk_sort_records(ctx, rec, 1, 16, 12, GPK_F32, &o) == GPK_OK, "%s records n=1: %s", an,
                     gpk_last_error(ctx));
            TU_CHECK(gpk_sort_keys(ctx, GPK_F64, NULL, 0, &o) == GPK_OK, "%s keys n=0", an);
            TU_CHECK(gpk_sort_keys(ctx, GPK_F64, rec, 1, &o) == GPK_OK, "%s keys n=1", an);
            uint32_t sg = 99;
            TU_CHECK(gpk_sort_perm(ctx, GPK_U32, rec, &sg, 1, &o) == GPK_OK && sg == 0,
                     "%s perm n=1 sigma %u", an, sg);
            TU_CHECK(memcmp(rec, copy, sizeof rec) == 0, "%s n<2 changed data", an);
        }
    }
    TU_CHECK(memcmp(rec, copy, sizeof rec) == 0, "bad input changed the records");

    /* An unknown algorithm value, on every kind of call. */
    o.algorithm = (gpk_sort_algo)7;
    gpk_sort_algo before = gpk_last_sort_algo(ctx);
    gpk_status s = gpk_sort_keys(ctx, GPK_U32, rec, 64, &o);
    TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "algorithm"), "algorithm 7 keys: %s \"%s\"",
             gpk_status_string(s), gpk_last_error(ctx));
    TU_CHECK(gpk_sort_pairs(ctx, GPK_U32, rec, GPK_U32, rec + 256, 64, &o) == GPK_EINVAL,
             "algorithm 7 pairs");
    TU_CHECK(gpk_sort_records(ctx, rec, 64, 16, 0, GPK_U32, &o) == GPK_EINVAL, "algorithm 7 records");
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, rec, 0, &o) == GPK_EINVAL, "algorithm 7 n=0");
    o.algorithm = (gpk_sort_algo)-1;
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, rec, 64, &o) == GPK_EINVAL, "algorithm -1 keys");
    TU_CHECK(memcmp(rec, copy, sizeof rec) == 0, "unknown algorithm changed the data");
    TU_CHECK(gpk_last_sort_algo(ctx) == before, "a failure changed the last algorithm");

    /* Names. */
    for (int a = GPK_SORT_AUTO; a <= GPK_SORT_QUICK_RECURSIVE; a++) {
        gpk_sort_algo back = (gpk_sort_algo)99;
        TU_CHECK(gpk_sort_algo_parse(gpk_sort_algo_name((gpk_sort_algo)a), &back) == GPK_OK &&
                     back == (gpk_sort_algo)a,
                 "algorithm name round trip %d", a);
    }
    gpk_sort_algo x;
    TU_CHECK(gpk_sort_algo_parse("bogo", &x) == GPK_EINVAL, "parse bogo");
    TU_CHECK(gpk_sort_algo_parse(NULL, &x) == GPK_EINVAL, "parse NULL");
    TU_CHECK(strcmp(gpk_sort_algo_name((gpk_sort_algo)42), "unknown") == 0, "name of 42");
    TU_CHECK(gpk_last_sort_algo(NULL) == GPK_SORT_AUTO, "last algorithm of NULL");
}

int main(int argc, char **argv)
{
    const int open_rc = tu_open_backend("test_quick", argc, argv, &ctx, &backend);
    if (open_rc >= 0) return open_rc;
    seed_base = tu_seed();
    const int has_quick = backend != GPK_BACKEND_OPENCL;
    /* GPK_TEST_SMALL=1: sizes up to 70000 only, for runs under
     * compute-sanitizer (which slows kernels down a hundredfold). */
    const char *small_env = getenv("GPK_TEST_SMALL");
    const int small = small_env && *small_env == '1';
    if (small) printf("GPK_TEST_SMALL=1: sizes up to 70000\n");

    bad_input();
    if (!has_quick) opencl_refuses();

    /* 1. Every type x distribution over the size ladder; the call kind and
     * algorithm rotate so that every combination is met without the full
     * product. */
    size_t sizes[64];
    int ns = 0;
    size_t fixed[] = {0, 1, 2, 3, 5, 7, 13, 31, 97, 257, 1021, 4099, 65537};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) sizes[ns++] = fixed[i];
    int ks[] = {4, 5, 8, 10, 12, 14, 16, 18, 20};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        size_t p = (size_t)1 << ks[i];
        sizes[ns++] = p - 1;
        sizes[ns++] = p;
        sizes[ns++] = p + 1;
    }
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (int d = 0; d < GPK_DIST_COUNT_; d++)
            for (int si = 0; si < ns; si++) {
                size_t n = sizes[si];
                /* 2^18 and 2^20 neighbours: one of the three per (type, dist). */
                if (n > 70000 && (small || (size_t)(si + t + d) % 3)) continue;
                mode m = (mode)((size_t)(si + d + t) % MODE_COUNT);
                gpk_sort_algo a = has_quick ? (m == MODE_KEYS_REC ? GPK_SORT_QUICK_RECURSIVE : GPK_SORT_QUICK)
                                            : GPK_SORT_AUTO;
                if (m == MODE_KEYS_REC) m = MODE_KEYS;
                /* Every few cases AUTO instead, on every backend. */
                if ((si + 2 * d + t) % 7 == 0) a = GPK_SORT_AUTO;
                run_case((gpk_type)t, (gpk_dist)d, n, m, a);
            }
    /* Every kind of call with QUICK at one mid size for each type and the
     * paper's distributions, so none of them is left to the rotation. */
    if (has_quick)
        for (int t = GPK_U32; t <= GPK_F64; t++)
            for (int d = 0; d < GPK_DIST_COUNT_; d++)
                for (int m = 0; m < MODE_COUNT; m++)
                    run_case((gpk_type)t, (gpk_dist)d, 3001, m == MODE_KEYS_REC ? MODE_KEYS : (mode)m,
                             m == MODE_KEYS_REC ? GPK_SORT_QUICK_RECURSIVE : GPK_SORT_QUICK);

    /* 2. Records: sizes 4..256 (odd ones too), aligned and unaligned key
     * offsets, every key type, RADIX / QUICK / AUTO. */
    size_t rsizes[] = {4,  5,  7,  8,  9,   12,  13,  16,  17,  24,  31,
                       32, 33, 48, 64, 100, 127, 128, 129, 200, 255, 256};
    size_t rns[] = {0, 1, 2, 3, 17, 1000, 4099};
    int rc = 0;
    for (size_t ri = 0; ri < sizeof rsizes / sizeof rsizes[0]; ri++)
        for (int t = GPK_U32; t <= GPK_F64; t++) {
            size_t rs = rsizes[ri], kw = gpk_type_size((gpk_type)t);
            if (rs < kw) continue;
            size_t offs[] = {0, 1, (rs - kw) / 2, rs - kw};
            for (size_t oi = 0; oi < 4; oi++, rc++) {
                if (offs[oi] > rs - kw || (oi > 0 && offs[oi] == offs[oi - 1])) continue;
                size_t n = rns[(size_t)rc % (sizeof rns / sizeof rns[0])];
                gpk_dist d = (gpk_dist)((size_t)rc % GPK_DIST_COUNT_);
                gpk_sort_algo algos[] = {GPK_SORT_RADIX, GPK_SORT_QUICK, GPK_SORT_AUTO};
                for (int a = 0; a < 3; a++) {
                    if (!has_quick && algos[a] == GPK_SORT_QUICK) continue;
                    run_records((gpk_type)t, d, n, rs, offs[oi], algos[a]);
                }
            }
        }
    if (has_quick) /* the recursive variant on records too */
        run_records(GPK_F64, GPK_DIST_FLOAT_SPECIALS, 5003, 24, 3, GPK_SORT_QUICK_RECURSIVE);
    /* The CUDA records front end (a radix pass by the top bits, then
     * quicksort of the buckets; src/sort/quick_cuda.cu) on every type and
     * distribution, forced on from 16 records: small buckets (sort items
     * only) and a few big ones (partitioned further). */
    if (backend == GPK_BACKEND_CUDA) {
        const struct {
            const char *bucket_log;
            size_t n;
        } fe[] = {{"4", 1000}, {"4", 70001}, {"14", 70001}, {"11", 5003}};
        gpk__test_set("quick_front_min_log", "4");
        for (size_t i = 0; i < sizeof fe / sizeof fe[0]; i++) {
            gpk__test_set("quick_front_bucket_log", fe[i].bucket_log);
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (int d = 0; d < GPK_DIST_COUNT_; d++) {
                    const int wide = gpk_type_size((gpk_type)t) == 8;
                    run_records((gpk_type)t, (gpk_dist)d, fe[i].n, wide ? 40 : 12, wide ? 3 : 5,
                                GPK_SORT_QUICK);
                }
        }
        gpk__test_set("quick_front_min_log", NULL);
        gpk__test_set("quick_front_bucket_log", NULL);
    }
    if (small) goto end;
    /* A large one of each algorithm: 2^20 + 3 records of 32 bytes, u64 keys at offset 8. */
    run_records(GPK_U64, GPK_DIST_UNIFORM, ((size_t)1 << 20) + 3, 32, 8, GPK_SORT_RADIX);
    if (has_quick) {
        run_records(GPK_U64, GPK_DIST_UNIFORM, ((size_t)1 << 20) + 3, 32, 8, GPK_SORT_QUICK);
        run_records(GPK_F32, GPK_DIST_MO3_KILLER, ((size_t)1 << 18), 12, 5, GPK_SORT_QUICK);
    }

    /* 3. Large: 2^22 once (u32, quick or AUTO), and the adversarial
     * patterns at 2^20 with QUICK on both widths. */
    run_case(GPK_U32, GPK_DIST_UNIFORM, (size_t)1 << 22, MODE_KEYS,
             has_quick ? GPK_SORT_QUICK : GPK_SORT_AUTO);
    if (has_quick) {
        gpk_dist adv[] = {GPK_DIST_ZERO_ENTROPY, GPK_DIST_SORTED,     GPK_DIST_REVERSE,
                          GPK_DIST_ORGAN_PIPE,   GPK_DIST_MO3_KILLER, GPK_DIST_FEW_BITS};
        for (size_t i = 0; i < sizeof adv / sizeof adv[0]; i++) {
            run_case(GPK_U32, adv[i], (size_t)1 << 20, MODE_KEYS, GPK_SORT_QUICK);
            run_case(GPK_F64, adv[i], (size_t)1 << 20, MODE_PAIRS32, GPK_SORT_QUICK);
        }
        /* Few values far apart, many copies each: bins too full for the
         * CUDA finish's bucket pass (radix sort), and just full enough. */
        const struct {
            size_t n;
            uint32_t values;
        } wd[] = {{8191, 4096},
                  {8191, 300},
                  {65537, 3000},
                  {(size_t)1 << 18, 1024},
                  {((size_t)1 << 20) + 1, 16384}};
        for (size_t i = 0; i < sizeof wd / sizeof wd[0]; i++) {
            wide_dups = wd[i].values;
            const gpk_type wt[] = {GPK_U32, GPK_F64, GPK_U64, GPK_I32, GPK_F32};
            const mode wm[] = {MODE_KEYS, MODE_PAIRS32, MODE_PAIRS64, MODE_PERM, MODE_KEYS};
            for (int c = 0; c < 5; c++) run_case(wt[c], GPK_DIST_UNIFORM, wd[i].n, wm[c], GPK_SORT_QUICK);
        }
        wide_dups = 0;
    }

end:
    gpk_ctx_destroy(ctx);
    return tu_finish("test_quick");
}
