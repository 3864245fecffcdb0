/* What the sort family's front ends share: the argument checks of a
 * radix job, the algorithm choice (AUTO's measured table), the memory
 * check, and the bookkeeping behind gpk_last_sort_algo and
 * gpk_last_sort_path. radix.c (keys, pairs, permutations) and quick.c
 * (records) both call it; it calls neither. */
#include "sort_backend.h"
#include "sort_common.h"

#include <string.h>

/* Whether the arrays and their sorted copy fit the backend's memory. Checked
 * before any backend limit such as a 32-bit index range, so an input larger
 * than the device is always ENOMEM, and before an overcommitting host
 * allocator says yes to pages that do not exist. */
gpk_status gpk__sort_mem_check(gpk_ctx *ctx, size_t n, double bytes_per_elem)
{
    const double need = 2.0 * (double)n * bytes_per_elem;
    if (ctx->info.memory_bytes && need > (double)ctx->info.memory_bytes)
        return gpk__fail(ctx, GPK_ENOMEM, "sort: %zu elements need %.2f GiB, %s has %.2f GiB", n,
                         need / 1073741824.0, ctx->info.device_name,
                         (double)ctx->info.memory_bytes / 1073741824.0);
    return GPK_OK;
}

gpk_status gpk__sort_widths_check(gpk_ctx *ctx, const char *fn, const void *array, const char *what,
                                  gpk_type key_type, size_t value_width, size_t *key_width)
{
    if (!array) return gpk__fail(ctx, GPK_EINVAL, "%s: %s is NULL", fn, what);
    *key_width = gpk_type_size(key_type);
    if (*key_width == 0) return gpk__fail(ctx, GPK_EINVAL, "%s: unknown key type %d", fn, (int)key_type);
    if (value_width != 0 && value_width != 4 && value_width != 8)
        return gpk__fail(ctx, GPK_EINVAL, "%s: values must be 4 or 8 bytes wide, not %zu", fn, value_width);
    return GPK_OK;
}

gpk_status gpk__radix_bits_check(gpk_ctx *ctx, const char *fn, gpk_type key_type, gpk_radix_opts *o)
{
    const size_t kw = gpk_type_size(key_type);
    o->key_bits = gpk__key_bits(o->key_bits, kw);
    if (o->key_bits > 8 * kw)
        return gpk__fail(ctx, GPK_EINVAL, "%s: key_bits %u is larger than the %u bits of %s", fn, o->key_bits,
                         (unsigned)(8 * kw), gpk_type_name(key_type));
    if (o->radix_bits > 16)
        return gpk__fail(ctx, GPK_EINVAL, "%s: radix_bits %u is outside 1..16 (0 = tuned)", fn,
                         o->radix_bits);
    return GPK_OK;
}

gpk_status gpk__radix_job_init(gpk_ctx *ctx, gpk_radix_job *job, gpk_type key_type, void *keys,
                               size_t value_width, void *values, void *sigma, unsigned sigma_width, size_t n,
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
    if (sigma && sigma_width != 4 && sigma_width != 8)
        return gpk__fail(ctx, GPK_EINVAL, "sort: sigma entries are 4 or 8 bytes, not %u", sigma_width);
    if (sigma && sigma_width == 4 && n > UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL,
                         "sort: gpk_sort_perm writes a u32 sigma, which cannot index %zu keys (at most "
                         "2^32-1 = %u); use gpk_sort_perm64",
                         n, UINT32_MAX);
    const gpk_status bs = gpk__radix_bits_check(ctx, "sort", key_type, &o);
    if (bs != GPK_OK) return bs;
    if (o.descending != 0 && o.descending != 1)
        return gpk__fail(ctx, GPK_EINVAL, "sort: descending must be 0 or 1, not %d", o.descending);
    if (n > ((size_t)-1) / 16) return gpk__fail(ctx, GPK_EINVAL, "sort: n = %zu is too large to address", n);
    /* The keys, the values and sigma are written in passes that read the
     * others: arrays that share memory would be corrupted, not sorted. */
    const size_t kbytes = n * kw, vbytes = value_width ? n * value_width : 0,
                 sbytes = sigma ? n * sigma_width : 0;
    if (gpk__overlap(keys, kbytes, value_width ? values : NULL, vbytes))
        return gpk__fail(ctx, GPK_EINVAL, "sort: keys and values overlap");
    if (gpk__overlap(keys, kbytes, sigma, sbytes))
        return gpk__fail(ctx, GPK_EINVAL, "sort: keys and sigma overlap");
    if (gpk__overlap(value_width ? values : NULL, vbytes, sigma, sbytes))
        return gpk__fail(ctx, GPK_EINVAL, "sort: values and sigma overlap");
    memset(job, 0, sizeof *job);
    job->key_type = key_type;
    job->key_width = (unsigned)kw;
    job->keys = keys;
    job->values = value_width ? values : NULL;
    job->value_width = (unsigned)value_width;
    job->sigma = sigma;
    job->sigma_width = sigma ? sigma_width : 0;
    job->n = n;
    job->key_bits = o.key_bits;
    job->radix_bits = o.radix_bits;
    job->items = o.items;
    job->groups = o.groups;
    job->scan_split = o.scan_split;
    return GPK_OK;
}

