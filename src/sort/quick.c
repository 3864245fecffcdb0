/* Quicksort and records: gpk__quick_run (the backend's quicksort) and
 * gpk_sort_records. The keys / perm / pairs entry points live in radix.c's
 * dispatch, which asks gpk__sort_pick (sort_common.c) which sort runs and
 * hands quicksort jobs to gpk__quick_run. */
#include "sort_backend.h"
#include "sort_common.h"
#include "descending.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

gpk_status gpk__quick_run(gpk_ctx *ctx, const gpk_quick_job *job)
{
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend);
    if (!be || !be->quick)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "sort: backend %s has no quicksort",
                         gpk_backend_name(ctx->backend));
    return be->quick(ctx, job);
}

/* ---- records -------------------------------------------------------------------- */

/* The radix way: the keys (copied out from any alignment) and their indices
 * are sorted as pairs by the context's radix sort, which is stable; then
 * the records are gathered into a copy and copied back. Nothing of the
 * caller's is written before the last step, so a failure leaves it as it
 * was. */
static gpk_status records_radix(gpk_ctx *ctx, unsigned char *rec, size_t n, size_t size, size_t key_offset,
                                gpk_type key_type, const gpk_sort_opts *opts)
{
    const size_t kw = gpk_type_size(key_type);
    const int idx64 = n > UINT32_MAX;
    const size_t iw = idx64 ? 8 : 4;
    /* The keys and indices in allocations of their own: the radix sort
     * called below takes the context's host scratch for itself. The
     * gathered copy comes from that scratch once the sort is done with it
     * (kept between calls, it spares the page faults of a fresh copy). */
    unsigned char *keys = malloc(n * kw), *idx = malloc(n * iw), *out = NULL;
    gpk_status s = GPK_ENOMEM;
    if (!keys || !idx) {
        s = gpk__fail(ctx, GPK_ENOMEM, "sort records: cannot allocate %zu bytes of host memory",
                      n * (kw + iw));
        goto done;
    }
    {
        const ptrdiff_t nn = (ptrdiff_t)n;
#pragma omp parallel for num_threads(ctx->threads) schedule(static) if (n > 65536)
        for (ptrdiff_t i = 0; i < nn; i++) {
            memcpy(keys + (size_t)i * kw, rec + (size_t)i * size + key_offset, kw);
            if (idx64) {
                uint64_t v = (uint64_t)i;
                memcpy(idx + (size_t)i * 8, &v, 8);
            } else {
                uint32_t v = (uint32_t)i;
                memcpy(idx + (size_t)i * 4, &v, 4);
            }
        }
    }
    /* key_bits, radix_bits and the tunables apply to the key sort; the
     * pairs call validates them (before any of the caller's data moves). */
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    if (opts) o = *opts;
    o.algorithm = GPK_SORT_RADIX;
    s = gpk_sort_pairs(ctx, key_type, keys, idx64 ? GPK_U64 : GPK_U32, idx, n, &o);
    if (s != GPK_OK) goto done;
    out = gpk__host_scratch(ctx, n * size);
    if (!out) {
        s = gpk__fail(ctx, GPK_ENOMEM, "sort records: cannot allocate %zu bytes of host memory", n * size);
        goto done;
    }
    {
        const ptrdiff_t nn = (ptrdiff_t)n;
#pragma omp parallel for num_threads(ctx->threads) schedule(static) if (n > 16384)
        for (ptrdiff_t j = 0; j < nn; j++) {
            size_t from;
            if (idx64) {
                uint64_t v;
                memcpy(&v, idx + (size_t)j * 8, 8);
                from = (size_t)v;
            } else {
                uint32_t v;
                memcpy(&v, idx + (size_t)j * 4, 4);
                from = v;
            }
            memcpy(out + (size_t)j * size, rec + from * size, size);
        }
    }
    memcpy(rec, out, n * size);
done:
    free(keys);
    free(idx);
    return s;
}

