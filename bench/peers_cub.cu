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
#include <type_traits>
#include <vector>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/sort.h>

#include <cstring>
#include <exception>

#include "peers.h"

namespace {

struct Buffers {
    void *keys_in = nullptr, *keys_out = nullptr, *vals_in = nullptr, *vals_out = nullptr, *temp = nullptr;
    void *keys_alt = nullptr, *vals_alt = nullptr; /* DoubleBuffer's second buffers */
    void *rec_in = nullptr, *rec_out = nullptr;    /* record peers */
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Buffers()
    {
        cudaFree(rec_in);
        cudaFree(rec_out);
        cudaFree(keys_in);
        cudaFree(keys_out);
        cudaFree(vals_in);
        cudaFree(vals_out);
        cudaFree(keys_alt);
        cudaFree(vals_alt);
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

/* CUB's radix sort as a user can call it: 32- or 64-bit num_items (CUB
 * picks its offset type, and with it its tile shapes, from that type), and
 * either const input / separate output arrays or DoubleBuffer (CUB then
 * ping-pongs between the two buffers it is given and needs less temporary
 * storage). The peer times every form the size allows, interleaved rep by
 * rep on the same data, and reports the fastest: what a user who tried them
 * all would keep. */
enum CubForm { FORM_INOUT, FORM_DOUBLE };

template <class K, class V, class N>
cudaError_t cub_sort(CubForm form, void *temp, size_t &temp_bytes, const Buffers &b, N n, int begin_bit,
                     int end_bit, int *selector)
{
    if (form == FORM_INOUT) {
        if constexpr (std::is_void_v<V>)
            return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out, n,
                                                  begin_bit, end_bit);
        else
            return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out,
                                                   (const V *)b.vals_in, (V *)b.vals_out, n, begin_bit,
                                                   end_bit);
    }
    /* DoubleBuffer over keys_out (current, holding a fresh copy of the
     * input) and keys_alt */
    cub::DoubleBuffer<K> dk((K *)b.keys_out, (K *)b.keys_alt);
    cudaError_t e;
    if constexpr (std::is_void_v<V>) {
        e = cub::DeviceRadixSort::SortKeys(temp, temp_bytes, dk, n, begin_bit, end_bit);
    } else {
        cub::DoubleBuffer<V> dv((V *)b.vals_out, (V *)b.vals_alt);
        e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, dk, dv, n, begin_bit, end_bit);
    }
    *selector = dk.selector;
    return e;
}

struct FormTimes {
    CubForm form;
    bool wide; /* 64-bit num_items */
    std::vector<float> ms;
    int selector; /* DoubleBuffer: where the last sort left the keys */
};

#define PEER_CHECK(call, what)                                                       \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            snprintf(err, errlen, "cub peer: %s: %s", what, cudaGetErrorString(e_)); \
            (void)cudaGetLastError();                                                \
            return 1;                                                                \
        }                                                                            \
    } while (0)

