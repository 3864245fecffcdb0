/* Peers of gpk bench segmented: sorting many segments without a segmented
 * sort (a loop of one sort per segment), and CUB's segmented sorts. Each
 * sorts the segments [begin[i], end[i]) of a copy of keys (values: u32,
 * when values is not NULL) `reps` times and gives the median time in
 * milliseconds; keys_out (may be NULL) gets the last result. 0 on success,
 * non-zero with a message in err, -1 when the peer is not built in. */
#ifndef GPK_BENCH_PEERS_SEGMENTED_H
#define GPK_BENCH_PEERS_SEGMENTED_H

#include <stddef.h>
#include <stdint.h>
#include "gpk/gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* std::sort of each segment in turn on one thread (what a loop of
 * numpy.sort over the rows does), or with threads > 0 the segments spread
 * over that many OpenMP threads (dynamic schedule). Keys only. */
int gpk_peer_segments_std_sort(gpk_type t, const void *keys, void *keys_out, size_t n, size_t count,
                               const uint64_t *begin, const uint64_t *end, int threads, int reps, double *ms,
                               char *err, size_t errlen);

/* On device-resident copies (uploads not timed): which = 0
 * cub::DeviceSegmentedSort::SortKeys/SortPairs, 1 its StableSort, 2
 * cub::DeviceSegmentedRadixSort::SortKeys/SortPairs; each through its
 * DoubleBuffer call (the fastest: no copy back), descending with the
 * *Descending calls. The input is restored before every rep (not timed). */
int gpk_peer_cub_segmented(int device, int which, gpk_type t, const void *keys, const uint32_t *values,
                           void *keys_out, size_t n, size_t count, const uint64_t *begin, const uint64_t *end,
                           int descending, int reps, double *ms, char *err, size_t errlen);
const char *gpk_peer_cub_segmented_name(int which);

#ifdef __cplusplus
}
#endif
#endif
