/* The bench hooks (bench_hooks.h): thin entries over the families'
 * internals, so that the benchmarks see only that header. The timing
 * itself stays in each backend (radix_bench, quick_bench of its sort
 * table, sort/sort_backend.h). */
#include "bench_hooks.h"

#include <string.h>

#include "../core/internal.h"
#include "../sort/sort_backend.h"
#ifdef GPK_HAVE_CUDA_SEARCH
#include "../search/problem.h"
#include "../search/search_run.h"
#endif

/* The sort table of ctx's backend where it times its radix sort (quick =
 * 0) or quicksort (1) on device-resident data; else NULL, the error set. */
static const gpk__sort_backend *timed_backend(gpk_ctx *ctx, int quick)
{
    const gpk__sort_backend *be = gpk__sort_backend_for(ctx, "bench");
    if (be && !(quick ? be->quick_bench != NULL : be->radix_bench != NULL)) {
        gpk__fail(ctx, GPK_EUNSUPPORTED, "bench: the %s %s has no device-resident timing",
                  gpk_backend_name(ctx->backend), quick ? "quicksort" : "radix sort");
        return NULL;
    }
    return be;
}

gpk_status gpk__bench_radix(gpk_ctx *ctx, gpk_type key_type, void *keys, size_t value_width, void *values,
                            uint32_t *sigma, size_t n, const gpk_radix_opts *opts, int reps, double *ms)
{
    if (!ctx || !ms || reps < 1) return gpk__fail(ctx, GPK_EINVAL, "bench: ctx, ms and reps >= 1 are needed");
    const gpk__sort_backend *be = timed_backend(ctx, 0);
    if (!be) return GPK_EUNSUPPORTED;
    gpk_radix_job job;
    const gpk_status s =
        gpk__radix_job_init(ctx, &job, key_type, keys, value_width, values, sigma, 4, n, opts);
    return s == GPK_OK ? be->radix_bench(ctx, &job, reps, ms) : s;
}

gpk_status gpk__bench_quick(gpk_ctx *ctx, gpk_type key_type, void *base, size_t n, size_t stride,
                            int recursive, int reps, double *ms)
{
    if (!ctx || !base || !ms || reps < 1 || n < 2 || gpk_key_bytes(key_type) == 0 ||
        stride < gpk_key_bytes(key_type))
        return gpk__fail(ctx, GPK_EINVAL, "bench: quicksort of %zu elements of %zu bytes: bad arguments", n,
                         stride);
    const gpk__sort_backend *be = timed_backend(ctx, 1);
    if (!be) return GPK_EUNSUPPORTED;
    const gpk_quick_job q = {.key_type = key_type,
                             .key_width = gpk_key_bytes(key_type),
                             .base = base,
                             .n = n,
                             .stride = stride,
                             .recursive = recursive};
    return be->quick_bench(ctx, &q, reps, ms);
}

void gpk__bench_key_range(uint64_t and_all, uint64_t or_all, unsigned *begin, unsigned *end)
{
    gpk__radix_range_from_masks(and_all, or_all, begin, end);
}

#ifdef GPK_HAVE_CUDA_SEARCH
gpk_status gpk__bench_tsp_eval_open(gpk_ctx *ctx, const gpk_tsp *tsp, gpk__bench_tsp_eval **out, int *fast)
{
    if (!ctx || !tsp || !out) return gpk__fail(ctx, GPK_EINVAL, "bench: a TSP instance is needed");
    const gpk__search_cfg c = {.kind = GPK_PROBLEM_TSP,
                               .ops = gpk__problem(GPK_PROBLEM_TSP),
                               .tsp = tsp,
                               .nb = GPK_NB_TWO_OPT,
                               .n = tsp->n,
                               .threads = 1};
    const gpk__search_backend *scans = gpk__search_backend_of(GPK_BACKEND_CUDA);
    if (!scans) return gpk__fail(ctx, GPK_EUNSUPPORTED, "bench: the CUDA module is not loaded");
    const gpk_status s = scans->open(ctx, &c, out);
    if (s == GPK_OK && fast) *fast = scans->fast(*out);
    return s;
}

gpk_status gpk__bench_tsp_eval_best(gpk__bench_tsp_eval *e, const uint32_t *tour, int64_t *delta, uint64_t *k)
{
    gpk__search_cuda_in in;
    memset(&in, 0, sizeof in);
    in.perm = tour;
    gpk__search_cuda_move any, adm;
    const gpk_status s =
        gpk__search_backend_of(GPK_BACKEND_CUDA)->best_move(e, &in, GPK__SEARCH_CUDA_OURS, &any, &adm);
    if (s == GPK_OK) *delta = any.d, *k = any.k;
    return s;
}

void gpk__bench_tsp_eval_close(gpk__bench_tsp_eval *e)
{
    if (e) gpk__search_backend_of(GPK_BACKEND_CUDA)->close(e);
}
#endif
