/* Segmented sorts on CUDA: the device-pointer API of gpk/cuda.h and the
 * host API's backend (upload, sort, download).
 *
 * Segments are sorted by length (thresholds in gpk_segmented_opts):
 *   len < 2: nothing to sort (copied when the output is another array);
 *   len <= small_max (at most 4096): one block loads the whole segment
 *     into registers and shared memory and sorts it with a block radix
 *     sort; six block shapes (128 to 4096 keys) so that short segments do
 *     not hold a large block;
 *   small_max < len < large_min: one block sorts the segment over global
 *     memory, one stable counting pass per 8-bit digit that the segment's
 *     keys do not all share (tiles ranked by a block radix sort of the
 *     digit), ping-ponging with a spare in d_temp;
 *   len >= large_min: the device radix sort of radix_cuda.cu on the
 *     segment alone; several such segments side by side on up to
 *     kLargeStreams streams forked from the caller's (the Onesweep
 *     launches, each with its own slice of d_temp), since one segment's
 *     sort of a few million keys is a chain of short launches that leaves
 *     most of the device idle.
 * With offsets a first kernel deals the segments into one list per kind
 * (warp-aggregated atomics); the call then reads the list sizes back (one
 * synchronisation of the stream) to size the launches. Rows need neither.
 * Keys are sorted as unsigned sort keys: the order-preserving map of
 * gpk/sort.h, reversed for descending order except that NaNs stay last
 * (segmented_internal.h, gpk__seg_order32/64, host and device). */
#include <cub/block/block_radix_sort.cuh>

#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "gpk/cuda.h"
#include "segmented_internal.h"
#include "../core/cuda_internal.h"

namespace {

/* ---- sort keys on the device (segmented_internal.h, core/key_traits.h) ---- */

template <typename K> struct SortKey;

template <> struct SortKey<uint32_t> {
    static __host__ __device__ __forceinline__ uint32_t to_sort(uint32_t x, gpk_type t, int desc)
    {
        return gpk__seg_order32(t, desc, gpk__map_u32(t, x));
    }
    static __host__ __device__ __forceinline__ uint32_t from_sort(uint32_t s, gpk_type t, int desc)
    {
        return gpk__unmap_u32(t, gpk__seg_order32(t, desc, s));
    }
};

template <> struct SortKey<uint64_t> {
    static __host__ __device__ __forceinline__ uint64_t to_sort(uint64_t x, gpk_type t, int desc)
    {
        return gpk__seg_order64(t, desc, gpk__map_u64(t, x));
    }
    static __host__ __device__ __forceinline__ uint64_t from_sort(uint64_t s, gpk_type t, int desc)
    {
        return gpk__unmap_u64(t, gpk__seg_order64(t, desc, s));
    }
};

/* ---- segment kinds ------------------------------------------------------ */

/* The on-chip block shapes, smallest first: threads and keys per thread;
 * tier t holds up to 128 << t keys. */
constexpr int kTiers = 6;
constexpr int kTierThreads[kTiers] = {32, 64, 128, 128, 256, 512};
constexpr int kTierItems[kTiers] = {4, 4, 4, 8, 8, 8};
constexpr unsigned kSmallCap = 4096; /* the largest tier's keys */
constexpr int kMedium = kTiers, kLarge = kTiers + 1, kKinds = kTiers + 2;
constexpr int kMediumThreads = 256, kMediumItems = 8;
/* Default large_min: from here a segment's own device sort (a few
 * launches, every SM) beats one block's passes when such segments are
 * few among many (ragged lengths: 2^17 and 2^18 measured best,
 * docs/perf/segmented.md; gpk bench segmented --large-min sweeps it). */
constexpr uint64_t kLargeMinDefault = (uint64_t)1 << 18;
/* Rows of one length at or above large_min go to whichever path the cost
 * model below says is faster (unless the caller set large_min): the large
 * path costs each row its launch chain plus its bytes at the device's
 * rate; the medium path runs one block a row, its rows side by side at
 * the rate of the whole device, and never takes less than one full wave
 * of blocks (one a multiprocessor), whose time is that of its longest
 * row. Rates in nanoseconds, measured on rows of 2^16 to 2^20 keys and
 * u32 keys and pairs (docs/perf/segmented.md, "Rows: medium or large"). */
constexpr double kLargeRowNs = 42000.0;     /* one row's launch chain */
constexpr double kLargeNsPerByte = 0.0015;  /* a large sort's bytes, keys + values */
constexpr double kMediumNsPerByte = 0.0107; /* the medium path's, device-wide */
/* Most large segments sorted at once. A sort of 2^20 keys launches about
 * 300 blocks a pass, a few waves' worth of one wave of a large device;
 * eight of them side by side fill it while each waits on its launch chain.
 * The bytes moved are those of the one-by-one sorts (the keys, and values,
 * read and written once a pass, plus one read for the histograms): only
 * the idle time between dependent launches goes. */
constexpr int kLargeStreams = 8;
/* Most blocks one launch is given (grid.x allows 2^31 - 1). */
constexpr size_t kMaxGrid = (size_t)1 << 30;

struct Limits {
    unsigned small_max; /* 0..kSmallCap */
    uint64_t large_min; /* >= 2 */
};

__host__ __device__ inline int kind_of(uint64_t len, Limits L)
{
    if (len >= L.large_min) return kLarge;
    if (len <= L.small_max) {
        for (int t = 0; t < kTiers; t++)
            if (len <= (uint64_t)128 << t) return t;
    }
    return kMedium;
}

/* Where block q of a launch finds its segment: rows, or entry q of a list
 * of segment indices into the offsets. */
struct SegSrc {
    const uint64_t *begin, *end;
    const uint32_t *list;
    uint64_t length;
    __device__ __forceinline__ void bounds(size_t q, uint64_t &b, uint64_t &e) const
    {
        if (begin) {
            const uint32_t i = list[q];
            b = begin[i];
            e = end[i];
        } else {
            b = (uint64_t)q * length;
            e = b + length;
        }
    }
};

/* Deals the segments into the lists (lists + kind * count) and counts
 * them; copies the segments of one key when the output is another array. */
template <typename K, typename V>
__global__ void __launch_bounds__(256)
    classify_kernel(const uint64_t *begin, const uint64_t *end, size_t count, Limits L, uint32_t *lists,
                    unsigned long long *counts, uint64_t *large_bounds, const K *kin, K *kout, const V *vin,
                    V *vout, int copy_units)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    int kind = -1;
    uint64_t b = 0, e = 0;
    if (i < count) {
        b = begin[i];
        e = end[i];
        if (e - b >= 2) kind = kind_of(e - b, L);
        else if (e - b == 1 && copy_units) {
            kout[b] = kin[b];
            if (vout) vout[b] = vin[b];
        }
    }
    const unsigned lane = threadIdx.x & 31u;
    for (int c = 0; c < kKinds; c++) {
        const unsigned mask = __ballot_sync(0xFFFFFFFFu, kind == c);
        if (!mask) continue;
        const int leader = __ffs(mask) - 1;
        unsigned long long base = 0;
        if ((int)lane == leader) base = atomicAdd(&counts[c], (unsigned long long)__popc(mask));
        base = __shfl_sync(0xFFFFFFFFu, base, leader);
        if (kind == c) {
            const unsigned long long pos = base + __popc(mask & ((1u << lane) - 1u));
            lists[(size_t)c * count + pos] = (uint32_t)i;
            if (c == kLarge) {
                large_bounds[2 * pos] = b;
                large_bounds[2 * pos + 1] = e;
            }
        }
    }
}

