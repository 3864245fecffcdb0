/* Seeded data generators (include/gpk/gen.h). */
#include "gpk/gen.h"
#include "internal.h"
#include "key_traits.h"

#include <string.h>
#include <strings.h>

/* Indexed by gpk_dist; the static assertion below keeps the table and the
 * enum the same length, so a new distribution cannot read past its end. */
static const char *const dist_names[] = {"uniform",      "random-bits",    "few-bits",  "equal",  "sorted",
                                         "reverse",      "float-specials", "gaussian",  "bucket", "staggered",
                                         "zero-entropy", "organ-pipe",     "mo3-killer"};
_Static_assert(sizeof dist_names / sizeof dist_names[0] == GPK_DIST_COUNT_,
               "dist_names must name every gpk_dist");

const char *gpk_dist_name(gpk_dist d) { return (d >= 0 && d < GPK_DIST_COUNT_) ? dist_names[d] : "unknown"; }

gpk_status gpk_dist_parse(const char *name, gpk_dist *out)
{
    if (!name || !out) return GPK_EINVAL;
    for (int d = 0; d < GPK_DIST_COUNT_; d++)
        if (strcasecmp(name, dist_names[d]) == 0) {
            *out = (gpk_dist)d;
            return GPK_OK;
        }
    return GPK_EINVAL;
}

void gpk_rng_seed(gpk_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++) rng->s[i] = gpk__splitmix64(seed + (uint64_t)i * 0x9E3779B97F4A7C15ull);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t gpk_rng_next(gpk_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double gpk_rng_uniform(gpk_rng *rng) { return (double)(gpk_rng_next(rng) >> 11) * 0x1.0p-53; }

/* One value of type t from 64 random bits, per distribution family. */
static void put_bits(gpk_type t, void *out, size_t i, uint64_t bits)
{
    if (gpk_type_size(t) == 4) {
        uint32_t v = (uint32_t)bits;
        memcpy((char *)out + 4 * i, &v, 4);
    } else {
        memcpy((char *)out + 8 * i, &bits, 8);
    }
}

static void put_uniform(gpk_type t, void *out, size_t i, gpk_rng *rng)
{
    if (t == GPK_F32) {
        float f = (float)(gpk_rng_next(rng) >> 40) * 0x1.0p-24f;
        memcpy((char *)out + 4 * i, &f, 4);
    } else if (t == GPK_F64) {
        double d = gpk_rng_uniform(rng);
        memcpy((char *)out + 8 * i, &d, 8);
    } else {
        put_bits(t, out, i, gpk_rng_next(rng));
    }
}

/* Monotone data straight from the position (no sort needed): value k of n
 * is k/(n-1) scaled over the type's range, so large n repeats values:
 * floats over [-1, 1], integers from their lowest value over
 * 2^32 - 2^8 or 2^64 - 2^11 values, one table for the six types. */
// clang-format off
#define MONOTONE_SCALE(B, K) ((K) == GPK_KEY_FLOAT ? 2.0 : (B) == 4 ? 4294967040.0 : 18446744073709549568.0)
#define MONOTONE_LOW(B, K) ((K) == GPK_KEY_FLOAT ? -1.0 : (K) == GPK_KEY_UNSIGNED ? 0.0 \
                            : (B) == 4 ? -2147483520.0 : -9223372036854774784.0)
#define MONOTONE_CASE(T, N, B, U, C, K) \
    case T: { const C v = (C)(frac * MONOTONE_SCALE(B, K) + MONOTONE_LOW(B, K)); memcpy(dst, &v, B); break; }
// clang-format on
static void fill_monotone(gpk_type t, void *out, size_t n, int descending)
{
    size_t w = gpk_type_size(t);
    for (size_t k = 0; k < n; k++) {
        size_t i = descending ? n - 1 - k : k;
        double frac = n > 1 ? (double)k / (double)(n - 1) : 0.0;
        char *dst = (char *)out + w * i;
        switch (t) {
            GPK_KEY_TYPES(MONOTONE_CASE)
        }
    }
}

