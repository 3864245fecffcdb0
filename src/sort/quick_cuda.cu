/* CUDA quicksort: CUDA-quicksort (Manca et al. 2015), iterative form.
 *
 * The CPU only controls the iterations (paper, Box 4.1): one launch of
 * partition_kernel per level of the recursion, the levels sent in batches
 * of kBatch between two reads of the counters (each launch's
 * grid a bound on its tiles; the blocks past the real count leave). The partition kernel runs one block per tile of TILE elements of
 * every segment still to split (the tile size is fixed, the number of
 * blocks follows the segment sizes: paper 4.1). A block
 *   - loads its tile once and classifies it against the segment's pivot;
 *   - reserves its output ranges with one atomicAdd on the segment's
 *     (lt, gt) counter pair, < P from the left end and > P from the right
 *     end (paper 4.2, Box 4.3 task 2), issued right after its block scan
 *     so that the round trip overlaps the staging;
 *   - stages the tile in shared memory in bucket order and writes it
 *     coalesced to the other buffer (paper 4.3);
 *   - folds min and max of both sides into the segment's record.
 * The block that finishes a segment last (a counter taken after a
 * __threadfence) plans the segment's children at once: a child that is
 * still big is appended to the next level's list (slot and first tile in
 * one 64-bit atomicAdd) and its tiles are mapped to it, so the next
 * launch finds its segment with one load; a finished child is appended
 * to the list of "items" (the paper's GPU stack). No planning kernel and
 * no host work between levels beyond reading the counters.
 * Items are sorted / copied / filled by one finish_kernel launch at the
 * end (or when the item list could fill up); sort items have a list of
 * their own, block i sorting item i. Tiles start on 128-byte lines
 * (GPK_QUICK_ALIGN), a segment's first one before the segment.
 *
 * Pivots. A midpoint of the segment's (min, max): for integer keys the
 * midpoint of the mapped keys (rounded up); for floating-point keys the
 * midpoint of the values, (min + max) / 2, which splits [0, 1) in halves
 * where the bit midpoint splits off the ~26 exponents one by one. Unless
 * a 256-key sample of the segment says that the midpoint leaves more than
 * 60 % on one side: then the sample's median (sample_pivot). A child whose
 * split was lopsided (more than 3/4 of its parent) takes the bit midpoint
 * for one level, which halves max - min, so the depth stays within
 * 2 (log_{4/3} n + width) whatever the input: no quadratic case on sorted,
 * zero-entropy, many-duplicates or median-of-3-killer inputs. A segment
 * with min == max is done.
 * The first level's (min, max) come from a sample: the children get exact
 * ones from the partition.
 *
 * Equal keys: with keys only, the == P bucket is not moved at all; its
 * range in the output is filled with P afterwards (the paper's
 * WRITE_PIVOT). With values (pairs, and the (key, index) pairs of records)
 * the == P elements must move and their range is only known once every
 * block has finished, so they go with the > P side; depth stays bounded by
 * the pivot rule and runs of equal keys end as min == max segments.
 *
 * Buffers: the input `in` (the uploaded copy, or the bench's pristine
 * copy), A and B. Depth 0 reads `in` (mapping keys as it reads) and
 * writes B, then B -> A, A -> B, ...: a segment of depth d lives in
 * buf(d). Every finished element ends in A, in unmapped form. Segments
 * are disjoint ranges, identical in every buffer, so a finished range may
 * be written into A while other segments are still partitioned.
 *
 * In-block sort of small segments, rather than the paper's bitonic sort
 * (91 compare-exchange stages for 8192 keys, each a pass over shared
 * memory with a barrier): a bucket pass on the top 12 bits of
 * (key - min) and a rank within each bin (bucket_finish), and
 * cub::BlockRadixSort over the bits where the segment's keys can differ
 * for the blocks whose bins are too full.
 *
 * Records: (mapped key, index) pairs are extracted, sorted, and the
 * records gathered. From 2^16 records the iterative variant first sorts
 * the pairs by the top bits of their key range with two radix passes and
 * starts the quicksort from the buckets (see "Records front end").
 *
 * Positions are 32-bit: fewer than 2^32 elements.
 *
 * The recursive variant (GPK_SORT_QUICK_RECURSIVE) is this file compiled
 * again by quick_cuda_cdp.cu with GPK_QUICK_CDP_TU and relocatable device
 * code: there the block that plans a segment launches the partition grid
 * of each big child itself (dynamic parallelism), down to depth
 * a depth (kCdpDepthDefault) after which the host loop takes over.
 */
#include <cuda_runtime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <type_traits>

#include <cub/block/block_radix_sort.cuh>

#include "quick_internal.h"
#include "../core/cuda_internal.h"

namespace {

typedef unsigned long long u64;

#ifdef GPK_QUICK_CDP_TU
constexpr bool kRecursive = true;
#else
constexpr bool kRecursive = false;
#endif
/* Recursive variant: segments of depth < cdp_depth are partitioned by
 * device-side launches (each level nests one launch deeper; CUDA allows
 * 24); those of depth cdp_depth go to list cdp_depth & 1 for the host
 * loop (cdp_depth, 1 .. kCdpDepthMax). */
constexpr int kCdpDepthDefault = 15;
constexpr int kCdpDepthMax = 22;
/* Segments of depth below this choose their pivot with a sample
 * (sample_pivot): every level, which measured no slower than depths 3
 * or 8 on gaussian and uniform keys (docs/perf/quicksort.md). */
constexpr int kSampleDepthMax = 24;
constexpr int kSampleDepthDefault = kSampleDepthMax;
/* sample_band: the percentage past 50 at which a midpoint pivot gives way to a sample's */
constexpr int kSampleBand = 10;

/* ------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------ */
constexpr int kThreads = 256; /* partition blocks */
/* Finish shape (bench/quick_experiments.sh builds variants with -D). */
#ifndef GPK_QUICK_FINISH_THREADS
#define GPK_QUICK_FINISH_THREADS 512
#endif
#ifndef GPK_QUICK_FINISH_RB /* digit bits of the in-block radix sort */
#define GPK_QUICK_FINISH_RB 4
#endif
constexpr int kFinishThreads = GPK_QUICK_FINISH_THREADS; /* finish blocks */
constexpr int kCopyItems = 16;                           /* elements per thread of a copy / fill block */
constexpr uint32_t kCopyTile = kFinishThreads * kCopyItems;
constexpr int kRootThreads = 1024;
constexpr uint32_t kRootExact = 1u << 16; /* up to this n the root's (min, max) are exact */
constexpr uint32_t kRootSample = 1u << 12;

/* Partition tile: elements per thread. 4-byte keys alone: 16 (TILE 4096,
 * 16 KiB of shared memory); anything wider: 8 (TILE 2048, <= 32 KiB). */
template <class K, class V, bool HAS_V> struct QShape {
    static constexpr int I = (sizeof(K) == 4 && !HAS_V) ? 16 : 8;
    static constexpr uint32_t TILE = (uint32_t)kThreads * I;
    /* small segments (len <= SMALL) are sorted by one finish block */
#ifndef GPK_QUICK_SI4 /* finish items per thread, 4-byte keys alone */
#define GPK_QUICK_SI4 36
#endif
    static constexpr int SI = (sizeof(K) == 4 && !HAS_V) ? GPK_QUICK_SI4 : 8;
    static constexpr uint32_t SMALL = (uint32_t)kFinishThreads * SI;
    static constexpr size_t SMEM = (size_t)TILE * (sizeof(K) + (HAS_V ? sizeof(V) : 0));
    /* partition blocks per SM the registers must allow (<= 64 registers) */
#ifndef GPK_QUICK_PART_BLOCKS
#define GPK_QUICK_PART_BLOCKS 8
#endif
    static constexpr int MIN_BLOCKS = !HAS_V ? GPK_QUICK_PART_BLOCKS : 4;
    static_assert(SMEM <= 48 * 1024, "partition staging must fit static shared memory");
    static_assert(TILE < (1u << 21), "bucket counts are packed in 21-bit fields");
    static_assert(SMALL >= TILE, "a big segment has more than one tile's worth");
#ifndef GPK_QUICK_ALIGN /* 1: tiles start on 128-byte lines (the first one of a segment early) */
#define GPK_QUICK_ALIGN 1
#endif
    static constexpr uint32_t ALIGN = GPK_QUICK_ALIGN ? 128 / sizeof(K) : 1;
    /* the tiles of a segment: the first one starts at off rounded down to ALIGN */
    __host__ __device__ static uint32_t tiles_of(uint32_t off, uint32_t len)
    {
        return (uint32_t)(((u64)(off % ALIGN) + len + TILE - 1) / TILE);
    }
};

/* Key map: the maps as data of core/key_traits.h, as in the radix sort. */
using gpk_key::Twiddle;
using gpk_key::twiddle;
using gpk_key::twiddle_map;
using gpk_key::twiddle_unmap;

/* Pivot choice. fbytes: 4 or 8 for floating-point keys, else 0. */
template <class K> struct PivotMap {
    Twiddle<K> map, unmap;
    int fbytes;
};

/* ------------------------------------------------------------------------
 * Work lists in device memory
 * ------------------------------------------------------------------------ */
enum BufId : uint8_t { BUF_IN = 0, BUF_A = 1, BUF_B = 2 };
enum ItemKind : uint8_t { ITEM_SORT = 0, ITEM_COPY = 1, ITEM_FILL = 2 };
/* SEG_BITMID: take the bit midpoint (after a lopsided value split);
 * SEG_INEXACT: min and max are a sample's (the root) */
enum SegFlags : uint32_t { SEG_BITMID = 1, SEG_INEXACT = 2 };

/* A segment still to partition (len > SMALL, or the root). */
template <class K> struct Seg {
    uint32_t off, len;
    uint32_t first_tile; /* its first block in the level's launch */
    uint32_t flags;
    K min, max, pivot;
};

/* Per segment, filled by its partition blocks with atomics. */
template <class K> struct Part {
    u64 lr; /* lt (low 32 bits) and gt (high) reserved so far */
    K lt_min, lt_max, gt_min, gt_max;
    uint32_t done, pad; /* blocks finished */
};

template <class K> __host__ __device__ __forceinline__ Part<K> part_init()
{
    return Part<K>{0ull, (K) ~(K)0, (K)0, (K) ~(K)0, (K)0, 0u, 0u};
}

/* A finished range: sort it in one block, copy it to A, or fill it with
 * one key. key: the segment's min (SORT, the radix sort subtracts it) or
 * the constant key (FILL); end_bit: bits of (key - min) the sort needs. */
template <class K> struct Item {
    uint32_t off, len;
    K key;
    uint8_t kind, buf, end_bit, pad;
};

/* Counters; the host reads back the first 32 bytes after every level.
 * Each u64 is (blocks << 32) | count, taken with one atomicAdd, so that
 * slot order and block order agree. */
struct Ctl {
    u64 big[2]; /* list j: segments, their tiles */
    u64 items;  /* pending copy / fill items, their finish blocks */
    uint32_t overflow;
    uint32_t sorts; /* pending sort items (one finish block each) */
};
enum CtlError : uint32_t { ERR_CAPACITY = 1, ERR_LAUNCH = 2 };

/* ------------------------------------------------------------------------
 * Device helpers
 * ------------------------------------------------------------------------ */
__device__ __forceinline__ void atomic_min_k(uint32_t *p, uint32_t v) { atomicMin(p, v); }
__device__ __forceinline__ void atomic_max_k(uint32_t *p, uint32_t v) { atomicMax(p, v); }
__device__ __forceinline__ void atomic_min_k(u64 *p, u64 v) { atomicMin(p, v); }
__device__ __forceinline__ void atomic_max_k(u64 *p, u64 v) { atomicMax(p, v); }

template <class K> __host__ __device__ __forceinline__ K midpoint_up(K lo, K hi)
{
    /* lo <= hi: lo + ceil((hi - lo) / 2) in (lo, hi] when lo < hi, no overflow */
    const K d = hi - lo;
    return lo + (d >> 1) + (d & 1);
}

template <class K> __device__ __forceinline__ K choose_pivot(K lo, K hi, bool bitmid, const PivotMap<K> &pm)
{
    const K bit = midpoint_up(lo, hi);
    if (bitmid || pm.fbytes == 0 || lo == hi) return bit;
    const K ulo = twiddle(pm.unmap, lo), uhi = twiddle(pm.unmap, hi);
    double a, b;
    if (pm.fbytes == 4) {
        a = (double)__uint_as_float((uint32_t)ulo);
        b = (double)__uint_as_float((uint32_t)uhi);
    } else {
        a = __longlong_as_double((long long)ulo);
        b = __longlong_as_double((long long)uhi);
    }
    const double m = 0.5 * a + 0.5 * b;
    if (!isfinite(m)) return bit; /* infinities, NaNs */
    K p;
    if (pm.fbytes == 4) p = twiddle(pm.map, (K)__float_as_uint((float)m));
    else p = twiddle(pm.map, (K)(u64)__double_as_longlong(m));
    /* rounding (or a value midpoint of denormals) may leave the range */
    return (p <= lo || p > hi) ? bit : p;
}

template <class K> __device__ __forceinline__ int bit_width(K x)
{
    if (sizeof(K) == 4) return 32 - __clz((uint32_t)x);
    return 64 - __clzll((long long)x);
}

/* Exclusive block scan of one value per thread (T threads); *total gets the
 * block's sum. scratch: T / 32 words of shared memory. Ends with a barrier,
 * so scratch may be reused at once. */
template <int T, class X> __device__ __forceinline__ X block_exclusive_scan(X x, X *scratch, X *total)
{
    constexpr int W = T / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    X incl = x;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        X y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) scratch[warp] = incl;
    __syncthreads();
    X before = 0, all = 0;
#pragma unroll
    for (int w = 0; w < W; w++) {
        const X v = scratch[w];
        if (w < warp) before += v;
        all += v;
    }
    *total = all;
    __syncthreads();
    return before + incl - x;
}