static double median_of(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    const size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static const char *form_name(const FormTimes &f)
{
    if (f.form == FORM_INOUT) return f.wide ? "64-bit n, in/out" : "32-bit n, in/out";
    return f.wide ? "64-bit n, DoubleBuffer" : "32-bit n, DoubleBuffer";
}

template <class K, class V>
cudaError_t sort_form(FormTimes &f, void *temp, size_t &temp_bytes, const Buffers &b, size_t n, int begin_bit,
                      int end_bit)
{
    if (f.wide)
        return cub_sort<K, V, long long>(f.form, temp, temp_bytes, b, (long long)n, begin_bit, end_bit,
                                         &f.selector);
    return cub_sort<K, V, int>(f.form, temp, temp_bytes, b, (int)n, begin_bit, end_bit, &f.selector);
}

template <class K, class V>
int run(const void *keys, void *keys_out, size_t n, int begin_bit, int end_bit, int reps, gpk_peer_result *r,
        char *err, size_t errlen)
{
    Buffers b;
    const size_t kbytes = n * sizeof(K);
    constexpr bool pairs = !std::is_void_v<V>;
    PEER_CHECK(cudaMalloc(&b.keys_in, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_out, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_alt, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMemcpy(b.keys_in, keys, kbytes, cudaMemcpyHostToDevice), "copy to device");
    size_t vbytes = 0;
    if constexpr (pairs) {
        vbytes = n * sizeof(V);
        PEER_CHECK(cudaMalloc(&b.vals_in, vbytes), "cudaMalloc");
        PEER_CHECK(cudaMalloc(&b.vals_out, vbytes), "cudaMalloc");
        PEER_CHECK(cudaMalloc(&b.vals_alt, vbytes), "cudaMalloc");
        iota_kernel<V><<<1024, 256>>>((V *)b.vals_in, n);
        PEER_CHECK(cudaGetLastError(), "iota kernel");
    }
    std::vector<FormTimes> forms;
    for (int wide = 0; wide < 2; wide++) {
        if (!wide && n > (size_t)INT_MAX) continue;
        forms.push_back(FormTimes{FORM_INOUT, wide != 0, {}, 0});
        forms.push_back(FormTimes{FORM_DOUBLE, wide != 0, {}, 0});
    }
    size_t temp_max = 0;
    for (FormTimes &f : forms) {
        size_t tb = 0;
        PEER_CHECK((sort_form<K, V>(f, nullptr, tb, b, n, begin_bit, end_bit)), "temp query");
        temp_max = std::max(temp_max, tb);
    }
    PEER_CHECK(cudaMalloc(&b.temp, std::max<size_t>(temp_max, 1)), "cudaMalloc");
    PEER_CHECK(cudaEventCreate(&b.start), "cudaEventCreate");
    PEER_CHECK(cudaEventCreate(&b.stop), "cudaEventCreate");
    /* one untimed warm-up call per form, then the forms in turn, rep by rep */
    for (int rep = -1; rep < reps; rep++) {
        for (FormTimes &f : forms) {
            if (f.form ==
                FORM_DOUBLE) { /* DoubleBuffer sorts its buffers: a fresh input each time, untimed */
                PEER_CHECK(cudaMemcpy(b.keys_out, b.keys_in, kbytes, cudaMemcpyDeviceToDevice), "input copy");
                if (pairs)
                    PEER_CHECK(cudaMemcpy(b.vals_out, b.vals_in, vbytes, cudaMemcpyDeviceToDevice),
                               "input copy");
            }
            size_t tb = temp_max;
            PEER_CHECK(cudaEventRecord(b.start), "cudaEventRecord");
            PEER_CHECK((sort_form<K, V>(f, b.temp, tb, b, n, begin_bit, end_bit)), "SortKeys/SortPairs");
            PEER_CHECK(cudaEventRecord(b.stop), "cudaEventRecord");
            PEER_CHECK(cudaEventSynchronize(b.stop), "sort");
            float ms = 0;
            PEER_CHECK(cudaEventElapsedTime(&ms, b.start, b.stop), "cudaEventElapsedTime");
            if (rep >= 0) f.ms.push_back(ms);
        }
    }
    size_t best = 0;
    std::vector<double> med(forms.size());
    for (size_t i = 0; i < forms.size(); i++) {
        med[i] = median_of(forms[i].ms);
        if (med[i] < med[best]) best = i;
    }
    r->ms = med[best];
    snprintf(r->name, sizeof r->name, "cub::DeviceRadixSort");
    snprintf(r->form, sizeof r->form, "%s", form_name(forms[best]));
    size_t at = 0;
    r->forms[0] = '\0';
    for (size_t i = 0; i < forms.size() && at < sizeof r->forms; i++)
        at += (size_t)snprintf(r->forms + at, sizeof r->forms - at, "%s%s %.4f ms", i ? "; " : "",
                               form_name(forms[i]), med[i]);
    if (keys_out) { /* the best form once more: the forms share the output buffers */
        FormTimes &f = forms[best];
        if (f.form == FORM_DOUBLE) {
            PEER_CHECK(cudaMemcpy(b.keys_out, b.keys_in, kbytes, cudaMemcpyDeviceToDevice), "input copy");
            if (pairs)
                PEER_CHECK(cudaMemcpy(b.vals_out, b.vals_in, vbytes, cudaMemcpyDeviceToDevice), "input copy");
        }
        size_t tb = temp_max;
        PEER_CHECK((sort_form<K, V>(f, b.temp, tb, b, n, begin_bit, end_bit)), "SortKeys/SortPairs");
        PEER_CHECK(cudaDeviceSynchronize(), "sort");
        const void *src = f.form == FORM_DOUBLE && f.selector != 0 ? b.keys_alt : b.keys_out;
        PEER_CHECK(cudaMemcpy(keys_out, src, kbytes, cudaMemcpyDeviceToHost), "copy to host");
    }
    return 0;
}

template <class K>
int run_k(const void *keys, void *keys_out, size_t value_width, size_t n, int begin_bit, int end_bit,
          int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    if (value_width == 4)
        return run<K, uint32_t>(keys, keys_out, n, begin_bit, end_bit, reps, r, err, errlen);
    if (value_width == 8)
        return run<K, uint64_t>(keys, keys_out, n, begin_bit, end_bit, reps, r, err, errlen);
    return run<K, void>(keys, keys_out, n, begin_bit, end_bit, reps, r, err, errlen);
}

struct DeviceGuard {
    int previous = -1;
    ~DeviceGuard()
    {
        if (previous >= 0) (void)cudaSetDevice(previous);
    }
};

} // namespace

extern "C" int gpk_peer_cub_radix(int device, gpk_type t, const void *keys, void *keys_out,
                                  size_t value_width, size_t n, int begin_bit, int end_bit, int reps,
                                  gpk_peer_result *r, char *err, size_t errlen)
{
    if (!r || !err || errlen == 0) return 1;
    err[0] = '\0';
    if (reps < 1 || (n > 0 && !keys) || (value_width != 0 && value_width != 4 && value_width != 8)) {
        snprintf(err, errlen, "cub peer: bad arguments");
        return 1;
    }
    const int key_bits = (t == GPK_U32 || t == GPK_I32 || t == GPK_F32) ? 32 : 64;
    if (begin_bit < 0 || end_bit > key_bits || begin_bit > end_bit) {
        snprintf(err, errlen, "cub peer: bit range [%d, %d) outside the %d-bit key", begin_bit, end_bit,
                 key_bits);
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
    case GPK_U32:
        return run_k<uint32_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_I32:
        return run_k<int32_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_F32:
        return run_k<float>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_U64:
        return run_k<uint64_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_I64:
        return run_k<int64_t>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    case GPK_F64:
        return run_k<double>(keys, keys_out, value_width, n, begin_bit, end_bit, reps, r, err, errlen);
    }
    snprintf(err, errlen, "cub peer: unknown key type %d", (int)t);
    return 1;
}

/* ------------------------------------------------------------------------
 * Comparison sorts and record sorts for gpk bench quicksort.
 * ------------------------------------------------------------------------ */
namespace {

struct Less {
    template <class T> __host__ __device__ bool operator()(const T &a, const T &b) const { return a < b; }
};

/* The median of `reps` timings of sort(); prep() runs before each, untimed
 * (thrust sorts in place and needs a fresh copy). Both return cudaError_t. */
template <class Prep, class Sort>
int time_reps(Buffers &b, int reps, Prep prep, Sort sort, gpk_peer_result *r, const char *name, char *err,
              size_t errlen)
{
    PEER_CHECK(cudaEventCreate(&b.start), "cudaEventCreate");
    PEER_CHECK(cudaEventCreate(&b.stop), "cudaEventCreate");
    std::vector<float> times;
    for (int rep = 0; rep < reps; rep++) {
        PEER_CHECK(prep(), "input copy");
        PEER_CHECK(cudaEventRecord(b.start), "cudaEventRecord");
        PEER_CHECK(sort(), name);
        PEER_CHECK(cudaEventRecord(b.stop), "cudaEventRecord");
        PEER_CHECK(cudaEventSynchronize(b.stop), name);
        float ms = 0;
        PEER_CHECK(cudaEventElapsedTime(&ms, b.start, b.stop), "cudaEventElapsedTime");
        times.push_back(ms);
    }
    r->ms = median_of(times);
    snprintf(r->name, sizeof r->name, "%s", name);
    return 0;
}

template <class K>
int merge_sort_run(const void *keys, void *keys_out, size_t n, int reps, gpk_peer_result *r, char *err,
                   size_t errlen)
{
    Buffers b;
    const size_t kbytes = n * sizeof(K);
    PEER_CHECK(cudaMalloc(&b.keys_in, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_out, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMemcpy(b.keys_in, keys, kbytes, cudaMemcpyHostToDevice), "copy to device");
    size_t temp_bytes = 0;
    PEER_CHECK(cub::DeviceMergeSort::SortKeysCopy(nullptr, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out,
                                                  (int)n, Less()),
               "temp query");
    PEER_CHECK(cudaMalloc(&b.temp, std::max<size_t>(temp_bytes, 1)), "cudaMalloc");
    auto prep = [] { return cudaSuccess; };
    auto sort = [&] {
        return cub::DeviceMergeSort::SortKeysCopy(b.temp, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out,
                                                  (int)n, Less());
    };
    if (time_reps(b, reps, prep, sort, r, "cub::DeviceMergeSort", err, errlen)) return 1;
    if (keys_out)
        PEER_CHECK(cudaMemcpy(keys_out, b.keys_out, kbytes, cudaMemcpyDeviceToHost), "copy to host");
    return 0;
}

/* thrust::sort as its users call it (thrust::device policy: it allocates its
 * own temporary storage on every call, inside the timing). */
template <class K>
int thrust_run(const void *keys, void *keys_out, size_t n, int reps, gpk_peer_result *r, char *err,
               size_t errlen)
{
    Buffers b;
    const size_t kbytes = n * sizeof(K);
    PEER_CHECK(cudaMalloc(&b.keys_in, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_out, kbytes), "cudaMalloc");
    PEER_CHECK(cudaMemcpy(b.keys_in, keys, kbytes, cudaMemcpyHostToDevice), "copy to device");
    auto prep = [&] { return cudaMemcpy(b.keys_out, b.keys_in, kbytes, cudaMemcpyDeviceToDevice); };
    auto sort = [&] {
        K *p = (K *)b.keys_out;
        thrust::sort(thrust::device, p, p + n);
        return cudaGetLastError();
    };
    try {
        if (time_reps(b, reps, prep, sort, r, "thrust::sort", err, errlen)) return 1;
    } catch (const std::exception &ex) {
        snprintf(err, errlen, "thrust peer: %s", ex.what());
        (void)cudaGetLastError();
        return 1;
    }
    if (keys_out)
        PEER_CHECK(cudaMemcpy(keys_out, b.keys_out, kbytes, cudaMemcpyDeviceToHost), "copy to host");
    return 0;
}

/* Record i's key (any alignment) and its index. */
template <class K>
__global__ void rec_extract_kernel(const unsigned char *rec, size_t n, size_t stride, size_t key_offset,
                                   K *keys, uint32_t *idx)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        K k;
        memcpy(&k, rec + i * stride + key_offset, sizeof(K));
        keys[i] = k;
        idx[i] = (uint32_t)i;
    }
}

/* Word w of the output is word (idx[w / wpr] * wpr + w % wpr) of the input. */
struct GatherMap {
    const uint32_t *idx;
    uint32_t wpr;
    __host__ __device__ size_t operator()(size_t w) const
    {
        const size_t i = w / wpr;
        return (size_t)idx[i] * wpr + (w - i * wpr);
    }
};

template <class Wd> __global__ void rec_gather_kernel(const Wd *in, Wd *out, GatherMap map, size_t words)
{
    for (size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x; w < words;
         w += (size_t)gridDim.x * blockDim.x)
        out[w] = in[map(w)];
}

enum RecPeer { REC_CUB_INDEX, REC_THRUST };

template <class K, class Wd>
int records_run_w(RecPeer which, const void *records, void *records_out, size_t n, size_t record_size,
                  size_t key_offset, int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    Buffers b;
    const size_t rbytes = n * record_size;
    const uint32_t wpr = (uint32_t)(record_size / sizeof(Wd));
    const size_t words = n * wpr;
    PEER_CHECK(cudaMalloc(&b.rec_in, rbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.rec_out, rbytes), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_in, n * sizeof(K)), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.keys_out, n * sizeof(K)), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.vals_in, n * sizeof(uint32_t)), "cudaMalloc");
    PEER_CHECK(cudaMalloc(&b.vals_out, n * sizeof(uint32_t)), "cudaMalloc");
    PEER_CHECK(cudaMemcpy(b.rec_in, records, rbytes, cudaMemcpyHostToDevice), "copy to device");
    int sms = 0, dev = 0;
    PEER_CHECK(cudaGetDevice(&dev), "cudaGetDevice");
    PEER_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    const int eblocks = (int)std::max<size_t>(1, std::min<size_t>((size_t)sms * 16, (n + 255) / 256));
    const int gblocks = (int)std::max<size_t>(1, std::min<size_t>((size_t)sms * 16, (words + 255) / 256));
    size_t temp_bytes = 0;
    if (which == REC_CUB_INDEX) {
        PEER_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out,
                                                   (const uint32_t *)b.vals_in, (uint32_t *)b.vals_out,
                                                   (int)n),
                   "temp query");
        PEER_CHECK(cudaMalloc(&b.temp, std::max<size_t>(temp_bytes, 1)), "cudaMalloc");
    }
    auto prep = [] { return cudaSuccess; };
    /* timed: key extraction, the sort of (key, index), the gather */
    auto sort = [&]() -> cudaError_t {
        rec_extract_kernel<K><<<eblocks, 256>>>((const unsigned char *)b.rec_in, n, record_size, key_offset,
                                                (K *)b.keys_in, (uint32_t *)b.vals_in);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
        if (which == REC_CUB_INDEX) {
            e = cub::DeviceRadixSort::SortPairs(b.temp, temp_bytes, (const K *)b.keys_in, (K *)b.keys_out,
                                                (const uint32_t *)b.vals_in, (uint32_t *)b.vals_out, (int)n);
            if (e != cudaSuccess) return e;
            rec_gather_kernel<Wd><<<gblocks, 256>>>((const Wd *)b.rec_in, (Wd *)b.rec_out,
                                                    GatherMap{(const uint32_t *)b.vals_out, wpr}, words);
            return cudaGetLastError();
        }
        K *kp = (K *)b.keys_in;
        uint32_t *ip = (uint32_t *)b.vals_in;
        thrust::sort_by_key(thrust::device, kp, kp + n, ip);
        auto map = thrust::make_transform_iterator(thrust::counting_iterator<size_t>(0), GatherMap{ip, wpr});
        thrust::gather(thrust::device, map, map + words, (const Wd *)b.rec_in, (Wd *)b.rec_out);
        return cudaGetLastError();
    };
    const char *name = which == REC_CUB_INDEX ? "cub::DeviceRadixSort::SortPairs+gather"
                                              : "thrust::sort_by_key+thrust::gather";
    try {
        if (time_reps(b, reps, prep, sort, r, name, err, errlen)) return 1;
    } catch (const std::exception &ex) {
        snprintf(err, errlen, "records peer: %s", ex.what());
        (void)cudaGetLastError();
        return 1;
    }
    if (records_out)
        PEER_CHECK(cudaMemcpy(records_out, b.rec_out, rbytes, cudaMemcpyDeviceToHost), "copy to host");
    return 0;
}

