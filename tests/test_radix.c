/* Every radix backend against the reference sort: all key types, many
 * sizes and distributions, keys / permutation (u32 and u64 sigma) / pairs,
 * several (b, r).
 * Usage: test_radix BACKEND [quick|threads|paths|vector]. threads (the
 * CPU, for ThreadSanitizer: make tsan-check): only the sorts of teams of
 * two and three threads at each SIMD level, the quick ladder, and the
 * presorted check of two threads. paths and vector split the whole test in
 * two for ctest to run side by side: sections 1-8, and the CPU's sections
 * 9-11. GPK_TEST_SMALL=1: sizes up to 2^20 + 7. Exits 77 (skipped) when
 * the backend has no device here, unless GPK_REQUIRE_<BACKEND>=1 says it
 * must run. */
#define _GNU_SOURCE /* setenv; sched_setaffinity (the team cap check) */
#include "gpk/gen.h"
#include "gpk/sort.h"
#include "sort/radix_cpu_hooks.h"
#include "sort/vector_sort_quick.h"
#include "testutil.h"
#include "hookargs.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#ifdef __linux__
#include <sched.h>
#endif

/* MODE_KEYS_TO: gpk_sort_keys_to from the input into a fresh (poisoned)
 * buffer; the input must come out unchanged. */
typedef enum { MODE_KEYS, MODE_PERM, MODE_PAIRS32, MODE_PAIRS64, MODE_PERM64, MODE_KEYS_TO, MODE_COUNT } mode;
static const char *mode_name[] = {"keys", "perm", "pairs-u32", "pairs-u64", "perm64", "keys-to"};

static gpk_ctx *ctx;
static uint64_t seed_base;
static const char *cpu_path; /* the CPU path forced (cpu_radix_path), for the messages */
static const char *cpu_simd; /* the CPU level forced (cpu_sort_simd), for the messages */
/* When set, about 9 in 10 keys get fixed top bits (the rest keep theirs),
 * so MSD buckets of the CPU hybrid are larger than one thread's buffers.
 * 1: one top-12-bit value: one bucket holds most keys and takes a second,
 * team-wide MSD level; 2: one top-20 (4-byte keys) or 52-bit value: too few
 * bits are left in it for another level, the team's LSD passes sort it;
 * 3 and 4: as 1 and 2 but with 16 values of the top 4 bits, so 16
 * mid-sized buckets, each split by one thread (its own MSD pass, or its
 * own LSD passes). */
static int skew_input;
/* When set, the keys' bit range is shaped for the CUDA backend's range
 * detection (detect_plan): 1: low byte zero (the passes are the upper rows
 * of the whole-range plan); 2: top byte zero (the lower rows); 3: the first
 * 70000 keys 10-bit, the rest as drawn (a narrow sample of a wide input). */
static int shape_input;
/* When set, every other key gets its top bit flipped: floats of both
 * signs with a narrow exponent range, like normal(0, 1). */
static int sign_mix;
/* When set (8-byte keys), only bits 0-19, 38 and 50 vary (exponent of 1.0
 * above them): inside a bucket of the CPU hybrid the top two 11-bit digits
 * of the range hold a few values over many keys, so the insertion finish
 * after the top digits' passes (sort_rec) runs out of moves and the MSD
 * way takes over from where it stopped. 2: as 1, but bit 38 only in every
 * 64th key, so the finish nearly fits its budget. */
static int crowd_input;
/* When set (8-byte keys), keys in [1, 2) (1: any mantissa; 2: all 1.0)
 * but every 64th from index 33 (odd: the CPU hybrid samples every 16th
 * key below 2^20 keys) an infinity, NaN, signed zero, huge, tiny or a
 * neighbour of [1, 2): outside the sampled plan's prefix (first_plan). */
static int outlier_input;
/* When set, passes with one digit: 1: an interior byte is one constant
 * in every key (bits 8-15 of 4-byte keys, 16-23 and 40-47 of 8-byte ones),
 * so a pass (or two) has a single digit, which the CUDA backend copies or
 * drops; 2: the top byte is constant over runs of 2^14 keys, so whole tiles
 * of the last pass share their digit (the CUDA pass skips their ranking). */
static int hole_input;
/* When set, the keys at swap_at - 1 and swap_at trade places after the
 * other modifiers: a sorted input with one pair out of order. */
static size_t swap_at;
static int swap_same; /* the last swap traded two equal keys: nothing moved */
/* The largest case run: GPK_TEST_SMALL=1 (the sanitizer tiers) leaves out
 * the sizes past 2^20 + 7, whose paths the smaller ones take too. */
static size_t max_n = SIZE_MAX;
/* The algorithm every case asks for (GPK_SORT_AUTO but in section 6). */
static gpk_sort_algo force_algo = GPK_SORT_AUTO;

/* Natural order as sort.h promises it: -0 < +0, every NaN last. */
static int nat_le(gpk_type t, const void *a, const void *b)
{
    switch (t) {
    case GPK_U32: return *(const uint32_t *)a <= *(const uint32_t *)b;
    case GPK_I32: return *(const int32_t *)a <= *(const int32_t *)b;
    case GPK_U64: return *(const uint64_t *)a <= *(const uint64_t *)b;
    case GPK_I64: return *(const int64_t *)a <= *(const int64_t *)b;
    case GPK_F32: {
        float x = *(const float *)a, y = *(const float *)b;
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
        if (x == 0 && y == 0) return signbit(x) || !signbit(y);
        return x <= y;
    }
    case GPK_F64: {
        double x = *(const double *)a, y = *(const double *)b;
        if (isnan(y)) return 1;
        if (isnan(x)) return 0;
        if (x == 0 && y == 0) return signbit(x) || !signbit(y);
        return x <= y;
    }
    }
    return 0;
}

