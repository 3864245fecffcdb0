/* The device API (include/gpk/cuda.h) in libgpk.so: each call forwards to
 * the CUDA module's (module.h), so programs link libgpk alone; where
 * the module cannot be loaded, GPK_EUNSUPPORTED says why. The static
 * library has the functions themselves instead. */
#include "cuda_api.h"

/* The module's device API, or NULL with the reason recorded on ctx. */
static const gpk__cuda_api *api_for(gpk_ctx *ctx, const char *fn)
{
    const char *why = NULL;
    const gpk__backend_module *m = gpk__module_get(GPK_BACKEND_CUDA, &why);
    if (!m) gpk__fail(ctx, GPK_EUNSUPPORTED, "%s: %s", fn, why);
    return m ? m->cuda_api : NULL;
}

gpk_status gpk_cuda_sort_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                              const void *d_keys_in, void *d_keys_out, size_t n, const gpk_radix_opts *opts,
                              unsigned flags, cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    return a ? a->sort_keys(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, n, opts, flags, stream)
             : GPK_EUNSUPPORTED;
}

gpk_status gpk_cuda_sort_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                               const void *d_keys_in, void *d_keys_out, size_t value_width,
                               const void *d_values_in, void *d_values_out, size_t n,
                               const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    return a ? a->sort_pairs(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width,
                             d_values_in, d_values_out, n, opts, flags, stream)
             : GPK_EUNSUPPORTED;
}

gpk_status gpk_cuda_sort_keys_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                   const void *d_keys_in, void *d_keys_out, size_t n, unsigned begin_bit,
                                   unsigned end_bit, cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    return a ? a->sort_keys_bits(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, n, begin_bit,
                                 end_bit, stream)
             : GPK_EUNSUPPORTED;
}

gpk_status gpk_cuda_sort_pairs_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                    const void *d_keys_in, void *d_keys_out, size_t value_width,
                                    const void *d_values_in, void *d_values_out, size_t n, unsigned begin_bit,
                                    unsigned end_bit, cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    return a ? a->sort_pairs_bits(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width,
                                  d_values_in, d_values_out, n, begin_bit, end_bit, stream)
             : GPK_EUNSUPPORTED;
}

gpk_status gpk_cuda_sort_segmented_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                        const void *d_keys_in, void *d_keys_out, size_t n,
                                        const gpk_segments *segs, const gpk_segmented_opts *opts,
                                        cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    return a ? a->sort_segmented_keys(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, n, segs, opts,
                                      stream)
             : GPK_EUNSUPPORTED;
}

gpk_status gpk_cuda_sort_segmented_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                         const void *d_keys_in, void *d_keys_out, size_t value_width,
                                         const void *d_values_in, void *d_values_out, size_t n,
                                         const gpk_segments *segs, const gpk_segmented_opts *opts,
                                         cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    return a ? a->sort_segmented_pairs(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width,
                                       d_values_in, d_values_out, n, segs, opts, stream)
             : GPK_EUNSUPPORTED;
}

gpk_status gpk_cuda_octree_build(gpk_ctx *ctx, const float *d_xyz, size_t n, unsigned leaf_threshold,
                                 gpk_octree_scheme scheme, const gpk_octree_opts *opts, gpk_cuda_octree *tree,
                                 cudaStream_t stream)
{
    const gpk__cuda_api *a = api_for(ctx, __func__);
    if (a && !a->octree_build)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "%s: built without the CUDA octree", __func__);
    return a ? a->octree_build(ctx, d_xyz, n, leaf_threshold, scheme, opts, tree, stream) : GPK_EUNSUPPORTED;
}

void gpk_cuda_octree_free(gpk_cuda_octree *tree)
{
    const gpk__backend_module *m = gpk__module_get(GPK_BACKEND_CUDA, NULL);
    if (m && m->cuda_api->octree_free) m->cuda_api->octree_free(tree);
}
