/* Sort dispatch: argument checks and the algorithm choice (sort_common.c),
 * then the context's backend through its table (sort_backend.h). */
#include "sort_backend.h"
#include "sort_common.h"
#include "descending.h"

#include <string.h>

/* The copying sort's copy where the backend cannot read the input itself:
 * in slices over the context's threads, so that the output's fresh pages
 * are faulted in parallel rather than by one thread. */
static void copy_keys(const gpk_ctx *ctx, void *out, const void *in, size_t bytes)
{
    const size_t slice = (size_t)1 << 20;
    const ptrdiff_t slices = (ptrdiff_t)((bytes + slice - 1) / slice);
#pragma omp parallel for num_threads(ctx->threads > 0 ? ctx->threads : 1) schedule(static) if (slices > 1)
    for (ptrdiff_t i = 0; i < slices; i++) {
        const size_t lo = (size_t)i * slice, len = bytes - lo < slice ? bytes - lo : slice;
        memcpy((char *)out + lo, (const char *)in + lo, len);
    }
}

/* Several devices: the radix sort over all of them from a size on (below,
 * the first device alone is faster), unless the input does not fit them
 * (then out of core on the first one). A quicksort, asked for or picked,
 * runs on the first device. */
static int goes_multi(const gpk_ctx *ctx, const gpk__sort_backend *be, gpk_sort_algo algo, size_t n)
{
    return algo == GPK_SORT_RADIX && ctx->n_devices > 1 && n >= gpk__multi_min(ctx) && be->multi;
}

/* kind: 0 keys, 1 pairs (perm counts as pairs: it is pairs with iota
 * values), as gpk__sort_pick's table distinguishes them. src: NULL, or the
 * input of the copying sort (keys is then its output). */
static gpk_status sort_dispatch(gpk_ctx *ctx, gpk_type key_type, const void *src, void *keys,
                                size_t value_width, void *values, void *sigma, unsigned sigma_width, size_t n,
                                const gpk_radix_opts *opts)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    gpk_radix_job job;
    gpk_status s =
        gpk__radix_job_init(ctx, &job, key_type, keys, value_width, values, sigma, sigma_width, n, opts);
    if (s != GPK_OK) return s;
    /* The choice comes before the n < 2 shortcut so that an unsupported
     * request (QUICK on OpenCL) fails the same way whatever n is. It
     * depends on the key's width only, so the descending sort keys below
     * get the same. */
    gpk_sort_algo algo;
    s = gpk__sort_pick(ctx, opts, key_type, n,
                       (value_width || sigma) ? GPK_SORT_KIND_PAIRS : GPK_SORT_KIND_KEYS, &algo);
    if (s != GPK_OK) return s;
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend); /* there: the pick checked */
    const int asked_quick =
        opts && (opts->algorithm == GPK_SORT_QUICK || opts->algorithm == GPK_SORT_QUICK_RECURSIVE);
    if (opts && opts->descending && n >= 2) {
        /* The backend's in-memory radix sort folds the order into its own
         * key map where it can: no pass of its own. */
        if (algo == GPK_SORT_RADIX && be->radix_descending && !be->enomem_goes_ooc &&
            !goes_multi(ctx, be, algo, n) && (asked_quick || !gpk__ooc_wanted(ctx, &job))) {
            job.descending = 1;
        } else {
            /* The ascending sort of the descending sort keys (descending.h),
             * mapped back whatever the sort returns: a failed sort leaves a
             * permutation of the keys as the ascending sort does. */
            gpk_radix_opts asc = *opts;
            asc.descending = 0;
            gpk__desc_apply_host(ctx, key_type, asc.key_bits, src, keys, n, job.key_width, 0);
            s = sort_dispatch(ctx, gpk__desc_sort_type(key_type), NULL, keys, value_width, values, sigma,
                              sigma_width, n, &asc);
            gpk__desc_apply_host(ctx, key_type, asc.key_bits, NULL, keys, n, job.key_width, 1);
            return s;
        }
    }
    ctx->last_sort_path = NULL;
    if (n < 2) {
        if (src) memcpy(keys, src, n * job.key_width);
        if (n == 1 && sigma) gpk__sigma_iota(sigma, sigma_width, 0, 1);
        gpk__set_last_algo(ctx, algo);
        return GPK_OK;
    }
    if (goes_multi(ctx, be, algo, n)) {
        if (src) copy_keys(ctx, keys, src, n * job.key_width);
        job.src = NULL;
        src = NULL;
        int declined = 0;
        s = gpk__multi_sort_host(ctx, &job, &declined);
        if (!declined) {
            if (s == GPK_OK) gpk__set_last_algo(ctx, GPK_SORT_RADIX);
            return s;
        }
    }
    /* Too large for the device (or its budget): the radix sort out of core,
     * which checks the host memory it needs itself. */
    if (!asked_quick && gpk__ooc_wanted(ctx, &job)) {
        if (src) copy_keys(ctx, keys, src, n * job.key_width);
        s = gpk__sort_ooc(ctx, &job);
        if (s == GPK_OK) gpk__set_last_algo(ctx, GPK_SORT_RADIX);
        return s;
    }
    const double per_key = (double)job.key_width +
        (job.values  ? (double)job.value_width
             : sigma ? (double)sigma_width
                     : 0.0);
    s = gpk__sort_mem_check(ctx, n, per_key);
    if (s != GPK_OK) return s;
    if (src) {
        if (be->radix_reads_src && algo == GPK_SORT_RADIX) job.src = src;
        else copy_keys(ctx, keys, src, n * job.key_width);
    }

    if (algo == GPK_SORT_QUICK || algo == GPK_SORT_QUICK_RECURSIVE) {
        gpk_quick_job q;
        memset(&q, 0, sizeof q);
        q.key_type = key_type;
        q.key_width = job.key_width;
        q.base = keys;
        q.n = n;
        q.stride = job.key_width;
        q.key_offset = 0;
        q.values = sigma ? (void *)sigma : job.values;
        q.value_width = sigma ? sigma_width : job.value_width;
        q.recursive = algo == GPK_SORT_QUICK_RECURSIVE;
        /* A permutation is the pairs sort of (key, original index). sigma
         * is output only, so writing it before a failure loses nothing. */
        if (sigma) gpk__sigma_iota(sigma, sigma_width, 0, n);
        s = gpk__quick_run(ctx, &q);
    } else {
        s = be->radix(ctx, &job);
        /* the estimate of gpk__ooc_wanted was short: the in-memory sort
         * failed before touching anything, so out of core it goes */
        if (s == GPK_ENOMEM && be->enomem_goes_ooc) {
            gpk__clear_error(ctx);
            s = gpk__sort_ooc(ctx, &job);
        }
    }
    if (s == GPK_OK) gpk__set_last_algo(ctx, algo);
    return s;
}

