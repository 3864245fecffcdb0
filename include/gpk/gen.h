/* Seeded test and benchmark data, the same on every machine for the same
 * (type, distribution, n, seed, param): used by the tests, `gpk sort --gen`
 * and the benchmarks. The generator is xoshiro256** seeded by splitmix64. */
#ifndef GPK_GEN_H
#define GPK_GEN_H

#include "gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpk_dist {
    GPK_DIST_UNIFORM = 0,    /* integers: every bit random; floats: uniform in [0, 1) */
    GPK_DIST_RANDOM_BITS,    /* every bit random, any type (floats include NaN, inf, denormals) */
    GPK_DIST_FEW_BITS,       /* only the low `param` bits random (default 10), others 0 */
    GPK_DIST_EQUAL,          /* all keys equal (one random value) */
    GPK_DIST_SORTED,         /* uniform, then sorted ascending */
    GPK_DIST_REVERSE,        /* uniform, then sorted descending */
    GPK_DIST_FLOAT_SPECIALS, /* NaN (both signs), +-0, +-inf, denormals, min/max, mixed with uniform */
    /* The six distributions of Manca et al. 2015, Figure 8, are UNIFORM,
     * SORTED and the four below. The paper draws u32 values from [0, 2^31);
     * here every type draws integers from [0, 2^bits) with bits = 31 for
     * u32 and i32 (the paper's), 63 for u64 and i64 (non-negative, like the
     * paper's), and for floats the integer is scaled by 2^-bits with
     * bits = 24 (f32) or 53 (f64): values in [0, 1), exact, the same shapes
     * as the integers'. (UNIFORM and SORTED keep their definitions above.) */
    GPK_DIST_GAUSSIAN,     /* mean of 4 uniform values (rounded down) */
    GPK_DIST_BUCKET,       /* p = param buckets (default 32) of n/p values; group j
                               (n/p^2 values, j = 0..p-1) of every bucket is random in
                               [j, j+1) * 2^bits/p. 1 <= p <= 65536 */
    GPK_DIST_STAGGERED,    /* p = param blocks (default 32, even, 2..65536) of n/p
                               values; block i = 1..p random in [2i-1, 2i) * 2^bits/p
                               for i <= p/2, in [2i-p-2, 2i-p-1) * 2^bits/p after */
    GPK_DIST_ZERO_ENTROPY, /* one random constant of [0, 2^bits) everywhere */
    /* Adversarial patterns for quicksorts, small integer values (as the
     * type: 32-bit integers wrap past 2^32, f32 rounds past 2^24): */
    GPK_DIST_ORGAN_PIPE, /* 0, 1, ..., ~n/2, ..., 1, 0: ascending then descending */
    GPK_DIST_MO3_KILLER, /* Musser's median-of-3 killer permutation of 0..m-1,
                               m = n rounded down to a multiple of 4, then m..n-1 */
    GPK_DIST_COUNT_
} gpk_dist;

GPK_API const char *gpk_dist_name(gpk_dist d);
GPK_API gpk_status gpk_dist_parse(const char *name, gpk_dist *out);

/* Fills out[0..n) with n values of type t. param: see the distributions
 * (0 = default). GPK_DIST_FLOAT_SPECIALS on an integer type gives the
 * extreme integers (min, max, 0, +-1) mixed with uniform values. */
GPK_API gpk_status gpk_generate(gpk_type t, gpk_dist d, void *out, size_t n, uint64_t seed, unsigned param);

/* The portable generator itself, for callers that need their own streams. */
typedef struct gpk_rng {
    uint64_t s[4];
} gpk_rng;
GPK_API void gpk_rng_seed(gpk_rng *rng, uint64_t seed);
GPK_API uint64_t gpk_rng_next(gpk_rng *rng);
/* Uniform double in [0, 1) with 53 random bits. */
GPK_API double gpk_rng_uniform(gpk_rng *rng);

#ifdef __cplusplus
}
#endif
#endif