/* Largest s with starts[s] <= b (starts non-decreasing, starts[0] = 0). */
__device__ __forceinline__ uint32_t find_owner(const uint32_t *starts, uint32_t count, uint32_t b)
{
    uint32_t lo = 0, hi = count; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) >> 1;
        if (starts[mid] <= b) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------------
 * Where children go (filled by the host, read by the planning block)
 * ------------------------------------------------------------------------ */
template <class K> struct Lists {
    Seg<K> *segs[2]; /* list j holds the segments of depths d with d & 1 == j */
    Part<K> *parts[2];
    uint32_t *tile_seg[2]; /* block -> segment of the level's launch */
    Item<K> *items;        /* copy / fill */
    uint32_t *item_blocks; /* first finish block of each item */
    Item<K> *sorts;        /* sort: block i of the finish sorts item i */
    uint32_t *fallback;    /* sorts for the radix finish */
    uint32_t *nfallback;
    Ctl *ctl;
    uint32_t cap_big, cap_tiles, cap_items;
    Seg<K> *pool_seg; /* recursive variant: one slot per launched segment */
    Part<K> *pool_part;
    uint32_t *pool_ctr;
    uint32_t cap_pool;
};

template <class K, class V> struct PartArgs {
    const Seg<K> *segs; /* the level's list, or one pool slot */
    Part<K> *parts;
    const uint32_t *tile_seg; /* NULL: one segment, first tile 0 */
    int depth;
    const K *kbuf[3]; /* by BufId */
    K *kA, *kB;
    const V *vbuf[3];
    V *vA, *vB;
    Twiddle<K> map;   /* caller keys -> mapped, applied when reading BUF_IN raw */
    bool in_raw;      /* BUF_IN holds the caller's unmapped keys */
    bool in_is_final; /* BUF_IN is A and holds the caller's keys as they are */
    bool need_unmap;  /* keys must be unmapped on the way to A */
    PivotMap<K> pm;
    Lists<K> l;
    int cdp_depth;    /* recursive variant */
    int sample_depth; /* segments above this depth may take a sample's median as pivot */
    int sample_band;  /* ... when the midpoint leaves more than 50 + band % on one side */
    bool grid_bound;  /* the grid is a bound: blocks past the level's tiles leave */
};

/* One of the three buffers by BufId. Selected, not indexed: a dynamic
 * index into a kernel parameter array would copy the array to the stack. */
template <class P> __device__ __forceinline__ P pick_buf(const P (&bufs)[3], uint8_t id)
{
    return id == BUF_IN ? bufs[BUF_IN] : id == BUF_A ? bufs[BUF_A] : bufs[BUF_B];
}

/* buf(d): where the segments of depth d are (d = 0: the input). */
__host__ __device__ __forceinline__ uint8_t buf_of_depth(int d)
{
    return d == 0 ? BUF_IN : (d & 1) ? BUF_B : BUF_A;
}

template <class K> struct Child {
    uint32_t off, len;
    K min, max;
    bool fill;  /* the == P range of a keys-only partition */
    bool exact; /* min and max are exact (not the root's sample) */
    bool given; /* pivot chosen already (from a sample); left out of an initializer: false */
    K pivot;
};

__device__ __forceinline__ void ctl_error(Ctl *ctl, uint32_t code) { atomicOr(&ctl->overflow, code); }

template <class K, class V, bool HAS_V, bool EQB, bool ALL4>
__global__ void __launch_bounds__(kThreads, (QShape<K, V, HAS_V>::MIN_BLOCKS))
    partition_kernel(PartArgs<K, V> a);

/* A child is finished (an item, or nothing when it is final already) or
 * big: appended to the next list, or (recursive) launched. Runs on one
 * thread. *map_first / *map_tiles: tiles of the next launch to map to
 * *map_slot (0 tiles: none). */
template <class K, class V, bool HAS_V, bool EQB>
__device__ void emit_child(const PartArgs<K, V> &a, const Child<K> &c, int depth, uint32_t flags,
                           uint32_t *map_slot, uint32_t *map_first, uint32_t *map_tiles)
{
    using S = QShape<K, V, HAS_V>;
    const Lists<K> &l = a.l;
    *map_tiles = 0;
    if (c.len == 0) return;
    const uint8_t buf = buf_of_depth(depth);
    const bool final_as_is = (buf == BUF_A && !a.need_unmap) || (buf == BUF_IN && a.in_is_final);
    Item<K> it;
    it.off = c.off;
    it.len = c.len;
    it.buf = buf;
    it.end_bit = 0;
    it.pad = 0;
    uint32_t blocks = 0;
    if (c.exact && (c.fill || c.min == c.max)) {
        /* the == P range was never written: it is always filled */
        if (final_as_is && !c.fill) return;
        /* keys only: the range is one key, write it without reading */
        it.kind = EQB ? ITEM_FILL : ITEM_COPY;
        it.key = c.min;
        blocks = (uint32_t)(((u64)c.len + kCopyTile - 1) / kCopyTile);
    } else if (c.exact && c.len <= S::SMALL) {
        it.kind = ITEM_SORT;
        it.key = c.min;
        /* (key - min) < 2^w. The padding (all ones) may equal a real key
         * in those bits; the in-block sorts are stable and the padding
         * comes last, so it stays last. */
        it.end_bit = (uint8_t)bit_width<K>((K)(c.max - c.min));
        blocks = 1;
    }
    if (blocks && it.kind == ITEM_SORT) {
        /* a list of its own, so that the finish finds it without a search */
        const uint32_t slot = atomicAdd(&l.ctl->sorts, 1u);
        if (slot < l.cap_items) l.sorts[slot] = it;
        else ctl_error(l.ctl, ERR_CAPACITY);
        return;
    }
    if (blocks) {
        const u64 old = atomicAdd(&l.ctl->items, ((u64)blocks << 32) | 1ull);
        const uint32_t slot = (uint32_t)old;
        if (slot < l.cap_items) {
            l.items[slot] = it;
            l.item_blocks[slot] = (uint32_t)(old >> 32);
        } else {
            ctl_error(l.ctl, ERR_CAPACITY); /* the host's flush rule makes this unreachable */
        }
        return;
    }
    const uint32_t tiles = S::tiles_of(c.off, c.len);
    const K pivot = c.given ? c.pivot : choose_pivot(c.min, c.max, (flags & SEG_BITMID) != 0, a.pm);
#ifdef GPK_QUICK_CDP_TU
    if (depth < a.cdp_depth) {
        const uint32_t slot = atomicAdd(l.pool_ctr, 1u);
        if (slot >= l.cap_pool) {
            ctl_error(l.ctl, ERR_CAPACITY);
            return;
        }
        l.pool_seg[slot] = Seg<K>{c.off, c.len, 0u, flags, c.min, c.max, pivot};
        l.pool_part[slot] = part_init<K>();
        PartArgs<K, V> ca = a;
        ca.segs = l.pool_seg + slot;
        ca.parts = l.pool_part + slot;
        ca.tile_seg = nullptr;
        ca.depth = depth;
        partition_kernel<K, V, HAS_V, EQB, false><<<tiles, kThreads, 0, cudaStreamFireAndForget>>>(ca);
        if (cudaGetLastError() != cudaSuccess) ctl_error(l.ctl, ERR_LAUNCH);
        return;
    }
#endif
    const int j = depth & 1;
    const u64 old = atomicAdd(&l.ctl->big[j], ((u64)tiles << 32) | 1ull);
    const uint32_t slot = (uint32_t)old, first = (uint32_t)(old >> 32);
    if (slot >= l.cap_big || (u64)first + tiles > l.cap_tiles) {
        ctl_error(l.ctl, ERR_CAPACITY);
        return;
    }
    l.segs[j][slot] = Seg<K>{c.off, c.len, first, flags, c.min, c.max, pivot};
    l.parts[j][slot] = part_init<K>();
    *map_slot = slot;
    *map_first = first;
    *map_tiles = tiles;
}

/* The tiles of up to 3 new segments of the next level point to them
 * (all threads of the block). */
__device__ __forceinline__ void map_tiles(uint32_t *tile_seg, const uint32_t (*m)[3], int count)
{
    for (int c = 0; c < count; c++)
        for (uint32_t j = threadIdx.x; j < m[c][2]; j += blockDim.x) tile_seg[m[c][1] + j] = m[c][0];
}

/* Count-balanced pivots. A midpoint pivot splits the range in halves,
 * not the keys: on a bell-shaped distribution the middle segments stay
 * 2-3x fuller than the outer ones and take one or two more levels. Each
 * of T threads brings one key sampled from the segment; when between
 * 50 - band and 50 + band % of the sample (band: 10) lies below the
 * midpoint `mid`, mid it is (uniform keys keep their exact halves), else
 * the sample's median, clamped into (lo, hi] so that both sides of an
 * integer split stay possible. A median's split is balanced only as far
 * as the sample is representative: a split that leaves more than 3/4 on
 * one side still marks that child for a bit midpoint (which samples
 * nothing), so every second level at least shrinks the segment to 3/4 or
 * halves its range, and the depth stays bounded on any input. All T
 * threads call it; s_samp holds T keys; it ends with a barrier. */
template <class K, int T> __device__ K sample_pivot(K k, K lo, K hi, K mid, int band, K *s_samp, K *s_res)
{
    const int tid = threadIdx.x;
    s_samp[tid] = k;
    const int below = __syncthreads_count(k < mid);
    if (lo == hi || (below * 100 >= T * (50 - band) && below * 100 <= T * (50 + band))) return mid;
    uint32_t rank = 0; /* keys below k, and equal ones sampled earlier: a permutation of 0 .. T-1 */
#pragma unroll 8
    for (int q = 0; q < T; q++) {
        const K y = s_samp[q];
        rank += (y < k) | ((y == k) & (q < tid));
    }
    if (rank == T / 2) *s_res = k;
    __syncthreads();
    const K p = *s_res;
    __syncthreads();
    return p <= lo ? (K)(lo + 1) : p > hi ? hi : p;
}

/* Position of sample t of T in a segment of len > T keys. */
template <int T> __device__ __forceinline__ uint32_t sample_at(uint32_t off, uint32_t len, int t)
{
    return off + (uint32_t)(((u64)t * len) / T) + len / (2 * T);
}

/* The planning block's samples for its big children (kept out of line:
 * inlined, its registers would spill in the partition kernel). */
template <class K>
__device__ __noinline__ void sample_children(const K *keys, Child<K> *s_ch, const uint32_t *s_flags,
                                             uint32_t small, PivotMap<K> pm, int band, K *s_samp, K *s_res)
{
    /* both samples loaded at once: one round trip */
    K k[2];
    for (int c = 0; c < 3; c += 2) {
        const Child<K> ch = s_ch[c];
        if (ch.len > small && ch.min < ch.max && !s_flags[c])
            k[c / 2] = __ldcg(keys + sample_at<kThreads>(ch.off, ch.len, threadIdx.x));
    }
    for (int c = 0; c < 3; c += 2) {
        const Child<K> ch = s_ch[c];
        if (ch.len <= small || ch.min == ch.max || s_flags[c]) continue;
        const K mid = choose_pivot(ch.min, ch.max, false, pm);
        const K p = sample_pivot<K, kThreads>(k[c / 2], ch.min, ch.max, mid, band, s_samp, s_res);
        if (threadIdx.x == 0) {
            s_ch[c].given = true;
            s_ch[c].pivot = p;
        }
    }
}

