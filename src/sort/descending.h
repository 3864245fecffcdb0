/* Descending order, for every sort: an ascending sort of "descending sort
 * keys". The descending sort key of a mapped key m (gpk/sort.h, "mapped
 * key") is a bijection of the unsigned type of the key's width whose
 * ascending order is the reverse of m's, except that floats' NaNs (mapped
 * above +inf) keep their place at the top, in their ascending order, so
 * that every NaN comes last in either order (as numpy puts them):
 *   integers: ~m;
 *   floats:   M - m for m <= M, M = the mapped +inf; m itself above M;
 *   key_bits b (0 < b < the width): m ^ (2^b - 1), the reverse of the
 *   order of the low b bits (the only bits that take part).
 * Each map is its own inverse, so it also takes a sort key back to m.
 * Stability is kept: equal keys have equal sort keys.
 * The CPU radix sort applies the map in its own first read and last write
 * (radix_cpu.c, key_order); the other sorts get the keys mapped by the
 * front end (gpk__desc_apply_host, gpk__desc_apply_cuda).
 * Usable from C and CUDA (host and device). */
#ifndef GPK_DESCENDING_H
#define GPK_DESCENDING_H

#include "gpk/gpk.h"
#include "../core/key_traits.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GPK__DESC_FN static inline __host__ __device__
#else
#define GPK__DESC_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The full-width maps are key_traits.h's (gpk__descending_u32/64); with
 * key_bits b, only the low b bits are reversed. */
GPK__DESC_FN uint32_t gpk__desc_key32(gpk_type t, unsigned key_bits, uint32_t m)
{
    if (key_bits > 0 && key_bits < 32) return m ^ ((1u << key_bits) - 1u);
    return gpk__descending_u32(t, m);
}
GPK__DESC_FN uint64_t gpk__desc_key64(gpk_type t, unsigned key_bits, uint64_t m)
{
    if (key_bits > 0 && key_bits < 64) return m ^ ((1ull << key_bits) - 1ull);
    return gpk__descending_u64(t, m);
}

/* The type the descending sort keys are sorted as: the unsigned type of
 * the key's width. */
GPK__DESC_FN gpk_type gpk__desc_sort_type(gpk_type t)
{
    return (t == GPK_U64 || t == GPK_I64 || t == GPK_F64) ? GPK_U64 : GPK_U32;
}

#ifndef __CUDACC__
/* n keys of type t, one every stride bytes from base (any alignment),
 * turned into their descending sort keys (inverse = 0), or back (inverse =
 * 1), in place over the context's threads. src: NULL, or (inverse = 0,
 * stride = the key's width only) an array whose keys are read instead of
 * base's, so that a copying sort's copy costs no pass of its own. */
void gpk__desc_apply_host(const gpk_ctx *ctx, gpk_type t, unsigned key_bits, const void *src, void *base,
                          size_t n, size_t stride, int inverse);
#endif

#ifdef __cplusplus
}
#endif
#endif