void gpk__set_last_algo(gpk_ctx *ctx, gpk_sort_algo a)
{
    if (!ctx) return;
    ctx->last_sort_algo = (int)a;
    if (!ctx->last_sort_path) ctx->last_sort_path = gpk_sort_algo_name(a);
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

/* the canonical name of each algorithm first; then the spellings people
 * type: "quicksort", "quick_recursive" */
static const gpk__name_value algo_names[] = {
    {"auto", GPK_SORT_AUTO},       {"radix", GPK_SORT_RADIX},
    {"quick", GPK_SORT_QUICK},     {"quick-recursive", GPK_SORT_QUICK_RECURSIVE},
    {"quicksort", GPK_SORT_QUICK}, {"quick_recursive", GPK_SORT_QUICK_RECURSIVE},
};
GPK__NAME_FUNCTIONS(gpk_sort_algo, gpk_sort_algo_name, gpk_sort_algo_parse, algo_names)

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
    unsigned key_width; /* 4 or 8 */
    int kind;           /* GPK_SORT_KIND_* */
    size_t n_min, n_max;
} auto_row;

static const auto_row auto_table[] = {
    {GPK_BACKEND_CPU, 4, GPK_SORT_KIND_RECORDS, 0, 1024},
    {GPK_BACKEND_CPU, 8, GPK_SORT_KIND_RECORDS, 0, 1024},
    {GPK_BACKEND_CUDA, 4, GPK_SORT_KIND_RECORDS, 1024, SIZE_MAX},
    {GPK_BACKEND_CUDA, 8, GPK_SORT_KIND_RECORDS, 1024, SIZE_MAX},
};

static int table_says_quick(gpk_backend be, unsigned kw, int kind, size_t n)
{
    for (size_t i = 0; i < sizeof auto_table / sizeof auto_table[0]; i++) {
        const auto_row *r = &auto_table[i];
        if (r->backend == be && r->key_width == kw && r->kind == kind && n >= r->n_min && n <= r->n_max)
            return 1;
    }
    return 0;
}

const gpk__sort_backend *gpk__sort_backend_for(gpk_ctx *ctx, const char *what)
{
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend);
    if (!be)
        gpk__fail(ctx, GPK_EUNSUPPORTED, "%s: backend %s is not built in", what,
                  gpk_backend_name(ctx->backend));
    return be;
}

/* Past its backend's quick_max_n elements (the CUDA quicksort keeps 32-bit
 * positions), a quicksort runs as the radix sort, which is stable and so
 * keeps QUICK's promise (any order of equal keys); gpk_last_sort_algo says
 * RADIX. */
static gpk_sort_algo quick_reach(const gpk__sort_backend *be, size_t n, gpk_sort_algo a)
{
    if (n > be->quick_max_n && (a == GPK_SORT_QUICK || a == GPK_SORT_QUICK_RECURSIVE)) return GPK_SORT_RADIX;
    return a;
}

gpk_status gpk__sort_pick(gpk_ctx *ctx, const gpk_radix_opts *opts, gpk_type key_type, size_t n, int kind,
                          gpk_sort_algo *out)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    if (opts) o = *opts;
    const gpk__sort_backend *be = gpk__sort_backend_for(ctx, "sort");
    if (!be) return GPK_EUNSUPPORTED;
    switch (o.algorithm) {
    case GPK_SORT_RADIX: *out = GPK_SORT_RADIX; return GPK_OK;
    case GPK_SORT_QUICK:
    case GPK_SORT_QUICK_RECURSIVE:
        if (!be->quick) {
            const gpk__device_backend *dev = gpk__device_backend_of(ctx->backend, NULL);
            return gpk__fail(ctx, GPK_EUNSUPPORTED,
                             "sort: the %s backend has no quicksort; use GPK_SORT_RADIX or "
                             "GPK_SORT_AUTO (the radix sort there)",
                             dev ? dev->label : gpk_backend_name(ctx->backend));
        }
        *out = quick_reach(be, n, o.algorithm);
        return GPK_OK;
    case GPK_SORT_AUTO:
        /* b or r only mean something to the radix sort: asking for them is
         * asking for it (every bit is what every sort sorts). */
        if ((o.key_bits && o.key_bits != GPK_KEY_BITS_ALL) || o.radix_bits || !be->quick)
            *out = GPK_SORT_RADIX;
        else
            *out = quick_reach(be, n,
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
