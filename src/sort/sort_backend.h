/* The sort family's backend contract: one table of entry points per
 * backend (CPU, CUDA, OpenCL), chosen once per call from ctx->backend
 * (gpk__sort_backend_of). The front ends (radix.c, quick.c, segmented.c,
 * multi.c, ooc.c) check arguments, choose the algorithm and call the
 * backend through its table; a backend never calls a front end. A NULL
 * entry: the backend does not run that sort. The tables are listed in
 * sort_backends.c, the one place that knows which backends are built. */
#ifndef GPK_SORT_BACKEND_H
#define GPK_SORT_BACKEND_H

#include "multi_internal.h"
#include "ooc_internal.h"
#include "quick_internal.h"
#include "segmented_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpk__sort_backend {
    /* the in-memory radix sort of a host job (every backend has one) */
    gpk_status (*radix)(gpk_ctx *ctx, const gpk_radix_job *job);
    /* 1: radix honours job->src (gpk_sort_keys_to reads the input in
     * place); 0: the front end copies the input to the output first */
    int radix_reads_src;
    /* 1: radix honours job->descending (the order folded into its own key
     * map); 0: the front end sorts the descending sort keys (descending.h)
     * in ascending order */
    int radix_descending;
    /* the quicksort of keys or records, up to quick_max_n elements (past
     * it the stable radix sort keeps QUICK's promise) */
    gpk_status (*quick)(gpk_ctx *ctx, const gpk_quick_job *job);
    size_t quick_max_n;
    gpk_status (*segmented)(gpk_ctx *ctx, const gpk_seg_job *job);
    /* several devices in one context (gpk_ctx_opts.devices) */
    const gpk__multi_backend *multi;
    /* the out-of-core sort's device; with enomem_goes_ooc, a radix sort
     * that found the device short (GPK_ENOMEM, nothing touched) goes out
     * of core */
    const gpk__ooc_backend *ooc;
    int enomem_goes_ooc;
    /* the bench hooks (hooks/bench_hooks.h): the radix sort and the
     * quicksort timed on device-resident data; NULL where the backend has
     * no transfers to leave out */
    gpk_status (*radix_bench)(gpk_ctx *ctx, const gpk_radix_job *job, int reps, double *ms);
    gpk_status (*quick_bench)(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms);
} gpk__sort_backend;

/* The table of backend b (src/backends.c); NULL when b is not built into
 * this gpk. */
const gpk__sort_backend *gpk__sort_backend_of(gpk_backend b);

/* The table of ctx's backend, or a recorded GPK_EUNSUPPORTED ("<what>:
 * backend <name> is not built in") and NULL (sort_common.c). */
const gpk__sort_backend *gpk__sort_backend_for(gpk_ctx *ctx, const char *what);

#ifdef __cplusplus
}
#endif
#endif
