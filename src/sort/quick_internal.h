/* Quicksort internals: the job every backend receives. The dispatch
 * (quick.c) validates arguments and picks the algorithm; see
 * include/gpk/sort.h for the contract. */
#ifndef GPK_QUICK_INTERNAL_H
#define GPK_QUICK_INTERNAL_H

#include "radix_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A validated quicksort request on host arrays. Elements are `stride`
 * bytes apart; the key of element i is at base + i*stride + key_offset in
 * the caller's (unmapped) form: keys (stride = key_width, key_offset = 0,
 * optional values) or records (stride = record size, no values). The
 * backend sorts in place by mapped key (the order of gpk_sort_keys, NaNs
 * last); it need not be stable. On failure base and values are exactly as
 * they were. */
typedef struct gpk_quick_job {
    gpk_type key_type;
    unsigned key_width; /* 4 or 8 */
    void *base;
    size_t n;             /* >= 2: the dispatch handles n < 2 itself */
    size_t stride;        /* key_width for keys, 1..256 for records */
    size_t key_offset;    /* 0 for keys */
    void *values;         /* keys only: NULL, or n values of value_width bytes */
    unsigned value_width; /* 0, 4 or 8 */
    int recursive;        /* GPK_SORT_QUICK_RECURSIVE asked for (CUDA: dynamic parallelism) */
} gpk_quick_job;

gpk_status gpk__quick_sort_cpu(gpk_ctx *ctx, const gpk_quick_job *job);
#ifdef GPK_HAVE_CUDA
gpk_status gpk__quick_sort_cuda(gpk_ctx *ctx, const gpk_quick_job *job);
/* Bench hook (gpk bench quicksort), like gpk__radix_bench_cuda: upload
 * once, sort the device-resident copy `reps` times from the same input,
 * median kernel time in *ms, the last sorted result left in the job's
 * arrays. */
gpk_status gpk__quick_bench_cuda(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms);
#endif

#ifdef __CUDACC__
/* From radix_cuda.cu, for the quicksort's records front end. */
size_t gpk__radix_cuda_window_temp(size_t n, int key_bytes);
gpk_status gpk__radix_cuda_window_sort(gpk_ctx *ctx, void *temp, size_t n, int key_bytes, void *keys,
                                       void *keys_alt, uint32_t *vals, uint32_t *vals_alt, unsigned begin,
                                       unsigned end, cudaStream_t stream);
#endif

/* Runs job on the quicksort of ctx's backend (quick.c); GPK_EUNSUPPORTED
 * where it has none. */
gpk_status gpk__quick_run(gpk_ctx *ctx, const gpk_quick_job *job);

/* Records the algorithm that ran on ctx (for gpk_last_sort_algo;
 * sort_common.c). */
void gpk__set_last_algo(gpk_ctx *ctx, gpk_sort_algo a);

#ifdef __cplusplus
}
#endif
#endif
