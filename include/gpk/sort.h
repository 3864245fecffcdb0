/* gpk sorting: LSD radix sort (Helluy 2011) on every backend.
 *
 * Keys are sorted in ascending natural order, stably. Signed and floating
 * keys are mapped to an order-preserving unsigned form ("mapped key")
 * before sorting and mapped back afterwards, so no bit of any key changes:
 *   signed: flip the sign bit;
 *   float:  flip all bits of negative values and the sign bit of the others,
 *           then subtract 2^23-1 (f32) or 2^52-1 (f64), modulo 2^32 / 2^64.
 * The subtraction is a rotation that moves NaNs with the sign bit set from
 * the bottom to the top, so floats sort as
 *   -inf < ... < -denormals < -0.0 < +0.0 < ... < +inf < +NaNs < -NaNs:
 * -0.0 comes before +0.0 and every NaN comes last.
 *
 * key_bits (b) and radix_bits (r) refer to the mapped key. With b > 0,
 * bits [0, b) are sorted and keys must be < 2^b in mapped form (higher bits
 * do not take part in the order). With b = 0 the library reduces the keys
 * once (AND and OR of all mapped keys) and sorts only the bit range where
 * keys differ, so 10-bit cell keys stored in u32 cost 10 bits of passes.
 * A pass sorts r bits; b need not be a multiple of r (the last pass is
 * narrower).
 */
#ifndef GPK_SORT_H
#define GPK_SORT_H

#include "gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpk_radix_opts {
    unsigned key_bits;   /* b: 0 = detect from the data */
    unsigned radix_bits; /* r in 1..16: 0 = tuned per backend and device */
    unsigned items;      /* I, work-items per group (OpenCL) / threads per block (CUDA): 0 = tuned */
    unsigned groups;     /* G, number of groups: 0 = tuned */
    unsigned scan_split; /* s, local scans before the global scan (OpenCL): 0 = tuned */
} gpk_radix_opts;
#define GPK_RADIX_OPTS_INIT { 0u, 0u, 0u, 0u, 0u }

/* Sorts n keys of type `type` in place. opts may be NULL (defaults). */
GPK_API gpk_status gpk_sort_keys(gpk_ctx *ctx, gpk_type type, void *keys, size_t n,
                                 const gpk_radix_opts *opts);

/* Sorts keys in place and writes sigma: keys_out[j] = keys_in[sigma[j]].
 * n must be <= UINT32_MAX. */
GPK_API gpk_status gpk_sort_perm(gpk_ctx *ctx, gpk_type type, void *keys, uint32_t *sigma,
                                 size_t n, const gpk_radix_opts *opts);

/* Sorts keys and moves values with them, stably. value_type gives only the
 * width: any 4-byte (u32, i32, f32) or 8-byte (u64, i64, f64) type. */
GPK_API gpk_status gpk_sort_pairs(gpk_ctx *ctx, gpk_type key_type, void *keys,
                                  gpk_type value_type, void *values, size_t n,
                                  const gpk_radix_opts *opts);

/* The plain sequential reference: a stable merge sort on mapped keys, as
 * simple as can be, that shares no code with the backends. values (width
 * 0, 4 or 8) and sigma may be NULL. key_bits = 0 means all bits. Needs no
 * context; the tests hold every backend to its answer. */
GPK_API gpk_status gpk_sort_reference(gpk_type key_type, void *keys, size_t value_width,
                                      void *values, uint32_t *sigma, size_t n,
                                      unsigned key_bits);

#ifdef __cplusplus
}
#endif
#endif