/* ------------------------------------------------------------------------
 * Root: the first segment, from a sample (or every key when n is small).
 * ------------------------------------------------------------------------ */
template <class K, class V, bool HAS_V, bool EQB>
__global__ void __launch_bounds__(kRootThreads) root_kernel(PartArgs<K, V> a, uint32_t n)
{
    constexpr int W = kRootThreads / 32;
    __shared__ K s_lo[W], s_hi[W];
    __shared__ K s_samp[kRootThreads], s_pivot;
    __shared__ uint32_t s_map[3][3];
    const bool exact = n <= kRootExact;
    const uint32_t count = exact ? n : kRootSample;
    const K *keys = a.kbuf[BUF_IN];
    K lo = (K) ~(K)0, hi = 0;
    for (uint32_t i = threadIdx.x; i < count; i += kRootThreads) {
        const uint32_t j = exact ? i : (uint32_t)(((u64)i * n) / count);
        K k = keys[j];
        if (a.in_raw) k = twiddle(a.map, k);
        lo = min(lo, k);
        hi = max(hi, k);
    }
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        lo = min(lo, (K)__shfl_xor_sync(0xffffffffu, lo, s));
        hi = max(hi, (K)__shfl_xor_sync(0xffffffffu, hi, s));
    }
    if ((threadIdx.x & 31) == 0) {
        s_lo[threadIdx.x >> 5] = lo;
        s_hi[threadIdx.x >> 5] = hi;
    }
    __syncthreads();
    for (int w = 0; w < W; w++) {
        lo = min(lo, s_lo[w]);
        hi = max(hi, s_hi[w]);
    }
    K pivot = choose_pivot(lo, hi, false, a.pm);
    if (!exact && a.sample_depth > 0) {
        K k = keys[sample_at<kRootThreads>(0u, n, threadIdx.x)];
        if (a.in_raw) k = twiddle(a.map, k);
        pivot = sample_pivot<K, kRootThreads>(k, lo, hi, pivot, a.sample_band, s_samp, &s_pivot);
    }
    if (threadIdx.x == 0) {
        s_map[0][2] = 0;
        if (exact && (lo == hi || n <= QShape<K, V, HAS_V>::SMALL)) {
            /* an item, or nothing: never a launch */
            uint32_t d0, d1, d2;
            emit_child<K, V, HAS_V, EQB>(a, Child<K>{0u, n, lo, hi, false, true}, 0, 0u, &d0, &d1, &d2);
        } else {
            /* list 0 is empty: the root is segment 0, tiles 0 .. */
            const uint32_t tiles =
                (uint32_t)(((u64)n + QShape<K, V, HAS_V>::TILE - 1) / QShape<K, V, HAS_V>::TILE);
            a.l.ctl->big[0] = ((u64)tiles << 32) | 1ull;
            a.l.segs[0][0] = Seg<K>{0u, n, 0u, exact ? 0u : (uint32_t)SEG_INEXACT, lo, hi, pivot};
            a.l.parts[0][0] = part_init<K>();
            s_map[0][0] = 0;
            s_map[0][1] = 0;
            s_map[0][2] = tiles;
        }
    }
    __syncthreads();
    map_tiles(a.l.tile_seg[0], s_map, 1);
}

/* ------------------------------------------------------------------------
 * Records front end: the first levels as one bucket split.
 *
 * Records carry (key, index) pairs, 12 bytes each way per level, over
 * ~13 levels at 2^25: more bytes than the 8 passes of a radix sort. So
 * a records sort of at least 2^kFrontMinLog keys starts with a stable two-pass
 * radix sort (radix_cuda.cu) by the top W bits of the range where the
 * keys differ (W: buckets of ~2^kFrontBucketLog keys on average), which
 * leaves each bucket contiguous. Buckets become the quicksort's first
 * segments: sort items when small, else depth-0 segments with a sample
 * pivot. A bucket's bounds are those of its bits, not its keys: valid but
 * loose, so depth 0 reduces all four child bounds (ALL4).
 * ------------------------------------------------------------------------ */
template <class K> struct FrontPlan {
    const uint32_t *starts, *ends; /* bucket v: [starts[v], ends[v]) */
    uint32_t buckets;              /* 2^(window bits) */
    int shift;                     /* bucket v holds keys with bits [shift, ..) == v (above: prefix) */
    K prefix, low_and, low_or;     /* bits above the window; AND and OR of every key's bits below it */
};

/* Every key's window value; the first and last position of each run. */
template <class K>
__global__ void __launch_bounds__(256) bucket_bounds_kernel(const K *keys, uint32_t n, int shift,
                                                            uint32_t wmask, uint32_t *starts, uint32_t *ends)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t v = (uint32_t)(keys[i] >> shift) & wmask;
        if (i == 0 || ((uint32_t)(keys[i - 1] >> shift) & wmask) != v) starts[v] = (uint32_t)i;
        if (i + 1 == n || ((uint32_t)(keys[i + 1] >> shift) & wmask) != v) ends[v] = (uint32_t)i + 1;
    }
}

/* Block v plans bucket v (empty buckets: starts = ends = 0). */
template <class K, class V, bool HAS_V, bool EQB>
__global__ void __launch_bounds__(kThreads) bucket_plan_kernel(PartArgs<K, V> a, FrontPlan<K> f)
{
    using S = QShape<K, V, HAS_V>;
    __shared__ K s_samp[kThreads], s_pivot;
    __shared__ uint32_t s_map[1][3];
    const uint32_t v = blockIdx.x;
    const uint32_t off = f.starts[v], len = f.ends[v] - off;
    if (len == 0) return;
    const K base = f.prefix | ((K)v << f.shift);
    Child<K> c = Child<K>{off, len, (K)(base | f.low_and), (K)(base | f.low_or), false, true};
    if (len > S::SMALL && c.min < c.max) {
        const K k = __ldcg(a.kbuf[BUF_IN] + sample_at<kThreads>(off, len, threadIdx.x));
        const K mid = choose_pivot(c.min, c.max, false, a.pm);
        c.pivot = a.sample_depth > 0
            ? sample_pivot<K, kThreads>(k, c.min, c.max, mid, a.sample_band, s_samp, &s_pivot)
            : mid;
        c.given = true;
    }
    if (threadIdx.x == 0) emit_child<K, V, HAS_V, EQB>(a, c, 0, 0u, &s_map[0][0], &s_map[0][1], &s_map[0][2]);
    __syncthreads();
    map_tiles(a.l.tile_seg[0], s_map, 1);
}

/* ------------------------------------------------------------------------
 * Partition (Box 4.3), and the plan of a segment by its last block
 * ------------------------------------------------------------------------ */
/* EQB: keys only, the == P bucket stays out of the output (filled later).
 *
 * Ranking by warp ballots: for element i of every thread, the lanes of a
 * warp that go left (right) take consecutive places, after those of the
 * warp's earlier elements and of the block's earlier warps. So the
 * staging stores of one instruction are consecutive words (no bank
 * conflicts), and the ranks cost a ballot and a popcount per element and
 * side. The classification is evaluated twice (counts, then places)
 * rather than kept: registers are what limits the blocks per SM.
 *
 * Child bounds: the left child's min is the segment's min and the right
 * child's max the segment's max, both exact, so only the inner bounds are
 * reduced; the root, whose bounds come from a sample (SEG_INEXACT),
 * reduces all four (ALL4). */

/* The warp's largest (MAX) or smallest x, in every lane. */
template <bool MAX, class K> __device__ __forceinline__ K warp_bound(K x)
{
    if constexpr (sizeof(K) == 4) {
        const uint32_t u = (uint32_t)x;
        return (K)(MAX ? __reduce_max_sync(0xffffffffu, u) : __reduce_min_sync(0xffffffffu, u));
    } else {
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
            const K y = (K)__shfl_xor_sync(0xffffffffu, x, s);
            x = MAX ? max(x, y) : min(x, y);
        }
        return x;
    }
}

/* The partition kernel's phases. Inlined, they give the kernel the code
 * of one body: registers limit its blocks per SM, and ptxas's register
 * count follows the order of the work, not only the work. So the phases
 * take what the kernel computes once (lane, warp, lanes_below), the side
 * tests are the kernel's lambdas, and each phase keeps its statements in
 * the order of the single body (compare `nvcc -Xptxas -v` on a change).
 *
 * Inner bounds of one side each (lt_max, gt_min) and, with ALL4, the
 * outer ones (lo, hi). */
template <class K> struct SideBounds {
    K lt_max, gt_min, lo, hi;
};

/* This thread's counts, left | right << 16, and its side bounds.
 * goes_left(i), goes_right(i): the side of the thread's element i. */
template <bool ALL4, class K, int I, class GoesLeft, class GoesRight>
__device__ __forceinline__ SideBounds<K> count_sides(const K (&key)[I], const GoesLeft &goes_left,
                                                     const GoesRight &goes_right, uint32_t &counts)
{
    uint32_t nl = 0, nr = 0;
    K lt_max = 0, gt_min = (K) ~(K)0, lo = (K) ~(K)0, hi = 0;
#pragma unroll
    for (int i = 0; i < I; i++) {
        const bool l = goes_left(i), r = goes_right(i);
        nl += l;
        nr += r;
        if (l) lt_max = max(lt_max, key[i]);
        if (r) gt_min = min(gt_min, key[i]);
        if (ALL4 && (l || r)) {
            lo = min(lo, key[i]);
            hi = max(hi, key[i]);
        }
    }
    counts = nl | (nr << 16);
    return SideBounds<K>{lt_max, gt_min, lo, hi};
}

/* The block's total of packed counts and those of the warps before this
 * thread's (all threads; one barrier). */
template <int W>
__device__ __forceinline__ void warp_offsets(uint32_t counts, int lane, int warp, uint32_t *s_wcnt,
                                             uint32_t &before, uint32_t &total)
{
    const uint32_t wcnt = __reduce_add_sync(0xffffffffu, counts);
    if (lane == 0) s_wcnt[warp] = wcnt;
    __syncthreads();
    before = 0;
    total = 0;
#pragma unroll
    for (int w = 0; w < W; w++) {
        const uint32_t v = s_wcnt[w];
        before += w < warp ? v : 0u;
        total += v;
    }
}

/* Box 4.3 task 2 (one thread): one atomicAdd reserves this block's
 * ranges, < P from the left end and > P from the right end; its round
 * trip overlaps the staging that follows. */
template <class K>
__device__ __forceinline__ void reserve_ranges(Part<K> *pt, const Seg<K> &sg, uint32_t total,
                                               uint32_t *s_lt_base, uint32_t *s_gt_base)
{
    const uint32_t tot_l = total & 0xFFFFu, tot_r = total >> 16;
    u64 old = 0;
    if (total) old = atomicAdd(&pt->lr, ((u64)tot_r << 32) | tot_l);
    *s_lt_base = sg.off + (uint32_t)old;
    *s_gt_base = sg.off + sg.len - (uint32_t)(old >> 32) - tot_r;
}

/* Stage in shared memory: left side at [0, tot_l), right side at
 * [tot_l, tot_l + tot_r), each warp's elements after those of the warps
 * before it (`before`, packed); lanes_below: the lane's bit mask of the
 * lanes below it. */
template <bool HAS_V, class K, class V, int I, int NV, class GoesLeft, class GoesRight>
__device__ __forceinline__ void stage_tile(const K (&key)[I], const V (&val)[NV], const GoesLeft &goes_left,
                                           const GoesRight &goes_right, uint32_t before, uint32_t tot_l,
                                           K *s_keys, V *s_vals, uint32_t lanes_below)
{
    constexpr uint32_t FULL = 0xffffffffu;
    uint32_t pl = before & 0xFFFFu, pr = tot_l + (before >> 16);
#pragma unroll
    for (int i = 0; i < I; i++) {
        const bool l = goes_left(i), r = goes_right(i);
        const uint32_t ml = __ballot_sync(FULL, l), mr = __ballot_sync(FULL, r);
        if (l || r) {
            const uint32_t pos = l ? pl + __popc(ml & lanes_below) : pr + __popc(mr & lanes_below);
            s_keys[pos] = key[i];
            if (HAS_V) s_vals[pos] = val[i];
        }
        pl += __popc(ml);
        pr += __popc(mr);
    }
}

/* Box 4.3 task 3: consecutive threads write consecutive positions. */
template <bool HAS_V, int I, class K, class V>
__device__ __forceinline__ void write_tile(const K *s_keys, const V *s_vals, uint32_t tot_l, uint32_t tot_r,
                                           uint32_t lt_base, uint32_t gt_base, K *kout, V *vout)
{
    const uint32_t count = tot_l + tot_r;
    gt_base -= tot_l;
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t j = threadIdx.x + i * kThreads;
        if (j >= count) break;
        const uint32_t out = (j < tot_l ? lt_base : gt_base) + j; /* modulo 2^32 on the way, exact */
        kout[out] = s_keys[j];
        if (HAS_V) vout[out] = s_vals[j];
    }
}

