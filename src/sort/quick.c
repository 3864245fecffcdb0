/* Quicksort and records: the algorithm choice, gpk_sort_records and the
 * small public helpers around gpk_sort_algo. The keys / perm / pairs entry
 * points live in radix.c's dispatch, which asks gpk__sort_pick which sort
 * runs and hands quicksort jobs to gpk__quick_run. */
#include "quick_internal.h"
#include "descending.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

/* Shared with radix.c (defined there / here); see radix.c. */
gpk_status gpk__sort_mem_check(gpk_ctx *ctx, size_t n, double bytes_per_elem);
gpk_status gpk__sort_pick(gpk_ctx *ctx, const gpk_radix_opts *opts, gpk_type key_type, size_t n,
                          int kind, gpk_sort_algo *out);
gpk_status gpk__quick_run(gpk_ctx *ctx, const gpk_quick_job *job);

enum { KIND_KEYS = 0, KIND_PAIRS = 1, KIND_RECORDS = 2 };

static const char *const algo_names[4];

void gpk__set_last_algo(gpk_ctx *ctx, gpk_sort_algo a)
{
    if (!ctx) return;
    ctx->last_sort_algo = (int)a;
    if (!ctx->last_sort_path) ctx->last_sort_path = algo_names[a];
}

const char *gpk_last_sort_path(const gpk_ctx *ctx)
{
    return ctx && ctx->last_sort_path ? ctx->last_sort_path : "none";
}

gpk_sort_algo gpk_last_sort_algo(const gpk_ctx *ctx)
{
    /* GPK_SORT_AUTO only when no sort has succeeded on ctx yet. */
    return ctx ? (gpk_sort_algo)ctx->last_sort_algo : GPK_SORT_AUTO;
}

static const char *const algo_names[4] = {"auto", "radix", "quick", "quick-recursive"};

const char *gpk_sort_algo_name(gpk_sort_algo a)
{
    return ((int)a >= 0 && (int)a < 4) ? algo_names[a] : "unknown";
}

gpk_status gpk_sort_algo_parse(const char *name, gpk_sort_algo *out)
{
    if (!name || !out) return GPK_EINVAL;
    for (int a = 0; a < 4; a++)
        if (strcasecmp(name, algo_names[a]) == 0) {
            *out = (gpk_sort_algo)a;
            return GPK_OK;
        }
    /* Spellings people type: "quicksort", "quick_recursive". */
    if (strcasecmp(name, "quicksort") == 0) { *out = GPK_SORT_QUICK; return GPK_OK; }
    if (strcasecmp(name, "quick_recursive") == 0) { *out = GPK_SORT_QUICK_RECURSIVE; return GPK_OK; }
    return GPK_EINVAL;
}

/* ---- AUTO: the measured table ------------------------------------------------
 * One row says: on this backend, for this key width and call kind, with
 * n in [n_min, n_max], quicksort was measured faster than the radix sort.
 * Anything not listed runs the radix sort. A row goes in only with a
 * measurement behind it.
 *
 * CPU rows: 2-core container (AMD EPYC), uniform keys, best of 2..20 runs,
 * n = 2^10..2^24 (figures in docs/guide.md, "Quicksort and records"):
 *  - 8-byte keys alone: the radix sort at every size since its in-cache
 *    path (radix_cpu.c's cache_sort, up to 1 MiB): one thread, CPU time,
 *    u64 uniform / f64 normal(0, 1), 2^12: 2.9 / 4.2 ns per key against
 *    7.0 / 12.9 for quicksort; 2^16: 2.8 / 12.5 against 21 / 19.5; 2^18:
 *    8.1 / 10.7 against 23.6 / 28.9; ties from 2^4 to 2^8 (docs/perf/radix.md,
 *    CPU section); from 2^20 on the hybrid path won before;
 *  - 8-byte pairs: the radix sort, 1.1-2x (quicksort moves 16-byte
 *    structs per swap);
 *  - 4-byte keys and pairs: the radix sort, 1.3-2x from 2^12 on;
 *  - records: within 10% either way from 2^12 on (the gather dominates),
 *    quicksort 1.4-2x up to 2^10.
 * Keys with few distinct bits sort faster by radix (it skips equal bits),
 * but AUTO looks at type and size only.
 * CUDA: records from 2^10 on. `gpk bench quicksort` (docs/perf/quicksort.md)
 * found the radix sort faster for every key type, size (2^20 .. 2^28) and
 * distribution measured for keys, zero entropy included. Records through
 * the host API (32-byte payload, uniform and gaussian, 2^10 .. 2^22, u32
 * and u64 keys): quicksort, whose gather is on the device, faster in 26 of
 * 28 cells; slower in two, within host-to-host noise. The radix record
 * path gathers on the host. Below 2^10 records: not measured, the
 * radix sort stays. OpenCL: no quicksort, so never. */
