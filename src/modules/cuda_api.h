/* The device API of include/gpk/cuda.h as the CUDA module gives it to
 * libgpk (module.h's table): apart, since it needs the CUDA
 * runtime's headers and the rest of the contract does not. */
#ifndef GPK_CUDA_API_H
#define GPK_CUDA_API_H

#include "gpk/cuda.h"
#include "module.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sorts of the device API of include/gpk/cuda.h: X(name, params,
 * args) each, for `gpk_status gpk_cuda_name params`, called as `name
 * args`. From this one list come the table's members, the module's table
 * (cuda_module.c) and libgpk's forwarders (cuda_api.c). */
#define GPK__CUDA_API_SORTS(X)                                                                              \
    X(sort_keys,                                                                                            \
      (gpk_ctx * ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type, const void *d_keys_in,           \
       void *d_keys_out, size_t n, const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream),        \
      (ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, n, opts, flags, stream))                   \
    X(sort_pairs,                                                                                           \
      (gpk_ctx * ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type, const void *d_keys_in,           \
       void *d_keys_out, size_t value_width, const void *d_values_in, void *d_values_out, size_t n,         \
       const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream),                                    \
      (ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in, d_values_out, n, \
       opts, flags, stream))                                                                                \
    X(sort_keys_bits,                                                                                       \
      (gpk_ctx * ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type, const void *d_keys_in,           \
       void *d_keys_out, size_t n, unsigned begin_bit, unsigned end_bit, cudaStream_t stream),              \
      (ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, n, begin_bit, end_bit, stream))            \
    X(sort_pairs_bits,                                                                                      \
      (gpk_ctx * ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type, const void *d_keys_in,           \
       void *d_keys_out, size_t value_width, const void *d_values_in, void *d_values_out, size_t n,         \
       unsigned begin_bit, unsigned end_bit, cudaStream_t stream),                                          \
      (ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in, d_values_out, n, \
       begin_bit, end_bit, stream))                                                                         \
    X(sort_segmented_keys,                                                                                  \
      (gpk_ctx * ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type, const void *d_keys_in,           \
       void *d_keys_out, size_t n, const gpk_segments *segs, const gpk_segmented_opts *opts,                \
       cudaStream_t stream),                                                                                \
      (ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, n, segs, opts, stream))                    \
    X(sort_segmented_pairs,                                                                                 \
      (gpk_ctx * ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type, const void *d_keys_in,           \
       void *d_keys_out, size_t value_width, const void *d_values_in, void *d_values_out, size_t n,         \
       const gpk_segments *segs, const gpk_segmented_opts *opts, cudaStream_t stream),                      \
      (ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in, d_values_out, n, \
       segs, opts, stream))

/* The device API of include/gpk/cuda.h (octree entries NULL when the
 * module is built without the CUDA octree). */
struct gpk__cuda_api {
#define GPK__CUDA_API_MEMBER(name, params, args) gpk_status(*name) params;
    GPK__CUDA_API_SORTS(GPK__CUDA_API_MEMBER)
#undef GPK__CUDA_API_MEMBER
    gpk_status (*octree_build)(gpk_ctx *ctx, const float *d_xyz, size_t n, unsigned leaf_threshold,
                               gpk_octree_scheme scheme, const gpk_octree_opts *opts, gpk_cuda_octree *tree,
                               cudaStream_t stream);
    void (*octree_free)(gpk_cuda_octree *tree);
};
typedef struct gpk__cuda_api gpk__cuda_api;

#ifdef __cplusplus
}
#endif
#endif