/* One block sorts one segment of at most THREADS * ITEMS keys on chip. The
 * keys load in blocked order (thread t holds keys t*ITEMS ..), which is
 * the order the block sort keeps for equal keys; the padding (the largest
 * sort key) loads after every real key, so it sorts after them. */
template <typename K, typename V, bool HAS_V, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
    small_kernel(SegSrc S, size_t q0, const K *kin, K *kout, const V *vin, V *vout, gpk_type t, int desc)
{
    using VT = typename std::conditional<HAS_V, V, cub::NullType>::type;
    using Sort = cub::BlockRadixSort<K, THREADS, ITEMS, VT>;
    __shared__ typename Sort::TempStorage tmp;
    uint64_t b, e;
    S.bounds(q0 + blockIdx.x, b, e);
    const unsigned len = (unsigned)(e - b);
    K k[ITEMS];
    VT v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const unsigned j = threadIdx.x * ITEMS + i;
        if (j < len) {
            k[i] = SortKey<K>::to_sort(kin[b + j], t, desc);
            if constexpr (HAS_V) v[i] = vin[b + j];
        } else {
            k[i] = ~(K)0;
            if constexpr (HAS_V) v[i] = 0;
        }
    }
    if constexpr (HAS_V) Sort(tmp).SortBlockedToStriped(k, v);
    else Sort(tmp).SortBlockedToStriped(k);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const unsigned j = i * THREADS + threadIdx.x;
        if (j < len) {
            kout[b + j] = SortKey<K>::from_sort(k[i], t, desc);
            if constexpr (HAS_V) vout[b + j] = v[i];
        }
    }
}

/* One block sorts one segment of any length over global memory: one
 * histogram of every digit, then a stable counting pass for each 8-bit
 * digit the keys do not all share. A pass takes tiles of THREADS * ITEMS
 * keys in order; each tile is sorted by the digit alone (stable), and a
 * key goes to its digit's running offset plus its place among the tile's
 * keys of that digit. Between passes the keys (as sort keys) ping-pong
 * between the output and the spare (kalt, valt: same positions); the last
 * pass writes the output in the caller's form, or, ending in the spare,
 * a final copy does. Segments are disjoint, so blocks never meet. */
/* A medium pass's tile, ranked by its digit in one of two ways: the block
 * radix sort of the tile by the digit (two 4-bit rank passes), or one
 * 8-bit ranking by warp-wide digit matches over keys loaded warp-striped
 * (each warp a run of the tile, in order, so the ranks are stable), then
 * the keys (and values) exchanged to their ranks in shared memory. */
enum MediumRank { kRankSort = 0, kRankMatch = 1 };

template <typename K, typename VT> union MediumTemp {
    typename cub::BlockRadixSort<K, kMediumThreads, kMediumItems, VT>::TempStorage sort;
    typename cub::BlockRadixRankMatch<kMediumThreads, 8, false>::TempStorage rank;
    K keys[kMediumThreads * kMediumItems];
    VT vals[kMediumThreads * kMediumItems];
};

/* A medium pass's write-out: the tile's keys (and values) striped in rank
 * order, place i * kMediumThreads + threadIdx.x; a key goes to its
 * digit's running offset plus its place among the tile's keys of that
 * digit (first: the tile's keys below each digit). */
template <typename K, typename V, bool HAS_V, typename VT>
__device__ __forceinline__ void scatter_striped(const K (&k)[kMediumItems], const VT (&v)[kMediumItems],
                                                unsigned valid, int d, const unsigned *run,
                                                const unsigned *first, uint64_t b, K *dk, V *dv,
                                                bool write_raw, gpk_type t, int desc)
{
#pragma unroll
    for (int i = 0; i < kMediumItems; i++) {
        const unsigned p = i * kMediumThreads + threadIdx.x;
        if (p < valid) {
            const unsigned c = (unsigned)(k[i] >> (8 * d)) & 255u;
            const uint64_t at = b + run[c] + (p - first[c]);
            dk[at] = write_raw ? SortKey<K>::from_sort(k[i], t, desc) : k[i];
            if constexpr (HAS_V) dv[at] = v[i];
        }
    }
}

