/* The CUDA radix sort's per-context choices that the sort family keeps
 * itself (radix_cuda_limits.c), read by radix_cuda.cu. */
#ifndef GPK_RADIX_CUDA_LIMITS_H
#define GPK_RADIX_CUDA_LIMITS_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The single-launch path for small inputs (radix_cuda.cu, run_small and
 * run_tile): up to 2^small_max_log keys (with values or a permutation:
 * 2^small_values_max_log); 0 = off. Read at the context's first sort:
 * GPK_RADIX_CUDA_SMALL_MAX_LOG (1 to 24: one limit for both; a test's
 * gpk__test.radix_cuda_small_max_log before it), a test's
 * gpk__test.radix_cuda_small (0: off); off where the device runs no
 * cooperative launches. */
typedef struct gpk_radix_cuda_limits {
    int small_max_log;
    int small_values_max_log;
} gpk_radix_cuda_limits;

/* ctx's limits (ctx: a CUDA context, its device current), worked out on
 * first use and kept in the sort's hook slot; the path off when no slot or
 * memory is left. */
const gpk_radix_cuda_limits *gpk__radix_cuda_limits(gpk_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
