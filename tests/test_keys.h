/* Keys for the order tests (test_segmented, test_descending): kind 0 every
 * bit random (floats: with NaN, inf, denormals), 1 few distinct values
 * (long runs of equal keys), 2 the float specials mixed with uniform
 * values. */
#ifndef GPK_TEST_KEYS_H
#define GPK_TEST_KEYS_H

#include "gpk/gen.h"

static void make_keys(gpk_type t, void *keys, size_t n, int kind, uint64_t seed)
{
    const gpk_dist d = kind == 0 ? GPK_DIST_RANDOM_BITS
        : kind == 1              ? GPK_DIST_FEW_BITS
                                 : GPK_DIST_FLOAT_SPECIALS;
    gpk_generate(t, d, keys, n, seed, kind == 1 ? 3 : 0);
    if (kind == 1 && (t == GPK_I32 || t == GPK_I64 || t == GPK_F32 || t == GPK_F64)) {
        /* few values of both signs: flip the top bit of every other key */
        const size_t kw = gpk_type_size(t);
        for (size_t i = 0; i < n; i += 2) ((unsigned char *)keys)[i * kw + kw - 1] ^= 0x80;
    }
}

#endif
