/* The CUDA peers (CUB, thrust) where they are not built: a build without
 * CUDA, or one configured with GPK_WITH_CUB_PEERS=OFF (their nvcc compile
 * is most of a CUDA build's time). Each reports "not built in" (-1), as
 * peers.h specifies, so the benchmarks link and say so either way. */
#include "peers.h"
#include "peers_segmented.h"

#include <stdio.h>

static int absent(const char *peer, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: not built into this gpk-bench (needs CUDA and GPK_WITH_CUB_PEERS=ON)", peer);
    return -1;
}

int gpk_peer_cub_radix(int device, gpk_type t, const void *keys, void *keys_out, size_t value_width, size_t n,
                       int begin_bit, int end_bit, int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    (void)device, (void)t, (void)keys, (void)keys_out, (void)value_width, (void)n;
    (void)begin_bit, (void)end_bit, (void)reps, (void)r;
    return absent("cub::DeviceRadixSort", err, errlen);
}

int gpk_peer_cub_merge_sort(int device, gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                            gpk_peer_result *r, char *err, size_t errlen)
{
    (void)device, (void)t, (void)keys, (void)keys_out, (void)n, (void)reps, (void)r;
    return absent("cub::DeviceMergeSort", err, errlen);
}

int gpk_peer_thrust_sort(int device, gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                         gpk_peer_result *r, char *err, size_t errlen)
{
    (void)device, (void)t, (void)keys, (void)keys_out, (void)n, (void)reps, (void)r;
    return absent("thrust::sort", err, errlen);
}

int gpk_peer_records_cub_index(int device, gpk_type t, const void *records, void *records_out, size_t n,
                               size_t record_size, size_t key_offset, int reps, gpk_peer_result *r, char *err,
                               size_t errlen)
{
    (void)device, (void)t, (void)records, (void)records_out, (void)n, (void)record_size, (void)key_offset;
    (void)reps, (void)r;
    return absent("cub::DeviceRadixSort (record index)", err, errlen);
}

int gpk_peer_records_thrust(int device, gpk_type t, const void *records, void *records_out, size_t n,
                            size_t record_size, size_t key_offset, int reps, gpk_peer_result *r, char *err,
                            size_t errlen)
{
    (void)device, (void)t, (void)records, (void)records_out, (void)n, (void)record_size, (void)key_offset;
    (void)reps, (void)r;
    return absent("thrust::sort_by_key (records)", err, errlen);
}

int gpk_peer_cub_segmented(int device, int which, gpk_type t, const void *keys, const uint32_t *values,
                           void *keys_out, size_t n, size_t count, const uint64_t *begin, const uint64_t *end,
                           int descending, int reps, double *ms, char *err, size_t errlen)
{
    (void)device, (void)t, (void)keys, (void)values, (void)keys_out, (void)n, (void)count;
    (void)begin, (void)end, (void)descending, (void)reps, (void)ms;
    return absent(gpk_peer_cub_segmented_name(which), err, errlen);
}

const char *gpk_peer_cub_segmented_name(int which)
{
    return which == 0 ? "cub::DeviceSegmentedSort"
        : which == 1  ? "cub::DeviceSegmentedSort(stable)"
                      : "cub::DeviceSegmentedRadixSort";
}