static int run_case(gpk_type t, gpk_dist d, size_t n, mode m, unsigned b, unsigned r, unsigned gen_param)
{
    if (n > max_n) return 0; /* not run */
    size_t kw = gpk_type_size(t), vw = m == MODE_PAIRS64 ? 8 : (m == MODE_PAIRS32 ? 4 : 0);
    uint64_t seed = seed_base ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)t << 40) ^ ((uint64_t)d << 48) ^
        ((uint64_t)m << 56) ^ (b * 131u + r);
    char *in = malloc(n * kw + 1), *got = malloc(n * kw + 1), *want = malloc(n * kw + 1);
    char *vin = malloc(n * 8 + 1), *vgot = malloc(n * 8 + 1), *vwant = malloc(n * 8 + 1);
    uint32_t *sg = malloc(n * 4 + 4), *sw = malloc(n * 4 + 4);
    uint64_t *sg64 = malloc(n * 8 + 8);
    char *orig = malloc(n * kw + 1);
    const int perm = m == MODE_PERM || m == MODE_PERM64;
    int ok = 0;
    if (!in || !got || !want || !vin || !vgot || !vwant || !sg || !sw || !sg64 || !orig) {
        TU_CHECK(0, "out of host memory for n=%zu", n);
        goto out;
    }
    if (gpk_generate(t, d, in, n, seed, gen_param) != GPK_OK) {
        TU_CHECK(0, "generate %s %s n=%zu", gpk_type_name(t), gpk_dist_name(d), n);
        goto out;
    }
    for (size_t i = 0; skew_input && i < n; i++) {
        if ((i * 2654435761u) % 10 == 0) continue;
        const int wide = skew_input % 2 == 1, many = skew_input >= 3;
        if (kw == 4) {
            uint32_t *k = (uint32_t *)in + i, low = wide ? 0x000FFFFFu : 0xFFFu;
            uint32_t top = many ? (uint32_t)(i % 16) << 28 : 0x50000000u;
            *k = (*k & low) | ((0x0A5C3E1Du | top) & ~low);
        } else {
            uint64_t *k = (uint64_t *)in + i;
            uint64_t low = wide ? 0x000FFFFFFFFFFFFFull : 0xFFFull;
            uint64_t top = many ? (uint64_t)(i % 16) << 60 : 0x5000000000000000ull;
            *k = (*k & low) | ((0x0A5C3E1D2B4F6071ull | top) & ~low);
        }
    }
    for (size_t i = 0; hole_input && i < n; i++) {
        if (kw == 4) {
            uint32_t *k = (uint32_t *)in + i;
            if (hole_input == 1) *k = (*k & ~0x0000FF00u) | 0x00005A00u;
            else *k = (*k & 0x00FFFFFFu) | (uint32_t)((i >> 14) * 37 & 0xFF) << 24;
        } else {
            uint64_t *k = (uint64_t *)in + i;
            if (hole_input == 1) *k = (*k & ~0x0000FF0000FF0000ull) | 0x00003C0000A50000ull;
            else *k = (*k & 0x00FFFFFFFFFFFFFFull) | (uint64_t)((i >> 14) * 37 & 0xFF) << 56;
        }
    }
    for (size_t i = 0; crowd_input && kw == 8 && i < n; i++) {
        uint64_t *k = (uint64_t *)in + i, low = 0xFFFFFull | 1ull << 50;
        if (crowd_input == 1 || i % 64 == 0) low |= 1ull << 38;
        *k = (*k & low) | 0x3FF0000000000000ull;
    }
    for (size_t i = 0; outlier_input && kw == 8 && i < n; i++) {
        static const double odd[] = {-INFINITY, INFINITY, NAN, -NAN, -0.0, 0.0,
                                     1e300,     -1e-300,  3.0, 0.5,  -1.5};
        uint64_t *k = (uint64_t *)in + i;
        if (i % 64 == 33) memcpy(k, &odd[(i / 64) % (sizeof odd / sizeof odd[0])], 8);
        else *k = (outlier_input == 1 ? *k & 0x000FFFFFFFFFFFFFull : 0) | 0x3FF0000000000000ull;
    }
    for (size_t i = 1; sign_mix && i < n; i += 2) {
        if (kw == 4) ((uint32_t *)in)[i] ^= 0x80000000u;
        else ((uint64_t *)in)[i] ^= 0x8000000000000000ull;
    }
    for (size_t i = 0; shape_input && i < n; i++) {
        const uint64_t keep = shape_input == 1 ? ~(uint64_t)0xFF
            : shape_input == 2                 ? (kw == 4 ? 0x00FFFFFFull : 0x00FFFFFFFFFFFFFFull)
            : i < 70000                        ? 0x3FFull
                                               : ~(uint64_t)0;
        if (kw == 4) ((uint32_t *)in)[i] &= (uint32_t)keep;
        else ((uint64_t *)in)[i] &= keep;
    }
    if (swap_at && swap_at < n) {
        char tmp[8];
        swap_same = !memcmp(in + (swap_at - 1) * kw, in + swap_at * kw, kw);
        memcpy(tmp, in + (swap_at - 1) * kw, kw);
        memcpy(in + (swap_at - 1) * kw, in + swap_at * kw, kw);
        memcpy(in + swap_at * kw, tmp, kw);
    }
    for (size_t i = 0; i < n; i++) { /* values that identify their origin */
        if (vw == 4) ((uint32_t *)vin)[i] = (uint32_t)(i * 2654435761u);
        if (vw == 8) ((uint64_t *)vin)[i] = i * 0x9E3779B97F4A7C15ull + 7;
    }
    memcpy(got, in, n * kw);
    memcpy(want, in, n * kw);
    memcpy(orig, in, n * kw);
    if (m == MODE_KEYS_TO) memset(got, 0xAB, n * kw); /* every key must be written */
    memcpy(vgot, vin, n * vw);
    memcpy(vwant, vin, n * vw);
    memset(sg, 0xAB, n * 4); /* poison: every entry must be written */
    memset(sg64, 0xAB, n * 8);

    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = b;
    o.radix_bits = r;
    o.algorithm = force_algo;
    gpk_status s;
    if (m == MODE_KEYS) s = gpk_sort_keys(ctx, t, got, n, &o);
    else if (m == MODE_KEYS_TO) s = gpk_sort_keys_to(ctx, t, in, got, n, &o);
    else if (m == MODE_PERM) s = gpk_sort_perm(ctx, t, got, sg, n, &o);
    else if (m == MODE_PERM64) s = gpk_sort_perm64(ctx, t, got, sg64, n, &o);
    else s = gpk_sort_pairs(ctx, t, got, vw == 4 ? GPK_U32 : GPK_U64, vgot, n, &o);
    gpk_status rs = gpk_sort_reference(t, want, vw, vwant, perm ? sw : NULL, n, b);

    char what[224];
    const char *path = cpu_path;
    snprintf(what, sizeof what, "%s %s%s%s%s n=%zu %s b=%u r=%u%s%s%s%s", gpk_type_name(t), gpk_dist_name(d),
             sign_mix ? " sign-mixed" : "",
             skew_input            ? " skewed"
                 : crowd_input     ? " crowded"
                 : outlier_input   ? " outliers"
                 : hole_input == 1 ? " one-digit pass"
                 : hole_input == 2 ? " one-digit tiles"
                                   : "",
             shape_input ? " shaped" : "", n, mode_name[m], b, r, path ? " cpu_radix_path=" : "",
             path ? path : "", cpu_simd ? " cpu_sort_simd=" : "", cpu_simd ? cpu_simd : "");
    TU_CHECK(s == GPK_OK, "%s: status %s: %s", what, gpk_status_string(s), gpk_last_error(ctx));
    TU_CHECK(rs == GPK_OK, "%s: reference failed", what);
    if (s != GPK_OK || rs != GPK_OK) goto out;

    size_t bad = tu_first_difference(got, want, n, kw);
    TU_CHECK(bad == n, "%s: keys differ from the reference at %zu", what, bad);
    if (m == MODE_KEYS_TO) TU_CHECK(memcmp(in, orig, n * kw) == 0, "%s: the input changed", what);
    if (vw) {
        bad = tu_first_difference(vgot, vwant, n, vw);
        TU_CHECK(bad == n, "%s: values differ from the reference (stability) at %zu", what, bad);
    }
    if (perm) {
        bad = n;
        for (size_t i = 0; i < n && bad == n; i++) {
            const uint64_t si = m == MODE_PERM ? sg[i] : sg64[i];
            if (si != sw[i] || si >= n || memcmp(got + i * kw, in + (size_t)si * kw, kw)) bad = i;
        }
        TU_CHECK(bad == n, "%s: sigma wrong at %zu", what, bad);
    }
    if (b == 0) { /* independent of the reference: ascending natural order */
        bad = n;
        for (size_t i = 1; i < n && bad == n; i++)
            if (!nat_le(t, got + (i - 1) * kw, got + i * kw)) bad = i;
        TU_CHECK(bad == n, "%s: not in natural order at %zu", what, bad);
    }
    ok = 1;
out:
    free(in);
    free(got);
    free(want);
    free(vin);
    free(vgot);
    free(vwant);
    free(sg);
    free(sw);
    free(sg64);
    free(orig);
    return ok;
}

#ifdef __linux__
/* The CPU team fits the CPUs this process may run on: the rule on given
 * machines, then this process pinned to one CPU, where a sort asking for
 * 4 threads gets 1 however many are online, and unpinned again, between
 * 1 and 4. */
static void team_cap_checks(void)
{
    static const struct {
        int threads;
        long online, usable, others;
        int want;
    } fits[] = {
        {4, 16, 16, 1, 4}, /* an idle many-core machine but one process */
        {4, 16, 2, 1, 1},  /* pinned to 2 of 16 beside one busy process */
        {4, 16, 2, 0, 2},  /* pinned, nothing else running */
        {2, 2, 2, 1, 1},   /* two cores, one busy */
        {8, 64, 8, 30, 4}, /* 8 of 64 beside 30 threads: 4 charged here */
        {4, 2, 2, 5, 1},   /* more busy than cores: one thread still */
    };
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        const int got =
            gpk__radix_cpu_team_fit(fits[i].threads, fits[i].online, fits[i].usable, fits[i].others);
        TU_CHECK(got == fits[i].want, "%d threads on %ld of %ld CPUs beside %ld: a team of %d, not %d",
                 fits[i].threads, fits[i].usable, fits[i].online, fits[i].others, got, fits[i].want);
    }
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) return;
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &all)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    gpk__radix_cpu_ignore_load(0);
    if (sched_setaffinity(0, sizeof one, &one) == 0) {
        const int pinned = gpk__radix_cpu_team_cap(4);
        TU_CHECK(pinned == 1, "pinned to CPU %d: a team of %d", first, pinned);
        TU_CHECK(sched_setaffinity(0, sizeof all, &all) == 0, "affinity not restored");
    }
    const int free_team = gpk__radix_cpu_team_cap(4);
    TU_CHECK(free_team >= 1 && free_team <= 4, "unpinned: a team of %d", free_team);
    gpk__radix_cpu_ignore_load(1);
}
#endif

/* The CPU path keys alone of kw bytes take at SIMD level `level` (0
 * portable, 1 avx2, 2 avx512) on a team of `team` threads (radix_cpu.c,
 * vector_keys_job, quick_keys_job): 4 the AVX2 quicksort
 * ("radix-vector-avx2"), 3 the AVX-512 quicksort ("radix-vector-avx512"), 1 the vector sorter ("radix-vector"), 0 the
 * radix passes (no "vector" in the path), 2 any (8-byte keys: a quicksort,
 * the vector sorter or the radix passes, by a sample). A quicksort takes the whole array on a team of one and
 * each half on a team of two. Teams of three and more take the radix
 * passes; the sizes here stay below the two-thread team's limit
 * (VECTOR_PAIR_BYTES). */
static size_t avx512_bytes; /* gpk__radix_cpu_avx512_bytes at the level forced now */
static size_t avx2_bytes;   /* gpk__radix_cpu_avx2_bytes at the level forced now */
static int vector_expected(int level, size_t kw, size_t n, int team)
{
    const int in_cache = n * kw <= ((size_t)1 << 20);
    /* 8-byte keys: a quicksort or the radix passes, by a sample */
    if (kw == 8 && team <= 2 && (n * kw <= avx512_bytes || n * kw <= avx2_bytes)) return 2;
    if (n * kw <= avx512_bytes && team <= 2) return 3;
    if (n * kw <= avx2_bytes && team <= 2) return 4;
    if (level == 0 || (level == 1 && (kw != 4 || in_cache)) || team > 2) return 0;
    return level == 2 && in_cache && kw == 8 ? 2 : 1;
}

/* The path name of vector_expected's answer (not 2). */
static const char *vector_path(int want)
{
    return want == 4 ? "radix-vector-avx2"
        : want == 3  ? "radix-vector-avx512"
        : want       ? "radix-vector"
                     : "radix";
}

/* The CPU path pairs and permutations (mode m) of n keys of kw bytes take
 * at SIMD level `level` on a team of one thread (radix_cpu.c,
 * vector_items_wins): 1 the vector sorter, 0 the radix sort, 2 either
 * (8-byte keys: only where their range is narrow). */
