/* Internal parts of the distributed sort (sort_mpi.c, sort_mpi_cuda.cu). */
#ifndef GPK_SORT_MPI_INTERNAL_H
#define GPK_SORT_MPI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "gpk/gpk.h"

/* The distributed sort compares keys by their mapped form (gpk/sort.h,
 * core/key_traits.h), so it puts them in the order gpk_sort_keys does,
 * floats and their NaNs included. */
#include "../core/key_traits.h"

/* The end of a round of pairwise merges of runs [off[i], off[i+1]) (runs
 * of them, n keys in all): run j of the next round starts where run 2j
 * did, and the round's output buffers (keys and values) become the next
 * round's input. Returns the next round's run count. */
static inline int gpk__merge_round_end(size_t *off, int runs, size_t n, char **src_k, char **src_v,
                                       char **dst_k, char **dst_v)
{
    int next = 0;
    for (int i = 0; i < runs; i += 2) off[next++] = off[i];
    off[next] = n;
    char *tk = *src_k, *tv = *src_v;
    *src_k = *dst_k, *src_v = *dst_v;
    *dst_k = tk, *dst_v = tv;
    return next;
}

#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#ifdef __cplusplus
extern "C" {
#endif
struct gpk_ctx;
/* as in mpi_internal.h (which needs mpi.h; the .cu does not include it) */
gpk_status gpk__mpi_fail(struct gpk_ctx *ctx, gpk_status s, const char *fmt, ...);
/* Records "what: cudaGetErrorString(e)" on ctx (gpk__mpi_fail): GPK_ENOMEM
 * for allocation failures, GPK_EDEVICE otherwise (sort_mpi_cuda.cu). */
gpk_status gpk__mpi_cuda_fail(struct gpk_ctx *ctx, cudaError_t e, const char *what);
/* Device halves of the distributed sort (sort_mpi_cuda.cu); d_ pointers
 * are device memory of ctx's device, the calls synchronize before they
 * return. On failure ctx holds the message. */

/* The bytes of device work space (d_work, d_bounds below) that counts of
 * up to nq queries and merges of up to n keys need; the caller keeps it
 * between calls (no cudaMalloc per call). */
size_t gpk__mpi_cuda_work_bytes(size_t n, size_t nq);

/* counts[q] = number of keys of the sorted d_keys[0, n) whose mapped form
 * is < queries[q] (or <= with or_equal). queries and counts: host memory. */
gpk_status gpk__mpi_cuda_count(struct gpk_ctx *ctx, int type, const void *d_keys, size_t n,
                               const uint64_t *queries, size_t nq, int or_equal, uint64_t *counts,
                               void *d_work);

/* Merges the sorted runs d_keys[off[i], off[i+1]) (i < runs; values of
 * value_width 0, 4 or 8 beside them) stably, earlier runs first on ties,
 * into d_keys_out / d_values_out. d_keys, d_values and off are overwritten. */
gpk_status gpk__mpi_cuda_merge(struct gpk_ctx *ctx, int type, void *d_keys, void *d_values,
                               size_t value_width, size_t *off, int runs, void *d_keys_out,
                               void *d_values_out, size_t *d_bounds);
/* The same merge of runs that lie anywhere (d_run_k[i], run_len[i] keys;
 * peers' memory mapped by CUDA IPC too): round 1 reads them there, later
 * rounds use scratch (n keys and values), the last writes out. */
gpk_status gpk__mpi_cuda_merge_runs(struct gpk_ctx *ctx, int type, const void *const *d_run_k,
                                    const void *const *d_run_v, size_t value_width, const size_t *run_len,
                                    int runs, void *d_scratch_k, void *d_scratch_v, void *d_out_k,
                                    void *d_out_v, size_t *d_bounds);
#ifdef __cplusplus
}
#endif
#endif
#endif
