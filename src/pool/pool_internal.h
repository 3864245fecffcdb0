/* Task pools: what the dispatch (pool.c) hands to the CPU implementation. */
#ifndef GPK_POOL_INTERNAL_H
#define GPK_POOL_INTERNAL_H

#include "gpk/pool.h"
#include "../core/internal.h"

/* Largest capacity accepted: the lock-free queue names a task by a 32-bit
 * handle and each slot carries a 32-bit lap counter. */
#define GPK_POOL_CAPACITY_MAX ((size_t)1 << 30)
/* More workers than this is a mistake, not a configuration. */
#define GPK_POOL_WORKERS_MAX 4096u
/* Default capacity (pool.h): 2^20, and at least 2 x the initial tasks. */
#define GPK_POOL_DEFAULT_CAPACITY ((size_t)1 << 20)

/* Everything validated and resolved by gpk_pool_run. */
typedef struct gpk_pool_config {
    gpk_pool_scheme scheme;
    const void *initial_tasks;
    size_t n_initial; /* >= 1 */
    size_t task_size; /* 1 .. GPK_POOL_MAX_TASK */
    gpk_pool_work_fn work;
    void *user;
    unsigned workers; /* >= 1 */
    size_t capacity;  /* >= n_initial, <= GPK_POOL_CAPACITY_MAX */
    gpk_pool_victim victim;
    uint64_t seed;
} gpk_pool_config;

/* Runs the pool on CPU threads. On failure records the message on ctx
 * (from the calling thread only: workers never touch ctx). stats is filled
 * on success and on failure. */
gpk_status gpk__pool_run_cpu(gpk_ctx *ctx, const gpk_pool_config *cfg, gpk_pool_stats *stats);

#endif
