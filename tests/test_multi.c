/* Sorts over several devices (issue 17): gpk_sort_shards_keys / _pairs and
 * the host API of a context with several devices, against the reference.
 *
 *   test_multi cpu            K = 1..4 virtual devices of the CPU backend
 *   test_multi cuda [0,1]     the CUDA devices listed (else GPK_DEVICES, else
 *                             every GPU; one GPU: 0,0, the same GPU twice),
 *                             then 3 and 4 shards over the same GPUs repeated
 *
 * Shard sizes: balanced, not divisible by K, random, empty shards, one shard
 * holding everything; sizes 0, 1, primes, 2^k +- 1; every key type; keys
 * and pairs whose values are the global input index, so the comparison with
 * the stable reference checks stability too. Each output must hold exactly
 * gpk_shard_share(n, K, i) elements. Argument errors and bad device lists.
 * GPK_TEST_SMALL=1 leaves out the largest sizes. Exits 77 when CUDA is not
 * usable. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "gpk/gen.h"
#include "gpk/gpk.h"
#include "gpk/sort.h"
#include "testutil.h"
#include "hookargs.h"

static gpk_backend backend;
static uint64_t seed_base;
static gpk_rng rng;

/* ---- memory of device i (host memory for the CPU's virtual devices) ---- */

static void die(const char *what)
{
    fprintf(stderr, "test_multi: %s\n", what);
    exit(1);
}

static void *dev_alloc(int device, size_t bytes)
{
    if (bytes == 0) bytes = 1;
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) {
        void *p = NULL;
        if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess)
            die("cudaMalloc failed");
        return p;
    }
#endif
    (void)device;
    void *p = malloc(bytes);
    if (!p) die("out of host memory");
    return p;
}

static void dev_free(void *p)
{
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) {
        if (cudaFree(p) != cudaSuccess) die("cudaFree failed");
        return;
    }
#endif
    free(p);
}

static void dev_put(void *dst, const void *src, size_t bytes)
{
    if (!bytes) return;
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) {
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
            die("cudaMemcpy to device failed");
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

static void dev_get(void *dst, const void *src, size_t bytes)
{
    if (!bytes) return;
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) {
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
            die("cudaMemcpy to host failed");
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

/* ---- one case --------------------------------------------------------------- */

static gpk_ctx *open_ctx(const int *devices, int k)
{
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = backend;
    o.n_devices = k;
    o.devices = devices;
    gpk_ctx *ctx = NULL;
    gpk_status s = gpk_ctx_create_ex(&ctx, &o);
    if (s != GPK_OK) {
        fprintf(stderr, "cannot open %d devices: %s\n", k, gpk_last_error(NULL));
        exit(1);
    }
    return ctx;
}

static const char *pattern_name[] = {"balanced", "random", "all-in-first", "all-in-last",
                                     "every-other-empty"};
#define PATTERNS 5

static void shard_sizes(int pattern, size_t n, int k, size_t *sz)
{
    for (int i = 0; i < k; i++) sz[i] = 0;
    switch (pattern) {
    case 0:
        for (int i = 0; i < k; i++) sz[i] = gpk_shard_share(n, k, i);
        break;
    case 1: {
        size_t left = n;
        for (int i = 0; i < k - 1; i++) {
            sz[i] = left ? (size_t)(gpk_rng_next(&rng) % (left + 1)) : 0;
            left -= sz[i];
        }
        sz[k - 1] = left;
        break;
    }
    case 2: sz[0] = n; break;
    case 3: sz[k - 1] = n; break;
    default: {
        const int full = (k + 1) / 2;
        for (int i = 0, f = 0; i < k; i += 2, f++) sz[i] = gpk_shard_share(n, full, f);
    }
    }
}

/* Sorts n keys (and their global indices as values when vw) cut into
 * shards by `pattern` over ctx's k devices; compares with the reference. */
/* The plan a sort must take (the path names it): GPK_MULTI_PLAN=merge:
 * merge; =part: part (merge for the CUDA host API, host_api); =lsd: lsd
 * where every CUDA device reaches every other's memory, else merge; unset:
 * part for 4-byte keys from multi_part_min keys a device (a hook argument; default 2^29
 * on CUDA, 0 on the CPU's virtual devices; not for the CUDA host API), merge for
 * 8-byte ones.
 * Part itself falls back to merge for skewed keys (run_case says when). */
static int part_due; /* sorts that the default rule sends to part */
static const char *expected_path(const int *devices, int k, size_t kw, int host_api, size_t n)
{
    const char *v = getenv("GPK_MULTI_PLAN"), *min = hook_arg("multi_part_min");
    const int part_fits = !(host_api && backend == GPK_BACKEND_CUDA);
    /* part by default from 2^29 keys a device on CUDA (multi_part_min), always on the CPU's devices */
    const size_t part_min = min && *min ? (size_t)strtoull(min, NULL, 0)
        : backend == GPK_BACKEND_CUDA   ? (size_t)1 << 29
                                        : 0;
    if (v && !strcmp(v, "merge")) return "radix-multi";
    if (v && !strcmp(v, "part")) return part_fits ? "radix-multi-part" : "radix-multi";
    if (!v || strcmp(v, "lsd"))
        return kw == 4 && part_fits && n / (size_t)k >= part_min ? "radix-multi-part" : "radix-multi";
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA)
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                int can = 1;
                if (devices[i] != devices[j] &&
                    cudaDeviceCanAccessPeer(&can, devices[i], devices[j]) != cudaSuccess)
                    can = 0;
                if (!can) return "radix-multi";
            }
#else
    (void)devices;
    (void)k;
#endif
    return "radix-multi-lsd";
}