/* Moves a thread's items x[i] to their ranks through buf and reads them
 * back striped (place i * kMediumThreads + threadIdx.x). The caller syncs
 * before: buf may still be in use. */
template <typename T>
__device__ __forceinline__ void exchange_to_striped(T (&x)[kMediumItems], const int (&rank)[kMediumItems],
                                                    T *buf)
{
#pragma unroll
    for (int i = 0; i < kMediumItems; i++) buf[rank[i]] = x[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kMediumItems; i++) x[i] = buf[i * kMediumThreads + threadIdx.x];
}

template <typename K, typename V, bool HAS_V, int RANK>
__global__ void __launch_bounds__(kMediumThreads)
    medium_kernel(SegSrc S, size_t q0, const K *kin, K *kout, const V *vin, V *vout, K *kalt, V *valt,
                  gpk_type t, int desc)
{
    constexpr int T = kMediumThreads, ITEMS = kMediumItems, TILE = T * ITEMS;
    constexpr int DIGITS = (int)sizeof(K);
    static_assert(T == 256, "the ranked tile keeps one digit's tile offset a thread");
    using VT = typename std::conditional<HAS_V, V, cub::NullType>::type;
    using Sort = cub::BlockRadixSort<K, T, ITEMS, VT>;
    using Rank = cub::BlockRadixRankMatch<T, 8, false>;
    __shared__ MediumTemp<K, VT> tmp;
    __shared__ unsigned hist[DIGITS][256];
    __shared__ unsigned run[256], first[256], tile_count[256];
    __shared__ int pass_on[DIGITS];
    const int tid = threadIdx.x;
    uint64_t b, e;
    S.bounds(q0 + blockIdx.x, b, e);
    const uint64_t len = e - b;

    for (int i = tid; i < DIGITS * 256; i += T) hist[i / 256][i % 256] = 0;
    __syncthreads();
    for (uint64_t j = tid; j < len; j += T) {
        const K x = SortKey<K>::to_sort(kin[b + j], t, desc);
#pragma unroll
        for (int d = 0; d < DIGITS; d++) atomicAdd(&hist[d][(unsigned)(x >> (8 * d)) & 255u], 1u);
    }
    __syncthreads();
    if (tid < DIGITS) {
        int on = 1;
        for (int c = 0; c < 256; c++)
            if (hist[tid][c] == len) on = 0;
        pass_on[tid] = on;
    }
    __syncthreads();
    int passes = 0;
    for (int d = 0; d < DIGITS; d++) passes += pass_on[d];

    const K *cur_k = kin;
    const V *cur_v = vin;
    bool cur_raw = true; /* cur holds the caller's keys, not sort keys */
    int done = 0;
    for (int d = 0; d < DIGITS; d++) {
        if (!pass_on[d]) continue;
        done++;
        K *dk = cur_k == kalt ? kout : kalt;
        V *dv = cur_k == kalt ? vout : valt;
        const bool write_raw = done == passes && dk == kout;
        if (tid == 0) {
            unsigned s = 0;
            for (int c = 0; c < 256; c++) {
                run[c] = s;
                s += hist[d][c];
            }
        }
        for (int c = tid; c < 256; c += T) {
            first[c] = TILE;
            tile_count[c] = 0;
        }
        __syncthreads();
        for (uint64_t base = 0; base < len; base += TILE) {
            const unsigned valid = len - base < (uint64_t)TILE ? (unsigned)(len - base) : (unsigned)TILE;
            K k[ITEMS];
            VT v[ITEMS];
            if constexpr (RANK == kRankMatch) {
                const int warp = tid >> 5, lane = tid & 31;
#pragma unroll
                for (int i = 0; i < ITEMS; i++) {
                    const unsigned j = warp * 32 * ITEMS + i * 32 + lane;
                    if (j < valid) {
                        const K x = cur_k[b + base + j];
                        k[i] = cur_raw ? SortKey<K>::to_sort(x, t, desc) : x;
                        if constexpr (HAS_V) v[i] = cur_v[b + base + j];
                    } else {
                        k[i] = ~(K)0; /* the last digit, after every valid key */
                        if constexpr (HAS_V) v[i] = 0;
                    }
                }
                int rank[ITEMS], start[1];
                Rank(tmp.rank).RankKeys(k, rank, cub::ShiftDigitExtractor<K>(8 * d, 8), start);
                first[tid] = (unsigned)start[0]; /* the tile's keys below digit tid */
                __syncthreads();
                exchange_to_striped(k, rank, tmp.keys);
                if constexpr (HAS_V) {
                    __syncthreads();
                    exchange_to_striped(v, rank, tmp.vals);
                }
                scatter_striped<K, V, HAS_V>(k, v, valid, d, run, first, b, dk, dv, write_raw, t, desc);
                __syncthreads();
                /* the padding keys rank last, in digit 255: places valid.. */
                run[tid] += (tid + 1 < T ? first[tid + 1] : valid) - first[tid];
                __syncthreads();
            } else {
#pragma unroll
                for (int i = 0; i < ITEMS; i++) {
                    const unsigned j = tid * ITEMS + i;
                    if (j < valid) {
                        const K x = cur_k[b + base + j];
                        k[i] = cur_raw ? SortKey<K>::to_sort(x, t, desc) : x;
                        if constexpr (HAS_V) v[i] = cur_v[b + base + j];
                    } else {
                        k[i] = ~(K)0;
                        if constexpr (HAS_V) v[i] = 0;
                    }
                }
                /* stable by digit, striped out (place i * T + tid), so that a
             * warp's stores of one digit's run are contiguous: the valid
             * keys are places 0 .. valid-1 */
                if constexpr (HAS_V) Sort(tmp.sort).SortBlockedToStriped(k, v, 8 * d, 8 * d + 8);
                else Sort(tmp.sort).SortBlockedToStriped(k, 8 * d, 8 * d + 8);
#pragma unroll
                for (int i = 0; i < ITEMS; i++) {
                    const unsigned p = i * T + tid;
                    if (p < valid) {
                        const unsigned c = (unsigned)(k[i] >> (8 * d)) & 255u;
                        atomicMin(&first[c], p);
                        atomicAdd(&tile_count[c], 1u);
                    }
                }
                __syncthreads();
                scatter_striped<K, V, HAS_V>(k, v, valid, d, run, first, b, dk, dv, write_raw, t, desc);
                __syncthreads();
                for (int c = tid; c < 256; c += T) {
                    run[c] += tile_count[c];
                    tile_count[c] = 0;
                    first[c] = TILE;
                }
                __syncthreads();
            }
        }
        cur_k = dk;
        cur_v = dv;
        cur_raw = write_raw;
    }
    if (passes == 0) {
        /* every key equal: the order stays */
        if (kin != kout)
            for (uint64_t j = tid; j < len; j += T) {
                kout[b + j] = kin[b + j];
                if constexpr (HAS_V) vout[b + j] = vin[b + j];
            }
    } else if (cur_k != kout) {
        for (uint64_t j = tid; j < len; j += T) {
            kout[b + j] = SortKey<K>::from_sort(kalt[b + j], t, desc);
            if constexpr (HAS_V) vout[b + j] = valt[b + j];
        }
    }
}

