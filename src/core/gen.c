/* Seeded data generators (include/gpk/gen.h). */
#include "gpk/gen.h"

#include <string.h>
#include <strings.h>

static const char *const dist_names[GPK_DIST_COUNT_] = {
    "uniform", "random-bits", "few-bits", "equal", "sorted", "reverse", "float-specials"};

const char *gpk_dist_name(gpk_dist d)
{
    return (d >= 0 && d < GPK_DIST_COUNT_) ? dist_names[d] : "unknown";
}

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

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void gpk_rng_seed(gpk_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&seed);
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
 * is k/(n-1) scaled over the type's range, so large n repeats values. */
static void fill_monotone(gpk_type t, void *out, size_t n, int descending)
{
    size_t w = gpk_type_size(t);
    for (size_t k = 0; k < n; k++) {
        size_t i = descending ? n - 1 - k : k;
        double frac = n > 1 ? (double)k / (double)(n - 1) : 0.0;
        char *dst = (char *)out + w * i;
        switch (t) {
        case GPK_U32: { uint32_t v = (uint32_t)(frac * 4294967040.0); memcpy(dst, &v, 4); break; }
        case GPK_I32: { int32_t v = (int32_t)(frac * 4294967040.0 - 2147483520.0); memcpy(dst, &v, 4); break; }
        case GPK_F32: { float v = (float)(frac * 2.0 - 1.0); memcpy(dst, &v, 4); break; }
        case GPK_U64: { uint64_t v = (uint64_t)(frac * 18446744073709549568.0); memcpy(dst, &v, 8); break; }
        case GPK_I64: { int64_t v = (int64_t)(frac * 18446744073709549568.0 - 9223372036854774784.0); memcpy(dst, &v, 8); break; }
        case GPK_F64: { double v = frac * 2.0 - 1.0; memcpy(dst, &v, 8); break; }
        }
    }
}

static void put_special(gpk_type t, void *out, size_t i, gpk_rng *rng)
{
    uint64_t r = gpk_rng_next(rng);
    unsigned pick = (unsigned)(r % 16);
    if (pick >= 10) { put_uniform(t, out, i, rng); return; }
    if (t == GPK_F32) {
        static const uint32_t specials[10] = {
            0x7FC00000u, 0xFFC00000u, 0x00000000u, 0x80000000u, 0x7F800000u,
            0xFF800000u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu};
        put_bits(t, out, i, specials[pick]);
    } else if (t == GPK_F64) {
        static const uint64_t specials[10] = {
            0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x0ull, 0x8000000000000000ull,
            0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x1ull, 0x800FFFFFFFFFFFFFull,
            0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull};
        put_bits(t, out, i, specials[pick]);
    } else {
        static const uint64_t specials[10] = {0, 1, ~0ull, 0x7FFFFFFFFFFFFFFFull,
                                              0x8000000000000000ull, 0x7FFFFFFFull,
                                              0x80000000ull, 0xFFFFFFFFull, 2, ~1ull};
        put_bits(t, out, i, specials[pick]);
    }
}

gpk_status gpk_generate(gpk_type t, gpk_dist d, void *out, size_t n, uint64_t seed,
                        unsigned param)
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
    case GPK_DIST_REVERSE:
        fill_monotone(t, out, n, d == GPK_DIST_REVERSE);
        break;
    case GPK_DIST_FLOAT_SPECIALS:
        for (size_t i = 0; i < n; i++) put_special(t, out, i, &rng);
        break;
    default:
        return GPK_EINVAL;
    }
    return GPK_OK;
}