typedef struct {
    gpk_backend backend;
    unsigned key_width;  /* 4 or 8 */
    int kind;            /* KIND_KEYS, KIND_PAIRS, KIND_RECORDS */
    size_t n_min, n_max;
} auto_row;

static const auto_row auto_table[] = {
    {GPK_BACKEND_CPU, 4, KIND_RECORDS, 0, 1024},
    {GPK_BACKEND_CPU, 8, KIND_RECORDS, 0, 1024},
    {GPK_BACKEND_CUDA, 4, KIND_RECORDS, 1024, SIZE_MAX},
    {GPK_BACKEND_CUDA, 8, KIND_RECORDS, 1024, SIZE_MAX},
};

static int table_says_quick(gpk_backend be, unsigned kw, int kind, size_t n)
{
    for (size_t i = 0; i < sizeof auto_table / sizeof auto_table[0]; i++) {
        const auto_row *r = &auto_table[i];
        if (r->backend == be && r->key_width == kw && r->kind == kind && n >= r->n_min &&
            n <= r->n_max)
            return 1;
    }
    return 0;
}

/* The CUDA quicksort keeps 32-bit positions (segments, tiles and their
 * packed counters); from 2^32 elements on the CUDA backend runs the radix
 * sort instead, which is stable and so keeps QUICK's promise (any order of
 * equal keys); gpk_last_sort_algo says RADIX. */
static gpk_sort_algo cuda_quick_reach(const gpk_ctx *ctx, size_t n, gpk_sort_algo a)
{
    if (ctx->backend == GPK_BACKEND_CUDA && n > UINT32_MAX && (a == GPK_SORT_QUICK || a == GPK_SORT_QUICK_RECURSIVE))
        return GPK_SORT_RADIX;
    return a;
}

gpk_status gpk__sort_pick(gpk_ctx *ctx, const gpk_radix_opts *opts, gpk_type key_type, size_t n,
                          int kind, gpk_sort_algo *out)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    if (opts) o = *opts;
    switch (o.algorithm) {
    case GPK_SORT_RADIX:
        *out = GPK_SORT_RADIX;
        return GPK_OK;
    case GPK_SORT_QUICK:
    case GPK_SORT_QUICK_RECURSIVE:
        if (ctx->backend == GPK_BACKEND_OPENCL)
            return gpk__fail(ctx, GPK_EUNSUPPORTED,
                             "sort: the OpenCL backend has no quicksort; use GPK_SORT_RADIX or "
                             "GPK_SORT_AUTO (the radix sort there)");
        *out = cuda_quick_reach(ctx, n, o.algorithm);
        return GPK_OK;
    case GPK_SORT_AUTO:
        /* b or r only mean something to the radix sort: asking for them is
         * asking for it. */
        if (o.key_bits || o.radix_bits || ctx->backend == GPK_BACKEND_OPENCL)
            *out = GPK_SORT_RADIX;
        else
            *out = cuda_quick_reach(ctx, n,
                                    table_says_quick(ctx->backend, (unsigned)gpk_type_size(key_type), kind, n)
                                        ? GPK_SORT_QUICK
                                        : GPK_SORT_RADIX);
        return GPK_OK;
    default:
        return gpk__fail(ctx, GPK_EINVAL,
                         "sort: unknown algorithm %d (auto = 0, radix = 1, quick = 2, "
                         "quick-recursive = 3)",
                         (int)o.algorithm);
    }
}

