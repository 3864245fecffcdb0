// CPU peers for `gpk bench sort`: qsort, std::sort, __gnu_parallel::sort
// and, where CMake found them, Highway's vectorised quicksort vqsort
// (GPK_HAVE_HWY), the kind of sort numpy.sort runs since numpy 2
// (x86-simd-sort), and IPS4o's parallel samplesort (GPK_HAVE_IPS4O).
//
// Order: integers sort with their natural order (std::less on the natural
// type, a three-way C comparator for qsort). Floats cannot use operator<
// (NaNs are unordered and -0.0 == +0.0), so every float peer compares the
// bit pattern through the total order that include/gpk/sort.h documents:
//   -inf < ... < -0.0 < +0.0 < ... < +inf < +NaNs < -NaNs,
// restated here from the header (not shared code, so a mistake in gpk's own
// mapping shows up as a mismatch). With that order, a correct peer's output
// is byte-identical to gpk_sort_reference for every type and input.
//
// Each peer times only the sort itself: every repetition first copies the
// input into the output buffer (untimed), then sorts it in place.
#include "peers.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include <omp.h>
#include <parallel/algorithm>
#ifdef GPK_HAVE_HWY
#include <hwy/contrib/sort/vqsort.h>
#endif
#ifdef GPK_HAVE_IPS4O
#include <ips4o.hpp>
#endif