static int vector_items_expected(int level, gpk_type t, size_t n, mode m)
{
    const int perm = m == MODE_PERM || m == MODE_PERM64;
    const size_t vw = m == MODE_PAIRS64 || m == MODE_PERM64 ? 8 : 4, kw = gpk_type_size(t);
    if (level < 2 || n < 2) return 0;
    if (kw == 4 && perm && (n <= ((size_t)1 << 22) || t == GPK_F32)) return 1;
    if (n * (kw + vw) <= ((size_t)1 << 20)) return 0;
    if (!perm) return n * vw <= ((size_t)4 << 20) ? (kw == 4 ? 1 : 2) : 0;
    return n <= ((size_t)1 << 22) ? 2 : 0;
}

/* Descending order of a pairs or permutation sort (mode m, not keys),
 * checked on its own: the keys a permutation of the input (the values
 * carry each key's index), in descending natural order (NaN last, +0
 * before -0), and equal keys in their input order. */
static int run_desc_case(gpk_type t, gpk_dist d, size_t n, mode m)
{
    if (n > max_n) return 0; /* not run */
    const size_t kw = gpk_type_size(t), vw = m == MODE_PAIRS32 || m == MODE_PERM ? 4 : 8;
    const uint64_t seed = seed_base ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)t << 40) ^
        ((uint64_t)d << 48) ^ ((uint64_t)m << 56) ^ 0xDE5C;
    char *in = malloc(n * kw + 1), *got = malloc(n * kw + 1), *idx = malloc(n * vw + 1),
         *seen = calloc(n + 1, 1);
    int ok = 0;
    char what[160];
    snprintf(what, sizeof what, "%s %s%s n=%zu %s descending cpu_sort_simd=%s", gpk_type_name(t),
             gpk_dist_name(d), sign_mix ? " sign-mixed" : "", n, mode_name[m], cpu_simd ? cpu_simd : "");
    if (!in || !got || !idx || !seen || gpk_generate(t, d, in, n, seed, 0) != GPK_OK) {
        TU_CHECK(0, "%s: no input", what);
        goto out;
    }
    for (size_t i = 1; sign_mix && i < n; i += 2) {
        if (kw == 4) ((uint32_t *)in)[i] ^= 0x80000000u;
        else ((uint64_t *)in)[i] ^= 0x8000000000000000ull;
    }
    memcpy(got, in, n * kw);
    for (size_t i = 0; i < n; i++) {
        if (vw == 4) ((uint32_t *)idx)[i] = (m == MODE_PERM) ? 0xABABABABu : (uint32_t)i;
        else ((uint64_t *)idx)[i] = (m == MODE_PERM64) ? 0xABABABABABABABABull : i;
    }
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = 1;
    gpk_status s = m == MODE_PERM ? gpk_sort_perm(ctx, t, got, (uint32_t *)idx, n, &o)
        : m == MODE_PERM64        ? gpk_sort_perm64(ctx, t, got, (uint64_t *)idx, n, &o)
                                  : gpk_sort_pairs(ctx, t, got, vw == 4 ? GPK_U32 : GPK_U64, idx, n, &o);
    TU_CHECK(s == GPK_OK, "%s: status %s: %s", what, gpk_status_string(s), gpk_last_error(ctx));
    if (s != GPK_OK) goto out;
    size_t bad = n;
    for (size_t j = 0; j < n && bad == n; j++) {
        const uint64_t i = vw == 4 ? ((uint32_t *)idx)[j] : ((uint64_t *)idx)[j];
        const char *k = got + j * kw, *prev = got + (j - 1) * kw;
        if (i >= n || seen[i] || memcmp(k, in + i * kw, kw)) bad = j;
        else if (j > 0) {
            const uint64_t pi = vw == 4 ? ((uint32_t *)idx)[j - 1] : ((uint64_t *)idx)[j - 1];
            const int nan_k = t == GPK_F32 ? isnan(*(const float *)k)
                : t == GPK_F64             ? isnan(*(const double *)k)
                                           : 0;
            const int nan_p = t == GPK_F32 ? isnan(*(const float *)prev)
                : t == GPK_F64             ? isnan(*(const double *)prev)
                                           : 0;
            if (!nan_k && (nan_p || !nat_le(t, k, prev))) bad = j; /* descending, NaN last */
            if (!memcmp(k, prev, kw) && pi > i) bad = j;           /* stable */
        }
        if (i < n) seen[i] = 1;
    }
    TU_CHECK(bad == n, "%s: wrong at %zu", what, bad);
    ok = bad == n;
out:
    free(in);
    free(got);
    free(idx);
    free(seen);
    return ok;
}

static gpk_dist all_dists[] = {GPK_DIST_UNIFORM, GPK_DIST_RANDOM_BITS, GPK_DIST_FEW_BITS,      GPK_DIST_EQUAL,
                               GPK_DIST_SORTED,  GPK_DIST_REVERSE,     GPK_DIST_FLOAT_SPECIALS};
#define NDISTS (sizeof all_dists / sizeof all_dists[0])