gpk_status gpk__quick_run(gpk_ctx *ctx, const gpk_quick_job *job)
{
    switch (ctx->backend) {
    case GPK_BACKEND_CPU: return gpk__quick_sort_cpu(ctx, job);
#ifdef GPK_HAVE_CUDA
    case GPK_BACKEND_CUDA: return gpk__quick_sort_cuda(ctx, job);
#endif
    default:
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "sort: backend %s has no quicksort",
                         gpk_backend_name(ctx->backend));
    }
}

/* ---- records -------------------------------------------------------------------- */

/* The radix way: the keys (copied out from any alignment) and their indices
 * are sorted as pairs by the context's radix sort, which is stable; then
 * the records are gathered into a copy and copied back. Nothing of the
 * caller's is written before the last step, so a failure leaves it as it
 * was. */
static gpk_status records_radix(gpk_ctx *ctx, unsigned char *rec, size_t n, size_t size,
                                size_t key_offset, gpk_type key_type, const gpk_sort_opts *opts)
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
            if (idx64) { uint64_t v = (uint64_t)i; memcpy(idx + (size_t)i * 8, &v, 8); }
            else { uint32_t v = (uint32_t)i; memcpy(idx + (size_t)i * 4, &v, 4); }
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
        s = gpk__fail(ctx, GPK_ENOMEM, "sort records: cannot allocate %zu bytes of host memory",
                      n * size);
        goto done;
    }
    {
        const ptrdiff_t nn = (ptrdiff_t)n;
#pragma omp parallel for num_threads(ctx->threads) schedule(static) if (n > 16384)
        for (ptrdiff_t j = 0; j < nn; j++) {
            size_t from;
            if (idx64) { uint64_t v; memcpy(&v, idx + (size_t)j * 8, 8); from = (size_t)v; }
            else { uint32_t v; memcpy(&v, idx + (size_t)j * 4, 4); from = v; }
            memcpy(out + (size_t)j * size, rec + from * size, size);
        }
    }
    memcpy(rec, out, n * size);
done:
    free(keys);
    free(idx);
    return s;
}

gpk_status gpk_sort_records(gpk_ctx *ctx, void *records, size_t n, size_t record_size,
                            size_t key_offset, gpk_type key_type, const gpk_sort_opts *opts)
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
    gpk_status s = gpk__radix_job_init(ctx, &unused, key_type, records ? records : (void *)ctx, 0,
                                       NULL, NULL, 0, n, opts);
    if (s != GPK_OK) return s;
    if (opts && opts->descending && n >= 2) {
        /* the ascending sort of the descending sort keys (descending.h) */
        gpk_sort_opts asc = *opts;
        asc.descending = 0;
        gpk__desc_apply_host(ctx, key_type, asc.key_bits, NULL, (char *)records + key_offset, n, record_size, 0);
        s = gpk_sort_records(ctx, records, n, record_size, key_offset, gpk__desc_sort_type(key_type), &asc);
        gpk__desc_apply_host(ctx, key_type, asc.key_bits, NULL, (char *)records + key_offset, n, record_size, 1);
        return s;
    }
    gpk_sort_algo algo;
    s = gpk__sort_pick(ctx, opts, key_type, n, KIND_RECORDS, &algo);
    if (s != GPK_OK) return s;
    ctx->last_sort_path = NULL;
    if (n < 2) {
        gpk__set_last_algo(ctx, algo);
        return GPK_OK;
    }
    /* The records, their gathered copy, and the (key, index) pairs twice.
     * On CUDA the radix way keeps the records on the host and its pairs
     * sort goes out of core when the device is short: the host must hold
     * them, so AUTO takes that way when the device cannot. */
    s = gpk__sort_mem_check(ctx, n, (double)record_size + (double)kw + 8.0);
    if (s != GPK_OK && ctx->backend == GPK_BACKEND_CUDA &&
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
        s = records_radix(ctx, records, n, record_size, key_offset, key_type, opts);
    } else {
        gpk_quick_job q;
        memset(&q, 0, sizeof q);
        q.key_type = key_type;
        q.key_width = (unsigned)kw;
        q.base = records;
        q.n = n;
        q.stride = record_size;
        q.key_offset = key_offset;
        q.recursive = algo == GPK_SORT_QUICK_RECURSIVE;
        s = gpk__quick_run(ctx, &q);
    }
    if (s == GPK_OK) gpk__set_last_algo(ctx, algo);
    return s;
}
