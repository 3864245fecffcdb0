/* Radix sort dispatch: argument checks, then the context's backend. */
#include "radix_internal.h"

#include <string.h>

gpk_status gpk__radix_job_init(gpk_ctx *ctx, gpk_radix_job *job, gpk_type key_type, void *keys,
                               size_t value_width, void *values, uint32_t *sigma, size_t n,
                               const gpk_radix_opts *opts)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    if (opts) o = *opts;
    size_t kw = gpk_type_size(key_type);
    if (kw == 0) return gpk__fail(ctx, GPK_EINVAL, "sort: unknown key type %d", (int)key_type);
    if (n > 0 && !keys) return gpk__fail(ctx, GPK_EINVAL, "sort: keys is NULL");
    if (value_width != 0 && value_width != 4 && value_width != 8)
        return gpk__fail(ctx, GPK_EINVAL, "sort: values must be 4 or 8 bytes wide, not %zu", value_width);
    if (n > 0 && value_width && !values) return gpk__fail(ctx, GPK_EINVAL, "sort: values is NULL");
    if (sigma && n > UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "sort: a u32 permutation cannot index %zu keys (max %u)",
                         n, UINT32_MAX);
    if (o.key_bits > 8 * kw)
        return gpk__fail(ctx, GPK_EINVAL, "sort: key_bits %u is larger than the %u bits of %s",
                         o.key_bits, (unsigned)(8 * kw), gpk_type_name(key_type));
    if (o.radix_bits > 16)
        return gpk__fail(ctx, GPK_EINVAL, "sort: radix_bits %u is outside 1..16 (0 = tuned)",
                         o.radix_bits);
    if (n > ((size_t)-1) / 16)
        return gpk__fail(ctx, GPK_EINVAL, "sort: n = %zu is too large to address", n);
    memset(job, 0, sizeof *job);
    job->key_type = key_type;
    job->key_width = (unsigned)kw;
    job->keys = keys;
    job->values = value_width ? values : NULL;
    job->value_width = (unsigned)value_width;
    job->sigma = sigma;
    job->n = n;
    job->key_bits = o.key_bits;
    job->radix_bits = o.radix_bits;
    job->items = o.items;
    job->groups = o.groups;
    job->scan_split = o.scan_split;
    return GPK_OK;
}

static gpk_status sort_dispatch(gpk_ctx *ctx, gpk_type key_type, void *keys, size_t value_width,
                                void *values, uint32_t *sigma, size_t n,
                                const gpk_radix_opts *opts)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    gpk_radix_job job;
    gpk_status s = gpk__radix_job_init(ctx, &job, key_type, keys, value_width, values, sigma, n, opts);
    if (s != GPK_OK) return s;
    if (n < 2) {
        if (n == 1 && sigma) sigma[0] = 0;
        return GPK_OK;
    }
    /* The keys (and values or sigma) and their sorted copy must fit the
     * backend's memory. Checked here, before any backend limit such as a
     * 32-bit index range, so an input larger than the device is always
     * ENOMEM, and before an overcommitting host allocator says yes to pages
     * that do not exist. */
    const double per_key = (double)job.key_width + (job.values ? (double)job.value_width : sigma ? 4.0 : 0.0);
    const double need = 2.0 * (double)n * per_key;
    if (ctx->info.memory_bytes && need > (double)ctx->info.memory_bytes)
        return gpk__fail(ctx, GPK_ENOMEM, "sort: %zu keys need %.2f GiB, %s has %.2f GiB", n,
                         need / 1073741824.0, ctx->info.device_name,
                         (double)ctx->info.memory_bytes / 1073741824.0);
    switch (ctx->backend) {
    case GPK_BACKEND_CPU: return gpk__radix_sort_cpu(ctx, &job);
#ifdef GPK_HAVE_CUDA
    case GPK_BACKEND_CUDA: return gpk__radix_sort_cuda(ctx, &job);
#endif
#ifdef GPK_HAVE_OPENCL
    case GPK_BACKEND_OPENCL: return gpk__radix_sort_opencl(ctx, &job);
#endif
    default:
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "sort: backend %s is not built in",
                         gpk_backend_name(ctx->backend));
    }
}

gpk_status gpk_sort_keys(gpk_ctx *ctx, gpk_type type, void *keys, size_t n,
                         const gpk_radix_opts *opts)
{
    return sort_dispatch(ctx, type, keys, 0, NULL, NULL, n, opts);
}

gpk_status gpk_sort_perm(gpk_ctx *ctx, gpk_type type, void *keys, uint32_t *sigma, size_t n,
                         const gpk_radix_opts *opts)
{
    if (ctx && n > 0 && !sigma) return gpk__fail(ctx, GPK_EINVAL, "sort: sigma is NULL");
    return sort_dispatch(ctx, type, keys, 0, NULL, sigma, n, opts);
}

gpk_status gpk_sort_pairs(gpk_ctx *ctx, gpk_type key_type, void *keys, gpk_type value_type,
                          void *values, size_t n, const gpk_radix_opts *opts)
{
    size_t vw = gpk_type_size(value_type);
    if (ctx && vw == 0)
        return gpk__fail(ctx, GPK_EINVAL, "sort: unknown value type %d", (int)value_type);
    return sort_dispatch(ctx, key_type, keys, vw, values, NULL, n, opts);
}
