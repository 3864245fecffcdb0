/* What the sort family's front ends share (sort_common.c): radix.c and
 * quick.c call it, it calls neither. */
#ifndef GPK_SORT_COMMON_H
#define GPK_SORT_COMMON_H

#include "quick_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The call kinds of AUTO's table: keys, pairs (a permutation counts as
 * pairs: pairs with iota values), records. */
enum { GPK_SORT_KIND_KEYS = 0, GPK_SORT_KIND_PAIRS = 1, GPK_SORT_KIND_RECORDS = 2 };

/* The algorithm that sorts n keys of key_type on ctx (opts->algorithm, or
 * AUTO's choice); GPK_EUNSUPPORTED for a quicksort on a backend without
 * one. kind: GPK_SORT_KIND_*. */
gpk_status gpk__sort_pick(gpk_ctx *ctx, const gpk_radix_opts *opts, gpk_type key_type, size_t n, int kind,
                          gpk_sort_algo *out);

/* Whether the arrays and their sorted copy (n elements of bytes_per_elem)
 * fit the backend's memory: GPK_ENOMEM with a message when not. */
gpk_status gpk__sort_mem_check(gpk_ctx *ctx, size_t n, double bytes_per_elem);

#ifdef __cplusplus
}
#endif
#endif