int main(int argc, char **argv)
{
    hook_args(&argc, argv);
    const int threads_only = argc > 2 && strcmp(argv[2], "threads") == 0;
    const int quick = threads_only || (argc > 2 && strcmp(argv[2], "quick") == 0);
    const int paths_only = argc > 2 && strcmp(argv[2], "paths") == 0;
    const int vector_only = argc > 2 && strcmp(argv[2], "vector") == 0;
    gpk_backend be;
    const char *ocl_vendor = hook_arg("opencl_vendor"), *ocl_variant = hook_arg("opencl_variant");
    const int ocl_emulate = ocl_vendor && !strcmp(ocl_vendor, "emulate");
    const int ocl_ptx = ocl_vendor && !strcmp(ocl_vendor, "2");
    /* a vendor path asked for must run, not skip */
    if (argc > 1 && !strcmp(argv[1], "opencl") && (ocl_emulate || ocl_ptx) &&
        gpk_backend_available(GPK_BACKEND_OPENCL))
        setenv("GPK_REQUIRE_OPENCL", "1", 1);
    const int rc = tu_open_backend("test_radix", argc, argv, &ctx, &be);
    if (rc >= 0) return rc;
    /* The CPU team as large as GPK_THREADS asks, however busy the machine:
     * the team's passes are what the thread counts test. */
    if (be == GPK_BACKEND_CPU) gpk__radix_cpu_ignore_load(1);
    seed_base = tu_seed();
    if (getenv("GPK_TEST_SMALL") && *getenv("GPK_TEST_SMALL") == '1') {
        max_n = ((size_t)1 << 20) + 7;
        printf("GPK_TEST_SMALL=1: sizes up to 2^20 + 7\n");
    }

    /* 1. Every type x distribution x mode over the size ladder. */
    size_t sizes[64];
    int ns = 0;
    size_t fixed[] = {0, 1, 2, 3, 5, 7, 31, 97, 1021, 4099, 65537};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) sizes[ns++] = fixed[i];
    int ks[] = {4, 8, 10, 12, 16};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        size_t p = (size_t)1 << ks[i];
        sizes[ns++] = p - 1;
        sizes[ns++] = p;
        sizes[ns++] = p + 1;
    }
    if (threads_only || vector_only) goto threaded; /* sections 9-11 */
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (size_t di = 0; di < NDISTS; di++)
            for (int si = 0; si < ns; si++) {
                if (quick && si % 3) continue;
                mode m = (mode)((si + di + t) % MODE_COUNT);
                run_case((gpk_type)t, all_dists[di], sizes[si], m, 0, 0, 0);
            }

    /* 2. Explicit (b, r), including r not dividing b, r = 1 and r = 16. */
    struct {
        gpk_type t;
        unsigned b, r, gen_bits;
    } br[] = {{GPK_U32, 10, 5, 10},  {GPK_U32, 10, 3, 10},  {GPK_U32, 10, 0, 10}, {GPK_U32, 30, 5, 30},
              {GPK_U32, 32, 8, 32},  {GPK_U32, 32, 7, 32},  {GPK_U32, 13, 1, 13}, {GPK_U32, 32, 16, 32},
              {GPK_U32, 20, 11, 20}, {GPK_U32, 12, 5, 16},  {GPK_U32, 0, 1, 6},   {GPK_U32, 0, 16, 32},
              {GPK_U32, 0, 9, 32},   {GPK_U64, 64, 8, 64},  {GPK_U64, 40, 6, 40}, {GPK_U64, 64, 16, 64},
              {GPK_U64, 0, 11, 64},  {GPK_U64, 17, 4, 20},  {GPK_I32, 32, 5, 32}, {GPK_I32, 0, 3, 32},
              {GPK_F32, 0, 7, 32},   {GPK_F32, 32, 12, 32}, {GPK_I64, 0, 13, 64}, {GPK_F64, 0, 6, 64},
              {GPK_F64, 64, 10, 64}};
    size_t br_sizes[] = {1, 2, 127, 1000, 4096, 100003};
    for (size_t i = 0; i < sizeof br / sizeof br[0]; i++)
        for (size_t si = 0; si < sizeof br_sizes / sizeof br_sizes[0]; si++)
            for (int m = 0; m < MODE_COUNT; m++) {
                if (quick && (si + m) % 2) continue;
                gpk_dist d = br[i].gen_bits < 8 * gpk_type_size(br[i].t)
                    ? GPK_DIST_FEW_BITS
                    : (m % 2 ? GPK_DIST_RANDOM_BITS : GPK_DIST_UNIFORM);
                run_case(br[i].t, d, br_sizes[si], (mode)m, br[i].b, br[i].r, br[i].gen_bits);
            }

    /* 2b. Passes and tiles of one digit (hole_input), every type and mode,
     * from one tile to past the CUDA small path and (not quick) past the
     * CUDA range detection's threshold, where such passes are dropped. */
    {
        size_t hsizes[] = {4095, 6145, 100003, ((size_t)1 << 20) + 3, ((size_t)1 << 23) + 5};
        /* 2^23 + 5 only where it means something: the CUDA detection */
        const int nh = quick ? 3 : be == GPK_BACKEND_CUDA ? 5 : 4;
        for (hole_input = 1; hole_input <= 2; hole_input++)
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (int si = 0; si < nh; si++)
                    for (int m = 0; m < MODE_COUNT; m++) {
                        if (si >= 3 && (t + m + si + hole_input) % 4) continue;
                        run_case((gpk_type)t, (m + si) % 2 ? GPK_DIST_RANDOM_BITS : GPK_DIST_UNIFORM,
                                 hsizes[si], (mode)m, 0, 0, 0);
                    }
        hole_input = 0;
    }

    /* 3. Large inputs: 2^20 + 1 of every type, 2^24 of u32 (keys and pairs). */
    if (!quick) {
        for (int t = GPK_U32; t <= GPK_F64; t++)
            run_case((gpk_type)t, GPK_DIST_RANDOM_BITS, ((size_t)1 << 20) + 1,
                     t % 2 ? MODE_PERM64 : MODE_PERM, 0, 0, 0);
        run_case(GPK_U32, GPK_DIST_UNIFORM, (size_t)1 << 24, MODE_KEYS, 0, 0, 0);
        run_case(GPK_U32, GPK_DIST_FEW_BITS, (size_t)1 << 24, MODE_PAIRS32, 0, 0, 10);
    }

    /* 4. The CPU backend's three paths (hybrid, LSD, in cache), each forced
     * over the size ladder (the hybrid normally starts at 2^18 keys, the
     * in-cache sort ends at 1 MiB), and AUTO about and above the threshold:
     * every type and mode, skewed inputs whose big bucket the team sorts,
     * all-equal keys. */
    if (be == GPK_BACKEND_CPU) {
        const char *paths[] = {"hybrid", "lsd", "cache"};
        gpk_dist some[] = {GPK_DIST_UNIFORM, GPK_DIST_FEW_BITS, GPK_DIST_REVERSE, GPK_DIST_FLOAT_SPECIALS};
        for (int pi = 0; pi < 3; pi++) {
            gpk__test_set("cpu_radix_path", paths[pi]);
            cpu_path = paths[pi];
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (size_t di = 0; di < sizeof some / sizeof some[0]; di++)
                    for (int si = 0; si < ns; si++) {
                        if ((quick || pi == 1) && (si + di) % 3) continue;
                        mode m = (mode)((si + di + t) % MODE_COUNT);
                        /* The hybrid's buckets of keys alone: by the
                         * quicksort the machine has (limits unset), by
                         * the AVX2 one, or by sort_rec's passes (both
                         * limits 0), in turn by size, so that each type
                         * in each keys mode meets all three over the
                         * distributions. */
                        const int buckets = pi == 0 ? si % 3 : 0;
                        gpk__test_set("cpu_avx512_sort_bytes", buckets ? "0" : NULL);
                        gpk__test_set("cpu_avx2_sort_bytes", buckets == 2 ? "0" : NULL);
                        const char *bucket_paths[] = {"hybrid", "hybrid, AVX2 quicksort buckets",
                                                      "hybrid, sort_rec buckets"};
                        cpu_path = pi == 0 ? bucket_paths[buckets] : paths[pi];
                        run_case((gpk_type)t, some[di], sizes[si], m, 0, 0, 20);
                    }
            gpk__test_set("cpu_avx512_sort_bytes", NULL);
            gpk__test_set("cpu_avx2_sort_bytes", NULL);
            size_t skew_sizes[] = {100003, ((size_t)1 << 17) + 1};
            for (skew_input = 1; skew_input <= 4; skew_input++)
                for (int t = GPK_U32; t <= GPK_F64; t++)
                    for (size_t si = 0; si < 2; si++)
                        for (int m = 0; m < MODE_COUNT; m++)
                            if ((!quick && pi == 0) || (t + m + (int)si + skew_input) % 4 == 0)
                                run_case((gpk_type)t, GPK_DIST_UNIFORM, skew_sizes[si], (mode)m, 0, 0, 0);
            skew_input = 0;
            /* 8-byte keys crowding below the top digits of a bucket, about
             * the size (NEARLY_MIN_KEYS, 1024) where the hybrid's buckets
             * start taking the top digits and an insertion sort. */
            size_t crowd_sizes[] = {1023, 2047, 2048, 2049, 4099, 65537, 100003, ((size_t)1 << 18) + 1};
            for (crowd_input = 1; crowd_input <= 2; crowd_input++)
                for (int t = GPK_U64; t <= GPK_F64; t++)
                    for (size_t si = 0; si < sizeof crowd_sizes / sizeof crowd_sizes[0]; si++)
                        for (int m = 0; m < MODE_COUNT; m++)
                            if ((!quick && pi == 0) || (t + m + (int)si + crowd_input) % 3 == 0)
                                run_case((gpk_type)t, GPK_DIST_RANDOM_BITS, crowd_sizes[si], (mode)m, 0, 0,
                                         0);
            crowd_input = 0;
            /* 8-byte keys outside the sample's prefix, about FIRST_MIN_KEYS
             * (64) where the hybrid's sampled first level starts. */
            size_t outlier_sizes[] = {63, 64, 65, 1021, 4099, 100003};
            for (outlier_input = 1; outlier_input <= 2; outlier_input++)
                for (int t = GPK_U64; t <= GPK_F64; t++)
                    for (size_t si = 0; si < sizeof outlier_sizes / sizeof outlier_sizes[0]; si++)
                        for (int m = 0; m < MODE_COUNT; m++)
                            if ((!quick && pi == 0) || (t + m + (int)si + outlier_input) % 3 == 0)
                                run_case((gpk_type)t, GPK_DIST_UNIFORM, outlier_sizes[si], (mode)m, 0, 0, 0);
            outlier_input = 0;
            /* b given, r tuned: the hybrid's first count rides on the
             * detection read at bits [b - 11, b). */
            size_t bsizes[] = {4099, 100003, ((size_t)1 << 18) + 3};
            for (size_t si = 0; si < 3; si++)
                for (int m = 0; m < MODE_COUNT; m++) {
                    run_case(GPK_U32, GPK_DIST_FEW_BITS, bsizes[si], (mode)m, 20, 0, 20);
                    run_case(GPK_U64, GPK_DIST_FEW_BITS, bsizes[si], (mode)m, 40, 0, 40);
                    run_case(GPK_I32, GPK_DIST_UNIFORM, bsizes[si], (mode)m, 32, 0, 32);
                }
            gpk__test_set("cpu_radix_path", NULL);
            cpu_path = NULL;
        }
        if (!quick) {
            size_t big[] = {((size_t)1 << 20) + 1, ((size_t)1 << 21) - 1, (size_t)1 << 22};
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (int m = 0; m < MODE_COUNT; m++)
                    run_case((gpk_type)t, m % 2 ? GPK_DIST_RANDOM_BITS : GPK_DIST_UNIFORM, big[(t + m) % 3],
                             (mode)m, 0, 0, 0);
            for (skew_input = 1; skew_input <= 4; skew_input++)
                for (int m = 0; m < MODE_COUNT; m++) {
                    run_case(GPK_U32, GPK_DIST_UNIFORM, ((size_t)1 << 21) + 3, (mode)m, 0, 0, 0);
                    run_case(GPK_F64, GPK_DIST_UNIFORM, ((size_t)1 << 20) + 7, (mode)m, 0, 0, 0);
                }
            skew_input = 0;
            /* Floats whose exponents crowd a few top values (GAUSSIAN: the
             * mean of 4 uniforms in [0, 1); with sign_mix of both signs):
             * the hybrid's first level splits the heavy top values
             * (split_plan in radix_cpu.c). */
            for (sign_mix = 0; sign_mix <= 1; sign_mix++)
                for (int m = 0; m < MODE_COUNT; m++) {
                    run_case(GPK_F64, GPK_DIST_GAUSSIAN, ((size_t)1 << 20) + 7, (mode)m, 0, 0, 0);
                    run_case(GPK_F64, GPK_DIST_UNIFORM, ((size_t)1 << 21) + 1, (mode)m, 0, 0, 0);
                    run_case(GPK_F32, GPK_DIST_GAUSSIAN, ((size_t)1 << 21) + 3, (mode)m, 0, 0, 0);
                }
            sign_mix = 0;
            run_case(GPK_U32, GPK_DIST_EQUAL, ((size_t)1 << 20) + 1, MODE_PERM, 0, 0, 0);
            run_case(GPK_U32, GPK_DIST_EQUAL, ((size_t)1 << 20) + 1, MODE_PERM64, 0, 0, 0);
            for (int m = 0; m < MODE_COUNT; m++) {
                run_case(GPK_U32, GPK_DIST_UNIFORM, ((size_t)1 << 18) - 1, (mode)m, 0, 0, 0);
                run_case(GPK_F32, GPK_DIST_UNIFORM, (size_t)1 << 18, (mode)m, 0, 0, 0);
                run_case(GPK_I64, GPK_DIST_RANDOM_BITS, ((size_t)1 << 18) + 1, (mode)m, 0, 0, 0);
            }
            /* AUTO: 8-byte keys alone go to the radix sort at every size
             * (its in-cache path and the hybrid beat the quicksort). */
            run_case(GPK_F64, GPK_DIST_UNIFORM, (size_t)1 << 20, MODE_KEYS, 0, 0, 0);
            TU_CHECK(gpk_last_sort_algo(ctx) == GPK_SORT_RADIX, "AUTO, f64 keys 2^20: ran %s",
                     gpk_sort_algo_name(gpk_last_sort_algo(ctx)));
            run_case(GPK_U64, GPK_DIST_UNIFORM, ((size_t)1 << 20) - 1, MODE_KEYS, 0, 0, 0);
            TU_CHECK(gpk_last_sort_algo(ctx) == GPK_SORT_RADIX, "AUTO, u64 keys 2^20 - 1: ran %s",
                     gpk_sort_algo_name(gpk_last_sort_algo(ctx)));
            run_case(GPK_U64, GPK_DIST_FEW_BITS, ((size_t)1 << 21) + 1, MODE_PAIRS64, 0, 0, 20);
            /* The sampled first level of f64 / i64 keys (first_plan) under
             * AUTO, with and without it (cpu_radix_first=count): keys
             * outside the sample's prefix, a sample of one value (no plan),
             * and a sample wide enough to plan by over a range too narrow
             * for the hybrid (14 bits: the LSD passes, keys mapped then). */
            force_algo = GPK_SORT_RADIX;
            for (int counted = 0; counted <= 1; counted++) {
                if (counted) gpk__test_set("cpu_radix_first", "count");
                for (int t = GPK_I64; t <= GPK_F64; t++)
                    for (int m = 0; m < MODE_COUNT; m++) {
                        const size_t sz = m == MODE_KEYS || m == MODE_PAIRS64 ? ((size_t)1 << 20) + 3
                                                                              : ((size_t)1 << 18) + 1;
                        for (outlier_input = 1; outlier_input <= 2; outlier_input++)
                            run_case((gpk_type)t, GPK_DIST_UNIFORM, sz, (mode)m, 0, 0, 0);
                        outlier_input = 0;
                        run_case((gpk_type)t, GPK_DIST_FEW_BITS, sz, (mode)m, 0, 0, 14);
                        run_case((gpk_type)t, GPK_DIST_FLOAT_SPECIALS, sz, (mode)m, 0, 0, 0);
                        run_case((gpk_type)t, GPK_DIST_EQUAL, sz, (mode)m, 0, 0, 0);
                    }
                gpk__test_set("cpu_radix_first", NULL);
            }
            force_algo = GPK_SORT_AUTO;
            run_case(GPK_I32, GPK_DIST_SORTED, ((size_t)1 << 20) + 1, MODE_PAIRS32, 0, 0, 0);
        }
    }

    /* 5. The bit-range detection in the histogram's read (CUDA; the other
     * backends run the same inputs): detection at every size (CUDA skips it
     * below 2^23 keys), a sample from 2^12 keys, shaped ranges, and the
     * separate detection for comparison. */
    {
        size_t fsizes[] = {4099, 65537, 70001, ((size_t)1 << 18) + 3};
        gpk__test_set("radix_cuda_sample_from_log", "12");
        gpk__test_set("radix_cuda_detect_from_log", "0");
        for (int fused = 1; fused >= 0; fused--) {
            gpk__test_set("radix_cuda_fused_detect", fused ? "1" : "0");
            for (shape_input = 0; shape_input <= 3; shape_input++)
                for (int t = GPK_U32; t <= GPK_F64; t++)
                    for (size_t si = 0; si < sizeof fsizes / sizeof fsizes[0]; si++) {
                        if ((quick || !fused) && (t + (int)si + shape_input) % 3) continue;
                        if (shape_input && t != GPK_U32 && t != GPK_U64 && t != GPK_I32) continue;
                        const mode m = (mode)((t + (int)si + shape_input) % MODE_COUNT);
                        run_case((gpk_type)t, GPK_DIST_UNIFORM, fsizes[si], m, 0, 0, 0);
                    }
            shape_input = 0;
        }
        gpk__test_set("radix_cuda_fused_detect", NULL);
        gpk__test_set("radix_cuda_sample_from_log", NULL);
        gpk__test_set("radix_cuda_detect_from_log", NULL);
    }

    /* 6. gpk_sort_keys_to (every section above runs it as a mode too):
     * each type through AUTO, the radix sort and the quicksort (the
     * backend's copy, then its in-place sort; not on OpenCL), large inputs
     * whose first pass reads the input, in == out, and the refusals. */
    {
        size_t tsizes[] = {0, 1, 2, 1021, 65537, 100003, ((size_t)1 << 18) + 1};
        gpk_sort_algo algos[] = {GPK_SORT_AUTO, GPK_SORT_RADIX, GPK_SORT_QUICK};
        for (size_t ai = 0; ai < 3; ai++) {
            if (algos[ai] == GPK_SORT_QUICK && be == GPK_BACKEND_OPENCL) continue;
            force_algo = algos[ai];
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (size_t si = 0; si < sizeof tsizes / sizeof tsizes[0]; si++)
                    run_case((gpk_type)t, si % 2 ? GPK_DIST_RANDOM_BITS : GPK_DIST_UNIFORM, tsizes[si],
                             MODE_KEYS_TO, 0, 0, 0);
        }
        force_algo = GPK_SORT_AUTO;
        if (!quick) {
            run_case(GPK_F64, GPK_DIST_UNIFORM, ((size_t)1 << 22) + 1, MODE_KEYS_TO, 0, 0, 0);
            run_case(GPK_U64, GPK_DIST_RANDOM_BITS, (size_t)1 << 22, MODE_KEYS_TO, 0, 0, 0);
            run_case(GPK_U32, GPK_DIST_UNIFORM, ((size_t)1 << 22) - 1, MODE_KEYS_TO, 0, 0, 0);
        }

        const size_t n = 4099;
        uint64_t *a = malloc(n * 8), *w = malloc(n * 8), *keep = malloc(n * 8);
        TU_CHECK(a && w && keep, "out of host memory");
        if (a && w && keep) {
            gpk_generate(GPK_U64, GPK_DIST_RANDOM_BITS, a, n, seed_base ^ 0x5157u, 0);
            memcpy(w, a, n * 8);
            memcpy(keep, a, n * 8);
            gpk_status s = gpk_sort_keys_to(ctx, GPK_U64, a, a, n, NULL);
            gpk_sort_reference(GPK_U64, w, 0, NULL, NULL, n, 0);
            TU_CHECK(s == GPK_OK && memcmp(a, w, n * 8) == 0, "keys_to, in == out: %s", gpk_status_string(s));
            memcpy(a, keep, n * 8);
            s = gpk_sort_keys_to(ctx, GPK_U64, a, a + 1, n - 1, NULL);
            TU_CHECK(s == GPK_EINVAL, "keys_to, out one key after in: %s, not EINVAL", gpk_status_string(s));
            s = gpk_sort_keys_to(ctx, GPK_U32, (uint32_t *)a + n - 3, a, n, NULL);
            TU_CHECK(s == GPK_EINVAL, "keys_to, in's first keys over out's last: %s, not EINVAL",
                     gpk_status_string(s));
            TU_CHECK(memcmp(a, keep, n * 8) == 0, "keys_to refused, but the array changed");
            s = gpk_sort_keys_to(ctx, GPK_U32, (uint32_t *)a + n, a, n, NULL);
            TU_CHECK(s == GPK_OK, "keys_to, adjacent buffers: %s", gpk_status_string(s));
            s = gpk_sort_keys_to(ctx, GPK_F64, NULL, w, n, NULL);
            TU_CHECK(s == GPK_EINVAL, "keys_to, in NULL: %s, not EINVAL", gpk_status_string(s));
            s = gpk_sort_keys_to(ctx, GPK_F64, a, NULL, n, NULL);
            TU_CHECK(s == GPK_EINVAL, "keys_to, out NULL: %s, not EINVAL", gpk_status_string(s));
            s = gpk_sort_keys_to(ctx, GPK_F64, NULL, NULL, 0, NULL);
            TU_CHECK(s == GPK_OK, "keys_to, n = 0 and NULL arrays: %s", gpk_status_string(s));
            s = gpk_sort_keys_to(ctx, (gpk_type)99, a, w, n, NULL);
            TU_CHECK(s == GPK_EINVAL, "keys_to, unknown type: %s, not EINVAL", gpk_status_string(s));
        }
        free(a);
        free(w);
        free(keep);
    }

    /* 7. OpenCL: the onesweep pass ran where it was asked for (the NVIDIA
     * default with the vendor path, opencl_variant=onesweep), with the
     * warp primitives asked for. The portable form keeps a 1 KiB counter row
     * per item: it fits PoCL's local memory, not a GPU's 48 KiB, where the
     * fast kernels run instead. It runs in the 32-bit build only: not
     * under opencl_wide_from. */
    if (be == GPK_BACKEND_OPENCL && !hook_arg("opencl_wide_from") &&
        (ocl_emulate || ocl_ptx || (ocl_variant && !strcmp(ocl_variant, "onesweep")))) {
        run_case(GPK_U32, GPK_DIST_UNIFORM, 100003, MODE_PAIRS32, 0, 0, 0);
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        const int portable_fits = strstr(info.platform, "Portable Computing Language") != NULL;
        const char *want = ocl_emulate ? "opencl-onesweep-emu"
            : ocl_ptx                  ? "opencl-onesweep-ptx"
                                       : "opencl-onesweep";
        const char *ran = gpk_last_sort_path(ctx);
        TU_CHECK(strstr(ran, want) != NULL ||
                     (!ocl_emulate && !ocl_ptx && !portable_fits && !strcmp(ran, "opencl-fast")),
                 "OpenCL u32 pairs 100003: ran %s, not %s", ran, want);
    }

    /* 8. Sizes up to 2^20 and about 2^22 (the range of the CUDA small
     * path, radix_cuda_small: one launch for the whole sort; on the
     * other backends the same inputs): every type, primes, powers of two
     * and their neighbours, tile edges, explicit (b, r) with digits of up
     * to 8 bits (1 bit: 32 passes). On CUDA, unless radix_cuda_small=0
     * (ctest radix_cuda_onesweep), each case up to
     * 2^radix_cuda_small_max_log keys (default 22, with values 20) must
     * have run that path, unless the hybrid, forced on, took it. */
    if (!quick) {
        const char *small_env = hook_arg("radix_cuda_small");
        const int small_on = be == GPK_BACKEND_CUDA && !(small_env && atoi(small_env) == 0);
        const char *max_env = hook_arg("radix_cuda_small_max_log") ? hook_arg("radix_cuda_small_max_log")
                                                                   : getenv("GPK_RADIX_CUDA_SMALL_MAX_LOG");
        const int max_set = max_env && atoi(max_env) >= 1 && atoi(max_env) <= 24;
        const int max_log = max_set ? atoi(max_env) : 22, max_log_values = max_set ? max_log : 20;
        const char *hybrid_env = hook_arg("radix_cuda_hybrid");
        const int hybrid_on = hybrid_env && atoi(hybrid_env) != 0;
        size_t lsizes[] = {2,
                           3,
                           6143,
                           6144,
                           6145,
                           65536,
                           131071,
                           131072,
                           131073,
                           262143,
                           262144,
                           262147,
                           524287,
                           524288,
                           524289,
                           786433,
                           1048575,
                           1048576,
                           ((size_t)1 << 22) - 3,
                           (size_t)1 << 22};
        const int nl = (int)(sizeof lsizes / sizeof lsizes[0]);
        struct {
            gpk_type t;
            unsigned b, r, gen_bits;
            size_t n;
        } lbr[] = {{GPK_U32, 16, 0, 16, 100003}, {GPK_U32, 0, 4, 32, 262147},  {GPK_U32, 0, 1, 32, 100003},
                   {GPK_U64, 40, 5, 40, 131071}, {GPK_I64, 0, 8, 64, 524287},  {GPK_F32, 0, 6, 32, 70001},
                   {GPK_F64, 64, 7, 64, 131073}, {GPK_I32, 20, 8, 20, 1048575}};
        const int nb = (int)(sizeof lbr / sizeof lbr[0]);
        force_algo = GPK_SORT_RADIX;
        for (int k = 0; k < 6 * nl + nb; k++) {
            const int is_br = k >= 6 * nl;
            const gpk_type t = is_br ? lbr[k - 6 * nl].t : (gpk_type)(GPK_U32 + k % 6);
            const size_t n = is_br ? lbr[k - 6 * nl].n : lsizes[k / 6];
            if (!is_br && n > ((size_t)1 << 20) && t != GPK_U32 && t != GPK_F64) continue;
            const mode m = (mode)((k / 6 + k) % MODE_COUNT);
            const gpk_dist d = all_dists[(k / 6 + 2 * k) % NDISTS];
            const unsigned b = is_br ? lbr[k - 6 * nl].b : 0, r = is_br ? lbr[k - 6 * nl].r : 0;
            const unsigned gen = is_br ? lbr[k - 6 * nl].gen_bits : 0;
            if (!run_case(t, is_br && gen < 8 * gpk_type_size(t) ? GPK_DIST_FEW_BITS : d, n, m, b, r, gen))
                continue;
            /* the hybrid, where forced on (radix_cuda_hybrid), comes first where it takes the sort */
            const int hybrid_ran = hybrid_on && strncmp(gpk_last_sort_path(ctx), "radix-hybrid", 12) == 0;
            if (small_on && !hybrid_ran &&
                n <= ((size_t)1 << (m == MODE_KEYS || m == MODE_KEYS_TO ? max_log : max_log_values)))
                TU_CHECK(strcmp(gpk_last_sort_path(ctx), "radix-small") == 0 ||
                             (n <= 4096 && strcmp(gpk_last_sort_path(ctx), "radix-tile") == 0),
                         "%s n=%zu %s b=%u r=%u: the small path is on, but the sort ran %s", gpk_type_name(t),
                         n, mode_name[m], b, r, gpk_last_sort_path(ctx));
            /* up to 4096 keys (b and r left to gpk) one block sorts them in one launch */
            if (small_on && !hybrid_ran && n <= 4096 && b == 0 && r == 0)
                TU_CHECK(strcmp(gpk_last_sort_path(ctx), "radix-tile") == 0,
                         "%s n=%zu %s b=%u r=%u: one tile, but the sort ran %s", gpk_type_name(t), n,
                         mode_name[m], b, r, gpk_last_sort_path(ctx));
        }
        force_algo = GPK_SORT_AUTO;
    }

    /* 9. The CPU's vectorised sorter of keys alone (sort/vector_sort.h) at
     * each level forced, lowest first (portable: the radix passes), against
     * the reference: every type, distribution (NaN, infinities and -0.0
     * among GPK_DIST_FLOAT_SPECIALS; floats of both signs by sign_mix) and
     * the size ladder, in place and copying; the whole array on one thread
     * (in cache and above), halves merged on two, the radix team on three
     * (skewed keys too).
     * The path that ran is checked: the vector sorter where the level has
     * one, the radix passes where it is portable. */
