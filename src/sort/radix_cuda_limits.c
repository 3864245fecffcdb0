/* The CUDA radix sort's single-launch limits, per context: the sort family
 * keeps them in its own hook slot on the context (the core knows no
 * family), worked out at the context's first sort. */
#include "radix_cuda_limits.h"

#include <stdlib.h>

#include <cuda_runtime_api.h>

/* The largest sizes measured faster in one launch (docs/perf/radix.md,
 * "Small sorts"): 2^22 keys of every width (2^23: slower, the resident
 * blocks loop over too many tiles), 2^20 pairs. GPK_RADIX_CUDA_SMALL_MAX_LOG
 * (or a test's gpk__test.radix_cuda_small_max_log) sets both. */
#define SMALL_KEYS_DEFAULT_LOG 22
#define SMALL_VALUES_DEFAULT_LOG 20

static void limits_release(gpk_ctx *ctx)
{
    void **slot = gpk__ctx_hook_state(ctx, limits_release);
    if (!slot) return;
    free(*slot);
    *slot = NULL;
}

/* On by default (faster than the separate launches from 2^16 to 2^22 keys
 * and to 2^20 pairs, docs/perf/radix.md; a test's gpk__test.radix_cuda_small
 * 0 turns it off), only where the device runs cooperative launches. */
static gpk_radix_cuda_limits read_limits(const gpk_ctx *ctx)
{
    gpk_radix_cuda_limits l = {0, 0};
    int coop = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ctx->device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: the path stays off, the sort reports its own errors */
        return l;
    }
    if (!coop || gpk__hook(gpk__test.radix_cuda_small, 1) == 0) return l;
    /* GPK_RADIX_CUDA_SMALL_MAX_LOG: programs that sort many arrays on
     * several streams at once lower it (one launch fills the device) */
    const int lg =
        (int)gpk__hook(gpk__test.radix_cuda_small_max_log, gpk__env_int("GPK_RADIX_CUDA_SMALL_MAX_LOG", 0));
    if (lg >= 1 && lg <= 24) {
        l.small_max_log = l.small_values_max_log = lg;
    } else {
        l.small_max_log = SMALL_KEYS_DEFAULT_LOG;
        l.small_values_max_log = SMALL_VALUES_DEFAULT_LOG;
    }
    return l;
}

const gpk_radix_cuda_limits *gpk__radix_cuda_limits(gpk_ctx *ctx)
{
    static const gpk_radix_cuda_limits off = {0, 0};
    void **slot = gpk__ctx_hook(ctx, limits_release, 0);
    if (!slot) return &off;
    if (!*slot) {
        gpk_radix_cuda_limits *l = malloc(sizeof *l);
        if (!l) return &off;
        *l = read_limits(ctx);
        *slot = l;
    }
    return (const gpk_radix_cuda_limits *)*slot;
}
