/* A plain program that sorts one array with cub::DeviceRadixSort in every
 * form a user can call (32- and 64-bit num_items; in/out arrays and
 * DoubleBuffer) and with gpk's public device API (gpk_cuda_sort_keys /
 * _pairs), in one process on the same device buffers, interleaved, and
 * prints each median. It shares no code with gpk bench's CUB peer, so the
 * two check each other: the bench's CUB figure must match the fastest
 * form's here within noise (scripts/gpu-check.sh's bench stage runs both).
 *
 *   gpk-cub-alone TYPE LOG2N [VALUE_BYTES [DIST [REPS [ORDER]]]]
 *   TYPE u32|i32|f32|u64|i64|f64, VALUE_BYTES 0 (keys) | 4 | 8,
 *   DIST uniform|sorted|reverse|equal|and3|bits10, REPS (default 15),
 *   ORDER asc (default) | desc (CUB's SortKeysDescending / SortPairsDescending
 *   against gpk with gpk_radix_opts.descending)
 *
 * Output: one line per form, "form ms", then "gpk ms" and the ratio of the
 * fastest CUB form to gpk. Exit 1 on any CUDA or gpk error, or when gpk's
 * keys differ from CUB's. */
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "gpk/cuda.h"
#include "gpk/gpk.h"

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "gpk-cub-alone: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static uint64_t mix(uint64_t &s)
{
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

template <class K> static K key_from(uint64_t r)
{
    if constexpr (std::is_same_v<K, float>) return (float)((double)(r >> 11) / 9007199254740992.0);
    else if constexpr (std::is_same_v<K, double>) return (double)(r >> 11) / 9007199254740992.0;
    else return (K)r;
}

template <class K> static std::vector<K> make_keys(size_t n, const std::string &dist)
{
    std::vector<K> h(n);
    uint64_t s = 42;
    for (size_t i = 0; i < n; i++) {
        if (dist == "equal") h[i] = key_from<K>(12345);
        else if (dist == "and3") h[i] = key_from<K>(mix(s) & mix(s) & mix(s));
        else if (dist == "bits10") h[i] = (K)(mix(s) & 1023u);
        else h[i] = key_from<K>(mix(s));
    }
    if (dist == "sorted" || dist == "reverse") {
        /* uniform keys in ascending order without a host sort of 2^28 keys:
         * equal steps over the type's range plus a small jitter that keeps
         * the order (floats: [0, 1)) */
        for (size_t i = 0; i < n; i++) {
            const size_t j = dist == "sorted" ? i : n - 1 - i;
            if constexpr (std::is_floating_point_v<K>) {
                h[i] = (K)((double)j / (double)n);
            } else {
                const unsigned __int128 range = (unsigned __int128)1 << (8 * sizeof(K));
                const unsigned __int128 step = range / n;
                const uint64_t jitter = step > 1 ? mix(s) % (uint64_t)step : 0;
                h[i] = (K)(uint64_t)((unsigned __int128)j * step + jitter);
                /* signed: the same steps from the most negative value up */
                if constexpr (std::is_signed_v<K>)
                    h[i] = (K)((uint64_t)h[i] ^ ((uint64_t)1 << (8 * sizeof(K) - 1)));
            }
        }
    }
    return h;
}

struct Timer {
    cudaEvent_t a, b;
    Timer()
    {
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
    }
    void start() { CHECK(cudaEventRecord(a)); }
    float stop()
    {
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
};

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5f * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class K, class V>
static int run(gpk_type type, size_t n, const std::string &dist, int reps, bool desc)
{
    constexpr bool pairs = !std::is_void_v<V>;
    using VV = std::conditional_t<pairs, V, uint32_t>;
    std::vector<K> h = make_keys<K>(n, dist);
    const size_t kb = n * sizeof(K), vb = pairs ? n * sizeof(VV) : 0;
    K *kin, *kout, *kalt;
    VV *vin = nullptr, *vout = nullptr, *valt = nullptr;
    CHECK(cudaMalloc(&kin, kb));
    CHECK(cudaMalloc(&kout, kb));
    CHECK(cudaMalloc(&kalt, kb));
    CHECK(cudaMemcpy(kin, h.data(), kb, cudaMemcpyHostToDevice));
    if (pairs) {
        std::vector<VV> v(n);
        for (size_t i = 0; i < n; i++) v[i] = (VV)i;
        CHECK(cudaMalloc(&vin, vb));
        CHECK(cudaMalloc(&vout, vb));
        CHECK(cudaMalloc(&valt, vb));
        CHECK(cudaMemcpy(vin, v.data(), vb, cudaMemcpyHostToDevice));
    }
    /* forms: 0 int in/out, 1 int DoubleBuffer, 2 64-bit in/out, 3 64-bit DoubleBuffer */
    const char *names[4] = {"cub 32-bit n, in/out", "cub 32-bit n, DoubleBuffer", "cub 64-bit n, in/out",
                            "cub 64-bit n, DoubleBuffer"};
    using R = cub::DeviceRadixSort;
    auto call = [&](int form, void *temp, size_t &tb) -> cudaError_t {
        const bool wide = form >= 2, dbl = form % 2 == 1;
        if (desc) {
            if (!dbl) {
                if constexpr (pairs) {
                    if (wide) return R::SortPairsDescending(temp, tb, kin, kout, vin, vout, (long long)n);
                    return R::SortPairsDescending(temp, tb, kin, kout, vin, vout, (int)n);
                } else {
                    if (wide) return R::SortKeysDescending(temp, tb, kin, kout, (long long)n);
                    return R::SortKeysDescending(temp, tb, kin, kout, (int)n);
                }
            }
            cub::DoubleBuffer<K> dk(kout, kalt);
            if constexpr (pairs) {
                cub::DoubleBuffer<VV> dv(vout, valt);
                if (wide) return R::SortPairsDescending(temp, tb, dk, dv, (long long)n);
                return R::SortPairsDescending(temp, tb, dk, dv, (int)n);
            } else {
                if (wide) return R::SortKeysDescending(temp, tb, dk, (long long)n);
                return R::SortKeysDescending(temp, tb, dk, (int)n);
            }
        }
        if (!dbl) {
            if constexpr (pairs) {
                if (wide)
                    return cub::DeviceRadixSort::SortPairs(temp, tb, kin, kout, vin, vout, (long long)n);
                return cub::DeviceRadixSort::SortPairs(temp, tb, kin, kout, vin, vout, (int)n);
            } else {
                if (wide) return cub::DeviceRadixSort::SortKeys(temp, tb, kin, kout, (long long)n);
                return cub::DeviceRadixSort::SortKeys(temp, tb, kin, kout, (int)n);
            }
        }
        cub::DoubleBuffer<K> dk(kout, kalt);
        if constexpr (pairs) {
            cub::DoubleBuffer<VV> dv(vout, valt);
            if (wide) return cub::DeviceRadixSort::SortPairs(temp, tb, dk, dv, (long long)n);
            return cub::DeviceRadixSort::SortPairs(temp, tb, dk, dv, (int)n);
        } else {
            if (wide) return cub::DeviceRadixSort::SortKeys(temp, tb, dk, (long long)n);
            return cub::DeviceRadixSort::SortKeys(temp, tb, dk, (int)n);
        }
    };
    std::vector<int> forms;
    for (int f = 0; f < 4; f++)
        if (f >= 2 || n <= (size_t)INT_MAX) forms.push_back(f);
    size_t temp_max = 0, temps[4] = {0, 0, 0, 0};
    for (int f : forms) {
        CHECK(call(f, nullptr, temps[f]));
        temp_max = std::max(temp_max, temps[f]);
    }
    gpk_ctx *ctx = nullptr;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CUDA) != GPK_OK) {
        fprintf(stderr, "gpk-cub-alone: no CUDA context: %s\n", gpk_last_error(nullptr));
        return 1;
    }
    size_t gtb = 0;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = desc;
    gpk_status gs = pairs
        ? gpk_cuda_sort_pairs(ctx, nullptr, &gtb, type, kin, kout, sizeof(VV), vin, vout, n, &o, 0, 0)
        : gpk_cuda_sort_keys(ctx, nullptr, &gtb, type, kin, kout, n, &o, 0, 0);
    if (gs != GPK_OK) {
        fprintf(stderr, "gpk-cub-alone: gpk temp query: %s\n", gpk_last_error(ctx));
        return 1;
    }
    void *temp;
    CHECK(cudaMalloc(&temp, std::max(std::max(temp_max, gtb), (size_t)1)));
    Timer timer;
    std::vector<std::vector<float>> t(5);
    std::vector<K> cub_out(n), gpk_out(n);
    for (int rep = -1; rep < reps; rep++) {
        for (int f : forms) {
            if (f % 2 == 1) {
                CHECK(cudaMemcpy(kout, kin, kb, cudaMemcpyDeviceToDevice));
                if (pairs) CHECK(cudaMemcpy(vout, vin, vb, cudaMemcpyDeviceToDevice));
            }
            size_t tb = temp_max;
            timer.start();
            CHECK(call(f, temp, tb));
            const float ms = timer.stop();
            if (rep >= 0) t[f].push_back(ms);
            if (rep == reps - 1 && f == 2)
                CHECK(cudaMemcpy(cub_out.data(), kout, kb, cudaMemcpyDeviceToHost));
        }
        size_t tb = gtb;
        timer.start();
        gs = pairs ? gpk_cuda_sort_pairs(ctx, temp, &tb, type, kin, kout, sizeof(VV), vin, vout, n, &o, 0, 0)
                   : gpk_cuda_sort_keys(ctx, temp, &tb, type, kin, kout, n, &o, 0, 0);
        const float ms = timer.stop();
        if (gs != GPK_OK) {
            fprintf(stderr, "gpk-cub-alone: gpk sort: %s\n", gpk_last_error(ctx));
            return 1;
        }
        if (rep >= 0) t[4].push_back(ms);
        if (rep == reps - 1) CHECK(cudaMemcpy(gpk_out.data(), kout, kb, cudaMemcpyDeviceToHost));
    }
    float best = 1e30f;
    int best_form = forms[0];
    for (int f : forms) {
        const float m = median(t[f]);
        printf("%-28s %10.4f ms  temp %zu B\n", names[f], m, temps[f]);
        if (m < best) {
            best = m;
            best_form = f;
        }
    }
    const float g = median(t[4]);
    printf("%-28s %10.4f ms  temp %zu B (%s)\n", "gpk_cuda_sort", g, gtb, gpk_last_sort_path(ctx));
    printf("gpk / best cub (%s): %.3fx\n", names[best_form], best / g);
    /* floats: CUB orders -0.0 and +0.0 as equal and NaNs by bits; the data
     * here has neither, so both sorts must agree bit for bit */
    const bool same = memcmp(cub_out.data(), gpk_out.data(), kb) == 0;
    if (!same) fprintf(stderr, "gpk-cub-alone: gpk's keys differ from CUB's\n");
    gpk_ctx_destroy(ctx);
    return same ? 0 : 1;
}