/* One validated device call. */
struct Call {
    gpk_ctx *ctx;
    gpk_type type;
    unsigned kw, vw;
    const void *kin;
    void *kout;
    const void *vin;
    void *vout;
    size_t n;
    gpk_segments segs;
    int desc;
    Limits L;
    cudaStream_t stream;
    const char *fn;
};

/* Temp layout (offsets): counts, the lists, the large segments' bounds,
 * the spare for medium segments, the large segments' sorts (sort_bytes
 * from sort on: offsets, the temp of one sort of all n keys, which the
 * call cuts into slices for as many streams as the longest large segment
 * allows; rows, one slice a stream). Rows take only what their one kind
 * needs. */
struct Layout {
    size_t counts, lists, large_bounds, kalt, valt, sort, total;
    size_t sort_bytes;
};

static size_t al(size_t x) { return gpk__align_up(x, 256); }

/* The temp (a multiple of 256 bytes) of one large segment's sort of up to
 * m keys, whichever way it runs: the device sort alone on the stream or
 * the Onesweep launches beside others, in place or copying. */
static gpk_status large_sort_temp(const Call &c, size_t m, size_t *bytes)
{
    *bytes = 0;
    if (m < 2) return GPK_OK;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = c.desc;
    /* the query reads no memory; it tells in-place from copying calls by the pointers */
    void *a = (void *)(uintptr_t)256, *b2 = (void *)(uintptr_t)512;
    size_t most = 0;
    for (int way = 0; way < 4; way++) {
        void *out = way & 1 ? b2 : a;
        size_t need = 0;
        gpk_status s;
        if (way < 2)
            s = c.vw
                ? gpk_cuda_sort_pairs(c.ctx, NULL, &need, c.type, a, out, c.vw, a, out, m, &o, 0, c.stream)
                : gpk_cuda_sort_keys(c.ctx, NULL, &need, c.type, a, out, m, &o, 0, c.stream);
        else
            s = gpk__radix_cuda_sort_bits(c.ctx, NULL, &need, c.type, a, out, c.vw, c.vw ? a : NULL,
                                          c.vw ? out : NULL, m, 0, 8 * c.kw, c.desc, c.stream);
        if (s != GPK_OK) return s;
        if (need > most) most = need;
    }
    *bytes = al(most);
    return GPK_OK;
}

/* How many streams sort the large segments: at most kLargeStreams and
 * n_large, and as many slices of slice bytes as the area holds (at least
 * one: the area holds the sort of the longest). */
static int large_streams(size_t n_large, size_t slice, size_t area)
{
    size_t k = slice ? area / slice : (size_t)kLargeStreams;
    if (k > (size_t)kLargeStreams) k = kLargeStreams;
    if (k > n_large) k = n_large;
    return k < 1 ? 1 : (int)k;
}

static gpk_status plan_layout(const Call &c, Layout *lay)
{
    memset(lay, 0, sizeof *lay);
    size_t at = 0;
    const size_t count = c.segs.count;
    if (c.segs.begin) {
        lay->counts = at;
        at += al(kKinds * sizeof(unsigned long long));
        lay->lists = at;
        at += al((size_t)kKinds * count * sizeof(uint32_t));
        lay->large_bounds = at;
        at += al(2 * count * sizeof(uint64_t));
        const bool medium = c.L.large_min > (uint64_t)c.L.small_max + 1;
        if (medium) {
            lay->kalt = at;
            at += al(c.n * c.kw);
            lay->valt = at;
            at += al(c.n * c.vw);
        }
        if (c.L.large_min <= c.n) GPK_CHECK(large_sort_temp(c, c.n, &lay->sort_bytes));
    } else if (count > 0 && c.segs.length >= 2) {
        const int kind = kind_of(c.segs.length, c.L);
        if (kind == kMedium) {
            lay->kalt = at;
            at += al(c.n * c.kw);
            lay->valt = at;
            at += al(c.n * c.vw);
        } else if (kind == kLarge) {
            size_t slice;
            GPK_CHECK(large_sort_temp(c, (size_t)c.segs.length, &slice));
            lay->sort_bytes = slice * (size_t)large_streams(count, slice, (size_t)-1);
        }
    }
    lay->sort = at;
    at += al(lay->sort_bytes);
    lay->total = at > 256 ? at : 256; /* never 0: d_temp NULL is the query */
    return GPK_OK;
}

