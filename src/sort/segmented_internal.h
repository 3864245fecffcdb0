/* Segmented sorts: the validated job every backend receives, the sort key
 * of either order, and the segment checks shared by the host API and the
 * reference (contract in include/gpk/sort.h). */
#ifndef GPK_SEGMENTED_INTERNAL_H
#define GPK_SEGMENTED_INTERNAL_H

#include "radix_internal.h"
#include "descending.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A validated segmented sort on host arrays. Backends sort in place and
 * leave the arrays unchanged on failure. */
typedef struct gpk_seg_job {
    gpk_type key_type;
    unsigned key_width; /* 4 or 8 */
    void *keys;
    void *values;         /* NULL, or values of value_width bytes */
    unsigned value_width; /* 0, 4 or 8 */
    uint32_t *sigma;      /* NULL, or the per-segment permutation (values NULL then) */
    size_t n;             /* elements in the arrays */
    gpk_segments segs;    /* checked: in range, not overlapping */
    uint64_t max_len;     /* the longest segment */
    uint64_t covered;     /* elements in all segments together */
    int descending;
    size_t small_max, large_min; /* as in gpk_segmented_opts, 0 = tuned */
} gpk_seg_job;

/* Segment i's bounds [*b, *e). */
static inline void gpk__seg_bounds(const gpk_segments *s, size_t i, uint64_t *b, uint64_t *e)
{
    if (s->begin) {
        *b = s->begin[i];
        *e = s->end[i];
    } else {
        *b = (uint64_t)i * s->length;
        *e = *b + s->length;
    }
}

/* The sort key of mapped key m: ascending, m itself; descending,
 * gpk_key_descending32/64 (the reverse order, NaNs still last). Each map
 * is its own inverse, so it also takes a sort key back to m. Host and
 * device. */
GPK_KEY_FN uint32_t gpk__seg_order32(gpk_type t, int descending, uint32_t m)
{
    return descending ? gpk__descending_u32(t, m) : m;
}
GPK_KEY_FN uint64_t gpk__seg_order64(gpk_type t, int descending, uint64_t m)
{
    return descending ? gpk__descending_u64(t, m) : m;
}

/* Checks segs against n elements (begin <= end <= n, rows fit, no two
 * non-empty segments overlap) and gives the longest segment and the
 * elements covered. ctx may be NULL (the reference): no message then.
 * Allocates (and frees) an index of the segments only when the offsets
 * are not in increasing order. Defined in segmented.c. */
gpk_status gpk__seg_check(gpk_ctx *ctx, const gpk_segments *segs, size_t n, uint64_t *max_len,
                          uint64_t *covered);

/* Backends. */
gpk_status gpk__seg_sort_cpu(gpk_ctx *ctx, const gpk_seg_job *job);
/* Any backend, through two stable plain sorts of all the covered elements
 * (segmented_opencl.c): the OpenCL backend's. */
gpk_status gpk__seg_sort_by_two_sorts(gpk_ctx *ctx, const gpk_seg_job *job);
#ifdef GPK_HAVE_CUDA
gpk_status gpk__seg_sort_cuda(gpk_ctx *ctx, const gpk_seg_job *job);
#endif

#ifdef __cplusplus
}
#endif
#endif
