/* The bench hooks: the one internal header the benchmark programs
 * (the C files of bench/: gpk-bench, gpk_ooc_bench) include besides the
 * public headers, include/gpk/.
 *
 * Contract:
 * - It declares what a measurement needs beyond the public API, and
 *   nothing else: the GPU sorts timed on device-resident data (uploads and
 *   downloads left out), the paths a measurement forces (the test hooks of
 *   core/test_hooks.h, by name), the phases of the last multi-device and
 *   out-of-core sort, a GPU session that evaluates whole TSP 2-opt
 *   neighbourhoods, and the order-preserving key maps of gpk/sort.h.
 * - The key maps and the test hooks are the library's own headers
 *   (core/key_traits.h, core/test_hooks.h), included here, so that a
 *   benchmark checks and forces exactly what the library does; no other
 *   src/ header is reachable from bench/ (its include path holds this
 *   directory, not src/).
 * - The functions are in the static library only (libgpk.so hides them):
 *   the benchmarks link gpk_static. Not an API: they change with the
 *   benchmarks, and the library keeps every timing behind them.
 * - Each call checks its arguments as the public call it mirrors does and
 *   returns a gpk_status with the message in gpk_last_error(ctx). */
#ifndef GPK_BENCH_HOOKS_H
#define GPK_BENCH_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "gpk/gpk.h"
#include "gpk/search.h"
#include "gpk/sort.h"
#include "../core/key_traits.h"
#include "../core/test_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device-resident timing -------------------------------------------------
 * The radix sort of ctx's backend (CUDA or OpenCL; GPK_EUNSUPPORTED on the
 * CPU, which has no transfers to leave out), arguments as gpk_sort_keys /
 * _pairs (value_width 4 or 8, values set) / _perm (sigma set, 32-bit):
 * the arrays are uploaded once, the device copy sorted `reps` times from
 * the same unsorted input, *ms the median sort time, and the last rep's
 * sorted result left in the arrays for the caller to check. */
gpk_status gpk__bench_radix(gpk_ctx *ctx, gpk_type key_type, void *keys, size_t value_width, void *values,
                            uint32_t *sigma, size_t n, const gpk_radix_opts *opts, int reps, double *ms);
/* The same for the quicksort of ctx's backend (CUDA): n elements `stride`
 * bytes apart, each with its key of key_type at its start (keys: stride =
 * the key's bytes; records: the record's bytes); recursive: the dynamic
 * parallelism variant (GPK_SORT_QUICK_RECURSIVE). */
gpk_status gpk__bench_quick(gpk_ctx *ctx, gpk_type key_type, void *base, size_t n, size_t stride,
                            int recursive, int reps, double *ms);

/* The bit range [begin, end) of the mapped keys where they differ, from
 * the AND and the OR of all of them, as the radix sort detects it (begin
 * == end: all keys equal): the range a peer sorts to match gpk. */
void gpk__bench_key_range(uint64_t and_all, uint64_t or_all, unsigned *begin, unsigned *end);

/* ---- the phases of the last sort of ctx ------------------------------------- */

/* The last multi-device sort's phases (host clock), all zero before the
 * first. */
typedef struct gpk_multi_stats {
    const char *plan; /* "lsd" (distributed last pass) or "merge" (sort first, then merge) */
    double sort_ms, split_ms, merge_ms;
    /* CUDA, inside the merge (events; the slowest device): copies of the
     * pieces, the tile searches of the first round, the rest */
    double copy_ms, search_ms, tiles_ms;
    /* lsd, host clock: until every device's first digit counts are
     * in, then the passes (each followed by the exchange of counts) */
    double count_ms, passes_ms;
    /* lsd, CUDA events: the histogram (the slowest device), the
     * passes (the sum over passes of the slowest device's time), the
     * last pass (the slowest device) */
    double hist_ms, pass_sum_ms, last_ms;
    int passes;
} gpk_multi_stats;
/* Kept in the multi-device sort's own hook slot on ctx (sort/multi.c). */
gpk_multi_stats gpk__multi_stats(gpk_ctx *ctx);

/* The last out-of-core sort's statistics, all zero before the first. */
typedef struct gpk_ooc_stats {
    double alloc_ms, pin_ms, runs_ms, merge_ms, unpin_ms, total_ms;
    double lock_ms;   /* page-locking, summed (most of it overlaps the runs) */
    double unlock_ms; /* unlocking, summed (most of it overlaps the merge) */
    size_t runs, parts, cap;
    int pinned;        /* the host arrays were page-locked (CUDA) */
    int caller_pinned; /* the caller's arrays came page-locked: no staging (CUDA) */
    size_t kept_runs;  /* runs kept on the device for the merge */
} gpk_ooc_stats;
/* Kept in the out-of-core sort's own hook slot on ctx (sort/ooc.c). */
gpk_ooc_stats gpk__ooc_stats(gpk_ctx *ctx);

/* ---- the GPU evaluation of the local search ----------------------------------- */
#ifdef GPK_HAVE_CUDA_SEARCH
/* A session on ctx's GPU holding tsp (distances or coordinates): each
 * call evaluates the whole 2-opt neighbourhood of a tour and returns its
 * best move, the minimum of (delta, neighbour index k) over all moves,
 * the choice reduced on the device (the search's OURS evaluation). *fast:
 * 2 when the float tiled path runs, 0 the generic one. The first call
 * after open uploads the tour; later calls send what changed. */
typedef struct gpk__search_cuda gpk__bench_tsp_eval;
gpk_status gpk__bench_tsp_eval_open(gpk_ctx *ctx, const gpk_tsp *tsp, gpk__bench_tsp_eval **out, int *fast);
gpk_status gpk__bench_tsp_eval_best(gpk__bench_tsp_eval *e, const uint32_t *tour, int64_t *delta,
                                    uint64_t *k);
void gpk__bench_tsp_eval_close(gpk__bench_tsp_eval *e);
#endif

#ifdef __cplusplus
}
#endif
#endif