gpk_status gpk_sort_records(gpk_ctx *ctx, void *records, size_t n, size_t record_size, size_t key_offset,
                            gpk_type key_type, const gpk_sort_opts *opts)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    const size_t kw = gpk_type_size(key_type);
    if (kw == 0) return gpk__fail(ctx, GPK_EINVAL, "sort records: unknown key type %d", (int)key_type);
    if (record_size < 1 || record_size > 256)
        return gpk__fail(ctx, GPK_EINVAL, "sort records: record size %zu is outside 1..256 bytes",
                         record_size);
    if (key_offset > record_size || record_size - key_offset < kw)
        return gpk__fail(ctx, GPK_EINVAL,
                         "sort records: the %s key at byte offset %zu (%zu bytes) does not fit "
                         "in a %zu-byte record",
                         gpk_type_name(key_type), key_offset, kw, record_size);
    if (n > 0 && !records) return gpk__fail(ctx, GPK_EINVAL, "sort records: records is NULL");
    if (n > ((size_t)-1) / 512)
        return gpk__fail(ctx, GPK_EINVAL, "sort records: n = %zu is too large to address", n);
    /* The options are checked by the same code as for keys (records hand
     * their keys to that sort); a non-NULL stand-in for the keys pointer,
     * since the records pointer was checked above. */
    gpk_radix_job unused;
    gpk_status s = gpk__radix_job_init(ctx, &unused, key_type, records ? records : (void *)ctx, 0, NULL, NULL,
                                       0, n, opts);
    if (s != GPK_OK) return s;
    gpk_sort_algo algo;
    s = gpk__sort_pick(ctx, opts, key_type, n, GPK_SORT_KIND_RECORDS, &algo);
    if (s != GPK_OK) return s;
    ctx->last_sort_path = NULL;
    if (n < 2) {
        gpk__set_last_algo(ctx, algo);
        return GPK_OK;
    }
    /* The records, their gathered copy, and the (key, index) pairs twice.
     * Where the radix sort goes out of core when the device is short
     * (CUDA), the radix way keeps the records on the host: the host must
     * hold them, so AUTO takes that way when the device cannot. */
    s = gpk__sort_mem_check(ctx, n, (double)record_size + (double)kw + 8.0);
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend);
    if (s != GPK_OK && be && be->enomem_goes_ooc &&
        (algo == GPK_SORT_RADIX || !opts || opts->algorithm == GPK_SORT_AUTO)) {
        const double need = (double)n * ((double)record_size + 2.0 * ((double)kw + 8.0));
        const uint64_t host = gpk__host_memory_bytes();
        if (host && need > (double)host) return s;
        gpk__clear_error(ctx);
        algo = GPK_SORT_RADIX;
        s = GPK_OK;
    }
    if (s != GPK_OK) return s;

    if (algo == GPK_SORT_RADIX) {
        /* the keys' sort takes the order (descending included) */
        s = records_radix(ctx, records, n, record_size, key_offset, key_type, opts);
    } else {
        /* descending: the ascending sort of the descending sort keys
         * (descending.h), mapped back whatever the sort returns */
        const int desc = opts && opts->descending;
        const unsigned key_bits = opts ? opts->key_bits : 0;
        char *first_key = (char *)records + key_offset;
        gpk_quick_job q;
        memset(&q, 0, sizeof q);
        q.key_type = desc ? gpk__desc_sort_type(key_type) : key_type;
        q.key_width = (unsigned)kw;
        q.base = records;
        q.n = n;
        q.stride = record_size;
        q.key_offset = key_offset;
        q.recursive = algo == GPK_SORT_QUICK_RECURSIVE;
        if (desc) gpk__desc_apply_host(ctx, key_type, key_bits, NULL, first_key, n, record_size, 0);
        s = gpk__quick_run(ctx, &q);
        if (desc) gpk__desc_apply_host(ctx, key_type, key_bits, NULL, first_key, n, record_size, 1);
    }
    if (s == GPK_OK) gpk__set_last_algo(ctx, algo);
    return s;
}