template <class K>
int records_run(RecPeer which, const void *records, void *records_out, size_t n, size_t record_size,
                size_t key_offset, int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    /* the widest word that divides the record size (cudaMalloc aligns to 256) */
    if (record_size % 8 == 0)
        return records_run_w<K, uint64_t>(which, records, records_out, n, record_size, key_offset, reps, r,
                                          err, errlen);
    if (record_size % 4 == 0)
        return records_run_w<K, uint32_t>(which, records, records_out, n, record_size, key_offset, reps, r,
                                          err, errlen);
    return records_run_w<K, unsigned char>(which, records, records_out, n, record_size, key_offset, reps, r,
                                           err, errlen);
}

/* Common checks and the device switch of the keys peers; calls run<K>. */
template <class F> int with_device(int device, char *err, size_t errlen, F f)
{
    DeviceGuard guard;
    int previous = 0;
    PEER_CHECK(cudaGetDevice(&previous), "cudaGetDevice");
    if (previous != device) {
        PEER_CHECK(cudaSetDevice(device), "cudaSetDevice");
        guard.previous = previous;
    }
    return f();
}

int check_keys_args(const char *who, const void *keys, size_t n, int reps, gpk_peer_result *r, char *err,
                    size_t errlen)
{
    if (!r || !err || errlen == 0) return 1;
    err[0] = '\0';
    if (reps < 1 || (n > 0 && !keys)) {
        snprintf(err, errlen, "%s peer: bad arguments", who);
        return 1;
    }
    if (n > (size_t)INT_MAX) {
        snprintf(err, errlen, "%s peer: n = %zu is beyond the int item count this peer uses", who, n);
        return 1;
    }
    return 0;
}

} // namespace

