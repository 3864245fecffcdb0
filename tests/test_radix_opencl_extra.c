/* OpenCL-specific radix sort tests: every variant of the OpenCL backend
 * (fast, paper with and without transposition, global-memory histograms)
 * against gpk_sort_reference, with the paper's tunables I, G, s, radix
 * widths from 1 to 16 (including the global-memory path for large r),
 * b = 0 detection and fixed b, every key type, 4- and 8-byte values, sigma,
 * and the float specials. Exits 77 (skipped) without an OpenCL device.
 *
 * The variant is forced with the test hooks opencl_variant and
 * opencl_transpose (src/core/test_hooks.h), read at every sort.
 *
 * Usage: test_radix_opencl_extra [--quick] [--bench]
 *   --quick  fewer sizes (about a third of the cases)
 *   --bench  also print timings of the host API for a few sizes
 */
#define _POSIX_C_SOURCE 200809L

#include <gpk/gpk.h>
#include <gpk/sort.h>
#include "hookargs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { D_UNIFORM, D_FEW, D_EQUAL, D_SORTED, D_REVERSE, D_SPECIAL, D_COUNT };
static const char *dist_name[D_COUNT] = {"uniform", "few-bits", "equal", "sorted", "reverse", "specials"};

enum { P_NONE, P_V4, P_V8, P_SIGMA, P_COUNT };
static const char *pay_name[P_COUNT] = {"keys", "pairs4", "pairs8", "sigma"};

static const gpk_type all_types[6] = {GPK_U32, GPK_I32, GPK_F32, GPK_U64, GPK_I64, GPK_F64};

static int failures, cases, rejected; /* rejected: tunables the device refused cleanly */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const uint32_t spec32[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu,
                                  0xFFFFFFFFu, 0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                                  0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u,
                                  0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u};
static const uint64_t spec64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0xFFF0000000000001ull,
    0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0x0000000000000000ull, 0x8000000000000000ull,
    0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
    0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull,
    0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull, 0xBFF0000000000000ull};

/* Keys of type t (given by width) following dist. */
static void gen_keys(gpk_type t, int dist, void *out, size_t n, uint64_t seed)
{
    const size_t w = gpk_type_size(t);
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 7;
    const uint64_t eq = splitmix(&s);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = splitmix(&s);
        switch (dist) {
        case D_FEW: v &= 0x3FFu; break; /* 10 low bits */
        case D_EQUAL: v = eq; break;
        case D_SPECIAL:
            if (v % 3 == 0)
                v = w == 4 ? spec32[(v >> 8) % (sizeof spec32 / 4)] : spec64[(v >> 8) % (sizeof spec64 / 8)];
            else if (v % 3 == 1) v &= 0xFF; /* small integers, denormals */
            break;
        default: break;
        }
        if (w == 4) ((uint32_t *)out)[i] = (uint32_t)v;
        else ((uint64_t *)out)[i] = v;
    }
    if (dist == D_SORTED || dist == D_REVERSE) {
        gpk_sort_reference(t, out, 0, NULL, NULL, n, 0);
        if (dist == D_REVERSE) {
            char tmp[8];
            for (size_t i = 0; i < n / 2; i++) {
                char *a = (char *)out + i * w, *b = (char *)out + (n - 1 - i) * w;
                memcpy(tmp, a, w);
                memcpy(a, b, w);
                memcpy(b, tmp, w);
            }
        }
    }
}

/* One sort against the reference. variant: "fast", "paper", "paper-t"
 * (transposed), "global". */
