// CUB peers of gpk bench segmented: cub::DeviceSegmentedSort (SortKeys and
// StableSortKeys) and cub::DeviceSegmentedRadixSort, each through its
// DoubleBuffer call, on device-resident data. Keys in CUB's own order for
// their type (the benchmark's keys hold no NaN); the time is that of the
// sort call alone (CUDA events), the input restored before each rep.
#include "peers_segmented.h"

#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

struct Fail {
    const char *what;
    cudaError_t e;
};
#define CK(x)                                      \
    do {                                           \
        cudaError_t e_ = (x);                      \
        if (e_ != cudaSuccess) throw Fail{#x, e_}; \
    } while (0)

template <typename K>
cudaError_t call(int which, int desc, void *temp, size_t &bytes, cub::DoubleBuffer<K> &k,
                 cub::DoubleBuffer<uint32_t> *v, size_t n, size_t count, const uint64_t *b, const uint64_t *e,
                 cudaStream_t s)
{
    const int64_t ni = (int64_t)n, nc = (int64_t)count;
    if (which == 0) {
        if (v)
            return desc ? cub::DeviceSegmentedSort::SortPairsDescending(temp, bytes, k, *v, ni, nc, b, e, s)
                        : cub::DeviceSegmentedSort::SortPairs(temp, bytes, k, *v, ni, nc, b, e, s);
        return desc ? cub::DeviceSegmentedSort::SortKeysDescending(temp, bytes, k, ni, nc, b, e, s)
                    : cub::DeviceSegmentedSort::SortKeys(temp, bytes, k, ni, nc, b, e, s);
    }
    if (which == 1) {
        if (v)
            return desc
                ? cub::DeviceSegmentedSort::StableSortPairsDescending(temp, bytes, k, *v, ni, nc, b, e, s)
                : cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, k, *v, ni, nc, b, e, s);
        return desc ? cub::DeviceSegmentedSort::StableSortKeysDescending(temp, bytes, k, ni, nc, b, e, s)
                    : cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, k, ni, nc, b, e, s);
    }
    const int bits = (int)(8 * sizeof(K));
    if (v)
        return desc ? cub::DeviceSegmentedRadixSort::SortPairsDescending(temp, bytes, k, *v, (int)n,
                                                                         (int)count, b, e, 0, bits, s)
                    : cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, k, *v, (int)n, (int)count, b, e,
                                                               0, bits, s);
    return desc
        ? cub::DeviceSegmentedRadixSort::SortKeysDescending(temp, bytes, k, (int)n, (int)count, b, e, 0, bits,
                                                            s)
        : cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, k, (int)n, (int)count, b, e, 0, bits, s);
}

template <typename K>
void run(int which, const void *keys, const uint32_t *values, void *keys_out, size_t n, size_t count,
         const uint64_t *begin, const uint64_t *end, int desc, int reps, double *ms)
{
    K *d_k[3] = {};
    uint32_t *d_v[3] = {};
    uint64_t *d_off = nullptr;
    void *temp = nullptr;
    cudaEvent_t a = nullptr, b = nullptr;
    cudaStream_t s = nullptr;
    auto cleanup = [&]() {
        for (int i = 0; i < 3; i++) {
            cudaFree(d_k[i]);
            cudaFree(d_v[i]);
        }
        cudaFree(d_off);
        cudaFree(temp);
        if (a) cudaEventDestroy(a);
        if (b) cudaEventDestroy(b);
        if (s) cudaStreamDestroy(s);
    };
    try {
        CK(cudaStreamCreate(&s));
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        for (int i = 0; i < 3; i++) {
            CK(cudaMalloc(&d_k[i], n * sizeof(K) + 8));
            if (values) CK(cudaMalloc(&d_v[i], n * 4 + 8));
        }
        CK(cudaMalloc(&d_off, 2 * count * 8 + 8));
        CK(cudaMemcpy(d_k[2], keys, n * sizeof(K), cudaMemcpyHostToDevice));
        if (values) CK(cudaMemcpy(d_v[2], values, n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_off, begin, count * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_off + count, end, count * 8, cudaMemcpyHostToDevice));
        cub::DoubleBuffer<K> kb(d_k[0], d_k[1]);
        cub::DoubleBuffer<uint32_t> vb(d_v[0], d_v[1]);
        size_t bytes = 0;
        CK(call<K>(which, desc, nullptr, bytes, kb, values ? &vb : nullptr, n, count, d_off, d_off + count,
                   s));
        CK(cudaMalloc(&temp, bytes + 8));
        std::vector<double> t;
        for (int r = 0; r < reps + 1; r++) { // the first run warms up
            kb = cub::DoubleBuffer<K>(d_k[0], d_k[1]);
            vb = cub::DoubleBuffer<uint32_t>(d_v[0], d_v[1]);
            CK(cudaMemcpyAsync(d_k[0], d_k[2], n * sizeof(K), cudaMemcpyDeviceToDevice, s));
            if (values) CK(cudaMemcpyAsync(d_v[0], d_v[2], n * 4, cudaMemcpyDeviceToDevice, s));
            CK(cudaEventRecord(a, s));
            CK(call<K>(which, desc, temp, bytes, kb, values ? &vb : nullptr, n, count, d_off, d_off + count,
                       s));
            CK(cudaEventRecord(b, s));
            CK(cudaEventSynchronize(b));
            float x = 0;
            CK(cudaEventElapsedTime(&x, a, b));
            if (r > 0) t.push_back(x);
        }
        std::sort(t.begin(), t.end());
        *ms = t[t.size() / 2];
        if (keys_out) CK(cudaMemcpy(keys_out, kb.Current(), n * sizeof(K), cudaMemcpyDeviceToHost));
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
}

} // namespace

extern "C" int gpk_peer_cub_segmented(int device, int which, gpk_type t, const void *keys,
                                      const uint32_t *values, void *keys_out, size_t n, size_t count,
                                      const uint64_t *begin, const uint64_t *end, int descending, int reps,
                                      double *ms, char *err, size_t errlen)
{
    if (reps < 1) reps = 1;
    try {
        CK(cudaSetDevice(device));
        switch (t) {
        /* the key types of the goals only: each type instantiates twelve
         * CUB sorts, minutes of compile time */
        case GPK_U32:
            run<uint32_t>(which, keys, values, keys_out, n, count, begin, end, descending, reps, ms);
            break;
        case GPK_F32:
            run<float>(which, keys, values, keys_out, n, count, begin, end, descending, reps, ms);
            break;
        default: std::snprintf(err, errlen, "the CUB peer is built for u32 and f32 keys only"); return -1;
        }
    } catch (const Fail &f) {
        std::snprintf(err, errlen, "%s: %s", f.what, cudaGetErrorString(f.e));
        return 1;
    }
    return 0;
}