static gpk_status launch_check(const Call &c, const char *what)
{
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(c.ctx, e, what);
}

template <typename K, typename V, bool HAS_V, int TIER>
static gpk_status launch_small_tier(const Call &c, const SegSrc &S, size_t blocks)
{
    constexpr int TH = kTierThreads[TIER], IT = kTierItems[TIER];
    static_assert(TH * IT == 128 << TIER, "tier t holds 128 << t keys");
    for (size_t q = 0; q < blocks; q += kMaxGrid) {
        const size_t g = blocks - q < kMaxGrid ? blocks - q : kMaxGrid;
        small_kernel<K, V, HAS_V, TH, IT><<<(unsigned)g, TH, 0, c.stream>>>(
            S, q, (const K *)c.kin, (K *)c.kout, (const V *)c.vin, (V *)c.vout, c.type, c.desc);
        GPK_CHECK(launch_check(c, "segmented sort: small segments kernel"));
    }
    return GPK_OK;
}

template <typename K, typename V, bool HAS_V>
static gpk_status launch_small(const Call &c, const SegSrc &S, int tier, size_t blocks)
{
    switch (tier) {
    case 0: return launch_small_tier<K, V, HAS_V, 0>(c, S, blocks);
    case 1: return launch_small_tier<K, V, HAS_V, 1>(c, S, blocks);
    case 2: return launch_small_tier<K, V, HAS_V, 2>(c, S, blocks);
    case 3: return launch_small_tier<K, V, HAS_V, 3>(c, S, blocks);
    case 4: return launch_small_tier<K, V, HAS_V, 4>(c, S, blocks);
    default: return launch_small_tier<K, V, HAS_V, 5>(c, S, blocks);
    }
}

template <typename K, typename V, bool HAS_V>
static gpk_status launch_medium(const Call &c, const SegSrc &S, size_t blocks, void *kalt, void *valt)
{
    const bool match = gpk__hook(gpk__test.segmented_cuda_medium_rank, kRankMatch) == kRankMatch;
    for (size_t q = 0; q < blocks; q += kMaxGrid) {
        const size_t g = blocks - q < kMaxGrid ? blocks - q : kMaxGrid;
        if (match)
            medium_kernel<K, V, HAS_V, kRankMatch><<<(unsigned)g, kMediumThreads, 0, c.stream>>>(
                S, q, (const K *)c.kin, (K *)c.kout, (const V *)c.vin, (V *)c.vout, (K *)kalt, (V *)valt,
                c.type, c.desc);
        else
            medium_kernel<K, V, HAS_V, kRankSort><<<(unsigned)g, kMediumThreads, 0, c.stream>>>(
                S, q, (const K *)c.kin, (K *)c.kout, (const V *)c.vin, (V *)c.vout, (K *)kalt, (V *)valt,
                c.type, c.desc);
        GPK_CHECK(launch_check(c, "segmented sort: medium segments kernel"));
    }
    return GPK_OK;
}

/* One large segment [b, e) with the device sort on c.stream; beside:
 * with the Onesweep launches, which may run beside other sorts. */
template <typename K>
static gpk_status sort_large(const Call &c, uint64_t b, uint64_t e, void *sort_temp, size_t sort_bytes,
                             bool beside)
{
    const size_t m = (size_t)(e - b);
    const K *kin = (const K *)c.kin + b;
    K *kout = (K *)c.kout + b;
    const char *vin = c.vw ? (const char *)c.vin + b * c.vw : NULL;
    char *vout = c.vw ? (char *)c.vout + b * c.vw : NULL;
    size_t bytes = sort_bytes;
    /* descending: the device sort folds the order into its first and last
     * passes' key maps */
    if (beside)
        return gpk__radix_cuda_sort_bits(c.ctx, sort_temp, &bytes, c.type, kin, kout, c.vw, vin, vout, m, 0,
                                         8 * c.kw, c.desc, c.stream);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.descending = c.desc;
    return c.vw ? gpk_cuda_sort_pairs(c.ctx, sort_temp, &bytes, c.type, kin, kout, c.vw, vin, vout, m, &o, 0,
                                      c.stream)
                : gpk_cuda_sort_keys(c.ctx, sort_temp, &bytes, c.type, kin, kout, m, &o, 0, c.stream);
}

/* The n_large large segments (bounds: 2 per segment on the host, or NULL
 * for rows of c.segs.length), in the area of area bytes of d_temp: one
 * after the other on c.stream where the area holds one sort, else dealt
 * round-robin to side streams forked from c.stream and joined back to it
 * (events), each with its own slice of the area. */
