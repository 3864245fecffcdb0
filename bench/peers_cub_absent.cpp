// The CUDA peers (CUB, thrust) where they are not built: a build without
// CUDA, or one configured with GPK_WITH_CUB_PEERS=OFF (their nvcc compile
// is most of a CUDA build's time). Each reports "not built in" (-1), as
// peers.h specifies, so the benchmarks link and say so either way.
#include "peers.h"
#include "peers_segmented.h"

#include <cstdio>

static int absent(const char *peer, char *err, size_t errlen)
{
    std::snprintf(err, errlen, "%s: not built into this gpk-bench (needs CUDA and GPK_WITH_CUB_PEERS=ON)",
                  peer);
    return -1;
}

extern "C" {
int gpk_peer_cub_radix(int, gpk_type, const void *, void *, size_t, size_t, int, int, int, gpk_peer_result *,
                       char *err, size_t errlen)
{
    return absent("cub::DeviceRadixSort", err, errlen);
}
int gpk_peer_cub_merge_sort(int, gpk_type, const void *, void *, size_t, int, gpk_peer_result *, char *err,
                            size_t errlen)
{
    return absent("cub::DeviceMergeSort", err, errlen);
}
int gpk_peer_thrust_sort(int, gpk_type, const void *, void *, size_t, int, gpk_peer_result *, char *err,
                         size_t errlen)
{
    return absent("thrust::sort", err, errlen);
}
int gpk_peer_records_cub_index(int, gpk_type, const void *, void *, size_t, size_t, size_t, int,
                               gpk_peer_result *, char *err, size_t errlen)
{
    return absent("cub::DeviceRadixSort (record index)", err, errlen);
}
int gpk_peer_records_thrust(int, gpk_type, const void *, void *, size_t, size_t, size_t, int,
                            gpk_peer_result *, char *err, size_t errlen)
{
    return absent("thrust::sort_by_key (records)", err, errlen);
}
int gpk_peer_cub_segmented(int, int which, gpk_type, const void *, const uint32_t *, void *, size_t, size_t,
                           const uint64_t *, const uint64_t *, int, int, double *, char *err, size_t errlen)
{
    return absent(gpk_peer_cub_segmented_name(which), err, errlen);
}
}