/* Merges the block's side bounds into the segment's, then counts the
 * block done (all threads; two barriers). True in the segment's last
 * block, which then sees every block's atomics. */
template <class S, bool ALL4, int W, class K>
__device__ __forceinline__ bool publish_bounds(SideBounds<K> b, K (*s_red)[W], Part<K> *pt, const Seg<K> &sg,
                                               uint32_t tot_l, uint32_t tot_r, uint32_t *s_last)
{
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    b.lt_max = warp_bound<true>(b.lt_max);
    b.gt_min = warp_bound<false>(b.gt_min);
    if (ALL4) {
        b.lo = warp_bound<false>(b.lo);
        b.hi = warp_bound<true>(b.hi);
    }
    if (lane == 0) {
        s_red[0][warp] = b.lt_max;
        s_red[1][warp] = b.gt_min;
        s_red[2][warp] = b.lo;
        s_red[3][warp] = b.hi;
    }
    __syncthreads();
    const uint32_t tiles = S::tiles_of(sg.off, sg.len);
    if (tid == 0) {
        for (int w = 1; w < W; w++) {
            b.lt_max = max(b.lt_max, s_red[0][w]);
            b.gt_min = min(b.gt_min, s_red[1][w]);
            b.lo = min(b.lo, s_red[2][w]);
            b.hi = max(b.hi, s_red[3][w]);
        }
        if (tot_l) atomic_max_k(&pt->lt_max, b.lt_max);
        if (tot_r) atomic_min_k(&pt->gt_min, b.gt_min);
        if (ALL4) {
            atomic_min_k(&pt->lt_min, b.lo);
            atomic_max_k(&pt->gt_max, b.hi);
        }
        uint32_t last = 1;
        if (tiles > 1) {
            __threadfence(); /* our counts and bounds before the done count */
            last = atomicAdd(&pt->done, 1u) == tiles - 1;
        }
        *s_last = last;
    }
    __syncthreads();
    return *s_last;
}

/* The segment's last block: the three children (< P, == P, > P) from
 * the segment's totals and bounds, their pivots, and their entries in
 * the next level (all threads). s_samp, s_res: scratch for the samples. */
template <class K, class V, bool HAS_V, bool EQB, bool ALL4>
__device__ __forceinline__ void plan_children(const PartArgs<K, V> &a, const Seg<K> &sg, Part<K> *pt,
                                              const K *kout, Child<K> *s_ch, uint32_t *s_flags, K *s_samp,
                                              K *s_res, uint32_t (*s_map)[3])
{
    using S = QShape<K, V, HAS_V>;
    if (threadIdx.x == 0) {
        __threadfence();
        const u64 lr = __ldcg(&pt->lr);
        const uint32_t lt = (uint32_t)lr, gt = (uint32_t)(lr >> 32);
        const K lmax = __ldcg(&pt->lt_max), gmin = __ldcg(&pt->gt_min);
        const K lmin = ALL4 ? __ldcg(&pt->lt_min) : sg.min, gmax = ALL4 ? __ldcg(&pt->gt_max) : sg.max;
        s_ch[0] = Child<K>{sg.off, lt, lmin, lmax, false, true};
        s_ch[1] =
            Child<K>{sg.off + lt, sg.len - lt - gt, sg.pivot, sg.pivot, true, true}; /* empty without EQB */
        s_ch[2] = Child<K>{sg.off + sg.len - gt, gt, gmin, gmax, false, true};
        /* value pivots until a split is lopsided, then one bit midpoint */
        for (int c = 0; c < 3; c++)
            s_flags[c] =
                ((sg.flags & SEG_BITMID) == 0 && (u64)s_ch[c].len * 4 > (u64)sg.len * 3) ? SEG_BITMID : 0u;
    }
    __syncthreads();
    if (a.depth + 1 < a.sample_depth)
        sample_children<K>(kout, s_ch, s_flags, S::SMALL, a.pm, a.sample_band, s_samp, s_res);
    if (threadIdx.x == 0)
        for (int c = 0; c < 3; c++)
            emit_child<K, V, HAS_V, EQB>(a, s_ch[c], a.depth + 1, s_flags[c], &s_map[c][0], &s_map[c][1],
                                         &s_map[c][2]);
    __syncthreads();
    map_tiles(a.l.tile_seg[(a.depth + 1) & 1], s_map, 3);
}

/* Block b partitions tile b - first_tile of its segment; the segment's
 * last block plans its children. */
template <class K, class V, bool HAS_V, bool EQB, bool ALL4>
__global__ void __launch_bounds__(kThreads, (QShape<K, V, HAS_V>::MIN_BLOCKS))
    partition_kernel(PartArgs<K, V> a)
{
    using S = QShape<K, V, HAS_V>;
    constexpr int I = S::I;
    constexpr uint32_t TILE = S::TILE;
    constexpr int W = kThreads / 32;
    static_assert(!(EQB && HAS_V), "the == P bucket is only left out when there are no values");
    static_assert(TILE < (1u << 16), "per-warp counts are packed in 16-bit fields");

    __shared__ K s_keys[TILE];
    __shared__ V s_vals[HAS_V ? TILE : 1];
    __shared__ uint32_t s_wcnt[W];
    __shared__ K s_red[4][W];
    __shared__ uint32_t s_lt_base, s_gt_base, s_last;
    __shared__ uint32_t s_map[3][3];
    __shared__ Child<K> s_ch[3];
    __shared__ uint32_t s_flags[3];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t lanes_below = (1u << lane) - 1u;
    uint32_t si = 0;
    if (a.tile_seg) {
        /* both loads issued before the test: no extra round trip */
        const uint32_t level_tiles =
            a.grid_bound ? (uint32_t)(__ldcg(&a.l.ctl->big[a.depth & 1]) >> 32) : ~0u;
        si = a.tile_seg[blockIdx.x];
        if (blockIdx.x >= level_tiles) return;
    }
    const Seg<K> sg = a.segs[si];
    Part<K> *pt = &a.parts[si];
    const uint32_t t = blockIdx.x - sg.first_tile;
    const uint32_t head = sg.off % S::ALIGN;
    const uint32_t start = sg.off - head + t * TILE;
    const uint32_t first = t == 0 ? head : 0u; /* this tile's elements: [first, valid) */
    const uint32_t valid = min(TILE, head + sg.len - t * TILE);
    const K pivot = sg.pivot;
    const uint8_t sbuf = buf_of_depth(a.depth), dbuf = buf_of_depth(a.depth + 1);
    const K *kin = pick_buf(a.kbuf, sbuf);
    const V *vin = pick_buf(a.vbuf, sbuf);
    K *kout = dbuf == BUF_A ? a.kA : a.kB;
    V *vout = dbuf == BUF_A ? a.vA : a.vB;
    const bool raw = sbuf == BUF_IN && a.in_raw;

    /* Load, striped (coalesced; .cg: the data may come from other blocks
     * of a parent grid). Absent elements get the pivot: with EQB they are
     * == P and dropped; without, they are counted out by `valid`. */
    K key[I];
    V val[HAS_V ? I : 1];
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t j = tid + i * kThreads;
        key[i] = pivot;
        if (j >= first && j < valid) {
            key[i] = __ldcg(kin + start + j);
            if (HAS_V) val[i] = __ldcg(vin + start + j);
        }
    }
    /* apart from the loads, so that no use of a key waits on its load
     * before the next load is issued */
    if (raw) {
#pragma unroll
        for (int i = 0; i < I; i++) {
            const uint32_t j = tid + i * kThreads;
            if (j >= first && j < valid) key[i] = twiddle(a.map, key[i]);
        }
    }
    /* < P goes left; > P (EQB) or >= P goes right */
    auto goes_left = [&](int i) { return key[i] < pivot; };
    auto goes_right = [&](int i) {
        const uint32_t j = tid + i * kThreads;
        return EQB ? key[i] > pivot : (key[i] >= pivot && j >= first && j < valid);
    };

    uint32_t counts;
    const SideBounds<K> bounds = count_sides<ALL4>(key, goes_left, goes_right, counts);
    uint32_t before, total;
    warp_offsets<W>(counts, lane, warp, s_wcnt, before, total);
    const uint32_t tot_l = total & 0xFFFFu, tot_r = total >> 16;
    if (tid == 0) reserve_ranges(pt, sg, total, &s_lt_base, &s_gt_base);
    stage_tile<HAS_V>(key, val, goes_left, goes_right, before, tot_l, s_keys, s_vals, lanes_below);
    __syncthreads();
    write_tile<HAS_V, I>(s_keys, s_vals, tot_l, tot_r, s_lt_base, s_gt_base, kout, vout);
    if (!publish_bounds<S, ALL4>(bounds, s_red, pt, sg, tot_l, tot_r, &s_last)) return;
    plan_children<K, V, HAS_V, EQB, ALL4>(a, sg, pt, kout, s_ch, s_flags, s_keys, &s_red[0][0], s_map);
}

/* ------------------------------------------------------------------------
 * Finish: sort small segments in one block, copy or fill the rest into A.
 * ------------------------------------------------------------------------ */
template <class K, class V> struct FinishArgs {
    const Item<K> *items;
    const uint32_t *item_blocks;
    uint32_t nitems;
    const Item<K> *sorts; /* blocks [0, nsorts) sort one each; then the items */
    uint32_t nsorts;
    uint32_t *fallback; /* sorts left to radix_finish_kernel, and their count */
    uint32_t *nfallback;
    const K *kbuf[3]; /* by BufId */
    const V *vbuf[3];
    K *kA;
    V *vA;
    Twiddle<K> map, unmap;
    uint32_t bin_limit; /* kBinLimit (0 would mean: radix sort only) */
};

constexpr int kFinishRadixBits = GPK_QUICK_FINISH_RB;

/* Bucket finish: one counting pass on the top kBinBits bits of
 * (key - min) puts every key in its bin (a smem atomicAdd gives its rank
 * in the bin), then each key finds its place in its bin by comparing with
 * the bin's other keys. Bins hold ~SMALL / 4096 keys, so that is a few
 * comparisons per key: one pass where the radix sort takes 3-5 (20-bit
 * spans) or 10 (f64). A block whose largest bin holds more than kBinLimit
 * keys (clusters, many duplicates spread wide) uses the radix sort
 * instead, whose cost does not depend on the keys. Not stable. */
constexpr uint32_t kBinLimit = 32;

template <class K, class V, bool HAS_V> struct BucketSmem {
    static constexpr uint32_t SMALL = QShape<K, V, HAS_V>::SMALL;
    static constexpr size_t WIDE = (HAS_V && sizeof(V) > sizeof(K)) ? sizeof(V) : sizeof(K);
    /* ~2 keys per bin: 4096 bins up to 12288 keys (2^13 and 2^14
     * measured no faster for 8192 keys), 8192 above (the shared memory is
     * dynamic: no 48 KiB bound) */
    static constexpr int BIN_BITS = SMALL > 12288 ? 13 : 12;
    static constexpr int BINS = 1 << BIN_BITS;
    /* the keys, then (values) the values, each in sorted order */
    alignas(16) unsigned char stage[SMALL * WIDE];
    /* two 16-bit counts per word (bin b in word b / 2), then the starts:
     * read as uint16_t, start b at [b], and [BINS] is the length */
    uint32_t bins[BINS / 2 + 1];
    uint32_t scan[kFinishThreads / 32];
    uint32_t maxbin;
};

/* Sorts the item's keys (and values) into A. Returns false, having
 * written nothing, when the bins are too full: the caller sorts instead. */
