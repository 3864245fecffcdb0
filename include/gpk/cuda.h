/* gpk device-pointer API for CUDA users.
 *
 * Asynchronous on the given stream, CUB-style two-phase temporary storage:
 * call once with d_temp == NULL to get *temp_bytes, allocate, call again.
 * ctx must be a CUDA context (it carries the device and the error message).
 * d_keys_in may equal d_keys_out (in place); the input is otherwise left
 * unchanged. Values likewise.
 *
 * n may be any size that fits (no 2^32 limit; gpk/sort.h, "Sizes"). d_temp
 * holds one spare copy of the keys (and of the values), two for an in-place
 * sort whose pass count may be odd and 3 or more (GPK_CUDA_DETECT_BITS, or
 * such a key_bits / radix_bits), plus a few MB of tables.
 *
 * key_bits = 0 (GPK_KEY_BITS_DETECT) here means "all bits of the type"
 * unless GPK_CUDA_DETECT_BITS is set in flags, in which case one AND/OR
 * reduction runs and the stream is synchronized once to read it back.
 * GPK_KEY_BITS_ALL: all bits, whatever the flags (gpk/sort.h).
 */
#ifndef GPK_CUDA_H
#define GPK_CUDA_H

#include "gpk.h"
#include "sort.h"
#include "octree.h"
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_CUDA_DETECT_BITS 1u

GPK_API gpk_status gpk_cuda_sort_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                      const void *d_keys_in, void *d_keys_out, size_t n,
                                      const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream);

/* value_width is 4 or 8 bytes. */
GPK_API gpk_status gpk_cuda_sort_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                       const void *d_keys_in, void *d_keys_out, size_t value_width,
                                       const void *d_values_in, void *d_values_out, size_t n,
                                       const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream);

/* Sorts by the bits [begin_bit, end_bit) of the mapped key only (gpk/sort.h,
 * "mapped key"; CUB's begin_bit / end_bit), stably: the key's other bits
 * take no part, so keys equal in these bits keep their input order. For
 * sorting in steps, e.g. a partition by the top bits and then each part
 * by the bits below. 0 <= begin_bit < end_bit <= the key's bits. Always
 * the separate launches of the Onesweep passes, never the single-launch
 * path for small inputs: several calls may run side by side on different
 * streams of one device (each with its own d_temp). Temp as above. */
GPK_API gpk_status gpk_cuda_sort_keys_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                           const void *d_keys_in, void *d_keys_out, size_t n,
                                           unsigned begin_bit, unsigned end_bit, cudaStream_t stream);
GPK_API gpk_status gpk_cuda_sort_pairs_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                            const void *d_keys_in, void *d_keys_out, size_t value_width,
                                            const void *d_values_in, void *d_values_out, size_t n,
                                            unsigned begin_bit, unsigned end_bit, cudaStream_t stream);

/* Octree partitioning of particles already in device memory (gpk/octree.h
 * describes the tree; the result is the one gpk_octree_build gives, in
 * device memory). d_xyz: 3n floats on ctx's device. Every scheme runs on
 * the device: the pool schemes on the device pools of gpk/pool_cuda.cuh,
 * "morton" on the radix sort. Synchronous: the stream is synchronized
 * (the builders read a few counters per tree level). *tree is filled only
 * on success; free it with gpk_cuda_octree_free. */
typedef struct gpk_cuda_octree {
    gpk_octree_node *nodes; /* device memory: n_nodes nodes, nodes[0] the root */
    size_t n_nodes;
    size_t n;
    float *xyz;     /* device memory: 3n floats, the particles in tree order */
    uint32_t *perm; /* device memory: n, perm[i] = input index of particle i */
    uint64_t tasks; /* as gpk_octree's */
    unsigned depth; /* deepest leaf */
    size_t leaves;
    double ms;      /* wall time of the call (host clock) */
    double pool_ms; /* as gpk_octree's: the pool kernel alone (CUDA events) */
} gpk_cuda_octree;

GPK_API gpk_status gpk_cuda_octree_build(gpk_ctx *ctx, const float *d_xyz, size_t n, unsigned leaf_threshold,
                                         gpk_octree_scheme scheme, const gpk_octree_opts *opts,
                                         gpk_cuda_octree *tree, cudaStream_t stream);
GPK_API void gpk_cuda_octree_free(gpk_cuda_octree *tree);

/* Segmented sorts of device arrays (gpk/sort.h, "Segmented and batched
 * sorts": the same order, stability and options). segs->begin and
 * segs->end, when set, point to device memory on ctx's device (count u64
 * offsets each); they are not checked here: they must satisfy begin[i] <=
 * end[i] <= n, and segments must not overlap. Rows (begin NULL) are checked
 * against n. d_keys_in may equal d_keys_out (in place); elements of
 * d_keys_out outside every segment are not written. Values likewise
 * (4 or 8 bytes wide). Temp CUB-style, as above; its size depends on n,
 * the segments' count (offsets) or length (rows), the widths and opts.
 * With offsets the call reads the number of segments of each size class
 * back (one synchronisation of the stream) and, for segments of at least
 * opts->large_min keys, their bounds (a second one); rows run without
 * synchronising. */
GPK_API gpk_status gpk_cuda_sort_segmented_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                                gpk_type key_type, const void *d_keys_in, void *d_keys_out,
                                                size_t n, const gpk_segments *segs,
                                                const gpk_segmented_opts *opts, cudaStream_t stream);
GPK_API gpk_status gpk_cuda_sort_segmented_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                                 gpk_type key_type, const void *d_keys_in, void *d_keys_out,
                                                 size_t value_width, const void *d_values_in,
                                                 void *d_values_out, size_t n, const gpk_segments *segs,
                                                 const gpk_segmented_opts *opts, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