static int part_runs; /* sorts that took the part plan (GPK_MULTI_PLAN=part) */

static void run_case(gpk_ctx *ctx, int k, gpk_type t, size_t vw, size_t n, gpk_dist dist, int pattern,
                     unsigned key_bits, unsigned radix_bits)
{
    const size_t kw = gpk_type_size(t);
    const uint64_t seed = gpk_rng_next(&rng);
    unsigned char *keys = malloc(n * kw + 1), *ref = malloc(n * kw + 1), *got = malloc(n * kw + 1);
    unsigned char *vals = malloc(n * 8 + 1), *ref_vals = malloc(n * 8 + 1), *got_vals = malloc(n * 8 + 1);
    if (!keys || !ref || !got || !vals || !ref_vals || !got_vals) die("out of host memory");
    if (gpk_generate(t, dist, keys, n, seed, dist == GPK_DIST_FEW_BITS ? 2 : 0) != GPK_OK)
        die("gpk_generate");
    if (key_bits) {
        /* keys below 2^b in mapped form: mask u32 / u64 keys */
        for (size_t i = 0; i < n; i++) {
            if (kw == 4) ((uint32_t *)keys)[i] &= (uint32_t)((1ull << key_bits) - 1);
            else ((uint64_t *)keys)[i] &= key_bits >= 64 ? ~0ull : (1ull << key_bits) - 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (vw == 4) ((uint32_t *)vals)[i] = (uint32_t)i;
        else ((uint64_t *)vals)[i] = (uint64_t)i;
    }
    memcpy(ref, keys, n * kw);
    memcpy(ref_vals, vals, n * 8);
    if (gpk_sort_reference(t, ref, vw, vw ? ref_vals : NULL, NULL, n, key_bits) != GPK_OK)
        die("reference sort");

    size_t sz[GPK_MAX_DEVICES];
    shard_sizes(pattern, n, k, sz);
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    gpk_shard sh[GPK_MAX_DEVICES];
    memset(sh, 0, sizeof sh);
    size_t off = 0;
    for (int i = 0; i < k; i++) {
        const size_t m = gpk_shard_share(n, k, i);
        sh[i].n = sz[i];
        sh[i].keys = dev_alloc(info.devices[i], sz[i] * kw);
        sh[i].keys_out = dev_alloc(info.devices[i], m * kw);
        dev_put(sh[i].keys, keys + off * kw, sz[i] * kw);
        if (vw) {
            sh[i].values = dev_alloc(info.devices[i], sz[i] * vw);
            sh[i].values_out = dev_alloc(info.devices[i], m * vw);
            dev_put(sh[i].values, vals + off * vw, sz[i] * vw);
        }
        off += sz[i];
    }
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.key_bits = key_bits;
    o.radix_bits = radix_bits;
    gpk_status s = vw ? gpk_sort_shards_pairs(ctx, t, vw, sh, &o) : gpk_sort_shards_keys(ctx, t, sh, &o);
    TU_CHECK(s == GPK_OK, "temp query: %s", gpk_last_error(ctx));
    for (int i = 0; i < k; i++) sh[i].temp = dev_alloc(info.devices[i], sh[i].temp_bytes);
    s = vw ? gpk_sort_shards_pairs(ctx, t, vw, sh, &o) : gpk_sort_shards_keys(ctx, t, sh, &o);
    TU_CHECK(s == GPK_OK, "K=%d %s %s n=%zu %s %s bits=%u r=%u: %s", k, gpk_type_name(t),
             vw ? "pairs" : "keys", n, gpk_dist_name(dist), pattern_name[pattern], key_bits, radix_bits,
             gpk_last_error(ctx));
    if (s == GPK_OK) {
        const char *want = expected_path(info.devices, k, kw, 0, n), *ran = gpk_last_sort_path(ctx);
        /* part: skewed keys (a top-digit bucket past m / 16 keys, at least
         * 4096, or reaching past the next output) and keys of 8 bits or
         * fewer take merge; uniform keys over every bit must not */
        const int part = !strcmp(want, "radix-multi-part");
        const int may_merge = part &&
            (dist != GPK_DIST_UNIFORM || (key_bits > 0 && key_bits <= 8) || t == GPK_F32 || t == GPK_F64 ||
             n <= 4096 * (size_t)k);
        if (part) part_runs += !strcmp(ran, want), part_due++;
        TU_CHECK(!strcmp(ran, want) || (may_merge && !strcmp(ran, "radix-multi")),
                 "K=%d n=%zu ran %s, not %s", k, n, ran, want);
    }
    off = 0;
    for (int i = 0; i < k; i++) {
        const size_t m = gpk_shard_share(n, k, i);
        dev_get(got + off * kw, sh[i].keys_out, m * kw);
        if (vw) dev_get(got_vals + off * vw, sh[i].values_out, m * vw);
        off += m;
    }
    if (s == GPK_OK) {
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
            if (memcmp(got + i * kw, ref + i * kw, kw) ||
                (vw && memcmp(got_vals + i * vw, ref_vals + i * vw, vw)))
                bad = i;
        TU_CHECK(bad == n, "K=%d %s %s n=%zu %s %s bits=%u r=%u: first difference at %zu", k,
                 gpk_type_name(t), vw ? "pairs" : "keys", n, gpk_dist_name(dist), pattern_name[pattern],
                 key_bits, radix_bits, bad);
    }
    for (int i = 0; i < k; i++) {
        dev_free(sh[i].keys);
        dev_free(sh[i].keys_out);
        dev_free(sh[i].temp);
        if (vw) {
            dev_free(sh[i].values);
            dev_free(sh[i].values_out);
        }
    }
    free(keys);
    free(ref);
    free(got);
    free(vals);
    free(ref_vals);
    free(got_vals);
}

static const gpk_dist dists[] = {GPK_DIST_RANDOM_BITS, GPK_DIST_FEW_BITS, GPK_DIST_EQUAL,
                                 GPK_DIST_SORTED,      GPK_DIST_REVERSE,  GPK_DIST_FLOAT_SPECIALS,
                                 GPK_DIST_UNIFORM};
#define DISTS (sizeof dists / sizeof dists[0])

static void shards_suite(const int *devices, int k, int small)
{
    static const size_t all_sizes[] = {0,   1,   2,   3,    5,    17,   31,   127,   128,   129,
                                       255, 256, 257, 1021, 1024, 1025, 4093, 65535, 65536, 65537};
    static const size_t quick_sizes[] = {0, 1, 3, 257, 4093, 65537};
    /* GPK_TEST_MULTI_QUICK=1: a few sizes, for compute-sanitizer; the same
     * under the CI's ASan tier (GPK_TEST_SANITIZER=1) */
    const int quick = (getenv("GPK_TEST_MULTI_QUICK") && *getenv("GPK_TEST_MULTI_QUICK") == '1') ||
        (getenv("GPK_TEST_SANITIZER") && *getenv("GPK_TEST_SANITIZER") == '1');
    const size_t *sizes = quick ? quick_sizes : all_sizes;
    const size_t n_sizes =
        quick ? sizeof quick_sizes / sizeof quick_sizes[0] : sizeof all_sizes / sizeof all_sizes[0];
    gpk_ctx *ctx = open_ctx(devices, k);
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    TU_CHECK(info.n_devices == (unsigned)k, "info.n_devices %u, expected %d", info.n_devices, k);
    for (int i = 0; i < k; i++)
        TU_CHECK(info.devices[i] == devices[i], "info.devices[%d] = %d, expected %d", i, info.devices[i],
                 devices[i]);
    unsigned counter = 0;
    const int fails_before = tu_failures;
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (int kind = 0; kind < 3; kind++) {
            const size_t vw = kind == 0 ? 0 : kind == 1 ? 4 : 8;
            for (size_t si = 0; si < n_sizes; si++)
                for (int p = 0; p < PATTERNS; p++) {
                    const gpk_dist d = dists[counter++ % DISTS];
                    run_case(ctx, k, (gpk_type)t, vw, sizes[si], d, p, 0, 0);
                }
            /* every distribution at one size that K does not divide */
            for (size_t di = 0; di < DISTS && !quick; di++)
                run_case(ctx, k, (gpk_type)t, vw, 3001, dists[di], 1, 0, 0);
            if (!small)
                run_case(ctx, k, (gpk_type)t, vw, ((size_t)1 << 20) + 3, dists[counter++ % DISTS], 0, 0, 0);
        }
    /* key_bits: the order of the low bits only */
    run_case(ctx, k, GPK_U32, 4, 10007, GPK_DIST_RANDOM_BITS, 1, 12, 0);
    run_case(ctx, k, GPK_U64, 8, 10007, GPK_DIST_RANDOM_BITS, 0, 40, 0);
    /* one pass only (the distributed pass is the whole sort), odd digit
     * widths, the widest digit (11 bits), and the 10-bit kernel */
    run_case(ctx, k, GPK_U32, 4, 10007, GPK_DIST_RANDOM_BITS, 1, 8, 0);
    run_case(ctx, k, GPK_I32, 0, 4099, GPK_DIST_RANDOM_BITS, 3, 5, 0);
    run_case(ctx, k, GPK_U32, 0, 20011, GPK_DIST_RANDOM_BITS, 2, 0, 11);
    run_case(ctx, k, GPK_F64, 4, 20011, GPK_DIST_UNIFORM, 1, 0, 10);
    run_case(ctx, k, GPK_I64, 8, 5003, GPK_DIST_RANDOM_BITS, 4, 0, 3);
    run_case(ctx, k, GPK_U32, 4, 9001, GPK_DIST_EQUAL, 2, 0, 11);
    if (!small) run_case(ctx, k, GPK_U32, 0, (size_t)3 << 20, GPK_DIST_FEW_BITS, 1, 0, 0);
    printf("K=%d (devices", k);
    for (int i = 0; i < k; i++) printf("%s%d", i ? "," : " ", devices[i]);
    printf("): shard sorts %s\n", tu_failures == fails_before ? "ok" : "FAILED");
    gpk_ctx_destroy(ctx);
}

/* The host API over k devices. */
static void host_suite(const int *devices, int k, int small)
{
    gpk_ctx *ctx = open_ctx(devices, k);
    static const size_t sizes[] = {0, 1, 2, 7, 1000, 4099, 65537};
    const int fails_before = tu_failures;
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] + (small ? 0 : 1); si++) {
            const size_t n = si < sizeof sizes / sizeof sizes[0] ? sizes[si] : ((size_t)1 << 21) + 1;
            const gpk_type ty = (gpk_type)t;
            const size_t kw = gpk_type_size(ty);
            const gpk_dist d = dists[(si + (size_t)t) % DISTS];
            unsigned char *a = malloc(n * kw + 1), *r = malloc(n * kw + 1), *b = malloc(n * kw + 1);
            uint32_t *v = malloc(n * 4 + 4), *rv = malloc(n * 4 + 4), *sig = malloc(n * 4 + 4);
            if (!a || !r || !b || !v || !rv || !sig) die("out of host memory");
            gpk_generate(ty, d, a, n, gpk_rng_next(&rng), d == GPK_DIST_FEW_BITS ? 3 : 0);
            gpk_sort_opts radix = GPK_SORT_OPTS_INIT;
            radix.algorithm = GPK_SORT_RADIX;
            for (size_t i = 0; i < n; i++) v[i] = rv[i] = (uint32_t)(i * 2654435761u);
            memcpy(r, a, n * kw);
            memcpy(b, a, n * kw);
            gpk_sort_reference(ty, r, 4, rv, NULL, n, 0);
            /* keys */
            gpk_status s = gpk_sort_keys(ctx, ty, b, n, &radix);
            TU_CHECK(s == GPK_OK && !memcmp(b, r, n * kw), "host keys K=%d %s n=%zu %s: %s", k,
                     gpk_type_name(ty), n, gpk_dist_name(d), gpk_last_error(ctx));
            if (n >= 2)
                TU_CHECK(!strcmp(gpk_last_sort_path(ctx), expected_path(devices, k, kw, 1, n)) ||
                             (!strcmp(expected_path(devices, k, kw, 1, n), "radix-multi-part") &&
                              !strcmp(gpk_last_sort_path(ctx), "radix-multi")),
                         "host keys K=%d n=%zu ran %s, not %s", k, n, gpk_last_sort_path(ctx),
                         expected_path(devices, k, kw, 1, n));
            /* pairs */
            memcpy(b, a, n * kw);
            s = gpk_sort_pairs(ctx, ty, b, GPK_U32, v, n, &radix);
            TU_CHECK(s == GPK_OK && !memcmp(b, r, n * kw) && !memcmp(v, rv, n * 4),
                     "host pairs K=%d %s n=%zu: %s", k, gpk_type_name(ty), n, gpk_last_error(ctx));
            /* perm: keys_out[j] = keys_in[sigma[j]], stable (sigma increasing on ties) */
            memcpy(b, a, n * kw);
            s = gpk_sort_perm(ctx, ty, b, sig, n, &radix);
            int ok = s == GPK_OK && !memcmp(b, r, n * kw);
            for (size_t j = 0; ok && j < n; j++) {
                ok = sig[j] < n && !memcmp(b + j * kw, a + (size_t)sig[j] * kw, kw);
                if (ok && j > 0 && !memcmp(b + j * kw, b + (j - 1) * kw, kw)) ok = sig[j] > sig[j - 1];
            }
            TU_CHECK(ok, "host perm K=%d %s n=%zu: %s", k, gpk_type_name(ty), n, gpk_last_error(ctx));
            /* the copying sort leaves its input alone */
            memcpy(b, a, n * kw);
            unsigned char *c = malloc(n * kw + 1);
            if (!c) die("out of host memory");
            s = gpk_sort_keys_to(ctx, ty, b, c, n, &radix);
            TU_CHECK(s == GPK_OK && !memcmp(c, r, n * kw) && !memcmp(b, a, n * kw),
                     "host keys_to K=%d %s n=%zu: %s", k, gpk_type_name(ty), n, gpk_last_error(ctx));
            free(c);
            free(a);
            free(r);
            free(b);
            free(v);
            free(rv);
            free(sig);
        }
    /* CPU: a device budget that one device's share fits but not the whole
     * input (larger than one device, fitting all of them): the sort runs
     * over the devices; one that the share does not fit either: the first
     * device's out-of-core sort takes it */
    if (backend == GPK_BACKEND_CPU) {
        const size_t n = 300007;
        uint32_t *a = malloc(n * 4), *r = malloc(n * 4);
        if (!a || !r) die("out of host memory");
        gpk_generate(GPK_U32, GPK_DIST_FEW_BITS, a, n, gpk_rng_next(&rng), 12);
        memcpy(r, a, n * 4);
        gpk_sort_reference(GPK_U32, r, 0, NULL, NULL, n, 0);
        const size_t share = gpk_shard_share(n, k, 0);
        for (int fits = 1; fits >= 0; fits--) {
            uint32_t *b = malloc(n * 4);
            if (!b) die("out of host memory");
            memcpy(b, a, n * 4);
            gpk_ctx_set_device_budget(ctx, fits ? 2 * share * 4 + 64 : share * 4);
            gpk_status s = gpk_sort_keys(ctx, GPK_U32, b, n, NULL);
            TU_CHECK(s == GPK_OK && !memcmp(b, r, n * 4), "K=%d budget (%s): %s", k,
                     fits ? "share fits" : "too small", gpk_last_error(ctx));
            TU_CHECK(!strncmp(gpk_last_sort_path(ctx), "radix-multi", 11) == fits, "K=%d budget (%s): ran %s",
                     k, fits ? "share fits" : "too small", gpk_last_sort_path(ctx));
            free(b);
        }
        gpk_ctx_set_device_budget(ctx, 0);
        free(a);
        free(r);
    }
    /* more than the devices and the host hold: ENOMEM, nothing touched */
    uint32_t few[8] = {5, 3, 9, 1, 7, 2, 8, 6}, same[8];
    memcpy(same, few, sizeof few);
    gpk_status s = gpk_sort_keys(ctx, GPK_U32, few, (size_t)1 << 40, NULL);
    TU_CHECK(s == GPK_ENOMEM && *gpk_last_error(ctx) && !memcmp(few, same, sizeof few),
             "K=%d, 2^40 keys: %s (%s), expected ENOMEM with the keys untouched", k, gpk_status_string(s),
             gpk_last_error(ctx));
    printf("K=%d: host API %s\n", k, tu_failures == fails_before ? "ok" : "FAILED");
    gpk_ctx_destroy(ctx);
}