template <class K, class V, bool HAS_V>
__device__ __forceinline__ bool bucket_finish(const FinishArgs<K, V> &a, const Item<K> &it, const K *ksrc,
                                              const V *vsrc, bool raw, BucketSmem<K, V, HAS_V> &sm)
{
    constexpr int SI = QShape<K, V, HAS_V>::SI;
    constexpr int T = kFinishThreads;
    using SM = BucketSmem<K, V, HAS_V>;
    constexpr int BINS = SM::BINS;
    constexpr int WPT = BINS / 2 / T; /* bin words per thread in the scan */
    static_assert(WPT >= 1 && BINS / 2 % T == 0, "the scan splits the bins evenly");
    static_assert(QShape<K, V, HAS_V>::SMALL < (1u << 16), "bin counts and starts are 16-bit");
    const int tid = threadIdx.x;
    if (a.bin_limit == 0) return false;
    const int shift = max(0, (int)it.end_bit - SM::BIN_BITS);
    K *skeys = reinterpret_cast<K *>(sm.stage);
    for (int w = tid; w < BINS / 2; w += T) sm.bins[w] = 0;
    if (tid == 0) sm.maxbin = 0;
    __syncthreads();

    K key[SI];
    V val[HAS_V ? SI : 1];
    /* rank in the bin, then the final place: 16 bits each, two per word
     * (registers decide the blocks per SM); the bin is key >> shift */
    uint32_t code[(SI + 1) / 2] = {};
    auto get16 = [&](int i) -> uint32_t { return (code[i >> 1] >> ((i & 1) * 16)) & 0xFFFFu; };
    auto set16 = [&](int i, uint32_t v) {
        code[i >> 1] = (code[i >> 1] & ~(0xFFFFu << ((i & 1) * 16))) | v << ((i & 1) * 16);
    };
    /* every load issued before the first use of a key */
#pragma unroll
    for (int i = 0; i < SI; i++) {
        const uint32_t j = tid + i * T;
        if (j < it.len) key[i] = __ldcg(ksrc + it.off + j);
    }
#pragma unroll
    for (int i = 0; i < SI; i++) {
        const uint32_t j = tid + i * T;
        if (j < it.len) {
            K k = key[i];
            if constexpr (HAS_V) val[i] = vsrc[it.off + j]; /* not waited on until the end */
            if (raw) k = twiddle(a.map, k);
            key[i] = k - it.key;
            const uint32_t b = (uint32_t)(key[i] >> shift), half = (b & 1u) * 16u;
            const uint32_t r = (atomicAdd(&sm.bins[b >> 1], 1u << half) >> half) & 0xFFFFu;
            set16(i, r);
        }
    }
    __syncthreads();

    /* Exclusive scan of the counts into starts, and the largest count. */
    {
        uint32_t sum = 0, big = 0;
#pragma unroll
        for (int q = 0; q < WPT; q++) {
            const uint32_t w = sm.bins[tid * WPT + q];
            const uint32_t lo = w & 0xFFFFu, hi = w >> 16;
            sum += lo + hi;
            big = max(big, max(lo, hi));
        }
        big = __reduce_max_sync(0xffffffffu, big);
        if ((tid & 31) == 0) atomicMax(&sm.maxbin, big);
        uint32_t total;
        uint32_t run = block_exclusive_scan<T>(sum, sm.scan, &total);
#pragma unroll
        for (int q = 0; q < WPT; q++) {
            const uint32_t w = sm.bins[tid * WPT + q];
            const uint32_t lo = w & 0xFFFFu, hi = w >> 16;
            sm.bins[tid * WPT + q] = run | (run + lo) << 16;
            run += lo + hi;
        }
    }
    if (tid == 0) sm.bins[BINS / 2] = it.len;
    __syncthreads(); /* (block_exclusive_scan's barriers do not cover the starts) */
    if (sm.maxbin > a.bin_limit) return false;

    const uint16_t *starts = reinterpret_cast<const uint16_t *>(sm.bins);
    auto start_of = [&](uint32_t b) -> uint32_t { return starts[b]; };
    /* Stage by (bin, rank), then the place in the bin: keys below, and
     * equal keys of lower rank. Exact bins (shift 0) hold one key. */
#pragma unroll
    for (int i = 0; i < SI; i++)
        if (tid + i * T < it.len) skeys[start_of((uint32_t)(key[i] >> shift)) + get16(i)] = key[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < SI; i++) {
        if (tid + i * T >= it.len) continue;
        const uint32_t b = (uint32_t)(key[i] >> shift), r = get16(i);
        const uint32_t s0 = start_of(b);
        uint32_t place = r;
        if (shift > 0) {
            const uint32_t c = start_of(b + 1) - s0;
            place = 0;
            for (uint32_t q = 0; q < c; q++) {
                const K y = skeys[s0 + q];
                place += (y < key[i]) | ((y == key[i]) & (q < r));
            }
        }
        set16(i, s0 + place);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < SI; i++)
        if (tid + i * T < it.len) skeys[get16(i)] = key[i];
    __syncthreads();
    for (uint32_t j = tid; j < it.len; j += T) a.kA[it.off + j] = twiddle(a.unmap, (K)(skeys[j] + it.key));
    if constexpr (HAS_V) {
        V *svals = reinterpret_cast<V *>(sm.stage);
        __syncthreads();
#pragma unroll
        for (int i = 0; i < SI; i++)
            if (tid + i * T < it.len) svals[get16(i)] = val[i];
        __syncthreads();
        for (uint32_t j = tid; j < it.len; j += T) a.vA[it.off + j] = svals[j];
    }
    return true;
}

/* The finish: blocks [0, nsorts) sort one item each by the bucket pass
 * (a block whose bins are too full lists its item for
 * radix_finish_kernel); the rest copy or fill. No CUB in this kernel, so
 * that its registers are the bucket pass's alone. */
#ifndef GPK_QUICK_FINISH_BLOCKS
#define GPK_QUICK_FINISH_BLOCKS 3
#endif
/* blocks per SM the finish's registers allow: more than 24 keys per
 * thread need 64 registers */
template <class K, class V, bool HAS_V>
constexpr int kFinishBlocks = kFinishThreads >= 1024 ? 1
    : QShape<K, V, HAS_V>::SI > 24                   ? 2
                                                     : GPK_QUICK_FINISH_BLOCKS;

/* The finish's shared memory is dynamic: above 48 KiB a kernel must say
 * so before its launch. */
template <class F> static cudaError_t allow_smem(F *kernel, size_t bytes)
{
    return bytes <= 48 * 1024
        ? cudaSuccess
        : cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

template <class K, class V, bool HAS_V>
__global__ void __launch_bounds__(kFinishThreads, (kFinishBlocks<K, V, HAS_V>))
    finish_kernel(FinishArgs<K, V> a)
{
    constexpr int T = kFinishThreads;
    extern __shared__ __align__(16) unsigned char s_dyn[];
    BucketSmem<K, V, HAS_V> &s_bucket = *reinterpret_cast<BucketSmem<K, V, HAS_V> *>(s_dyn);
    __shared__ uint32_t s_item;

    const int tid = threadIdx.x;
    Item<K> it;
    uint32_t chunk = 0;
    if (blockIdx.x < a.nsorts) {
        it = a.sorts[blockIdx.x];
    } else {
        const uint32_t b = blockIdx.x - a.nsorts;
        if (tid == 0) s_item = find_owner(a.item_blocks, a.nitems, b);
        __syncthreads();
        it = a.items[s_item];
        chunk = b - a.item_blocks[s_item];
    }
    const K *ksrc = pick_buf(a.kbuf, it.buf);
    const V *vsrc = pick_buf(a.vbuf, it.buf);
    const bool raw = it.buf == BUF_IN;

    if (it.kind == ITEM_SORT) {
        if (!bucket_finish<K, V, HAS_V>(a, it, ksrc, vsrc, raw, s_bucket) && tid == 0)
            a.fallback[atomicAdd(a.nfallback, 1u)] = blockIdx.x;
        return;
    }
    const uint32_t from = chunk * kCopyTile;
    const uint32_t to = min(it.len, from + kCopyTile);
    if (it.kind == ITEM_FILL) {
        const K k = twiddle(a.unmap, it.key);
        for (uint32_t j = from + tid; j < to; j += T) a.kA[it.off + j] = k;
        return;
    }
    /* ITEM_COPY: keys (and values) to A, mapped back; in place when
     * buf == A (only to unmap) */
    for (uint32_t j = from + tid; j < to; j += T) {
        K k = ksrc[it.off + j];
        if (raw) k = twiddle(a.map, k);
        a.kA[it.off + j] = twiddle(a.unmap, k);
        if (HAS_V) a.vA[it.off + j] = vsrc[it.off + j];
    }
}

/* The sort items whose bins were too full: cub::BlockRadixSort on
 * (key - min) over the bits where the segment's keys can differ. The grid
 * is the sort count; blocks past the listed ones leave. */
template <class K, class V, bool HAS_V>
using FinishRadixSort =
    cub::BlockRadixSort<K, kFinishThreads, QShape<K, V, HAS_V>::SI,
                        typename std::conditional<HAS_V, V, cub::NullType>::type, kFinishRadixBits>;

template <class K, class V, bool HAS_V>
__global__ void __launch_bounds__(kFinishThreads, kFinishThreads >= 1024 ? 1 : 2)
    radix_finish_kernel(FinishArgs<K, V> a)
{
    using S = QShape<K, V, HAS_V>;
    constexpr int SI = S::SI;
    constexpr int T = kFinishThreads;
    using SortV = typename std::conditional<HAS_V, V, cub::NullType>::type;
    using BlockSort = FinishRadixSort<K, V, HAS_V>;
    extern __shared__ __align__(16) unsigned char s_dyn[];
    typename BlockSort::TempStorage &s_radix = *reinterpret_cast<typename BlockSort::TempStorage *>(s_dyn);
    if (blockIdx.x >= *a.nfallback) return;
    const int tid = threadIdx.x;
    const Item<K> it = a.sorts[a.fallback[blockIdx.x]];
    const K *ksrc = pick_buf(a.kbuf, it.buf);
    const V *vsrc = pick_buf(a.vbuf, it.buf);
    const bool raw = it.buf == BUF_IN;
    /* blocked load (thread t holds t*SI ..): the padding, all ones,
     * sits after every real key, and end_bit keeps it above them */
    K key[SI];
    SortV val[SI];
#pragma unroll
    for (int i = 0; i < SI; i++) {
        const uint32_t j = tid * SI + i;
        if (j < it.len) {
            K k = ksrc[it.off + j];
            if (raw) k = twiddle(a.map, k);
            key[i] = k - it.key;
            if constexpr (HAS_V) val[i] = vsrc[it.off + j];
        } else {
            key[i] = (K) ~(K)0;
            if constexpr (HAS_V) val[i] = SortV();
        }
    }
    if constexpr (HAS_V) BlockSort(s_radix).SortBlockedToStriped(key, val, 0, it.end_bit);
    else BlockSort(s_radix).SortBlockedToStriped(key, 0, it.end_bit);
        /* striped: thread t holds sorted positions t, t + T, ... */
#pragma unroll
    for (int i = 0; i < SI; i++) {
        const uint32_t j = tid + i * T;
        if (j < it.len) {
            a.kA[it.off + j] = twiddle(a.unmap, (K)(key[i] + it.key));
            if constexpr (HAS_V) a.vA[it.off + j] = val[i];
        }
    }
}

/* ------------------------------------------------------------------------
 * Records: (mapped key, index) out of the records, and the gather after.
 * ------------------------------------------------------------------------ */
/* idx: NULL when the front end's radix sort makes the positions.
 * and_or: AND and OR of every mapped key (NULL: not wanted), for the
 * front end's window. */
template <class K>
__global__ void __launch_bounds__(256)
    extract_kernel(const unsigned char *rec, uint32_t n, uint32_t stride, uint32_t key_offset, Twiddle<K> map,
                   K *keys, uint32_t *idx, u64 *and_or)
{
    __shared__ K s_and[8], s_or[8];
    K all_and = (K) ~(K)0, all_or = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned char *p = rec + i * stride + key_offset;
        K k = 0;
        /* any alignment: bytes, little-endian */
#pragma unroll
        for (int b = 0; b < (int)sizeof(K); b++) k |= (K)p[b] << (8 * b);
        k = twiddle(map, k);
        keys[i] = k;
        if (idx) idx[i] = (uint32_t)i;
        all_and &= k;
        all_or |= k;
    }
    if (!and_or) return;
        /* one atomic pair per block: a word per warp would serialize on two addresses */
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        all_and &= (K)__shfl_xor_sync(0xffffffffu, all_and, s);
        all_or |= (K)__shfl_xor_sync(0xffffffffu, all_or, s);
    }
    if ((threadIdx.x & 31) == 0) {
        s_and[threadIdx.x >> 5] = all_and;
        s_or[threadIdx.x >> 5] = all_or;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < 8; w++) {
            all_and &= s_and[w];
            all_or |= s_or[w];
        }
        atomicAnd(&and_or[0], (u64)all_and);
        atomicOr(&and_or[1], (u64)all_or);
    }
}

__global__ void __launch_bounds__(256) iota_kernel(uint32_t *idx, uint32_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        idx[i] = (uint32_t)i;
}

/* out record i = in record idx[i], one word per thread, so that a warp
 * reads and writes whole records contiguously. Word = 8, 4 or 1 bytes,
 * whatever divides the record size (buffers come from cudaMalloc, 256-byte
 * aligned). */