#define PEER_TYPE_SWITCH(t, CALL) \
    switch (t) {                  \
    case GPK_U32: {               \
        typedef uint32_t K;       \
        return CALL;              \
    }                             \
    case GPK_I32: {               \
        typedef int32_t K;        \
        return CALL;              \
    }                             \
    case GPK_F32: {               \
        typedef float K;          \
        return CALL;              \
    }                             \
    case GPK_U64: {               \
        typedef uint64_t K;       \
        return CALL;              \
    }                             \
    case GPK_I64: {               \
        typedef int64_t K;        \
        return CALL;              \
    }                             \
    case GPK_F64: {               \
        typedef double K;         \
        return CALL;              \
    }                             \
    }

extern "C" int gpk_peer_cub_merge_sort(int device, gpk_type t, const void *keys, void *keys_out, size_t n,
                                       int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    if (check_keys_args("cub merge sort", keys, n, reps, r, err, errlen)) return 1;
    if (n == 0) {
        r->ms = 0.0;
        snprintf(r->name, sizeof r->name, "cub::DeviceMergeSort");
        return 0;
    }
    return with_device(device, err, errlen, [&]() -> int {
        PEER_TYPE_SWITCH(t, merge_sort_run<K>(keys, keys_out, n, reps, r, err, errlen))
        snprintf(err, errlen, "cub merge sort peer: unknown key type %d", (int)t);
        return 1;
    });
}