template <typename K>
static gpk_status sort_large_all(const Call &c, const uint64_t *bounds, size_t n_large, char *area,
                                 size_t area_bytes)
{
    uint64_t longest = c.segs.length;
    if (bounds) {
        longest = 0;
        for (size_t q = 0; q < n_large; q++)
            if (bounds[2 * q + 1] - bounds[2 * q] > longest) longest = bounds[2 * q + 1] - bounds[2 * q];
    }
    size_t slice;
    GPK_CHECK(large_sort_temp(c, (size_t)longest, &slice));
    const int k = large_streams(n_large, slice, area_bytes);
    if (k == 1) {
        for (size_t q = 0; q < n_large; q++) {
            const uint64_t b = bounds ? bounds[2 * q] : (uint64_t)q * longest;
            const uint64_t e = bounds ? bounds[2 * q + 1] : b + longest;
            GPK_CHECK(sort_large<K>(c, b, e, area, area_bytes, false));
        }
        return GPK_OK;
    }
    cudaStream_t side[kLargeStreams] = {};
    cudaEvent_t ev[kLargeStreams + 1] = {};
    cudaError_t e = cudaSuccess;
    int made = 0, events = 0;
    for (; events <= k && e == cudaSuccess; events++)
        e = cudaEventCreateWithFlags(&ev[events], cudaEventDisableTiming);
    if (e != cudaSuccess) events--;
    for (; made < k && e == cudaSuccess; made++)
        e = cudaStreamCreateWithFlags(&side[made], cudaStreamNonBlocking);
    if (e != cudaSuccess) made--;
    /* fork: every side stream starts after the caller's work so far */
    if (e == cudaSuccess) e = cudaEventRecord(ev[k], c.stream);
    for (int i = 0; i < k && e == cudaSuccess; i++) e = cudaStreamWaitEvent(side[i], ev[k], 0);
    gpk_status s = e == cudaSuccess ? GPK_OK : gpk__cuda_fail(c.ctx, e, "segmented sort: side streams");
    const bool forked = e == cudaSuccess;
    for (size_t q = 0; q < n_large && s == GPK_OK; q++) {
        Call ci = c;
        ci.stream = side[q % (size_t)k];
        const uint64_t b = bounds ? bounds[2 * q] : (uint64_t)q * longest;
        const uint64_t end = bounds ? bounds[2 * q + 1] : b + longest;
        s = sort_large<K>(ci, b, end, area + (q % (size_t)k) * slice, slice, true);
    }
    /* join, whatever happened: the caller's stream waits for every side stream */
    if (forked)
        for (int i = 0; i < k; i++) {
            cudaError_t j = cudaEventRecord(ev[i], side[i]);
            if (j == cudaSuccess) j = cudaStreamWaitEvent(c.stream, ev[i], 0);
            if (j != cudaSuccess && s == GPK_OK)
                s = gpk__cuda_fail(c.ctx, j, "segmented sort: joining the side streams");
        }
    /* released once their work is done */
    for (int i = 0; i < made; i++) cudaStreamDestroy(side[i]);
    for (int i = 0; i < events; i++) cudaEventDestroy(ev[i]);
    return s;
}

