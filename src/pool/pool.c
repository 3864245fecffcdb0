/* Task pools: argument checks, scheme names and dispatch. Every backend
 * runs the pools on host threads (work functions are host functions); the
 * device-side pools for CUDA kernels are a separate header (future work). */
#include "pool_internal.h"

#include <string.h>

/* the canonical name of each scheme first: gpk_pool_scheme_name returns it */
static const gpk__name_value scheme_names[] = {
    {"static", GPK_POOL_STATIC},  {"blocking", GPK_POOL_BLOCKING}, {"lockfree", GPK_POOL_LOCKFREE},
    {"steal", GPK_POOL_STEAL},    {"queue", GPK_POOL_BLOCKING},    {"lock-free", GPK_POOL_LOCKFREE},
    {"stealing", GPK_POOL_STEAL},
};
#define SCHEME_NAMES (sizeof scheme_names / sizeof scheme_names[0])

const char *gpk_pool_scheme_name(gpk_pool_scheme s)
{
    return gpk__name_of(scheme_names, SCHEME_NAMES, (int)s);
}

gpk_status gpk_pool_scheme_parse(const char *name, gpk_pool_scheme *out)
{
    if (!name || !out)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_pool_scheme_parse: %s is NULL", name ? "out" : "name");
    int v;
    if (!gpk__name_lookup(scheme_names, SCHEME_NAMES, name, &v))
        return gpk__fail(NULL, GPK_EINVAL, "unknown pool scheme \"%s\" (static, blocking, lockfree, steal)",
                         name);
    *out = (gpk_pool_scheme)v;
    return GPK_OK;
}

gpk_status gpk_pool_run(gpk_ctx *ctx, gpk_pool_scheme scheme, const void *initial_tasks, size_t n_initial,
                        size_t task_size, gpk_pool_work_fn work, void *user, const gpk_pool_opts *opts,
                        gpk_pool_stats *stats)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (!ctx) return gpk__fail(NULL, GPK_EINVAL, "gpk_pool_run: ctx is NULL");
    gpk__clear_error(ctx);
    if ((unsigned)scheme >= GPK_POOL_SCHEMES)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: unknown scheme %d", (int)scheme);
    if (task_size < 1 || task_size > GPK_POOL_MAX_TASK)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: task_size %zu is not in 1..%d", task_size,
                         GPK_POOL_MAX_TASK);
    if (!work) return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: work function is NULL");
    if (n_initial > 0 && !initial_tasks)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: initial_tasks is NULL but n_initial is %zu",
                         n_initial);

    gpk_pool_opts defaults = GPK_POOL_OPTS_INIT;
    const gpk_pool_opts *o = opts ? opts : &defaults;
    if (o->victim != GPK_POOL_VICTIM_ROUND_ROBIN && o->victim != GPK_POOL_VICTIM_RANDOM)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: unknown victim policy %d", (int)o->victim);
    unsigned workers = o->workers ? o->workers : (unsigned)(ctx->threads > 0 ? ctx->threads : 1);
    if (workers > GPK_POOL_WORKERS_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: %u workers (at most %u)", workers,
                         GPK_POOL_WORKERS_MAX);
    if (n_initial > GPK_POOL_CAPACITY_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: %zu initial tasks (at most %zu)", n_initial,
                         GPK_POOL_CAPACITY_MAX);
    size_t capacity = o->capacity;
    if (capacity == 0) {
        capacity = GPK_POOL_DEFAULT_CAPACITY;
        if (capacity < 2 * n_initial) capacity = 2 * n_initial;
        if (capacity > GPK_POOL_CAPACITY_MAX) capacity = GPK_POOL_CAPACITY_MAX;
    } else if (capacity > GPK_POOL_CAPACITY_MAX) {
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: capacity %zu is above the limit %zu", capacity,
                         GPK_POOL_CAPACITY_MAX);
    } else if (capacity < n_initial) {
        return gpk__fail(ctx, GPK_EINVAL, "gpk_pool_run: capacity %zu is less than the %zu initial tasks",
                         capacity, n_initial);
    }
    if (n_initial == 0) return GPK_OK; /* nothing to run: stats stay zero */

    gpk_pool_config cfg = {scheme, initial_tasks, n_initial, task_size, work,
                           user,   workers,       capacity,  o->victim, o->seed};
    /* Work functions are host functions, so every backend (CPU, CUDA,
     * OpenCL) runs the pool on the host threads. */
    return gpk__pool_run_cpu(ctx, &cfg, stats);
}