static void put_special(gpk_type t, void *out, size_t i, gpk_rng *rng)
{
    uint64_t r = gpk_rng_next(rng);
    unsigned pick = (unsigned)(r % 16);
    if (pick >= 10) {
        put_uniform(t, out, i, rng);
        return;
    }
    if (t == GPK_F32) {
        static const uint32_t specials[10] = {0x7FC00000u, 0xFFC00000u, 0x00000000u, 0x80000000u,
                                              0x7F800000u, 0xFF800000u, 0x00000001u, 0x807FFFFFu,
                                              0x7F7FFFFFu, 0xFF7FFFFFu};
        put_bits(t, out, i, specials[pick]);
    } else if (t == GPK_F64) {
        static const uint64_t specials[10] = {
            0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x0ull, 0x8000000000000000ull,
            0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x1ull, 0x800FFFFFFFFFFFFFull,
            0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull};
        put_bits(t, out, i, specials[pick]);
    } else {
        static const uint64_t specials[10] = {0,
                                              1,
                                              ~0ull,
                                              0x7FFFFFFFFFFFFFFFull,
                                              0x8000000000000000ull,
                                              0x7FFFFFFFull,
                                              0x80000000ull,
                                              0xFFFFFFFFull,
                                              2,
                                              ~1ull};
        put_bits(t, out, i, specials[pick]);
    }
}

/* ---- Manca et al. 2015, Figure 8 ------------------------------------------
 * The paper draws u32 values from [0, 2^31). Every type gets an integer
 * range [0, 2^bits): 31 bits for u32/i32 (the paper's), 63 for u64/i64 (so
 * signed keys stay non-negative as in the paper), and for floats the
 * integer is scaled by 2^-bits with bits = 24 (f32) or 53 (f64): values in
 * [0, 1), every one exact, so the shapes are the same as the integers'. */
static unsigned paper_bits(gpk_type t)
{
    switch (t) {
    case GPK_U32:
    case GPK_I32: return 31;
    case GPK_F32: return 24;
    case GPK_F64: return 53;
    default: return 63;
    }
}

/* A random integer in [0, 2^bits). */
static uint64_t paper_draw(gpk_rng *rng, unsigned bits) { return gpk_rng_next(rng) >> (64 - bits); }

/* A random integer in [0, w), w >= 1; the modulo bias is below 2^-40 for
 * every w used here (w <= 2^63 only when p = 1, a power of two). */
static uint64_t paper_below(gpk_rng *rng, uint64_t w)
{
    if ((w & (w - 1)) == 0) return gpk_rng_next(rng) & (w - 1);
    return gpk_rng_next(rng) % w;
}

/* Stores the integer v < 2^bits of the paper's range in element i. */
static void put_paper(gpk_type t, void *out, size_t i, uint64_t v)
{
    if (t == GPK_F32) {
        float f = (float)v * 0x1.0p-24f;
        memcpy((char *)out + 4 * i, &f, 4);
    } else if (t == GPK_F64) {
        double x = (double)v * 0x1.0p-53;
        memcpy((char *)out + 8 * i, &x, 8);
    } else {
        put_bits(t, out, i, v);
    }
}

/* Stores the small integer v as a value of type t (organ pipe, killer):
 * 32-bit integers keep v mod 2^32, floats round beyond 2^24 (f32) / 2^53. */
static void put_count(gpk_type t, void *out, size_t i, uint64_t v)
{
    if (t == GPK_F32) {
        float f = (float)v;
        memcpy((char *)out + 4 * i, &f, 4);
    } else if (t == GPK_F64) {
        double x = (double)v;
        memcpy((char *)out + 8 * i, &x, 8);
    } else {
        put_bits(t, out, i, v);
    }
}

/* Figure 8 (d): p buckets of n/p elements; within each bucket, group j
 * (n/p^2 elements, j = 0..p-1) holds random values of [j*w, (j+1)*w) with
 * w = 2^bits / p. n need not divide by p^2: bucket b is the positions
 * [b*n/p, (b+1)*n/p) and its groups split it the same way. */
static void fill_bucket(gpk_type t, void *out, size_t n, uint64_t p, gpk_rng *rng)
{
    unsigned bits = paper_bits(t);
    uint64_t w = (1ull << bits) / p;
    for (uint64_t b = 0; b < p; b++) {
        uint64_t lo = b * (uint64_t)n / p, hi = (b + 1) * (uint64_t)n / p, len = hi - lo;
        for (uint64_t k = 0; k < len; k++) {
            uint64_t j = k * p / len;
            put_paper(t, out, (size_t)(lo + k), j * w + paper_below(rng, w));
        }
    }
}

/* Figure 8 (e): p blocks (even p) of n/p elements, block i = 1..p. Block
 * i <= p/2 holds random values of [(2i-1)w, 2i*w), block i > p/2 those of
 * [(2i-p-2)w, (2i-p-1)w), w = 2^bits / p: the first half of the blocks
 * take the odd slots of the range in order, the second half the even ones. */
static void fill_staggered(gpk_type t, void *out, size_t n, uint64_t p, gpk_rng *rng)
{
    unsigned bits = paper_bits(t);
    uint64_t w = (1ull << bits) / p;
    for (size_t x = 0; x < n; x++) {
        uint64_t i = (uint64_t)x * p / n + 1;
        uint64_t slot = i <= p / 2 ? 2 * i - 1 : 2 * i - p - 2;
        put_paper(t, out, x, slot * w + paper_below(rng, w));
    }
}

