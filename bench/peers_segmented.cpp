// CPU peer of gpk bench segmented: one std::sort per segment. Keys are
// compared in their natural type (floats with operator<: the benchmark's
// keys hold no NaN), so the peer is the plain loop a user would write.
#include "peers_segmented.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include <omp.h>

namespace {

template <typename T>
void sort_all(T *k, size_t count, const uint64_t *begin, const uint64_t *end, int threads)
{
    if (threads <= 0) {
        for (size_t i = 0; i < count; i++) std::sort(k + begin[i], k + end[i]);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)count; i++) std::sort(k + begin[i], k + end[i]);
}

template <typename T>
int run(const void *keys, void *keys_out, size_t n, size_t count, const uint64_t *begin, const uint64_t *end,
        int threads, int reps, double *ms)
{
    std::vector<T> work(n);
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        std::memcpy(work.data(), keys, n * sizeof(T));
        const auto a = std::chrono::steady_clock::now();
        sort_all(work.data(), count, begin, end, threads);
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    *ms = t[t.size() / 2];
    if (keys_out) std::memcpy(keys_out, work.data(), n * sizeof(T));
    return 0;
}

} // namespace

extern "C" int gpk_peer_segments_std_sort(gpk_type t, const void *keys, void *keys_out, size_t n,
                                          size_t count, const uint64_t *begin, const uint64_t *end,
                                          int threads, int reps, double *ms, char *err, size_t errlen)
{
    if (reps < 1) reps = 1;
    try {
        switch (t) {
        case GPK_U32: return run<uint32_t>(keys, keys_out, n, count, begin, end, threads, reps, ms);
        case GPK_I32: return run<int32_t>(keys, keys_out, n, count, begin, end, threads, reps, ms);
        case GPK_F32: return run<float>(keys, keys_out, n, count, begin, end, threads, reps, ms);
        case GPK_U64: return run<uint64_t>(keys, keys_out, n, count, begin, end, threads, reps, ms);
        case GPK_I64: return run<int64_t>(keys, keys_out, n, count, begin, end, threads, reps, ms);
        case GPK_F64: return run<double>(keys, keys_out, n, count, begin, end, threads, reps, ms);
        }
    } catch (...) {
        std::snprintf(err, errlen, "std::sort loop: out of memory");
        return 1;
    }
    std::snprintf(err, errlen, "std::sort loop: unknown type");
    return 1;
}

// Named here, where every build has it, for the CUB peer and its absence alike.
extern "C" const char *gpk_peer_cub_segmented_name(int which)
{
    return which == 0 ? "cub::DeviceSegmentedSort"
        : which == 1  ? "cub::DeviceSegmentedSort(stable)"
                      : "cub::DeviceSegmentedRadixSort";
}