threaded:
    /* sections 9 and 10 check the sorts that ran, on sorted inputs too */
    if (paths_only) goto done;
#ifdef __linux__
    if (be == GPK_BACKEND_CPU) team_cap_checks();
#endif
    if (be == GPK_BACKEND_CPU) gpk__test_set("cpu_presorted", "0");
    if (be == GPK_BACKEND_CPU) {
        const char *levels[] = {"portable", "avx2", "avx512"};
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        gpk__test_set("cpu_sort_simd", NULL);
        const int native = gpk__radix_cpu_simd_level();
        printf("cpu sort simd: %s here\n", levels[native]);
        size_t vbig[] = {((size_t)1 << 18) + 3, ((size_t)1 << 19) - 1, ((size_t)1 << 20) + 1};
        for (int li = 0; li < 3; li++) {
            gpk__test_set("cpu_sort_simd", levels[li]);
            const int level = gpk__radix_cpu_simd_level();
            TU_CHECK(level == (li < native ? li : native), "cpu_sort_simd=%s: level %d", levels[li], level);
            avx512_bytes = gpk__radix_cpu_avx512_bytes();
            TU_CHECK(li == 2 || avx512_bytes == 0, "cpu_sort_simd=%s: the AVX-512 quicksort up to %zu bytes",
                     levels[li], avx512_bytes);
            avx2_bytes = gpk__radix_cpu_avx2_bytes();
            TU_CHECK(li > 0 || avx2_bytes == 0, "cpu_sort_simd=%s: the AVX2 quicksort up to %zu bytes",
                     levels[li], avx2_bytes);
            cpu_simd = levels[li];
            int crowded = 0; /* 8-byte sorts in cache that took the vector sorter */
            for (sign_mix = 0; sign_mix <= 1 && !threads_only; sign_mix++)
                for (int t = GPK_U32; t <= GPK_F64; t++)
                    for (size_t di = 0; di < NDISTS; di++)
                        for (int si = 0; si < ns; si++) {
                            if (sign_mix && t != GPK_F32 && t != GPK_F64) continue;
                            if ((quick || sign_mix) && (si + di + t) % 3) continue;
                            const size_t n = sizes[si];
                            const mode m = (si + di) % 2 ? MODE_KEYS_TO : MODE_KEYS;
                            if (!run_case((gpk_type)t, all_dists[di], n, m, 0, 0, 0) || n < 2) continue;
                            const char *ran = gpk_last_sort_path(ctx);
                            const int want = vector_expected(level, gpk_type_size((gpk_type)t), n, 1);
                            crowded += want == 2 && !strcmp(ran, "radix-vector");
                            /* integers narrow in range (radix_cpu.c, narrow_ints)
                             * may leave the AVX2 quicksort for the radix passes, or
                             * for vqsort where it is built in (level > 0) */
                            const int narrow_ok = want == 4 && n >= 2048 &&
                                (!strcmp(ran, "radix") || (level > 0 && !strcmp(ran, "radix-vector")));
                            if (gpk_last_sort_algo(ctx) == GPK_SORT_RADIX)
                                TU_CHECK(want == 2 || narrow_ok || !strcmp(ran, vector_path(want)),
                                         "%s n=%zu cpu_sort_simd=%s: ran %s", gpk_type_name((gpk_type)t), n,
                                         levels[li], ran);
                        }
            sign_mix = 0;
            /* (none where the AVX-512 quicksort takes every size in cache) */
            TU_CHECK(level < 2 || threads_only || avx512_bytes >= ((size_t)1 << 20) || crowded > 0,
                     "cpu_sort_simd=%s: no 8-byte sort in cache took the vector sorter", levels[li]);
            for (int threads = 1 + threads_only; threads <= 3; threads++) {
                gpk_ctx_set_threads(ctx, threads);
                for (int t = GPK_U32; t <= GPK_F64; t++)
                    for (size_t bi = 0; bi < sizeof vbig / sizeof vbig[0]; bi++) {
                        if (quick && (t + (int)bi) % 3) continue;
                        const gpk_dist d = all_dists[(t + bi) % NDISTS];
                        const mode m = (t + bi) % 2 ? MODE_KEYS_TO : MODE_KEYS;
                        skew_input = (t + (int)bi + threads) % 5; /* 0: none */
                        if (!run_case((gpk_type)t, d, vbig[bi], m, 0, 0, 0)) continue;
                        const char *ran = gpk_last_sort_path(ctx);
                        /* a thread per MiB of keys (MIN_BYTES_PER_THREAD): one or two
                         * sort halves with the vector sorter, more the hybrid's buckets */
                        const size_t asks = vbig[bi] / (((size_t)1 << 20) / gpk_type_size((gpk_type)t)) + 1;
                        const int team = asks < (size_t)threads ? (int)asks : threads;
                        const int want = vector_expected(level, gpk_type_size((gpk_type)t), vbig[bi], team);
                        /* narrow integers may leave the AVX2 quicksort (as above) */
                        const int narrow_ok = want == 4 && t != GPK_F32 && t != GPK_F64 &&
                            (!strcmp(ran, "radix") || (level > 0 && !strcmp(ran, "radix-vector")));
                        TU_CHECK(want == 2 || narrow_ok ||
                                     (want ? !strcmp(ran, vector_path(want)) : !strstr(ran, "vector")),
                                 "%s n=%zu, %d thread(s), cpu_sort_simd=%s: ran %s",
                                 gpk_type_name((gpk_type)t), vbig[bi], threads, levels[li], ran);
                    }
                skew_input = 0;
            }
            gpk_ctx_set_threads(ctx, (int)info.threads);
        }
        gpk__test_set("cpu_sort_simd", hook_arg("cpu_sort_simd")); /* the level the arguments forced */
        cpu_simd = NULL;
        avx512_bytes = 0;
        avx2_bytes = 0;
    }

    /* 9b. The AVX-512 and AVX2 quicksorts (vector_sort_quick.h) through the library, each in turn with its limit
     * raised by its hook (cpu_avx512_sort_bytes, cpu_avx2_sort_bytes) to
     * every size and the other's at 0, at each level forced, on one
     * thread: 4-byte types over the size ladder and every distribution (NaN, infinities, -0.0, both signs), in place
     * and copying, against the reference; descending against the portable
     * path's result. Where the processor runs AVX-512 that kernel must run
     * at the avx512 level (and sort one size above the cache), never at the
     * others; the AVX2 one must run at the avx2 level where the processor
     * has AVX2, never at the portable level, and at the avx512 level where
     * gpk__radix_cpu_avx2_bytes says so. tests/test_vector_sort tests the
     * kernels themselves. */
    if (be == GPK_BACKEND_CPU) {
        const char *levels[] = {"portable", "avx2", "avx512"};
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        gpk_ctx_set_threads(ctx, 1);
        const gpk_type types[] = {GPK_U32, GPK_I32, GPK_F32};
        for (int kernel = 0; kernel < 2; kernel++) {
            const char *path = kernel ? "radix-vector-avx2" : "radix-vector-avx512";
            gpk__test_set("cpu_avx512_sort_bytes", kernel ? "0" : "1073741824");
            gpk__test_set("cpu_avx2_sort_bytes", kernel ? "1073741824" : "0");
            gpk__test_set("cpu_sort_simd", NULL);
            const int runs_here =
                kernel ? gpk__avx2_sort_level() == GPK_SIMD_AVX2 : gpk__radix_cpu_avx512_bytes() > 0;
            printf("%s: %s here\n", path, runs_here ? "runs" : "does not run");
            int ran_kernel = 0;
            for (int li = 0; li < 3; li++) {
                gpk__test_set("cpu_sort_simd", levels[li]);
                cpu_simd = levels[li];
                const int want = kernel ? gpk__radix_cpu_avx2_bytes() > 0 : runs_here && li == 2;
                TU_CHECK(!kernel || (li == 0 ? !want : want == runs_here || li == 2),
                         "cpu_sort_simd=%s: the AVX2 quicksort %s", levels[li],
                         want ? "runs" : "does not run");
                for (size_t ti = 0; ti < 3; ti++)
                    for (size_t di = 0; di < NDISTS; di++)
                        for (int si = 0; si <= ns; si++) {
                            if ((quick || li < 2) && (si + di + ti) % 3) continue;
                            const size_t n = si < ns ? sizes[si] : ((size_t)1 << 19) + 3;
                            if (si == ns && di % 4) continue; /* above the cache: a few */
                            const mode m = (si + di) % 2 ? MODE_KEYS_TO : MODE_KEYS;
                            if (!run_case(types[ti], all_dists[di], n, m, 0, 0, 0) || n < 2) continue;
                            const char *ran = gpk_last_sort_path(ctx);
                            ran_kernel += !strcmp(ran, path);
                            TU_CHECK(want == !strcmp(ran, path), "%s %s n=%zu cpu_sort_simd=%s: ran %s",
                                     gpk_type_name(types[ti]), gpk_dist_name(all_dists[di]), n, levels[li],
                                     ran);
                        }
                /* descending: the result the portable level's radix passes give */
                for (size_t ti = 0; ti < 3; ti++)
                    for (size_t di = 0; di < NDISTS; di += 2) {
                        const size_t n = (di % 4) ? 4099 : 65537;
                        char *in = malloc(n * 4), *got = malloc(n * 4), *ref = malloc(n * 4);
                        gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
                        o.descending = 1;
                        if (!in || !got || !ref ||
                            gpk_generate(types[ti], all_dists[di], in, n, seed_base + di, 0)) {
                            TU_CHECK(0, "descending: no input");
                        } else {
                            memcpy(got, in, n * 4);
                            memcpy(ref, in, n * 4);
                            gpk__test_set("cpu_sort_simd", "portable");
                            const gpk_status sr = gpk_sort_keys(ctx, types[ti], ref, n, &o);
                            gpk__test_set("cpu_sort_simd", levels[li]);
                            const gpk_status sg = gpk_sort_keys(ctx, types[ti], got, n, &o);
                            const char *ran = gpk_last_sort_path(ctx);
                            const size_t at = tu_first_difference(got, ref, n, 4);
                            TU_CHECK(
                                sr == GPK_OK && sg == GPK_OK && at == n && want == !strcmp(ran, path),
                                "%s %s n=%zu descending cpu_sort_simd=%s: first difference at %zu, ran %s",
                                gpk_type_name(types[ti]), gpk_dist_name(all_dists[di]), n, levels[li], at,
                                ran);
                        }
                        free(in);
                        free(got);
                        free(ref);
                    }
            }
            TU_CHECK(!runs_here || ran_kernel > 0, "%s never ran", path);
        }
        gpk__test_set("cpu_avx512_sort_bytes", NULL);
        gpk__test_set("cpu_avx2_sort_bytes", NULL);
        gpk__test_set("cpu_sort_simd", hook_arg("cpu_sort_simd"));
        cpu_simd = NULL;
        gpk_ctx_set_threads(ctx, (int)info.threads);
    }

    /* 9c. A team of two whose second thread stalls once its side is shared
     * (cpu_pair_stall_ms): the first must take that side's pieces from the
     * other's stack (radix_cpu.c, piece_pool), and the keys still sort:
     * each type, in place and copying, where a quicksort takes keys on a
     * team of two (the AVX-512 or AVX2 one runs here). */
    if (be == GPK_BACKEND_CPU && (gpk__radix_cpu_avx512_bytes() > 0 || gpk__radix_cpu_avx2_bytes() > 0)) {
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        gpk_ctx_set_threads(ctx, 2);
        gpk__test_set("cpu_pair_stall_ms", "30");
        const size_t n = ((size_t)1 << 20) + 1; /* within GPK_TEST_SMALL's sizes (ThreadSanitizer) */
        int quick_runs = 0;
        for (int t = GPK_U32; t <= GPK_F64; t++) {
            const size_t before = gpk__radix_cpu_pieces_stolen();
            const mode m = t % 2 ? MODE_KEYS_TO : MODE_KEYS;
            if (!run_case((gpk_type)t, t == GPK_F32 ? GPK_DIST_FLOAT_SPECIALS : GPK_DIST_UNIFORM, n, m, 0, 0,
                          0))
                continue;
            const char *ran = gpk_last_sort_path(ctx);
            if (strcmp(ran, "radix-vector-avx512") && strcmp(ran, "radix-vector-avx2"))
                continue; /* not a quicksort */
            quick_runs++;
            TU_CHECK(gpk__radix_cpu_pieces_stolen() > before,
                     "%s n=%zu, 2 threads, the second stalled: no piece taken from its stack (ran %s)",
                     gpk_type_name((gpk_type)t), n, ran);
        }
        TU_CHECK(quick_runs > 0 || n > max_n, "2 threads, the second stalled: no sort took a quicksort");
        gpk__test_set("cpu_pair_stall_ms", NULL);
        gpk_ctx_set_threads(ctx, (int)info.threads);
    }

    /* 10. Pairs and permutations through the CPU's vectorised sorter as
     * (key, index) composites (radix_cpu.c, vector_sort_items) at each
     * level forced, on a team of one thread, against the reference (which
     * holds the values to stability): every type, distribution (few
     * distinct and all-equal keys for stability, the float specials for
     * NaN and -0.0), floats of both signs, the size ladder and sizes about
     * the limits (in cache, the gather's 4 MiB); descending order checked
     * on its own. The path that ran is checked; two threads take the radix
     * team. */
    if (be == GPK_BACKEND_CPU) {
        const char *levels[] = {"portable", "avx2", "avx512"};
        const mode item_modes[] = {MODE_PERM, MODE_PAIRS32, MODE_PAIRS64, MODE_PERM64};
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        size_t ibig[] = {((size_t)1 << 17) + 1, ((size_t)1 << 18) + 3, ((size_t)1 << 19) - 1,
                         ((size_t)1 << 20) + 1};
        for (int li = 0; li < 3; li++) {
            gpk__test_set("cpu_sort_simd", levels[li]);
            const int level = gpk__radix_cpu_simd_level();
            cpu_simd = levels[li];
            gpk_ctx_set_threads(ctx, 1);
            int wide_vector = 0; /* 8-byte keys that took the vector sorter */
            for (sign_mix = 0; sign_mix <= 1 && !threads_only; sign_mix++)
                for (int t = GPK_U32; t <= GPK_F64; t++)
                    for (size_t di = 0; di < NDISTS; di++)
                        for (int si = 0; si < ns + 4; si++) {
                            if (sign_mix && t != GPK_F32 && t != GPK_F64) continue;
                            if ((quick || sign_mix || li < 2) && (si + di + t) % 3) continue;
                            const int big = si >= ns;
                            if (big && (di + (size_t)si + (size_t)t) % 4)
                                continue; /* one distribution a size */
                            const size_t n = big ? ibig[si - ns] : sizes[si];
                            const mode m = item_modes[(si + di + t + (size_t)sign_mix) % 4];
                            const int desc = (si + di) % 2;
                            const size_t kw = gpk_type_size((gpk_type)t);
                            if (!(desc ? run_desc_case((gpk_type)t, all_dists[di], n, m)
                                       : run_case((gpk_type)t, all_dists[di], n, m, 0, 0, 0)) ||
                                n < 2)
                                continue;
                            const char *ran = gpk_last_sort_path(ctx);
                            const int want = vector_items_expected(level, (gpk_type)t, n, m);
                            wide_vector += kw == 8 && !strcmp(ran, "radix-vector");
                            if (gpk_last_sort_algo(ctx) == GPK_SORT_RADIX)
                                TU_CHECK(want == 2 || !strcmp(ran, want ? "radix-vector" : "radix"),
                                         "%s %s n=%zu %s cpu_sort_simd=%s: ran %s",
                                         gpk_type_name((gpk_type)t), gpk_dist_name(all_dists[di]), n,
                                         mode_name[m], levels[li], ran);
                        }
            sign_mix = 0;
            TU_CHECK(level < 2 || quick || wide_vector > 0,
                     "cpu_sort_simd=%s: no 8-byte pairs or permutation took the vector sorter", levels[li]);
            gpk_ctx_set_threads(ctx, 2);
            for (int t = GPK_U32; t <= GPK_F64; t++) {
                const mode m = item_modes[t % 4];
                if (!run_case((gpk_type)t, GPK_DIST_FEW_BITS, ibig[1], m, 0, 0, 0)) continue;
                TU_CHECK(!strstr(gpk_last_sort_path(ctx), "vector"), "%s n=%zu %s, 2 threads: ran %s",
                         gpk_type_name((gpk_type)t), ibig[1], mode_name[m], gpk_last_sort_path(ctx));
            }
            gpk_ctx_set_threads(ctx, (int)info.threads);
        }
        gpk__test_set("cpu_sort_simd", hook_arg("cpu_sort_simd"));
        cpu_simd = NULL;
    }

    /* 11. Presorted inputs on the CPU (radix_cpu.c, sort_presorted):
     * sorted, reverse and all-equal keys in every mode and type, on one
     * and two threads, in cache and above the threads' shares, ascending
     * and descending, against the reference. Keys already in order (any
     * mode) or in reverse order (keys alone) must skip the sort; the same
     * inputs with one pair out of order (first, middle, last) must sort. */
    if (be == GPK_BACKEND_CPU) {
        gpk__test_set("cpu_presorted", NULL);
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        const gpk_dist pdists[] = {GPK_DIST_SORTED, GPK_DIST_REVERSE, GPK_DIST_EQUAL,
                                   GPK_DIST_FLOAT_SPECIALS};
        /* the last: 8-byte keys take two threads' shares (8 MiB each) */
        const size_t psizes[] = {2, 3, 1000, 65537, ((size_t)1 << 20) + 5};
        int skipped = 0, sorted_anyway = 0;
        /* threads (ThreadSanitizer): the team's check, two threads, the larger sizes */
        for (int threads = 1 + threads_only; threads <= 2; threads++) {
            gpk_ctx_set_threads(ctx, threads);
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (size_t di = 0; di < sizeof pdists / sizeof pdists[0]; di++)
                    for (size_t si = 0; si < sizeof psizes / sizeof psizes[0]; si++)
                        for (int m = 0; m < MODE_COUNT; m++) {
                            const size_t n = psizes[si];
                            if (quick && (si + di + (size_t)t + (size_t)m) % 3) continue;
                            if (threads_only && n < 65537) continue;
                            if (n > 100000 && (m + t + threads) % 3) continue;
                            const gpk_dist d = pdists[di];
                            const int specials = d == GPK_DIST_FLOAT_SPECIALS; /* unsorted: must sort */
                            for (int swap = 0; swap <= 3; swap++) {
                                if (swap && (specials || d == GPK_DIST_EQUAL || n < 3)) continue;
                                if (n > 100000 && swap && swap != 3) continue; /* the reference's time */
                                swap_at = swap == 0 ? 0 : swap == 1 ? 1 : swap == 2 ? n / 2 : n - 1;
                                swap_same = 0;
                                const int desc = swap == 0 && (si + (size_t)m) % 2 && m != MODE_KEYS_TO;
                                const int ran = desc ? run_desc_case((gpk_type)t, d, n, (mode)m)
                                                     : run_case((gpk_type)t, d, n, (mode)m, 0, 0, 0);
                                swap_at = 0;
                                if (!ran) continue;
                                /* run_desc_case sorts keys with their indices */
                                const int keys_alone = !desc && (m == MODE_KEYS || m == MODE_KEYS_TO);
                                /* ascending: sorted and equal inputs are in order, reverse ones
                                 * in reverse; descending the other way round */
                                const int in_order = d == GPK_DIST_EQUAL || (d == GPK_DIST_SORTED) != desc;
                                const int want =
                                    !specials && (!swap || swap_same) && (in_order || keys_alone);
                                const int skip = !strcmp(gpk_last_sort_path(ctx), "radix-presorted");
                                skipped += skip;
                                sorted_anyway += !skip;
                                TU_CHECK(skip == want || n <= 3,
                                         "%s %s n=%zu %s%s swap at %zu, %d thread(s): ran %s",
                                         gpk_type_name((gpk_type)t), gpk_dist_name(d), n, mode_name[m],
                                         desc ? " descending" : "",
                                         swap == 0       ? 0
                                             : swap == 1 ? 1
                                             : swap == 2 ? n / 2
                                                         : n - 1,
                                         threads, gpk_last_sort_path(ctx));
                            }
                        }
        }
        /* keys alone in descending order: ascending input is its reverse */
        for (int t = GPK_U32; t <= GPK_F64; t++) {
            const size_t n = 65537, kw = gpk_type_size((gpk_type)t);
            char *in = malloc(n * kw), *got = malloc(n * kw);
            if (!in || !got ||
                gpk_generate((gpk_type)t, GPK_DIST_SORTED, in, n, seed_base + (uint64_t)t, 0)) {
                TU_CHECK(0, "presorted descending: no input");
            } else {
                memcpy(got, in, n * kw);
                gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
                o.descending = 1;
                const gpk_status s = gpk_sort_keys(ctx, (gpk_type)t, got, n, &o);
                int reversed = s == GPK_OK;
                for (size_t i = 0; i < n && reversed; i++)
                    reversed = !memcmp(got + i * kw, in + (n - 1 - i) * kw, kw);
                TU_CHECK(reversed && !strcmp(gpk_last_sort_path(ctx), "radix-presorted"),
                         "%s sorted n=%zu keys descending: %s, ran %s", gpk_type_name((gpk_type)t), n,
                         reversed ? "reversed" : "NOT the reversed input", gpk_last_sort_path(ctx));
                skipped++;
            }
            free(in);
            free(got);
        }
        TU_CHECK(skipped > 0 && sorted_anyway > 0, "presorted: %d skipped, %d sorted", skipped,
                 sorted_anyway);
        printf("presorted: %d sorts skipped, %d sorted\n", skipped, sorted_anyway);
        gpk_ctx_set_threads(ctx, (int)info.threads);
    }

done:
    gpk_ctx_destroy(ctx);
    return tu_finish("test_radix");
}