static void check(gpk_ctx *ctx, const char *variant, gpk_type t, int pay, size_t n, int dist, unsigned b,
                  unsigned r, unsigned I, unsigned G, unsigned s, uint64_t seed)
{
    cases++;
    const size_t kw = gpk_type_size(t);
    const size_t vw = pay == P_V4 ? 4 : pay == P_V8 ? 8 : 0;
    const size_t nn = n ? n : 1;
    void *keys = malloc(nn * kw), *ref = malloc(nn * kw);
    void *vals = malloc(nn * 8), *refv = malloc(nn * 8);
    uint32_t *sig = malloc(nn * 4), *refs = malloc(nn * 4);
    if (!keys || !ref || !vals || !refv || !sig || !refs) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    gen_keys(t, dist, keys, n, seed);
    uint64_t st = seed ^ 0xABCDEF;
    for (size_t i = 0; i < n; i++) {
        if (vw == 4) ((uint32_t *)vals)[i] = (uint32_t)splitmix(&st);
        else ((uint64_t *)vals)[i] = splitmix(&st);
    }
    memcpy(ref, keys, n * kw);
    memcpy(refv, vals, n * (vw ? vw : 1));
    void *orig = malloc(nn * kw);
    if (!orig) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(orig, keys, n * kw);
    gpk_sort_reference(t, ref, vw, vw ? refv : NULL, pay == P_SIGMA ? refs : NULL, n, b);

    gpk__test_set("opencl_variant", !strncmp(variant, "paper", 5) ? "paper" : variant);
    gpk__test_set("opencl_transpose", !strcmp(variant, "paper-t") ? "1" : "0");
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = b;
    o.radix_bits = r;
    o.items = I;
    o.groups = G;
    o.scan_split = s;
    gpk_status stt;
    if (pay == P_NONE) stt = gpk_sort_keys(ctx, t, keys, n, &o);
    else if (pay == P_SIGMA) stt = gpk_sort_perm(ctx, t, keys, sig, n, &o);
    else stt = gpk_sort_pairs(ctx, t, keys, vw == 4 ? GPK_U32 : GPK_U64, vals, n, &o);

    const char *what = NULL;
    size_t at = 0;
    if (stt == GPK_EINVAL && I > 64 && strstr(gpk_last_error(ctx), "work-group limit")) {
        /* More items than this device runs in one work-group (NVIDIA: 256
         * for these kernels, PoCL: 4096): a clean refusal is the contract. */
        rejected++;
        if (memcmp(keys, orig, n * kw)) what = "untouched keys after the refusal";
    } else if (stt != GPK_OK) {
        what = "status";
    } else if (memcmp(keys, ref, n * kw)) {
        what = "keys";
        while (at < n && !memcmp((char *)keys + at * kw, (char *)ref + at * kw, kw)) at++;
    } else if (vw && memcmp(vals, refv, n * vw)) {
        what = "values";
        while (at < n && !memcmp((char *)vals + at * vw, (char *)refv + at * vw, vw)) at++;
    } else if (pay == P_SIGMA && n > 0 && memcmp(sig, refs, n * 4)) {
        what = "sigma";
        while (at < n && sig[at] == refs[at]) at++;
    }
    /* the onesweep variant must run where its constraints hold (default
     * items, digits of at most 8 bits) rather than fall back */
    if (!what && stt == GPK_OK && !strcmp(variant, "onesweep") && I == 0 && r <= 8 && n >= 16 &&
        dist != D_EQUAL && !strstr(gpk_last_sort_path(ctx), "onesweep")) {
        what = "variant";
        fprintf(stderr, "  ran %s\n", gpk_last_sort_path(ctx));
    }
    if (what) {
        failures++;
        fprintf(stderr, "FAIL %s: %s %s %s n=%zu b=%u r=%u I=%u G=%u s=%u: wrong %s at %zu (%s: %s)\n",
                variant, gpk_type_name(t), pay_name[pay], dist_name[dist], n, b, r, I, G, s, what, at,
                gpk_status_string(stt), stt ? gpk_last_error(ctx) : "");
    }
    free(keys);
    free(orig);
    free(ref);
    free(vals);
    free(refv);
    free(sig);
    free(refs);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    int quick = 0, bench = 0;
    hook_args(&argc, argv); /* e.g. opencl_vendor=2 (scripts/gpu-stages.sh ocl) */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--bench")) bench = 1;
    }
    if (!gpk_backend_available(GPK_BACKEND_OPENCL)) {
        printf("SKIP: no OpenCL device\n");
        return 77;
    }
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_OPENCL) != GPK_OK) {
        fprintf(stderr, "gpk_ctx_create(OPENCL): %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    printf("OpenCL device: %s [%s], %u compute units\n", info.device_name, info.platform, info.compute_units);
    const int nvidia = strstr(info.device_name, "NVIDIA") || strstr(info.device_name, "H100") ||
        strstr(info.device_name, "H200") || strstr(info.platform, "NVIDIA");

    /* onesweep: the inline-PTX kernels on NVIDIA GPUs, the portable ones
     * (one-item warps, slow) elsewhere; where its constraints fail (r > 8,
     * items not whole warps) the fast variant runs instead. */
    static const char *variants[] = {"fast", "paper", "paper-t", "global", "onesweep"};
    enum { NVAR = 5 };
    const size_t sizes_full[] = {2,   3,    5,    31,   32,   33,    127,   255,    256,
                                 257, 1000, 4095, 4096, 4097, 65535, 65537, 100003, (1u << 20) + 1};
    const size_t sizes_quick[] = {2, 3, 33, 257, 4097, 65537};
    const size_t *sizes = quick ? sizes_quick : sizes_full;
    const int nsizes = quick ? 6 : (int)(sizeof sizes_full / sizeof sizes_full[0]);
    uint64_t seed = 1;

    /* 1. tuned settings, every variant, type, payload and size; the
     * distributions rotate. */
    for (int v = 0; v < NVAR; v++)
        for (int ti = 0; ti < 6; ti++)
            for (int k = 0; k < nsizes; k++) {
                const int pay = (ti + k + v) % P_COUNT;
                int dist = (ti * 7 + k + v) % D_COUNT;
                if ((!strcmp(variants[v], "global") || (!strcmp(variants[v], "onesweep") && !nvidia)) &&
                    sizes[k] > 70000)
                    continue; /* slow paths, keep them short */
                check(ctx, variants[v], all_types[ti], pay, sizes[k], dist, 0, 0, 0, 0, 0, seed++);
            }
    printf("tuned settings: %d cases, %d failures\n", cases, failures);

    /* 2. radix widths 1..16 with b = 0 and fixed b, r not dividing b. */
    static const unsigned rs[] = {1, 2, 3, 5, 7, 8, 9, 11, 12, 13, 16};
    for (int v = 0; v < NVAR; v++)
        for (size_t ri = 0; ri < sizeof rs / sizeof rs[0]; ri++) {
            const unsigned r = rs[ri];
            const size_t n = quick ? 3001 : 20011;
            const gpk_type t = all_types[(v + ri) % 6];
            check(ctx, variants[v], t, (int)(ri % P_COUNT), n, D_UNIFORM, 0, r, 0, 0, 0, seed++);
            check(ctx, variants[v], t, (int)((ri + 1) % P_COUNT), n, D_FEW, 0, r, 0, 0, 0, seed++);
            check(ctx, variants[v], GPK_U32, (int)((ri + 2) % P_COUNT), n, D_FEW, 10, r, 0, 0, 0, seed++);
            check(ctx, variants[v], GPK_U64, (int)((ri + 3) % P_COUNT), n, D_UNIFORM, 37, r, 0, 0, 0, seed++);
            check(ctx, variants[v], GPK_F32, P_SIGMA, n, D_SPECIAL, 32, r, 0, 0, 0, seed++);
        }
    printf("radix widths: %d cases, %d failures\n", cases, failures);

    /* 3. the paper's tunables I, G, s (any values; the paper variants pad
     * N to a multiple of G*I). */
    static const unsigned tun_paper[][3] = {{1, 1, 1},     {1, 4, 8},   {3, 5, 7},
                                            {16, 16, 512}, {128, 2, 3}, {64, 33, 1000}};
    static const unsigned tun_fast[][3] = {{32, 1, 1}, {64, 3, 5},    {256, 0, 0},
                                           {96, 7, 2}, {1024, 2, 64}, {1, 5, 3}};
    for (int v = 0; v < NVAR; v++)
        for (int k = 0; k < 6; k++) {
            const unsigned *tu = v == 0 || v == 4 ? tun_fast[k] : tun_paper[k];
            for (int ti = 0; ti < 6; ti += quick ? 3 : 1) {
                const size_t n = (size_t)(quick ? 5003 : 30011) + (size_t)k * 17;
                check(ctx, variants[v], all_types[ti], (ti + k) % P_COUNT, n, (ti + k) % D_COUNT, 0, 0, tu[0],
                      tu[1], tu[2], seed++);
            }
            check(ctx, variants[v], GPK_U32, P_SIGMA, 2, D_UNIFORM, 0, 0, tu[0], tu[1], tu[2], seed++);
        }
    printf("tunables: %d cases, %d failures, %d refused cleanly (work-group limit)\n", cases, failures,
           rejected);

    /* 4. the PIC case (b = 10, r = 5), and equal keys (no pass at all). */
    for (int v = 0; v < NVAR; v++) {
        check(ctx, variants[v], GPK_U32, P_SIGMA, 100000, D_FEW, 10, 5, 0, 0, 0, seed++);
        check(ctx, variants[v], GPK_I64, P_SIGMA, 1000, D_EQUAL, 0, 0, 0, 0, 0, seed++);
        check(ctx, variants[v], GPK_F64, P_V8, 1000, D_EQUAL, 0, 0, 0, 0, 0, seed++);
    }

    /* 5. a bad tunable fails cleanly and leaves the arrays untouched. */
    {
        cases++;
        uint32_t k[4] = {4, 3, 2, 1}, v[4] = {0, 1, 2, 3};
        gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
        o.items = 1u << 30;
        gpk__test_set("opencl_variant", "fast");
        const gpk_status s = gpk_sort_pairs(ctx, GPK_U32, k, GPK_U32, v, 4, &o);
        if (s != GPK_EINVAL || k[0] != 4 || k[3] != 1 || v[0] != 0 || v[3] != 3) {
            failures++;
            fprintf(stderr, "FAIL: items = 2^30 gave %s (%s), arrays %s\n", gpk_status_string(s),
                    gpk_last_error(ctx), k[0] == 4 ? "untouched" : "changed");
        }
    }
    printf("total: %d cases, %d failures\n", cases, failures);

    if (bench) {
        for (int v = 0; v < 3; v++) {
            gpk__test_set("opencl_variant", variants[v]);
            gpk__test_set("opencl_transpose", "0");
            for (size_t n = 1u << 16; n <= (1u << 24); n <<= 4) {
                uint32_t *k = malloc(n * 4);
                double best = 1e30;
                for (int rep = 0; rep < 3; rep++) {
                    gen_keys(GPK_U32, D_UNIFORM, k, n, 99);
                    const double t0 = now_ms();
                    const gpk_status s = gpk_sort_keys(ctx, GPK_U32, k, n, NULL);
                    const double t = now_ms() - t0;
                    if (s != GPK_OK) fprintf(stderr, "bench: %s\n", gpk_last_error(ctx));
                    if (t < best) best = t;
                }
                printf("bench %-6s u32 n=%-9zu %9.2f ms %8.1f Mkeys/s (host API, transfers included)\n",
                       variants[v], n, best, n / best / 1e3);
                free(k);
            }
        }
    }
    gpk_ctx_destroy(ctx);
    return failures ? 1 : 0;
}