template <typename K, typename V, bool HAS_V>
static gpk_status run(const Call &c, char *temp, const Layout &lay)
{
    const size_t count = c.segs.count;
    void *kalt = temp + lay.kalt, *valt = temp + lay.valt;
    void *sort_temp = temp + lay.sort;
    cudaError_t e;
    if (!c.segs.begin) {
        const uint64_t len = c.segs.length;
        if (count == 0 || len == 0) return GPK_OK;
        if (len == 1) {
            if (c.kin != c.kout) {
                e = cudaMemcpyAsync(c.kout, c.kin, count * c.kw, cudaMemcpyDeviceToDevice, c.stream);
                if (e == cudaSuccess && c.vw)
                    e = cudaMemcpyAsync(c.vout, c.vin, count * c.vw, cudaMemcpyDeviceToDevice, c.stream);
                if (e != cudaSuccess) return gpk__cuda_fail(c.ctx, e, "segmented sort: cudaMemcpyAsync");
            }
            return GPK_OK;
        }
        SegSrc S = {NULL, NULL, NULL, len};
        const int kind = kind_of(len, c.L);
        if (kind < kTiers) return launch_small<K, V, HAS_V>(c, S, kind, count);
        if (kind == kMedium) return launch_medium<K, V, HAS_V>(c, S, count, kalt, valt);
        return sort_large_all<K>(c, NULL, count, (char *)sort_temp, lay.sort_bytes);
    }
    if (count == 0) return GPK_OK;
    unsigned long long *d_counts = (unsigned long long *)(temp + lay.counts);
    uint32_t *lists = (uint32_t *)(temp + lay.lists);
    uint64_t *d_large = (uint64_t *)(temp + lay.large_bounds);
    e = cudaMemsetAsync(d_counts, 0, kKinds * sizeof(unsigned long long), c.stream);
    if (e != cudaSuccess) return gpk__cuda_fail(c.ctx, e, "segmented sort: cudaMemsetAsync");
    const size_t blocks = (count + 255) / 256;
    if (blocks > 0x7FFFFFFFu) return gpk__fail(c.ctx, GPK_EINVAL, "%s: too many segments (%zu)", c.fn, count);
    classify_kernel<K, V><<<(unsigned)blocks, 256, 0, c.stream>>>(
        c.segs.begin, c.segs.end, count, c.L, lists, d_counts, d_large, (const K *)c.kin, (K *)c.kout,
        HAS_V ? (const V *)c.vin : NULL, HAS_V ? (V *)c.vout : NULL, c.kin != c.kout);
    GPK_CHECK(launch_check(c, "segmented sort: classify kernel"));
    unsigned long long h_counts[kKinds];
    e = cudaMemcpyAsync(h_counts, d_counts, sizeof h_counts, cudaMemcpyDeviceToHost, c.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c.stream);
    if (e != cudaSuccess) return gpk__cuda_fail(c.ctx, e, "segmented sort: reading the segment counts");
    for (int tier = 0; tier < kTiers; tier++)
        if (h_counts[tier]) {
            SegSrc S = {c.segs.begin, c.segs.end, lists + (size_t)tier * count, 0};
            GPK_CHECK((launch_small<K, V, HAS_V>(c, S, tier, (size_t)h_counts[tier])));
        }
    if (h_counts[kMedium]) {
        SegSrc S = {c.segs.begin, c.segs.end, lists + (size_t)kMedium * count, 0};
        GPK_CHECK((launch_medium<K, V, HAS_V>(c, S, (size_t)h_counts[kMedium], kalt, valt)));
    }
    const size_t n_large = (size_t)h_counts[kLarge];
    if (n_large) {
        uint64_t *h_large = (uint64_t *)malloc(2 * n_large * sizeof(uint64_t));
        if (!h_large)
            return gpk__fail(c.ctx, GPK_ENOMEM, "%s: no host memory for %zu segment bounds", c.fn, n_large);
        e = cudaMemcpyAsync(h_large, d_large, 2 * n_large * sizeof(uint64_t), cudaMemcpyDeviceToHost,
                            c.stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(c.stream);
        gpk_status s = e == cudaSuccess
            ? GPK_OK
            : gpk__cuda_fail(c.ctx, e, "segmented sort: reading the large segments");
        if (s == GPK_OK) s = sort_large_all<K>(c, h_large, n_large, (char *)sort_temp, lay.sort_bytes);
        free(h_large);
        return s;
    }
    return GPK_OK;
}

/* The large_min for rows: c's own, or past the row length when the medium
 * path is predicted faster (the cost model above). */
static gpk_status rows_large_min(const Call &c, uint64_t *large_min)
{
    *large_min = c.L.large_min;
    const uint64_t len = c.segs.length;
    const size_t rows = c.segs.count;
    if (c.segs.begin || rows == 0 || len < c.L.large_min || len >= UINT32_MAX) return GPK_OK;
    int sms = 0;
    const cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c.ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(c.ctx, e, "cudaDeviceGetAttribute");
    const double row_bytes = (double)len * (c.kw + c.vw);
    const double large = (double)rows * (kLargeRowNs + row_bytes * kLargeNsPerByte);
    const double wave = sms > 0 && (size_t)sms > rows ? (double)sms : (double)rows;
    const double medium = wave * row_bytes * kMediumNsPerByte;
    if (medium < large) *large_min = len + 1;
    return GPK_OK;
}

static gpk_status dispatch(const Call &c, char *temp, const Layout &lay)
{
    if (c.kw == 4) {
        if (c.vw == 4) return run<uint32_t, uint32_t, true>(c, temp, lay);
        if (c.vw == 8) return run<uint32_t, uint64_t, true>(c, temp, lay);
        return run<uint32_t, uint32_t, false>(c, temp, lay);
    }
    if (c.vw == 4) return run<uint64_t, uint32_t, true>(c, temp, lay);
    if (c.vw == 8) return run<uint64_t, uint64_t, true>(c, temp, lay);
    return run<uint64_t, uint32_t, false>(c, temp, lay);
}

static gpk_status device_segmented(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                   const void *d_keys_in, void *d_keys_out, size_t value_width,
                                   const void *d_values_in, void *d_values_out, size_t n,
                                   const gpk_segments *segs, const gpk_segmented_opts *opts,
                                   cudaStream_t stream, const char *fn)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    if (ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EINVAL, "%s: ctx is not a CUDA context", fn);
    if (!temp_bytes) return gpk__fail(ctx, GPK_EINVAL, "%s: temp_bytes is NULL", fn);
    size_t kw;
    gpk_status ws = gpk__sort_widths_check(ctx, fn, segs, "segs", key_type, value_width, &kw);
    if (ws != GPK_OK) return ws;
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    if (opts) o = *opts;
    if (o.descending != 0 && o.descending != 1)
        return gpk__fail(ctx, GPK_EINVAL, "%s: descending must be 0 or 1, not %d", fn, o.descending);
    if (!segs->begin != !segs->end)
        return gpk__fail(ctx, GPK_EINVAL, "%s: give both begin and end offsets, or neither (rows)", fn);
    if (!segs->begin && segs->count > 0 && segs->length > 0 &&
        (segs->length > n || segs->count > n / segs->length))
        return gpk__fail(ctx, GPK_EINVAL, "%s: %zu rows of %llu do not fit %zu elements", fn, segs->count,
                         (unsigned long long)segs->length, n);
    if (segs->begin && segs->count > UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "%s: at most 2^32-1 segments by offsets, not %zu", fn, segs->count);
    Call c;
    c.ctx = ctx;
    c.type = key_type;
    c.kw = (unsigned)kw;
    c.vw = (unsigned)value_width;
    c.kin = d_keys_in;
    c.kout = d_keys_out;
    c.vin = value_width ? d_values_in : NULL;
    c.vout = value_width ? d_values_out : NULL;
    c.n = n;
    c.segs = *segs;
    c.desc = o.descending;
    c.L.small_max = o.small_max == 0 || o.small_max > kSmallCap ? kSmallCap : (unsigned)o.small_max;
    c.L.large_min = o.large_min == 0 ? kLargeMinDefault : o.large_min < 2 ? 2 : (uint64_t)o.large_min;
    /* one block's passes count a segment's keys in 32 bits */
    if (c.L.large_min > UINT32_MAX) c.L.large_min = UINT32_MAX;
    c.stream = stream;
    c.fn = fn;

    DeviceGuard guard;
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    if (o.large_min == 0) GPK_CHECK(rows_large_min(c, &c.L.large_min));
    Layout lay;
    GPK_CHECK(plan_layout(c, &lay));
    gpk__clear_error(ctx);
    if (!d_temp) {
        *temp_bytes = lay.total;
        return GPK_OK;
    }
    if (*temp_bytes < lay.total)
        return gpk__fail(ctx, GPK_EINVAL,
                         "%s: temp_bytes is %zu, this call needs %zu (ask with d_temp = NULL)", fn,
                         *temp_bytes, lay.total);
    const bool any = segs->count > 0 && (segs->begin || segs->length > 0);
    if (any && n > 0 && (!d_keys_in || !d_keys_out))
        return gpk__fail(ctx, GPK_EINVAL, "%s: a key pointer is NULL", fn);
    if (any && n > 0 && value_width && (!d_values_in || !d_values_out))
        return gpk__fail(ctx, GPK_EINVAL, "%s: a value pointer is NULL", fn);
    gpk_status s = dispatch(c, (char *)d_temp, lay);
    if (s == GPK_OK) ctx->last_sort_path = "segmented";
    return s;
}

} // namespace

