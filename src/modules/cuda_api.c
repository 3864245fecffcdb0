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

#define FORWARD(name, params, args)                      \
    gpk_status gpk_cuda_##name params                    \
    {                                                    \
        const gpk__cuda_api *a = api_for(ctx, __func__); \
        return a ? a->name args : GPK_EUNSUPPORTED;      \
    }
GPK__CUDA_API_SORTS(FORWARD)

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
