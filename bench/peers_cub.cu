/* The CUDA peer: cub::DeviceRadixSort on device-resident data, timed with
 * events around the sort call alone (temporary storage allocated once,
 * uploads excluded), median of reps. Values, when asked for, are the input
 * positions (u32 or u64), so pairs move the same bytes as gpk's pairs. */
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "peers.h"

namespace {

struct Buffers {
    void *keys_in = nullptr, *keys_out = nullptr, *vals_in = nullptr, *vals_out = nullptr, *temp = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Buffers()
    {
        cudaFree(keys_in);
        cudaFree(keys_out);
        cudaFree(vals_in);
        cudaFree(vals_out);
        cudaFree(temp);
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        (void)cudaGetLastError();
    }
};

template <class V> __global__ void iota_kernel(V *v, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        v[i] = (V)i;
}

/* One CUB call: keys only (V = void) or pairs. */
template <class K, class V, class N>
cudaError_t cub_sort(void *temp, size_t &temp_bytes, const Buffers &b, N n, int begin_bit, int end_bit)
{
    if constexpr (std::is_void_v<V>)
        return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out, n,
                                              begin_bit, end_bit);
    else
        return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out,
                                               (const V *)b.vals_in, (V *)b.vals_out, n, begin_bit, end_bit);
}

#define PEER_CHECK(call, what)                                                                    \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            snprintf(err, errlen, "cub peer: %s: %s", what, cudaGetErrorString(e_));              \
            (void)cudaGetLastError();                                                             \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

template <class K, class V, class N>
int run(const void *keys, void *keys_out, size_t n, int begin_bit, int end_bit, int reps, gpk_peer_result *r,
        char *err, size_t errlen)
{
    Buffers b;
    const size_t kbytes = n * sizeof(K);
    PEER_CHECK(cudaMalloc(&b.keys_in, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_out, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMemcpy(b.keys_in, keys, kbytes, cudaMemcpyHostToDevice), "copy to device");
    if constexpr (!std::is_void_v<V>) {
        PEER_CHECK(cudaMalloc(&b.vals_in, n * sizeof(V)), "cudaMalloc");
        PEER_CHECK(cudaMalloc(&b.vals_out, n * sizeof(V)), "cudaMalloc");
        iota_kernel<V><<<1024, 256>>>((V *)b.vals_in, n);
        PEER_CHECK(cudaGetLastError(), "iota kernel");
    }
    size_t temp_bytes = 0;
    PEER_CHECK((cub_sort<K, V, N>(nullptr, temp_bytes, b, (N)n, begin_bit, end_bit)), "temp query");
    PEER_CHECK(cudaMalloc(&b.temp, std::max<size_t>(temp_bytes, 1)), "cudaMalloc");
    PEER_CHECK(cudaEventCreate(&b.start), "cudaEventCreate");
    PEER_CHECK(cudaEventCreate(&b.stop), "cudaEventCreate");
    std::vector<float> times;
    for (int rep = 0; rep < reps; rep++) {
        PEER_CHECK(cudaEventRecord(b.start), "cudaEventRecord");
        PEER_CHECK((cub_sort<K, V, N>(b.temp, temp_bytes, b, (N)n, begin_bit, end_bit)), "SortKeys/SortPairs");
        PEER_CHECK(cudaEventRecord(b.stop), "cudaEventRecord");
        PEER_CHECK(cudaEventSynchronize(b.stop), "sort");
        float ms = 0;
        PEER_CHECK(cudaEventElapsedTime(&ms, b.start, b.stop), "cudaEventElapsedTime");
        times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    const size_t m = times.size();
    r->ms = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
    snprintf(r->name, sizeof r->name, "cub::DeviceRadixSort");
    if (keys_out) PEER_CHECK(cudaMemcpy(keys_out, b.keys_out, kbytes, cudaMemcpyDeviceToHost), "copy to host");
    return 0;
}

template <class K>
int run_k(const void *keys, void *keys_out, size_t value_width, size_t n, int begin_bit, int end_bit, int reps,
          gpk_peer_result *r, char *err, size_t errlen)
{
    /* int item counts, as most CUB users call it */
    if (n > (size_t)INT_MAX) {
        snprintf(err, errlen, "cub peer: n = %zu is beyond the int item count this peer uses", n);
        return 1;
    }
    if (value_width == 4) return run<K, uint32_t, int>(keys, keys_out, n, begin_bit, end_bit, reps, r, err, errlen);
    if (value_width == 8) return run<K, uint64_t, int>(keys, keys_out, n, begin_bit, end_bit, reps, r, err, errlen);
    return run<K, void, int>(keys, keys_out, n, begin_bit, end_bit, reps, r, err, errlen);
}

struct DeviceGuard {
    int previous = -1;
    ~DeviceGuard()
    {
        if (previous >= 0) (void)cudaSetDevice(previous);
    }
};

} // namespace

extern "C" int gpk_peer_cub_radix(int device, gpk_type t, const void *keys, void *keys_out, size_t value_width,
                                  size_t n, int begin_bit, int end_bit, int reps, gpk_peer_result *r, char *err,
                                  size_t errlen)
{
    if (!r || !err || errlen == 0) return 1;
    err[0] = '\0';
    if (reps < 1 || (n > 0 && !keys) || (value_width != 0 && value_width != 4 && value_width != 8)) {
        snprintf(err, errlen, "cub peer: bad arguments");
        return 1;
    }
    const int key_bits = (t == GPK_U32 || t == GPK_I32 || t == GPK_F32) ? 32 : 64;
    if (begin_bit < 0 || end_bit > key_bits || begin_bit > end_bit) {
        snprintf(err, errlen, "cub peer: bit range [%d, %d) outside the %d-bit key", begin_bit, end_bit, key_bits);
        return 1;
    }
    if (n == 0) {
        r->ms = 0.0;
        snprintf(r->name, sizeof r->name, "cub::DeviceRadixSort");
        return 0;
    }
    DeviceGuard guard;
    int previous = 0;
    PEER_CHECK(cudaGetDevice(&previous), "cudaGetDevice");
    if (previous != device) {
        PEER_CHECK(cudaSetDevice(device), "cudaSetDevice");
        guard.previous = previous;
    }
    switch (t) {
    case GPK_U32: return run_k<uint32_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_I32: return run_k<int32_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_F32: return run_k<float>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_U64: return run_k<uint64_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_I64: return run_k<int64_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_F64: return run_k<double>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    }
    snprintf(err, errlen, "cub peer: unknown key type %d", (int)t);
    return 1;
}