static void error_suite(const int *devices, int k)
{
    gpk_ctx *bad = NULL;
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = backend;
    o.n_devices = 2;
    o.devices = NULL;
    TU_CHECK(gpk_ctx_create_ex(&bad, &o) == GPK_EINVAL && !bad && *gpk_last_error(NULL),
             "devices NULL with n_devices 2: EINVAL expected");
    int many[GPK_MAX_DEVICES + 1] = {0};
    o.n_devices = GPK_MAX_DEVICES + 1;
    o.devices = many;
    TU_CHECK(gpk_ctx_create_ex(&bad, &o) == GPK_EINVAL && !bad, "n_devices %d: EINVAL expected", o.n_devices);
    int neg[2] = {0, -1};
    o.n_devices = 2;
    o.devices = neg;
    TU_CHECK(gpk_ctx_create_ex(&bad, &o) == GPK_EINVAL && !bad, "a negative device: EINVAL expected");
    /* GPK_DEVICES */
    o = (gpk_ctx_opts)GPK_CTX_OPTS_INIT;
    o.backend = backend;
    const char *old = getenv("GPK_DEVICES");
    char *saved = old ? strdup(old) : NULL;
    setenv("GPK_DEVICES", "0,x", 1);
    TU_CHECK(gpk_ctx_create_ex(&bad, &o) == GPK_EINVAL && !bad && strstr(gpk_last_error(NULL), "GPK_DEVICES"),
             "GPK_DEVICES=0,x: EINVAL naming the variable expected, got '%s'", gpk_last_error(NULL));
    setenv("GPK_DEVICES", "0,", 1);
    TU_CHECK(gpk_ctx_create_ex(&bad, &o) == GPK_EINVAL && !bad, "GPK_DEVICES=0,: EINVAL expected");
    char list[64];
    snprintf(list, sizeof list, "%d,%d", devices[k - 1], devices[0]);
    setenv("GPK_DEVICES", list, 1);
    gpk_ctx *c2 = NULL;
    gpk_ctx_info info;
    TU_CHECK(gpk_ctx_create_ex(&c2, &o) == GPK_OK, "GPK_DEVICES=%s: %s", list, gpk_last_error(NULL));
    if (c2) {
        gpk_ctx_info_get(c2, &info);
        TU_CHECK(info.n_devices == 2 && info.devices[0] == devices[k - 1] && info.devices[1] == devices[0],
                 "GPK_DEVICES=%s: info says %u devices", list, info.n_devices);
        gpk_ctx_destroy(c2);
    }
    /* an explicit device wins over GPK_DEVICES */
    o.device = devices[0];
    c2 = NULL;
    TU_CHECK(gpk_ctx_create_ex(&c2, &o) == GPK_OK, "device %d with GPK_DEVICES set: %s", devices[0],
             gpk_last_error(NULL));
    if (c2) {
        gpk_ctx_info_get(c2, &info);
        TU_CHECK(info.n_devices == 1, "an explicit device: %u devices", info.n_devices);
        gpk_ctx_destroy(c2);
    }
    if (saved) setenv("GPK_DEVICES", saved, 1);
    else unsetenv("GPK_DEVICES");
    free(saved);
#ifdef GPK_HAVE_CUDA
    if (backend == GPK_BACKEND_CUDA) {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
        int missing[2] = {0, count + 3};
        o = (gpk_ctx_opts)GPK_CTX_OPTS_INIT;
        o.backend = backend;
        o.n_devices = 2;
        o.devices = missing;
        gpk_status s = gpk_ctx_create_ex(&bad, &o);
        TU_CHECK(s == GPK_EINVAL && !bad && strstr(gpk_last_error(NULL), "requested"),
                 "device list 0,%d with %d GPUs: EINVAL expected, got %s '%s'", count + 3, count,
                 gpk_status_string(s), gpk_last_error(NULL));
        printf("missing device: %s\n", gpk_last_error(NULL));
        missing[0] = count + 3;
        missing[1] = 0;
        s = gpk_ctx_create_ex(&bad, &o);
        TU_CHECK(s == GPK_EINVAL && !bad, "device list %d,0: EINVAL expected, got %s", count + 3,
                 gpk_status_string(s));
    }
#endif
    /* bad calls */
    gpk_ctx *ctx = open_ctx(devices, k);
    gpk_ctx_info_get(ctx, &info);
    gpk_shard sh[GPK_MAX_DEVICES];
    memset(sh, 0, sizeof sh);
    for (int i = 0; i < k; i++) sh[i].n = 10;
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, NULL, NULL) == GPK_EINVAL, "shards NULL: EINVAL expected");
    TU_CHECK(gpk_sort_shards_keys(ctx, (gpk_type)17, sh, NULL) == GPK_EINVAL, "bad type: EINVAL expected");
    TU_CHECK(gpk_sort_shards_pairs(ctx, GPK_U32, 3, sh, NULL) == GPK_EINVAL,
             "value width 3: EINVAL expected");
    gpk_sort_opts so = GPK_SORT_OPTS_INIT;
    so.algorithm = GPK_SORT_QUICK;
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, sh, &so) == GPK_EUNSUPPORTED,
             "quicksort: EUNSUPPORTED expected");
    so = (gpk_sort_opts)GPK_SORT_OPTS_INIT;
    so.key_bits = 33;
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, sh, &so) == GPK_EINVAL, "key_bits 33: EINVAL expected");
    so.key_bits = GPK_KEY_BITS_ALL;
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, sh, &so) == GPK_OK && sh[0].temp_bytes > 0,
             "key_bits ALL: temp query failed: %s", gpk_last_error(ctx));
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, sh, NULL) == GPK_OK && sh[0].temp_bytes > 0, "temp query");
    for (int i = 0; i < k; i++) sh[i].temp = dev_alloc(info.devices[i], sh[i].temp_bytes);
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, sh, NULL) == GPK_EINVAL && *gpk_last_error(ctx),
             "keys NULL with n = 10: EINVAL expected");
    sh[k - 1].temp_bytes -= 1;
    for (int i = 0; i < k; i++) {
        sh[i].keys = dev_alloc(info.devices[i], 40);
        sh[i].keys_out = dev_alloc(info.devices[i], 40);
    }
    TU_CHECK(gpk_sort_shards_keys(ctx, GPK_U32, sh, NULL) == GPK_EINVAL, "temp too small: EINVAL expected");
    sh[k - 1].temp_bytes += 1;
    TU_CHECK(gpk_sort_shards_pairs(ctx, GPK_U32, 4, sh, NULL) == GPK_EINVAL, "values NULL: EINVAL expected");
    for (int i = 0; i < k; i++) {
        dev_free(sh[i].temp);
        dev_free(sh[i].keys);
        dev_free(sh[i].keys_out);
    }
    gpk_ctx_destroy(ctx);
    printf("K=%d: argument errors checked\n", k);
}