namespace {

// Order-preserving unsigned image of a float bit pattern: sign-magnitude to
// offset binary, then a rotation that moves negative NaNs above +NaN.
inline uint32_t f32_order(uint32_t x) { return (x ^ ((x >> 31) ? 0xFFFFFFFFu : 0x80000000u)) - 0x007FFFFFu; }
inline uint64_t f64_order(uint64_t x)
{
    return (x ^ ((x >> 63) ? 0xFFFFFFFFFFFFFFFFull : 0x8000000000000000ull)) - 0x000FFFFFFFFFFFFFull;
}

// Floats are handled as their bit patterns (uint32_t / uint64_t) with these
// comparators; integers as their natural types with std::less.
struct less_f32 {
    bool operator()(uint32_t a, uint32_t b) const { return f32_order(a) < f32_order(b); }
};
struct less_f64 {
    bool operator()(uint64_t a, uint64_t b) const { return f64_order(a) < f64_order(b); }
};

template <typename T> int cmp_natural(const void *a, const void *b)
{
    T x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}
int cmp_f32(const void *a, const void *b)
{
    uint32_t x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    x = f32_order(x);
    y = f32_order(y);
    return (x > y) - (x < y);
}
int cmp_f64(const void *a, const void *b)
{
    uint64_t x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    x = f64_order(x);
    y = f64_order(y);
    return (x > y) - (x < y);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs sort_fn(buffer) `reps` times on fresh copies of keys and fills r.
template <typename SortFn>
int run_timed(const char *name, gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
              gpk_peer_result *r, char *err, size_t errlen, SortFn sort_fn)
{
    size_t w = gpk_type_size(t);
    if (w == 0) {
        std::snprintf(err, errlen, "%s: unknown key type %d", name, (int)t);
        return 1;
    }
    if (reps < 1) reps = 1;
    unsigned char *buf = static_cast<unsigned char *>(keys_out);
    unsigned char *own = nullptr;
    if (!buf) {
        own = static_cast<unsigned char *>(std::malloc(n ? n * w : 1));
        if (!own) {
            std::snprintf(err, errlen, "%s: out of memory for %zu keys", name, n);
            return 1;
        }
        buf = own;
    }
    std::vector<double> times;
    try {
        times.reserve(static_cast<size_t>(reps));
        for (int i = 0; i < reps; i++) {
            std::memcpy(buf, keys, n * w);
            auto t0 = std::chrono::steady_clock::now();
            sort_fn(buf, n);
            auto t1 = std::chrono::steady_clock::now();
            times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
    } catch (const std::bad_alloc &) {
        std::free(own);
        std::snprintf(err, errlen, "%s: out of memory", name);
        return 1;
    }
    std::free(own);
    r->ms = median(times);
    std::snprintf(r->name, sizeof r->name, "%s", name);
    return 0;
}

// Calls f with a typed pointer and the comparator for type t.
template <typename F> void with_type(gpk_type t, void *p, size_t n, F f)
{
    switch (t) {
    case GPK_U32: f(static_cast<uint32_t *>(p), n, std::less<uint32_t>()); break;
    case GPK_I32: f(static_cast<int32_t *>(p), n, std::less<int32_t>()); break;
    case GPK_F32: f(static_cast<uint32_t *>(p), n, less_f32()); break;
    case GPK_U64: f(static_cast<uint64_t *>(p), n, std::less<uint64_t>()); break;
    case GPK_I64: f(static_cast<int64_t *>(p), n, std::less<int64_t>()); break;
    case GPK_F64: f(static_cast<uint64_t *>(p), n, less_f64()); break;
    }
}

} // namespace

extern "C" int gpk_peer_qsort(gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                              gpk_peer_result *r, char *err, size_t errlen)
{
    int (*cmp)(const void *, const void *) = nullptr;
    switch (t) {
    case GPK_U32: cmp = cmp_natural<uint32_t>; break;
    case GPK_I32: cmp = cmp_natural<int32_t>; break;
    case GPK_F32: cmp = cmp_f32; break;
    case GPK_U64: cmp = cmp_natural<uint64_t>; break;
    case GPK_I64: cmp = cmp_natural<int64_t>; break;
    case GPK_F64: cmp = cmp_f64; break;
    }
    size_t w = gpk_type_size(t);
    return run_timed("qsort", t, keys, keys_out, n, reps, r, err, errlen,
                     [&](void *p, size_t m) { std::qsort(p, m, w, cmp); });
}

extern "C" int gpk_peer_std_sort(gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                                 gpk_peer_result *r, char *err, size_t errlen)
{
    return run_timed("std::sort", t, keys, keys_out, n, reps, r, err, errlen, [&](void *p, size_t m) {
        with_type(t, p, m, [](auto *a, size_t k, auto less) { std::sort(a, a + k, less); });
    });
}

extern "C" int gpk_peer_gnu_parallel_sort(gpk_type t, const void *keys, void *keys_out, size_t n, int threads,
                                          int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    // Thread count through the tag, not omp_set_num_threads, so the rest of
    // the process (gpk's own OpenMP CPU backend) keeps its setting.
    int nt = threads > 0 ? threads : omp_get_num_procs();
    int rc =
        run_timed("__gnu_parallel::sort", t, keys, keys_out, n, reps, r, err, errlen, [&](void *p, size_t m) {
            with_type(t, p, m, [nt](auto *a, size_t k, auto less) {
                __gnu_parallel::sort(
                    a, a + k, less,
                    __gnu_parallel::default_parallel_tag(static_cast<__gnu_parallel::_ThreadIndex>(nt)));
            });
        });
    if (rc == 0) std::snprintf(r->name, sizeof r->name, "__gnu_parallel::sort(%d thr)", nt);
    return rc;
}

namespace {

template <typename K, typename V> struct kv {
    K k;
    V v;
};

// Fills the records from keys and values before each repetition (not
// timed), sorts them by key, and leaves the sorted keys in keys_out.
template <typename K, typename V, typename Less>
void pairs_timed(const void *keys, const void *values, void *keys_out, size_t n, int nt, int reps,
                 std::vector<double> &times, Less less)
{
    std::vector<kv<K, V>> a(n);
    const K *ks = static_cast<const K *>(keys);
    const V *vs = static_cast<const V *>(values);
    for (int rep = 0; rep < reps; rep++) {
        for (size_t i = 0; i < n; i++) a[i] = kv<K, V>{ks[i], vs[i]};
        auto t0 = std::chrono::steady_clock::now();
        __gnu_parallel::sort(
            a.begin(), a.end(), [&](const kv<K, V> &x, const kv<K, V> &y) { return less(x.k, y.k); },
            __gnu_parallel::default_parallel_tag(static_cast<__gnu_parallel::_ThreadIndex>(nt)));
        auto t1 = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    if (keys_out)
        for (size_t i = 0; i < n; i++) static_cast<K *>(keys_out)[i] = a[i].k;
}

template <typename V>
void pairs_by_type(gpk_type t, const void *keys, const void *values, void *keys_out, size_t n, int nt,
                   int reps, std::vector<double> &times)
{
    switch (t) {
    case GPK_U32:
        pairs_timed<uint32_t, V>(keys, values, keys_out, n, nt, reps, times, std::less<uint32_t>());
        break;
    case GPK_I32:
        pairs_timed<int32_t, V>(keys, values, keys_out, n, nt, reps, times, std::less<int32_t>());
        break;
    case GPK_F32: pairs_timed<uint32_t, V>(keys, values, keys_out, n, nt, reps, times, less_f32()); break;
    case GPK_U64:
        pairs_timed<uint64_t, V>(keys, values, keys_out, n, nt, reps, times, std::less<uint64_t>());
        break;
    case GPK_I64:
        pairs_timed<int64_t, V>(keys, values, keys_out, n, nt, reps, times, std::less<int64_t>());
        break;
    case GPK_F64: pairs_timed<uint64_t, V>(keys, values, keys_out, n, nt, reps, times, less_f64()); break;
    }
}

} // namespace

extern "C" int gpk_peer_gnu_parallel_sort_pairs(gpk_type t, const void *keys, const void *values,
                                                size_t value_width, void *keys_out, size_t n, int threads,
                                                int reps, gpk_peer_result *r, char *err, size_t errlen)
{
    const char *name = "__gnu_parallel::sort";
    if (gpk_type_size(t) == 0 || (value_width != 4 && value_width != 8)) {
        std::snprintf(err, errlen, "%s pairs: key type %d, value width %zu", name, (int)t, value_width);
        return 1;
    }
    int nt = threads > 0 ? threads : omp_get_num_procs();
    std::vector<double> times;
    try {
        times.reserve(static_cast<size_t>(reps > 1 ? reps : 1));
        if (value_width == 4)
            pairs_by_type<uint32_t>(t, keys, values, keys_out, n, nt, reps > 1 ? reps : 1, times);
        else pairs_by_type<uint64_t>(t, keys, values, keys_out, n, nt, reps > 1 ? reps : 1, times);
    } catch (const std::bad_alloc &) {
        std::snprintf(err, errlen, "%s pairs: out of memory for %zu records", name, n);
        return 1;
    }
    r->ms = median(times);
    std::snprintf(r->name, sizeof r->name, "__gnu_parallel::sort(%d thr)", nt);
    return 0;
}

#ifdef GPK_HAVE_HWY
namespace {

// Whether floats can go to vqsort as floats and come out byte-identical to
// gpk's total order: no NaNs (unordered) and no -0.0 (equal to +0.0).
template <typename U> bool plain_floats(const U *k, size_t n, U sign, U exp_mask, U frac_mask)
{
    for (size_t i = 0; i < n; i++) {
        if (k[i] == sign) return false;                                        // -0.0
        if ((k[i] & exp_mask) == exp_mask && (k[i] & frac_mask)) return false; // NaN
    }
    return true;
}

} // namespace

extern "C" int gpk_peer_vqsort(gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                               gpk_peer_result *r, char *err, size_t errlen)
{
    // Floats sort as floats (what numpy users get) when that order is
    // gpk's; with NaNs or -0.0 in the input, their order-preserving
    // unsigned images sort instead, the mapping timed with the sort.
    bool native = true;
    if (t == GPK_F32)
        native = plain_floats<uint32_t>(static_cast<const uint32_t *>(keys), n, 0x80000000u, 0x7F800000u,
                                        0x007FFFFFu);
    if (t == GPK_F64)
        native = plain_floats<uint64_t>(static_cast<const uint64_t *>(keys), n, 0x8000000000000000ull,
                                        0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull);
    try {
        hwy::Sorter sorter; // its buffer is allocated here, outside the timing
        const hwy::SortAscending up;
        int rc =
            run_timed(native ? "vqsort" : "vqsort (mapped floats)", t, keys, keys_out, n, reps, r, err,
                      errlen, [&](void *p, size_t m) {
                          switch (t) {
                          case GPK_U32: sorter(static_cast<uint32_t *>(p), m, up); break;
                          case GPK_I32: sorter(static_cast<int32_t *>(p), m, up); break;
                          case GPK_U64: sorter(static_cast<uint64_t *>(p), m, up); break;
                          case GPK_I64: sorter(static_cast<int64_t *>(p), m, up); break;
                          case GPK_F32:
                              if (native) sorter(static_cast<float *>(p), m, up);
                              else {
                                  uint32_t *u = static_cast<uint32_t *>(p);
                                  for (size_t i = 0; i < m; i++) u[i] = f32_order(u[i]);
                                  sorter(u, m, up);
                                  for (size_t i = 0; i < m; i++) { // f32_order's inverse
                                      uint32_t y = u[i] + 0x007FFFFFu;
                                      u[i] = y ^ ((y >> 31) ? 0x80000000u : 0xFFFFFFFFu);
                                  }
                              }
                              break;
                          case GPK_F64:
                              if (native) sorter(static_cast<double *>(p), m, up);
                              else {
                                  uint64_t *u = static_cast<uint64_t *>(p);
                                  for (size_t i = 0; i < m; i++) u[i] = f64_order(u[i]);
                                  sorter(u, m, up);
                                  for (size_t i = 0; i < m; i++) {
                                      uint64_t y = u[i] + 0x000FFFFFFFFFFFFFull;
                                      u[i] = y ^ ((y >> 63) ? 0x8000000000000000ull : 0xFFFFFFFFFFFFFFFFull);
                                  }
                              }
                              break;
                          }
                      });
        if (rc == 0)
            std::snprintf(r->name, sizeof r->name, "%s (1 thr)", native ? "vqsort" : "vqsort mapped");
        return rc;
    } catch (const std::bad_alloc &) {
        std::snprintf(err, errlen, "vqsort: out of memory");
        return 1;
    }
}
#else
extern "C" int gpk_peer_vqsort(gpk_type, const void *, void *, size_t, int, gpk_peer_result *, char *err,
                               size_t errlen)
{
    std::snprintf(err, errlen, "vqsort: Highway (libhwy-dev) was not found when gpk was configured");
    return -1;
}
#endif

#ifdef GPK_HAVE_IPS4O
namespace {
// IPS4o at its best of two calls a user can make: ips4o::parallel::sort
// per call (it sorts on one thread where its own rule says so), and a
// reusable sorter built once outside the timing (its buffers and thread
// pool kept, as a program sorting again and again would keep them). The
// faster is reported and named.
template <typename T, typename Less>
int ips4o_best(gpk_type t, const void *keys, void *keys_out, size_t n, int nt, int reps, gpk_peer_result *r,
               char *err, size_t errlen, Less less)
{
    gpk_peer_result call = {}, kept = {};
    int rc = run_timed("IPS4o", t, keys, keys_out, n, reps, &call, err, errlen, [&](void *p, size_t m) {
        T *a = static_cast<T *>(p);
        ips4o::parallel::sort(a, a + m, less, nt);
    });
    if (rc != 0) return rc;
    auto sorter = ips4o::parallel::make_sorter<T *>(nt, less);
    rc = run_timed("IPS4o", t, keys, keys_out, n, reps, &kept, err, errlen, [&](void *p, size_t m) {
        T *a = static_cast<T *>(p);
        sorter(a, a + m);
    });
    if (rc != 0) return rc;
    const bool sorter_wins = kept.ms < call.ms;
    *r = sorter_wins ? kept : call;
    std::snprintf(r->name, sizeof r->name, "IPS4o%s(%d thr)", sorter_wins ? " sorter " : " ", nt);
    return 0;
}
} // namespace

extern "C" int gpk_peer_ips4o(gpk_type t, const void *keys, void *keys_out, size_t n, int threads, int reps,
                              gpk_peer_result *r, char *err, size_t errlen)
{
    const int nt = threads > 0 ? threads : omp_get_num_procs();
    int rc = 1;
    std::snprintf(err, errlen, "IPS4o: unknown key type %d", (int)t);
    try {
        // with_type gives the element type and the order; no data yet
        with_type(t, nullptr, 0, [&](auto *typed, size_t, auto less) {
            using T = std::remove_pointer_t<decltype(typed)>;
            rc = ips4o_best<T>(t, keys, keys_out, n, nt, reps, r, err, errlen, less);
        });
    } catch (const std::bad_alloc &) {
        std::snprintf(err, errlen, "IPS4o: out of memory");
        return 1;
    }
    return rc;
}
#else
extern "C" int gpk_peer_ips4o(gpk_type, const void *, void *, size_t, int, int, gpk_peer_result *, char *err,
                              size_t errlen)
{
    std::snprintf(err, errlen,
                  "IPS4o: its headers (Debian libips4o-dev) were not found when gpk was configured");
    return -1;
}
#endif