extern "C" gpk_status gpk_cuda_sort_segmented_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                                   gpk_type key_type, const void *d_keys_in, void *d_keys_out,
                                                   size_t n, const gpk_segments *segs,
                                                   const gpk_segmented_opts *opts, cudaStream_t stream)
{
    return device_segmented(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, 0, NULL, NULL, n, segs,
                            opts, stream, "gpk_cuda_sort_segmented_keys");
}

extern "C" gpk_status gpk_cuda_sort_segmented_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                                    gpk_type key_type, const void *d_keys_in,
                                                    void *d_keys_out, size_t value_width,
                                                    const void *d_values_in, void *d_values_out, size_t n,
                                                    const gpk_segments *segs, const gpk_segmented_opts *opts,
                                                    cudaStream_t stream)
{
    if (ctx && value_width != 4 && value_width != 8) {
        gpk__clear_error(ctx);
        return gpk__fail(ctx, GPK_EINVAL,
                         "gpk_cuda_sort_segmented_pairs: value_width must be 4 or 8, not %zu", value_width);
    }
    return device_segmented(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width,
                            d_values_in, d_values_out, n, segs, opts, stream,
                            "gpk_cuda_sort_segmented_pairs");
}

/* The host API: the arrays go up whole (so what lies outside the segments
 * comes back as it was), are sorted in place there, and come back. A
 * permutation is the pairs sort with each segment's local indices as u32
 * values. */
extern "C" gpk_status gpk__seg_sort_cuda(gpk_ctx *ctx, const gpk_seg_job *job)
{
    if (job->covered == 0) return GPK_OK;
    DeviceGuard guard;
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaStream_t stream = st->stream;
    const gpk_segments *S = &job->segs;
    const size_t n = job->n, kw = job->key_width;
    const size_t vw = job->sigma ? 4 : job->value_width;
    void *values = job->sigma ? (void *)job->sigma : job->values;
    void *d_keys = NULL, *d_vals = NULL, *d_off = NULL, *d_temp = NULL;
    gpk_segments dsegs = *S;
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    o.descending = job->descending;
    o.small_max = job->small_max;
    o.large_min = job->large_min;
    size_t temp_bytes = 0;
    gpk_status s = GPK_OK;
    /* the query first: it allocates nothing */
    s = vw ? gpk_cuda_sort_segmented_pairs(ctx, NULL, &temp_bytes, job->key_type, (void *)256, (void *)256,
                                           vw, (void *)256, (void *)256, n, S, &o, stream)
           : gpk_cuda_sort_segmented_keys(ctx, NULL, &temp_bytes, job->key_type, (void *)256, (void *)256, n,
                                          S, &o, stream);
    if (s != GPK_OK) return s;
    s = gpk__cuda_temp_alloc(ctx, &d_keys, n * kw, stream, "segmented sort: keys");
    if (s == GPK_OK && vw) s = gpk__cuda_temp_alloc(ctx, &d_vals, n * vw, stream, "segmented sort: values");
    if (s == GPK_OK && S->begin)
        s = gpk__cuda_temp_alloc(ctx, &d_off, 2 * S->count * sizeof(uint64_t), stream,
                                 "segmented sort: offsets");
    if (s == GPK_OK) s = gpk__cuda_temp_alloc(ctx, &d_temp, temp_bytes, stream, "segmented sort: temp");
    if (s == GPK_OK && job->sigma)
        for (size_t i = 0; i < S->count; i++) {
            uint64_t b, en;
            gpk__seg_bounds(S, i, &b, &en);
            for (uint64_t j = b; j < en; j++) job->sigma[j] = (uint32_t)(j - b);
        }
    if (s == GPK_OK) s = gpk__cuda_copy_to_device(ctx, d_keys, job->keys, n * kw, stream);
    if (s == GPK_OK && vw) s = gpk__cuda_copy_to_device(ctx, d_vals, values, n * vw, stream);
    if (s == GPK_OK && S->begin) {
        uint64_t *db = (uint64_t *)d_off;
        e = cudaMemcpyAsync(db, S->begin, S->count * sizeof(uint64_t), cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(db + S->count, S->end, S->count * sizeof(uint64_t), cudaMemcpyHostToDevice,
                                stream);
        if (e != cudaSuccess) s = gpk__cuda_fail(ctx, e, "segmented sort: uploading the offsets");
        dsegs.begin = db;
        dsegs.end = db + S->count;
    }
    if (s == GPK_OK)
        s = vw ? gpk_cuda_sort_segmented_pairs(ctx, d_temp, &temp_bytes, job->key_type, d_keys, d_keys, vw,
                                               d_vals, d_vals, n, &dsegs, &o, stream)
               : gpk_cuda_sort_segmented_keys(ctx, d_temp, &temp_bytes, job->key_type, d_keys, d_keys, n,
                                              &dsegs, &o, stream);
    if (s == GPK_OK) s = gpk__cuda_copy_to_host(ctx, job->keys, d_keys, n * kw, stream);
    if (s == GPK_OK && vw) s = gpk__cuda_copy_to_host(ctx, values, d_vals, n * vw, stream);
    /* the frees are stream-ordered after the work; wait for it either way */
    void *bufs[4] = {d_temp, d_off, d_vals, d_keys};
    for (int i = 0; i < 4; i++)
        if (bufs[i]) {
            e = gpk__cuda_temp_free(ctx, bufs[i], stream);
            if (e != cudaSuccess && s == GPK_OK) s = gpk__cuda_fail(ctx, e, "segmented sort: freeing");
        }
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess && s == GPK_OK) s = gpk__cuda_fail(ctx, e, "segmented sort");
    return s;
}