extern "C" int gpk_peer_thrust_sort(int device, gpk_type t, const void *keys, void *keys_out, size_t n,
                                    int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    if (check_keys_args("thrust", keys, n, reps, r, err, errlen)) return 1;
    if (n == 0) {
        r->ms = 0.0;
        snprintf(r->name, sizeof r->name, "thrust::sort");
        return 0;
    }
    return with_device(device, err, errlen, [&]() -> int {
        PEER_TYPE_SWITCH(t, thrust_run<K>(keys, keys_out, n, reps, r, err, errlen))
        snprintf(err, errlen, "thrust peer: unknown key type %d", (int)t);
        return 1;
    });
}

static int records_peer(RecPeer which, int device, gpk_type t, const void *records, void *records_out,
                        size_t n, size_t record_size, size_t key_offset, int reps, gpk_peer_result *r,
                        char *err, size_t errlen)
{
    if (!r || !err || errlen == 0) return 1;
    err[0] = '\0';
    const size_t kw = (t == GPK_U32 || t == GPK_I32 || t == GPK_F32) ? 4 : 8;
    if (reps < 1 || (n > 0 && !records) || record_size == 0 || record_size > 256 ||
        key_offset + kw > record_size) {
        snprintf(err, errlen, "records peer: bad arguments");
        return 1;
    }
    if (n > (size_t)INT_MAX) {
        snprintf(err, errlen, "records peer: n = %zu is beyond the int item count this peer uses", n);
        return 1;
    }
    const char *name = which == REC_CUB_INDEX ? "cub::DeviceRadixSort::SortPairs+gather"
                                              : "thrust::sort_by_key+thrust::gather";
    if (n == 0) {
        r->ms = 0.0;
        snprintf(r->name, sizeof r->name, "%s", name);
        return 0;
    }
    return with_device(device, err, errlen, [&]() -> int {
        PEER_TYPE_SWITCH(
            t, records_run<K>(which, records, records_out, n, record_size, key_offset, reps, r, err, errlen))
        snprintf(err, errlen, "records peer: unknown key type %d", (int)t);
        return 1;
    });
}

extern "C" int gpk_peer_records_cub_index(int device, gpk_type t, const void *records, void *records_out,
                                          size_t n, size_t record_size, size_t key_offset, int reps,
                                          gpk_peer_result *r, char *err, size_t errlen)
{
    return records_peer(REC_CUB_INDEX, device, t, records, records_out, n, record_size, key_offset, reps, r,
                        err, errlen);
}

extern "C" int gpk_peer_records_thrust(int device, gpk_type t, const void *records, void *records_out,
                                       size_t n, size_t record_size, size_t key_offset, int reps,
                                       gpk_peer_result *r, char *err, size_t errlen)
{
    return records_peer(REC_THRUST, device, t, records, records_out, n, record_size, key_offset, reps, r, err,
                        errlen);
}