gpk_status gpk_sort_keys(gpk_ctx *ctx, gpk_type type, void *keys, size_t n, const gpk_radix_opts *opts)
{
    return sort_dispatch(ctx, type, NULL, keys, 0, NULL, NULL, 0, n, opts);
}

gpk_status gpk_sort_keys_to(gpk_ctx *ctx, gpk_type type, const void *in, void *out, size_t n,
                            const gpk_radix_opts *opts)
{
    if (!ctx) return GPK_EINVAL;
    if (in == out) return gpk_sort_keys(ctx, type, out, n, opts);
    gpk__clear_error(ctx);
    const size_t kw = gpk_type_size(type);
    if (kw && n > 0) {
        if (!in || !out) return gpk__fail(ctx, GPK_EINVAL, "sort: %s is NULL", in ? "out" : "in");
        if (n <= ((size_t)-1) / 16) {
            const uintptr_t a = (uintptr_t)in, b = (uintptr_t)out, bytes = n * kw;
            if (a < b + bytes && b < a + bytes)
                return gpk__fail(ctx, GPK_EINVAL, "sort: in and out overlap without being the same array");
        }
    }
    return sort_dispatch(ctx, type, in, out, 0, NULL, NULL, 0, n, opts);
}

gpk_status gpk_sort_perm(gpk_ctx *ctx, gpk_type type, void *keys, uint32_t *sigma, size_t n,
                         const gpk_radix_opts *opts)
{
    if (ctx && n > 0 && !sigma) return gpk__fail(ctx, GPK_EINVAL, "sort: sigma is NULL");
    return sort_dispatch(ctx, type, NULL, keys, 0, NULL, sigma, 4, n, opts);
}

gpk_status gpk_sort_perm64(gpk_ctx *ctx, gpk_type type, void *keys, uint64_t *sigma, size_t n,
                           const gpk_radix_opts *opts)
{
    if (ctx && n > 0 && !sigma) return gpk__fail(ctx, GPK_EINVAL, "sort: sigma is NULL");
    return sort_dispatch(ctx, type, NULL, keys, 0, NULL, sigma, 8, n, opts);
}

gpk_status gpk_sort_pairs(gpk_ctx *ctx, gpk_type key_type, void *keys, gpk_type value_type, void *values,
                          size_t n, const gpk_radix_opts *opts)
{
    size_t vw = gpk_type_size(value_type);
    if (ctx && vw == 0) return gpk__fail(ctx, GPK_EINVAL, "sort: unknown value type %d", (int)value_type);
    return sort_dispatch(ctx, key_type, NULL, keys, vw, values, NULL, 0, n, opts);
}