template <class K>
static int run_v(gpk_type type, size_t n, int vbytes, const std::string &dist, int reps, bool desc)
{
    if (vbytes == 4) return run<K, uint32_t>(type, n, dist, reps, desc);
    if (vbytes == 8) return run<K, uint64_t>(type, n, dist, reps, desc);
    return run<K, void>(type, n, dist, reps, desc);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gpk-cub-alone TYPE LOG2N [VALUE_BYTES [DIST [REPS [asc|desc]]]]\n");
        return 2;
    }
    const std::string type = argv[1];
    const int lg = atoi(argv[2]);
    const int vbytes = argc > 3 ? atoi(argv[3]) : 0;
    const std::string dist = argc > 4 ? argv[4] : "uniform";
    const int reps = argc > 5 ? atoi(argv[5]) : 15;
    const std::string order = argc > 6 ? argv[6] : "asc";
    const bool desc = order == "desc";
    if (lg < 0 || lg > 33 || (vbytes != 0 && vbytes != 4 && vbytes != 8) || reps < 1 ||
        (!desc && order != "asc")) {
        fprintf(stderr, "gpk-cub-alone: bad arguments\n");
        return 2;
    }
    const size_t n = (size_t)1 << lg;
    printf("%s n=2^%d values=%d dist=%s reps=%d %s\n", type.c_str(), lg, vbytes, dist.c_str(), reps,
           desc ? "descending" : "ascending");
    if (type == "u32") return run_v<uint32_t>(GPK_U32, n, vbytes, dist, reps, desc);
    if (type == "i32") return run_v<int32_t>(GPK_I32, n, vbytes, dist, reps, desc);
    if (type == "f32") return run_v<float>(GPK_F32, n, vbytes, dist, reps, desc);
    if (type == "u64") return run_v<uint64_t>(GPK_U64, n, vbytes, dist, reps, desc);
    if (type == "i64") return run_v<int64_t>(GPK_I64, n, vbytes, dist, reps, desc);
    if (type == "f64") return run_v<double>(GPK_F64, n, vbytes, dist, reps, desc);
    fprintf(stderr, "gpk-cub-alone: unknown type %s\n", type.c_str());
    return 2;
}