static int parse_list(const char *s, int *out)
{
    int k = 0;
    while (*s && k < GPK_MAX_DEVICES) {
        char *end;
        long d = strtol(s, &end, 10);
        if (end == s || d < 0) return 0;
        out[k++] = (int)d;
        if (*end != ',') break;
        s = end + 1;
    }
    return k;
}

int main(int argc, char **argv)
{
    hook_args(&argc, argv);
    if (argc < 2 || gpk_backend_parse(argv[1], &backend) != GPK_OK ||
        (backend != GPK_BACKEND_CPU && backend != GPK_BACKEND_CUDA)) {
        fprintf(stderr, "usage: test_multi cpu|cuda [device list such as 0,1]\n");
        return 2;
    }
    /* the host API spreads every size over the devices (the CPU's virtual
     * devices only when asked to) */
    gpk__test_set("multi_min", "0");
    seed_base = tu_seed();
    gpk_rng_seed(&rng, seed_base);
    const int small = getenv("GPK_TEST_SMALL") && *getenv("GPK_TEST_SMALL") == '1';
    if (backend == GPK_BACKEND_CPU) {
        const int virt[4] = {0, 1, 2, 3};
        for (int k = 1; k <= 4; k++) shards_suite(virt, k, small);
        for (int k = 2; k <= 3; k++) host_suite(virt, k, small);
        error_suite(virt, 3);
        if (part_due)
            TU_CHECK(part_runs > 0, "the part plan was due %d times, but no sort took it", part_due);
        if (part_runs) printf("the part plan ran %d sorts (the others fell back to merge)\n", part_runs);
        return tu_finish("test_multi cpu");
    }
    if (!gpk_backend_available(GPK_BACKEND_CUDA)) {
        const char *req = getenv("GPK_REQUIRE_CUDA");
        printf("CUDA unavailable: %s\n", req && *req == '1' ? "but GPK_REQUIRE_CUDA=1: failing" : "skipped");
        return req && *req == '1' ? 1 : TU_SKIP;
    }
    int list[GPK_MAX_DEVICES], k = 0;
    const char *env = getenv("GPK_DEVICES");
    if (argc > 2) k = parse_list(argv[2], list);
    else if (env && *env) k = parse_list(env, list);
    else {
        int count = 0;
#ifdef GPK_HAVE_CUDA
        if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
#endif
        if (count < 1) return TU_SKIP;
        for (k = 0; k < count && k < GPK_MAX_DEVICES; k++) list[k] = k;
        if (k == 1) list[k++] = 0; /* one GPU: the same GPU twice */
    }
    if (k < 1) {
        fprintf(stderr, "bad device list\n");
        return 2;
    }
    /* the contexts here name their devices */
    unsetenv("GPK_DEVICES");
    printf("devices:");
    for (int i = 0; i < k; i++) printf(" %d", list[i]);
    printf("\n");
    shards_suite(list, k, small);
    host_suite(list, k, small);
    /* 3 and 4 shards over the same GPUs repeated: the merge tree */
    for (int kk = 3; kk <= 4; kk++) {
        if (kk == k) continue;
        int rep[4];
        for (int i = 0; i < kk; i++) rep[i] = list[i % k];
        shards_suite(rep, kk, 1);
    }
    error_suite(list, k);
    if (part_due) TU_CHECK(part_runs > 0, "the part plan was due %d times, but no sort took it", part_due);
    if (part_runs) printf("the part plan ran %d sorts (the others fell back to merge)\n", part_runs);
    return tu_finish("test_multi cuda");
}