/* Musser (1997), "Introspective sorting and selection algorithms": for
 * even k the sequence 1, k+1, 3, k+3, ..., 2k-3, k-1, 2k-1, 2, 4, ..., 2k
 * makes a median-of-3 quicksort (first, middle, last) quadratic. Here
 * 0-based (value - 1) on the first m = n rounded down to a multiple of 4
 * positions (2k with k even); the up to 3 others follow ascending. */
static void fill_mo3_killer(gpk_type t, void *out, size_t n)
{
    uint64_t m = (uint64_t)n & ~(uint64_t)3, k = m / 2;
    for (uint64_t i = 1; i <= m; i++) {
        uint64_t v;
        if (i <= k) v = (i & 1) ? i : k + i - 1;
        else v = 2 * (i - k);
        put_count(t, out, (size_t)(i - 1), v - 1);
    }
    for (uint64_t i = m; i < n; i++) put_count(t, out, (size_t)i, i);
}

gpk_status gpk_generate(gpk_type t, gpk_dist d, void *out, size_t n, uint64_t seed, unsigned param)
{
    if (gpk_type_size(t) == 0 || d < 0 || d >= GPK_DIST_COUNT_) return GPK_EINVAL;
    if (n == 0) return GPK_OK;
    if (!out) return GPK_EINVAL;
    gpk_rng rng;
    gpk_rng_seed(&rng, seed);
    size_t w = gpk_type_size(t);
    switch (d) {
    case GPK_DIST_UNIFORM:
        for (size_t i = 0; i < n; i++) put_uniform(t, out, i, &rng);
        break;
    case GPK_DIST_RANDOM_BITS:
        for (size_t i = 0; i < n; i++) put_bits(t, out, i, gpk_rng_next(&rng));
        break;
    case GPK_DIST_FEW_BITS: {
        unsigned bits = param ? param : 10;
        if (bits > 8 * w) return GPK_EINVAL;
        uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
        for (size_t i = 0; i < n; i++) put_bits(t, out, i, gpk_rng_next(&rng) & mask);
        break;
    }
    case GPK_DIST_EQUAL: {
        char one[8];
        put_uniform(t, one, 0, &rng);
        for (size_t i = 0; i < n; i++) memcpy((char *)out + w * i, one, w);
        break;
    }
    case GPK_DIST_SORTED:
    case GPK_DIST_REVERSE: fill_monotone(t, out, n, d == GPK_DIST_REVERSE); break;
    case GPK_DIST_FLOAT_SPECIALS:
        for (size_t i = 0; i < n; i++) put_special(t, out, i, &rng);
        break;
    case GPK_DIST_GAUSSIAN: {
        /* Figure 8 (b): the mean of four uniform values, rounded down. The
         * quarters are summed apart so 63-bit values cannot overflow. */
        unsigned bits = paper_bits(t);
        for (size_t i = 0; i < n; i++) {
            uint64_t q = 0, r = 0;
            for (int k = 0; k < 4; k++) {
                uint64_t v = paper_draw(&rng, bits);
                q += v >> 2;
                r += v & 3;
            }
            put_paper(t, out, i, q + (r >> 2));
        }
        break;
    }
    case GPK_DIST_BUCKET:
    case GPK_DIST_STAGGERED: {
        /* p up to 2^16 keeps every position product below 2^64 for
         * n < 2^47 and every value slot at least 2^8 wide. */
        uint64_t p = param ? param : 32;
        if (p > 65536 || (uint64_t)n >= (1ull << 47)) return GPK_EINVAL;
        if (d == GPK_DIST_STAGGERED && (p < 2 || p % 2)) return GPK_EINVAL;
        if (d == GPK_DIST_BUCKET) fill_bucket(t, out, n, p, &rng);
        else fill_staggered(t, out, n, p, &rng);
        break;
    }
    case GPK_DIST_ZERO_ENTROPY: {
        /* Figure 8 (c): every value the same random constant. */
        uint64_t v = paper_draw(&rng, paper_bits(t));
        for (size_t i = 0; i < n; i++) put_paper(t, out, i, v);
        break;
    }
    case GPK_DIST_ORGAN_PIPE:
        /* 0, 1, 2, ..., top, ..., 2, 1, 0: each value twice but the middle. */
        for (size_t i = 0; i < n; i++) put_count(t, out, i, i < n - 1 - i ? i : n - 1 - i);
        break;
    case GPK_DIST_MO3_KILLER: fill_mo3_killer(t, out, n); break;
    default: return GPK_EINVAL;
    }
    return GPK_OK;
}