template <class Wd>
__global__ void __launch_bounds__(256)
    gather_kernel(const Wd *in, Wd *out, const uint32_t *idx, uint32_t n, uint32_t words_per_rec)
{
    const size_t total = (size_t)n * words_per_rec;
    for (size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x; w < total;
         w += (size_t)gridDim.x * blockDim.x) {
        const size_t i = w / words_per_rec;
        const uint32_t r = (uint32_t)(w - i * words_per_rec);
        out[w] = in[(size_t)idx[i] * words_per_rec + r];
    }
}

/* ------------------------------------------------------------------------
 * Host side
 * ------------------------------------------------------------------------ */
/* A test's override within [lo, hi], else the default. */
static int forced_within(int forced, int def, int lo, int hi)
{
    const int x = (int)gpk__hook(forced, def);
    return x >= lo && x <= hi ? x : def;
}

/* Capacities. Big segments of one depth are disjoint and longer than
 * SMALL (the root aside), so a list holds at most n / (SMALL + 1) + 1 and
 * a level launches at most n / TILE + (segments) blocks. A level appends
 * at most 3 items per parent, and the host flushes the items before a
 * batch of kBatchMax levels could overflow them. The recursive variant does not flush while
 * it recurses: 3 items per segment of depth < cdp_depth, at most
 * kCdpDepthMax * cap_big such segments (one pool slot each). */
/* Levels launched between two reads of the counters (kBatch, at most
 * kBatchMax). Every read waits for the GPU to drain and costs a
 * launch latency after it; a level past the last one is an empty launch
 * whose blocks leave at once. */
constexpr int kBatchMax = 8;
constexpr int kBatch = 4;

/* Records front end (FrontPlan): from 2^kFrontMinLog records, buckets of
 * ~2^kFrontBucketLog keys (tests move both: gpk__test.quick_front_*). The window
 * has at most 22 bits: two radix passes of up to 11. */
constexpr int kFrontMinLog = 16;
constexpr int kFrontBucketLog = 11;
constexpr int kFrontMaxBits = 22;

/* The most window bits a sort of n records may use; 0: no front end. */
static int front_max_bits(size_t n)
{
    if (kRecursive) return 0;
    const int min_log = forced_within(gpk__test.quick_front_min_log, kFrontMinLog, 0, 32);
    const int bucket_log = forced_within(gpk__test.quick_front_bucket_log, kFrontBucketLog, 4, 16);
    if (min_log == 0 || n < 2 || (n >> min_log) == 0) return 0;
    int lg = 0;
    while ((n >> (lg + 1)) != 0) lg++;
    const int w = std::min(kFrontMaxBits, lg - bucket_log);
    return w >= 2 ? w : 0;
}

/* Sort items the buckets may add at once. */
static size_t front_items(size_t n)
{
    const int w = front_max_bits(n);
    return w ? (size_t)1 << w : 0;
}

struct Caps {
    size_t big, tiles, items, pool;
};

template <class K>
static size_t lists_bytes(size_t n, uint32_t small, uint32_t tile, bool recursive, size_t front_items,
                          Caps *c)
{
    c->big = n / ((size_t)small + 1) + 2;
    c->tiles = n / tile + 2 * c->big + 2; /* one more per segment when tiles are aligned */
    c->pool = recursive ? (size_t)kCdpDepthMax * c->big : 0;
    c->items = 3 * c->big * kBatchMax + 16 + 3 * c->pool + front_items;
    return 2 * gpk__align_up(c->big * sizeof(Seg<K>), 256) +
        2 * gpk__align_up(c->big * sizeof(Part<K>), 256) +
        2 * gpk__align_up(c->tiles * sizeof(uint32_t), 256) +
        2 * gpk__align_up(c->items * sizeof(Item<K>), 256) +
        2 * gpk__align_up(c->items * sizeof(uint32_t), 256) + gpk__align_up(sizeof(Ctl), 256) + 256 +
        gpk__align_up(c->pool * sizeof(Seg<K>), 256) + gpk__align_up(c->pool * sizeof(Part<K>), 256) + 256;
}

template <class K>
static Lists<K> carve_lists(void *base, size_t n, uint32_t small, uint32_t tile, bool recursive,
                            size_t front_items)
{
    Lists<K> l;
    Caps c;
    (void)lists_bytes<K>(n, small, tile, recursive, front_items, &c);
    l.cap_big = (uint32_t)c.big;
    l.cap_tiles = (uint32_t)c.tiles;
    l.cap_items = (uint32_t)c.items;
    l.cap_pool = (uint32_t)c.pool;
    char *p = (char *)base;
    for (int i = 0; i < 2; i++) {
        l.segs[i] = (Seg<K> *)p;
        p += gpk__align_up(c.big * sizeof(Seg<K>), 256);
        l.parts[i] = (Part<K> *)p;
        p += gpk__align_up(c.big * sizeof(Part<K>), 256);
        l.tile_seg[i] = (uint32_t *)p;
        p += gpk__align_up(c.tiles * sizeof(uint32_t), 256);
    }
    l.items = (Item<K> *)p;
    p += gpk__align_up(c.items * sizeof(Item<K>), 256);
    l.sorts = (Item<K> *)p;
    p += gpk__align_up(c.items * sizeof(Item<K>), 256);
    l.fallback = (uint32_t *)p;
    p += gpk__align_up(c.items * sizeof(uint32_t), 256);
    l.nfallback = (uint32_t *)p;
    p += 256;
    l.item_blocks = (uint32_t *)p;
    p += gpk__align_up(c.items * sizeof(uint32_t), 256);
    l.ctl = (Ctl *)p;
    p += gpk__align_up(sizeof(Ctl), 256);
    l.pool_seg = (Seg<K> *)p;
    p += gpk__align_up(c.pool * sizeof(Seg<K>), 256);
    l.pool_part = (Part<K> *)p;
    p += gpk__align_up(c.pool * sizeof(Part<K>), 256);
    l.pool_ctr = (uint32_t *)p;
    return l;
}

/* One device-resident sort: keys (and values) from `in` (unmapped when
 * raw, else already mapped), result in A (unmapped by `unmap`). B is the
 * other ping-pong buffer. in may be A. */
template <class K, class V> struct DevSort {
    const K *kin;
    const V *vin;
    K *kA, *kB;
    V *vA, *vB;
    uint32_t n;
    bool raw; /* in holds caller keys: map on read */
    bool in_is_a;
    Twiddle<K> map, unmap;
    bool need_unmap;        /* unmap is not the identity */
    PivotMap<K> pm;         /* the key type's own maps (records: not the data's) */
    size_t front_items = 0; /* records: room for the front end's buckets (front_items) */
};

/* The sort's three buffers by BufId, as the partition and finish kernels
 * take them. */
template <class K, class V>
static void buffers_by_id(const DevSort<K, V> &d, const K *(&kbuf)[3], const V *(&vbuf)[3])
{
    kbuf[BUF_IN] = d.kin;
    kbuf[BUF_A] = d.kA;
    kbuf[BUF_B] = d.kB;
    vbuf[BUF_IN] = d.vin;
    vbuf[BUF_A] = d.vA;
    vbuf[BUF_B] = d.vB;
}

