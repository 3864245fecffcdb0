/* Dynamic load balancing: the four task pools of Cederman & Tsigas 2008.
 *
 * A task is a fixed-size record chosen by the caller (task_size bytes, up
 * to GPK_POOL_MAX_TASK). gpk_pool_run starts workers (CPU threads of the
 * context), seeds the pool with the initial tasks and runs `work` on every
 * task exactly once; a work function may push new tasks, which are run too.
 * The run ends when every task pushed has been run (or a work function
 * fails, or a pool is full).
 *
 * Schemes (the paper's Section 4):
 *   STATIC    static task list: two arrays, `in` and `out`. In a round every
 *             worker takes tasks from `in` with a fetch-and-add on its
 *             head and appends pushed tasks to `out` with a fetch-and-add
 *             on its tail; at the end of the round (a barrier) the arrays
 *             swap. Rounds go on until `out` stays empty.
 *   BLOCKING  one shared array queue behind a CAS spin lock.
 *   LOCKFREE  one shared lock-free array queue (Tsigas & Zhang 2001): slots
 *             changed by CAS, head and tail updated lazily, ABA-safe.
 *   STEAL     work stealing: one ABP / Chase-Lev deque per worker; the
 *             owner pushes and pops at the tail, thieves take from the head;
 *             victims chosen round-robin (the paper's) or at random.
 *
 * Every queue and deque is bounded (opts.capacity); a push that does not fit
 * fails the run with GPK_EFULL and a message naming the scheme and the
 * capacity: nothing is lost or overwritten silently.
 *
 * Backends: the CPU backend runs pools on its threads. CUDA kernels use the
 * device-side pools of gpk/pool_cuda.cuh; gpk_pool_run on a
 * CUDA or OpenCL context runs on the host threads all the same (work
 * functions are host functions). */
#ifndef GPK_POOL_H
#define GPK_POOL_H

#include "gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_POOL_MAX_TASK 256 /* bytes per task at most */

typedef enum gpk_pool_scheme {
    GPK_POOL_STATIC = 0,
    GPK_POOL_BLOCKING = 1,
    GPK_POOL_LOCKFREE = 2,
    GPK_POOL_STEAL = 3
} gpk_pool_scheme;
#define GPK_POOL_SCHEMES 4

typedef enum gpk_pool_victim {
    GPK_POOL_VICTIM_ROUND_ROBIN = 0, /* the paper's: the next worker after the last victim */
    GPK_POOL_VICTIM_RANDOM = 1       /* a random other worker (per-worker xorshift, seeded); the
                                        default: on a GPU's thousands of blocks, round-robin
                                        thieves probe the same victims in step (docs/pool.md) */
} gpk_pool_victim;

typedef struct gpk_pool_opts {
    unsigned workers;       /* 0: the context's CPU threads */
    size_t capacity;        /* tasks one queue holds: STATIC each array, BLOCKING and
                                LOCKFREE the queue, STEAL each deque; 0: default (2^20,
                                and at least 2 x the initial tasks) */
    gpk_pool_victim victim; /* STEAL only (GPK_POOL_OPTS_INIT: random) */
    uint64_t seed;          /* random victims */
} gpk_pool_opts;
#define GPK_POOL_OPTS_INIT                 \
    {                                      \
        0u, 0u, GPK_POOL_VICTIM_RANDOM, 1u \
    }

typedef struct gpk_pool_stats {
    uint64_t tasks;          /* tasks run: initial + pushed */
    uint64_t pushed;         /* tasks pushed by work functions */
    uint64_t rounds;         /* STATIC: rounds; others 0 */
    uint64_t steals;         /* STEAL: successful steals */
    uint64_t steal_attempts; /* STEAL: attempts, successful or not */
    unsigned workers;        /* workers that ran */
    double ms;               /* wall time of the run */
} gpk_pool_stats;

/* What a work function gets to push tasks and know who it is. */
typedef struct gpk_pool_worker gpk_pool_worker;

/* Pushes one task (task_size bytes, copied). GPK_EFULL when the worker's
 * queue or deque is full: the run then stops and gpk_pool_run returns
 * GPK_EFULL; the work function should return at once. */
GPK_API gpk_status gpk_pool_push(gpk_pool_worker *w, const void *task);
/* 0 .. workers - 1 */
GPK_API unsigned gpk_pool_worker_id(const gpk_pool_worker *w);

/* Runs one task. Returns GPK_OK to go on; anything else stops the run and
 * gpk_pool_run returns it (tasks not yet run are dropped). `task` points to
 * a private copy, aligned for any type, valid during the call only; w is
 * valid during the call only (push from this call, with this w). */
typedef gpk_status (*gpk_pool_work_fn)(gpk_pool_worker *w, const void *task, void *user);

/* n_initial tasks of task_size bytes at initial_tasks (NULL when
 * n_initial = 0: the run ends at once). opts and stats may be NULL. */
GPK_API gpk_status gpk_pool_run(gpk_ctx *ctx, gpk_pool_scheme scheme, const void *initial_tasks,
                                size_t n_initial, size_t task_size, gpk_pool_work_fn work, void *user,
                                const gpk_pool_opts *opts, gpk_pool_stats *stats);

/* "static", "blocking", "lockfree", "steal" (also "queue" for blocking,
 * "lock-free" for lockfree, "stealing"); the parse is case-blind. */
GPK_API const char *gpk_pool_scheme_name(gpk_pool_scheme s);
GPK_API gpk_status gpk_pool_scheme_parse(const char *name, gpk_pool_scheme *out);

#ifdef __cplusplus
}
#endif
#endif