template <class K, class V, bool HAS_V>
static gpk_status flush_items(gpk_ctx *ctx, const DevSort<K, V> &d, const Lists<K> &l, Ctl *c,
                              cudaStream_t stream)
{
    const uint32_t nitems = (uint32_t)c->items, blocks = (uint32_t)(c->items >> 32), nsorts = c->sorts;
    c->items = 0;
    c->sorts = 0;
    if (nsorts == 0 && (nitems == 0 || blocks == 0)) return GPK_OK;
    FinishArgs<K, V> f;
    f.items = l.items;
    f.item_blocks = l.item_blocks;
    f.nitems = nitems;
    f.sorts = l.sorts;
    f.nsorts = nsorts;
    buffers_by_id(d, f.kbuf, f.vbuf);
    f.kA = d.kA;
    f.vA = d.vA;
    f.map = d.map;
    f.unmap = d.unmap;
    f.bin_limit = kBinLimit;
    f.fallback = l.fallback;
    f.nfallback = l.nfallback;
    const size_t fsmem = sizeof(BucketSmem<K, V, HAS_V>),
                 rsmem = sizeof(typename FinishRadixSort<K, V, HAS_V>::TempStorage);
    cudaError_t e = cudaMemsetAsync(l.nfallback, 0, sizeof(uint32_t), stream);
    if (e == cudaSuccess) e = allow_smem(finish_kernel<K, V, HAS_V>, fsmem);
    if (e == cudaSuccess) {
        finish_kernel<K, V, HAS_V><<<nsorts + blocks, kFinishThreads, fsmem, stream>>>(f);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && nsorts) e = allow_smem(radix_finish_kernel<K, V, HAS_V>, rsmem);
    if (e == cudaSuccess && nsorts) {
        radix_finish_kernel<K, V, HAS_V><<<nsorts, kFinishThreads, rsmem, stream>>>(f);
        e = cudaGetLastError();
    }
    /* items, overflow (zero: it was read) and sorts in one */
    static_assert(offsetof(Ctl, sorts) == offsetof(Ctl, items) + 12, "the counters are adjacent");
    if (e == cudaSuccess) e = cudaMemsetAsync(&l.ctl->items, 0, 16, stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: finish kernel launch");
    return GPK_OK;
}

static_assert(sizeof(Ctl) == 4 * sizeof(unsigned long long), "the counters read back fit the pinned words");

static gpk_status read_ctl(gpk_ctx *ctx, const Ctl *ctl, Ctl *out, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e = cudaMemcpyAsync(st->pinned, ctl, sizeof(Ctl), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: iteration");
    memcpy(out, st->pinned, sizeof(Ctl));
    if (out->overflow & ERR_LAUNCH)
        return gpk__fail(ctx, GPK_EDEVICE,
                         "CUDA quicksort: a device-side launch failed (dynamic parallelism: pending launch "
                         "limit or nesting depth)");
    if (out->overflow)
        return gpk__fail(ctx, GPK_EDEVICE, "CUDA quicksort: internal error (work list overflow)");
    return GPK_OK;
}

#ifdef GPK_QUICK_CDP_TU
/* Device-side launches stay pending until they run; the default limit
 * (2048) is below what a wide tree has in flight. Set once per process
 * and device; failure is not fatal (a launch that does not fit is
 * reported by the kernels). */
static void raise_pending_limit()
{
    size_t cur = 0;
    if (cudaDeviceGetLimit(&cur, cudaLimitDevRuntimePendingLaunchCount) == cudaSuccess && cur < 32768)
        (void)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768);
    (void)cudaGetLastError();
}
#endif

/* The iterations of Box 4.1. */
template <class K, class V, bool HAS_V>
static gpk_status quicksort_device(gpk_ctx *ctx, const DevSort<K, V> &d, void *temp, cudaStream_t stream,
                                   const FrontPlan<K> *front = nullptr)
{
    using S = QShape<K, V, HAS_V>;
    constexpr bool EQB = !HAS_V;
    Lists<K> l = carve_lists<K>(temp, d.n, S::SMALL, S::TILE, kRecursive, d.front_items);
    cudaError_t e = cudaMemsetAsync(l.ctl, 0, sizeof(Ctl), stream);
    if (e == cudaSuccess && kRecursive) e = cudaMemsetAsync(l.pool_ctr, 0, sizeof(uint32_t), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: cudaMemsetAsync");

    PartArgs<K, V> a;
    memset(&a, 0, sizeof a);
    buffers_by_id(d, a.kbuf, a.vbuf);
    a.kA = d.kA;
    a.kB = d.kB;
    a.vA = d.vA;
    a.vB = d.vB;
    a.map = d.map;
    a.in_raw = d.raw;
    /* BUF_IN is final as it stands only when it is A and its keys are in
     * the form the caller gets back: the caller's own (raw), or mapped
     * keys whose map is the identity. */
    a.in_is_final = d.in_is_a && (d.raw || !d.need_unmap);
    a.need_unmap = d.need_unmap;
    a.pm = d.pm;
    a.l = l;
    a.cdp_depth = kCdpDepthDefault;
    a.sample_depth = kSampleDepthDefault;
    a.sample_band = kSampleBand;
    if (front) {
        bucket_plan_kernel<K, V, HAS_V, EQB><<<front->buckets, kThreads, 0, stream>>>(a, *front);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: bucket plan kernel launch");
    } else {
        root_kernel<K, V, HAS_V, EQB><<<1, kRootThreads, 0, stream>>>(a, d.n);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: root kernel launch");
    }
    /* floating point: value and bit midpoints alternate at worst */
    const int max_depth = 2 * (8 * (int)sizeof(K) + 80);
    /* one level's partition grid over list depth & 1 */
    auto launch_level = [&](int depth, uint32_t grid) -> cudaError_t {
        a.depth = depth;
        a.segs = l.segs[depth & 1];
        a.parts = l.parts[depth & 1];
        a.tile_seg = l.tile_seg[depth & 1];
        if (depth == 0 && (front || d.n > kRootExact)) /* the root's bounds are a sample's, buckets' loose */
            partition_kernel<K, V, HAS_V, EQB, true><<<grid, kThreads, 0, stream>>>(a);
        else partition_kernel<K, V, HAS_V, EQB, false><<<grid, kThreads, 0, stream>>>(a);
        return cudaGetLastError();
    };
    Ctl c;
    gpk_status s;
    if (!kRecursive) {
        /* Levels go out in batches without reading the counters: each
         * launch's grid is a bound on its tiles (a parent's children need
         * at most one tile more than it, two with aligned tiles, and are at
         * most two), and the blocks past the level's real count leave at
         * once. */
        const int batch = kBatch;
        uint64_t bound_tiles = ((u64)d.n + S::TILE - 1) / S::TILE, bound_segs = 1;
        int depth = 0;
        a.grid_bound = true;
        bool levels = d.n > S::SMALL;
        if (front) {
            /* the buckets' segments and tiles, and room for a batch's items */
            s = read_ctl(ctx, l.ctl, &c, stream);
            if (s != GPK_OK) return s;
            bound_segs = (uint32_t)c.big[0];
            bound_tiles = c.big[0] >> 32;
            levels = bound_segs > 0;
            if (levels &&
                (size_t)std::max((uint32_t)c.items, c.sorts) + 3 * (size_t)l.cap_big * batch > l.cap_items) {
                s = flush_items<K, V, HAS_V>(ctx, d, l, &c, stream);
                if (s != GPK_OK) return s;
            }
        }
        for (;;) {
            if (levels) {
                for (int b = 0; b < batch; b++, depth++) {
                    e = cudaMemsetAsync(&l.ctl->big[(depth & 1) ^ 1], 0, sizeof(u64), stream);
                    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: cudaMemsetAsync");
                    e = launch_level(depth, (uint32_t)std::min<u64>(bound_tiles, l.cap_tiles));
                    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: partition kernel launch");
                    bound_tiles =
                        std::min<u64>(bound_tiles + (S::ALIGN > 1 ? 2 : 1) * bound_segs, l.cap_tiles);
                    bound_segs = std::min<u64>(2 * bound_segs, l.cap_big);
                }
            }
            s = read_ctl(ctx, l.ctl, &c, stream);
            if (s != GPK_OK) return s;
            const uint32_t nbig = (uint32_t)c.big[depth & 1];
            if (nbig == 0 || !levels) break;
            if (depth > max_depth)
                return gpk__fail(ctx, GPK_EDEVICE, "CUDA quicksort: internal error (depth %d)", depth);
            if ((size_t)std::max((uint32_t)c.items, c.sorts) + 3 * (size_t)l.cap_big * batch > l.cap_items) {
                s = flush_items<K, V, HAS_V>(ctx, d, l, &c, stream);
                if (s != GPK_OK) return s;
            }
            bound_tiles = c.big[depth & 1] >> 32;
            bound_segs = nbig;
        }
        return flush_items<K, V, HAS_V>(ctx, d, l, &c, stream);
    }
    s = read_ctl(ctx, l.ctl, &c, stream);
    if (s != GPK_OK) return s;
#ifdef GPK_QUICK_CDP_TU
    raise_pending_limit();
#endif
    for (int depth = 0;; depth++) {
        const int j = depth & 1;
        const uint32_t nbig = (uint32_t)c.big[j], tiles = (uint32_t)(c.big[j] >> 32);
        if (nbig == 0) break;
        if (depth > max_depth)
            return gpk__fail(ctx, GPK_EDEVICE, "CUDA quicksort: internal error (depth %d)", depth);
        if ((size_t)std::max((uint32_t)c.items, c.sorts) + 3 * (size_t)nbig > l.cap_items) {
            s = flush_items<K, V, HAS_V>(ctx, d, l, &c, stream);
            if (s != GPK_OK) return s;
        }
        /* (recursive, depth 0: the hand-over list may be list 0, whose
         * root entry the root's blocks have read before any child runs) */
        e = cudaMemsetAsync(&l.ctl->big[(kRecursive && depth == 0) ? 0 : j ^ 1], 0,
                            (kRecursive && depth == 0 ? 2 : 1) * sizeof(u64), stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: cudaMemsetAsync");
        e = launch_level(depth, tiles);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: partition kernel launch");
        s = read_ctl(ctx, l.ctl, &c, stream);
        if (s != GPK_OK) return s;
        /* recursive: depth 0's grid launched the tree down to cdp_depth,
         * whose segments wait in list cdp_depth & 1 */
        if (kRecursive && depth == 0) depth = a.cdp_depth - 1;
    }
    return flush_items<K, V, HAS_V>(ctx, d, l, &c, stream);
}

/* ------------------------------------------------------------------------
 * Host-pointer API
 * ------------------------------------------------------------------------ */
struct Plan {
    bool records;
    int kb, vb; /* key bytes; value bytes (records: 4, the index) */
    size_t key_bytes, val_bytes, rec_bytes;
};

template <class K> static PivotMap<K> pivot_map(gpk_type type)
{
    PivotMap<K> pm;
    pm.map = twiddle_map<K>(type);
    pm.unmap = twiddle_unmap<K>(type);
    pm.fbytes = gpk_key_kind(type) == GPK_KEY_FLOAT ? (int)gpk_key_bytes(type) : 0;
    return pm;
}

template <class K> static size_t temp_bytes_k(size_t n, bool has_v, size_t front_items)
{
    Caps c;
    if (has_v)
        return lists_bytes<K>(n, QShape<K, uint32_t, true>::SMALL, QShape<K, uint32_t, true>::TILE,
                              kRecursive, front_items, &c);
    return lists_bytes<K>(n, QShape<K, uint32_t, false>::SMALL, QShape<K, uint32_t, false>::TILE, kRecursive,
                          front_items, &c);
}

/* (TILE and SMALL depend on the value's presence, not its width) */
static size_t temp_bytes_for(size_t n, int kb, bool has_v, size_t front_items)
{
    return kb == 4 ? temp_bytes_k<uint32_t>(n, has_v, front_items) : temp_bytes_k<u64>(n, has_v, front_items);
}

/* Front-end memory after the lists: the radix sort's tables, bucket
 * starts and ends, the AND / OR pair. */
struct FrontMem {
    void *radix;
    uint32_t *starts, *ends;
    u64 *and_or;
};

static size_t front_bytes(size_t n, int kb, FrontMem *m, char *base)
{
    const int w = front_max_bits(n);
    if (w == 0) return 0;
    const size_t radix = gpk__align_up(gpk__radix_cuda_window_temp(n, kb), 256),
                 bounds = gpk__align_up(sizeof(uint32_t) << w, 256);
    if (m) {
        m->radix = base;
        m->starts = (uint32_t *)(base + radix);
        m->ends = (uint32_t *)(base + radix + bounds);
        m->and_or = (u64 *)(base + radix + 2 * bounds);
    }
    return radix + 2 * bounds + 256;
}

template <class K> static K low_bits(int b)
{
    return b >= (int)(8 * sizeof(K)) ? (K) ~(K)0 : (K)(((K)1 << b) - 1);
}

/* Checks and reserves device memory; nothing of the caller's is touched.
 * bench: a third key/value buffer keeps the pristine input. */
static gpk_status setup(gpk_ctx *ctx, const gpk_quick_job *job, bool bench, Plan *p, const char *what)
{
    if (!ctx->cuda) return gpk__fail(ctx, GPK_EINVAL, "CUDA quicksort: context has no CUDA state");
    if (job->n > UINT32_MAX)
        return gpk__fail(ctx, GPK_EUNSUPPORTED,
                         "CUDA quicksort: n = %zu elements; the CUDA backend sorts fewer than 2^32", job->n);
    if (job->key_width != 4 && job->key_width != 8)
        return gpk__fail(ctx, GPK_EINVAL, "CUDA quicksort: key width %u", job->key_width);
    p->records = job->stride != job->key_width || job->key_offset != 0;
    if (p->records && job->values)
        return gpk__fail(ctx, GPK_EINVAL, "CUDA quicksort: records carry no separate values");
    if (p->records &&
        (job->stride == 0 || job->stride > 256 || job->key_offset + job->key_width > job->stride))
        return gpk__fail(ctx, GPK_EINVAL, "CUDA quicksort: record size %zu, key at %zu", job->stride,
                         job->key_offset);
    if (job->values && job->value_width != 4 && job->value_width != 8)
        return gpk__fail(ctx, GPK_EINVAL, "CUDA quicksort: values must be 4 or 8 bytes wide");
    p->kb = (int)job->key_width;
    p->vb = p->records ? 4 : job->values ? (int)job->value_width : 0;
    p->key_bytes = job->n * (size_t)p->kb;
    p->val_bytes = job->n * (size_t)p->vb;
    p->rec_bytes = p->records ? job->n * job->stride : 0;
    size_t bytes[GPK_CUDA_SLOTS] = {0};
    bytes[GPK_CUDA_KEYS_A] = p->key_bytes;
    bytes[GPK_CUDA_KEYS_B] = p->key_bytes;
    bytes[GPK_CUDA_VALUES_A] = p->val_bytes;
    bytes[GPK_CUDA_VALUES_B] = p->val_bytes;
    if (p->records) {
        /* records in, records out */
        bytes[GPK_CUDA_KEYS_C] = p->rec_bytes;
        bytes[GPK_CUDA_VALUES_C] = p->rec_bytes;
    } else if (bench) {
        bytes[GPK_CUDA_KEYS_C] = p->key_bytes;
        bytes[GPK_CUDA_VALUES_C] = p->val_bytes;
    }
    const size_t fitems = p->records ? front_items(job->n) : 0;
    bytes[GPK_CUDA_TEMP] = gpk__align_up(temp_bytes_for(job->n, p->kb, p->vb != 0, fitems), 256) +
        (p->records ? front_bytes(job->n, p->kb, nullptr, nullptr) : 0);
    return gpk__cuda_reserve(ctx, bytes, what);
}

/* Keys and pairs: the caller's keys (and values) in kin (vin), mapped on
 * read, sorted into the A buffers. */
template <class K, class V>
static DevSort<K, V> caller_sort(const gpk_cuda_state *st, const gpk_quick_job *job, const void *kin,
                                 const void *vin, uint32_t n)
{
    DevSort<K, V> d;
    d.kin = (const K *)kin;
    d.vin = (const V *)vin;
    d.kA = (K *)st->buf[GPK_CUDA_KEYS_A];
    d.kB = (K *)st->buf[GPK_CUDA_KEYS_B];
    d.vA = (V *)st->buf[GPK_CUDA_VALUES_A];
    d.vB = (V *)st->buf[GPK_CUDA_VALUES_B];
    d.n = n;
    d.raw = true;
    d.in_is_a = kin == st->buf[GPK_CUDA_KEYS_A];
    d.map = twiddle_map<K>(job->key_type);
    d.unmap = twiddle_unmap<K>(job->key_type);
    d.need_unmap = gpk_key_kind(job->key_type) != GPK_KEY_UNSIGNED;
    d.pm = pivot_map<K>(job->key_type);
    return d;
}

/* One sort of device-resident data (keys / pairs: from `in` into A;
 * records: extract from KEYS_C, sort, gather into VALUES_C). */
template <class K>
static gpk_status sort_once_k(gpk_ctx *ctx, const gpk_quick_job *job, const Plan &p, const void *kin,
                              const void *vin, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    const uint32_t n = (uint32_t)job->n;
    void *temp = st->buf[GPK_CUDA_TEMP];
    if (p.records) {
        const Twiddle<K> ident = {0, 0, 0, 0};
        K *kA = (K *)st->buf[GPK_CUDA_KEYS_A], *kB = (K *)st->buf[GPK_CUDA_KEYS_B];
        uint32_t *vA = (uint32_t *)st->buf[GPK_CUDA_VALUES_A], *vB = (uint32_t *)st->buf[GPK_CUDA_VALUES_B];
        FrontMem fm = {nullptr, nullptr, nullptr, nullptr};
        const int wmax = front_max_bits(n);
        const size_t fitems = front_items(n);
        if (wmax)
            (void)front_bytes(n, (int)sizeof(K), &fm,
                              (char *)temp + gpk__align_up(temp_bytes_k<K>(n, true, fitems), 256));
        cudaError_t e = cudaSuccess;
        if (wmax) {
            e = cudaMemsetAsync(&fm.and_or[0], 0xff, sizeof(u64), stream);
            if (e == cudaSuccess) e = cudaMemsetAsync(&fm.and_or[1], 0, sizeof(u64), stream);
            if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: cudaMemsetAsync");
        }
        const int blocks =
            (int)std::max<size_t>(1, std::min<size_t>((size_t)st->sm_count * 16, ((size_t)n + 255) / 256));
        extract_kernel<K><<<blocks, 256, 0, stream>>>((const unsigned char *)st->buf[GPK_CUDA_KEYS_C], n,
                                                      (uint32_t)job->stride, (uint32_t)job->key_offset,
                                                      twiddle_map<K>(job->key_type), kA, wmax ? nullptr : vA,
                                                      wmax ? fm.and_or : nullptr);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: extract kernel launch");
        FrontPlan<K> fp;
        bool front = false;
        if (wmax) {
            e = cudaMemcpyAsync(st->pinned, fm.and_or, 2 * sizeof(u64), cudaMemcpyDeviceToHost, stream);
            if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
            if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: key range read-back");
            const K all_and = (K)st->pinned[0], all_or = (K)st->pinned[1];
            unsigned begin, end;
            gpk__radix_range_from_masks(all_and, all_or, &begin, &end);
            if (all_and == all_or) {
                /* one key: the records are in order as they stand */
                e = cudaMemcpyAsync(st->buf[GPK_CUDA_VALUES_C], st->buf[GPK_CUDA_KEYS_C],
                                    (size_t)n * job->stride, cudaMemcpyDeviceToDevice, stream);
                if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: records copy");
                return GPK_OK;
            }
            if (end - begin >= 2) {
                /* the top wmax bits where keys differ (all of them when fewer) */
                const int lo = (int)std::max<int>((int)begin, (int)end - wmax);
                gpk_status s = gpk__radix_cuda_window_sort(ctx, fm.radix, n, (int)sizeof(K), kA, kB, vA, vB,
                                                           (unsigned)lo, end, stream);
                if (s != GPK_OK) return s;
                const uint32_t buckets = 1u << (end - lo);
                e = cudaMemsetAsync(fm.starts, 0, buckets * sizeof(uint32_t), stream);
                if (e == cudaSuccess) e = cudaMemsetAsync(fm.ends, 0, buckets * sizeof(uint32_t), stream);
                if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: cudaMemsetAsync");
                bucket_bounds_kernel<K>
                    <<<blocks, 256, 0, stream>>>(kA, n, lo, buckets - 1, fm.starts, fm.ends);
                e = cudaGetLastError();
                if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: bucket bounds kernel launch");
                fp.starts = fm.starts;
                fp.ends = fm.ends;
                fp.buckets = buckets;
                fp.shift = lo;
                fp.prefix = all_and & (K)~low_bits<K>((int)end);
                fp.low_and = all_and & low_bits<K>(lo);
                fp.low_or = all_or & low_bits<K>(lo);
                front = true;
            } else {
                /* the positions the radix sort would have made */
                iota_kernel<<<blocks, 256, 0, stream>>>(vA, n);
                e = cudaGetLastError();
                if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: iota kernel launch");
            }
        }
        DevSort<K, uint32_t> d;
        d.kin = kA;
        d.vin = vA;
        d.kA = kA;
        d.kB = kB;
        d.vA = vA;
        d.vB = vB;
        d.n = n;
        d.raw = false; /* mapped by the extract */
        d.in_is_a = true;
        d.map = ident;
        d.unmap = ident;
        d.need_unmap = false;
        d.pm = pivot_map<K>(job->key_type);
        d.front_items = fitems;
        gpk_status s = quicksort_device<K, uint32_t, true>(ctx, d, temp, stream, front ? &fp : nullptr);
        if (s != GPK_OK) return s;
        /* gather whole records, in the widest word that divides the size */
        const size_t stride = job->stride;
        const unsigned char *rin = (const unsigned char *)st->buf[GPK_CUDA_KEYS_C];
        unsigned char *rout = (unsigned char *)st->buf[GPK_CUDA_VALUES_C];
        const uint32_t *idx = (const uint32_t *)st->buf[GPK_CUDA_VALUES_A];
        const size_t words = stride % 8 == 0 ? n * (stride / 8)
            : stride % 4 == 0                ? n * (stride / 4)
                                             : n * stride;
        const int gblocks =
            (int)std::max<size_t>(1, std::min<size_t>((size_t)st->sm_count * 16, (words + 255) / 256));
        if (stride % 8 == 0)
            gather_kernel<uint64_t><<<gblocks, 256, 0, stream>>>((const uint64_t *)rin, (uint64_t *)rout, idx,
                                                                 n, (uint32_t)(stride / 8));
        else if (stride % 4 == 0)
            gather_kernel<uint32_t><<<gblocks, 256, 0, stream>>>((const uint32_t *)rin, (uint32_t *)rout, idx,
                                                                 n, (uint32_t)(stride / 4));
        else gather_kernel<unsigned char><<<gblocks, 256, 0, stream>>>(rin, rout, idx, n, (uint32_t)stride);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: gather kernel launch");
        return GPK_OK;
    }
    if (p.vb == 0 || p.vb == 4) {
        const DevSort<K, uint32_t> d = caller_sort<K, uint32_t>(st, job, kin, vin, n);
        return p.vb ? quicksort_device<K, uint32_t, true>(ctx, d, temp, stream)
                    : quicksort_device<K, uint32_t, false>(ctx, d, temp, stream);
    }
    return quicksort_device<K, uint64_t, true>(ctx, caller_sort<K, uint64_t>(st, job, kin, vin, n), temp,
                                               stream);
}

static gpk_status sort_once(gpk_ctx *ctx, const gpk_quick_job *job, const Plan &p, const void *kin,
                            const void *vin, cudaStream_t stream)
{
    if (p.kb == 8) return sort_once_k<u64>(ctx, job, p, kin, vin, stream);
    return sort_once_k<uint32_t>(ctx, job, p, kin, vin, stream);
}

static gpk_status upload(gpk_ctx *ctx, const gpk_quick_job *job, const Plan &p, void *kdst, void *vdst,
                         cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e;
    if (p.records) {
        e = cudaMemcpyAsync(st->buf[GPK_CUDA_KEYS_C], job->base, p.rec_bytes, cudaMemcpyHostToDevice, stream);
    } else {
        e = cudaMemcpyAsync(kdst, job->base, p.key_bytes, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess && job->values)
            e = cudaMemcpyAsync(vdst, job->values, p.val_bytes, cudaMemcpyHostToDevice, stream);
    }
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: copy to device");
    return GPK_OK;
}

static gpk_status download(gpk_ctx *ctx, const gpk_quick_job *job, const Plan &p, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: kernels");
    /* Everything ran: from here on the results replace the caller's data. */
    if (p.records) {
        e = cudaMemcpyAsync(job->base, st->buf[GPK_CUDA_VALUES_C], p.rec_bytes, cudaMemcpyDeviceToHost,
                            stream);
    } else {
        e = cudaMemcpyAsync(job->base, st->buf[GPK_CUDA_KEYS_A], p.key_bytes, cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess && job->values)
            e = cudaMemcpyAsync(job->values, st->buf[GPK_CUDA_VALUES_A], p.val_bytes, cudaMemcpyDeviceToHost,
                                stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: copy to host");
    return GPK_OK;
}

/* After a failure with work queued on stream: wait for it and clear the
 * last error, so that the next call on the context starts clean; returns s. */
static gpk_status abandon(cudaStream_t stream, gpk_status s)
{
    (void)cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    return s;
}

/* Where a sort or a timed run works: the stream and the device buffers its
 * keys and values were uploaded to. */
struct Work {
    cudaStream_t stream;
    void *keys, *vals;
};

/* The common start of a sort and of a timed run (bench): the context's
 * device entered through the caller's guard, the plan made, the input
 * uploaded (a failed upload abandoned). A sort works in the A buffers; a
 * timed run keeps the pristine input in C (records: KEYS_C, never written)
 * and sorts a copy each time. */
static gpk_status start(gpk_ctx *ctx, const gpk_quick_job *job, bool bench, DeviceGuard *guard, Plan *p,
                        Work *at)
{
    const cudaError_t e = guard->enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    const gpk_status s = setup(ctx, job, bench, p, bench ? "quicksort bench" : "quicksort");
    if (s != GPK_OK) return s;
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    at->stream = st->stream;
    at->keys = st->buf[bench ? GPK_CUDA_KEYS_C : GPK_CUDA_KEYS_A];
    at->vals = st->buf[bench ? GPK_CUDA_VALUES_C : GPK_CUDA_VALUES_A];
    const gpk_status u = upload(ctx, job, *p, at->keys, at->vals, at->stream);
    return u == GPK_OK ? GPK_OK : abandon(at->stream, u);
}

static gpk_status entry_sort(gpk_ctx *ctx, const gpk_quick_job *job)
{
    if (job->n < 2) return GPK_OK;
    DeviceGuard guard;
    Plan p;
    Work at;
    gpk_status s = start(ctx, job, false, &guard, &p, &at);
    if (s != GPK_OK) return s;
    s = sort_once(ctx, job, p, at.keys, at.vals, at.stream);
    if (s != GPK_OK) return abandon(at.stream, s);
    return download(ctx, job, p, at.stream);
}

static gpk_status entry_bench(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms)
{
    if (!ms || reps < 1) return gpk__fail(ctx, GPK_EINVAL, "quicksort bench: reps must be >= 1");
    if (job->n < 2) {
        *ms = 0.0;
        return GPK_OK;
    }
    DeviceGuard guard;
    Plan p;
    Work at;
    gpk_status s = start(ctx, job, true, &guard, &p, &at);
    if (s != GPK_OK) return s;
    double *times = (double *)malloc(sizeof(double) * (size_t)reps);
    if (!times) return gpk__fail(ctx, GPK_ENOMEM, "quicksort bench: out of host memory");
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    for (int rep = 0; rep < reps && s == GPK_OK; rep++) {
        const cudaError_t e = cudaEventRecord(st->ev_start, at.stream);
        if (e != cudaSuccess) {
            s = gpk__cuda_fail(ctx, e, "cudaEventRecord");
            break;
        }
        s = sort_once(ctx, job, p, at.keys, at.vals, at.stream);
        if (s != GPK_OK) break;
        s = gpk__cuda_rep_end(ctx, at.stream, &times[rep], "quicksort bench: timing");
    }
    if (s == GPK_OK) *ms = gpk__median_ms(times, reps);
    free(times);
    if (s != GPK_OK) return abandon(at.stream, s);
    return download(ctx, job, p, at.stream);
}

} // namespace

/* ------------------------------------------------------------------------
 * Entry points. The recursive variant is this same code compiled a second
 * time, with relocatable device code, by quick_cuda_cdp.cu.
 * ------------------------------------------------------------------------ */
#ifdef GPK_QUICK_CDP_TU
extern "C" gpk_status gpk__quick_sort_cuda_cdp(gpk_ctx *ctx, const gpk_quick_job *job)
{
    return entry_sort(ctx, job);
}
extern "C" gpk_status gpk__quick_bench_cuda_cdp(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms)
{
    return entry_bench(ctx, job, reps, ms);
}
#else
#ifdef GPK_QUICK_HAVE_CDP
extern "C" gpk_status gpk__quick_sort_cuda_cdp(gpk_ctx *ctx, const gpk_quick_job *job);
extern "C" gpk_status gpk__quick_bench_cuda_cdp(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms);
#else
static gpk_status recursive_unsupported(gpk_ctx *ctx)
{
    return gpk__fail(ctx, GPK_EUNSUPPORTED,
                     "CUDA quicksort: the recursive variant (CUDA-R-quicksort, dynamic parallelism) is not "
                     "built into this library (built without GPK_QUICK_HAVE_CDP); use GPK_SORT_QUICK");
}
#endif

extern "C" gpk_status gpk__quick_sort_cuda(gpk_ctx *ctx, const gpk_quick_job *job)
{
    if (job->recursive) {
#ifdef GPK_QUICK_HAVE_CDP
        return gpk__quick_sort_cuda_cdp(ctx, job);
#else
        return recursive_unsupported(ctx);
#endif
    }
    return entry_sort(ctx, job);
}

extern "C" gpk_status gpk__quick_bench_cuda(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms)
{
    if (job->recursive) {
#ifdef GPK_QUICK_HAVE_CDP
        return gpk__quick_bench_cuda_cdp(ctx, job, reps, ms);
#else
        return recursive_unsupported(ctx);
#endif
    }
    return entry_bench(ctx, job, reps, ms);
}
#endif
