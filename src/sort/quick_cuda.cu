/* CUDA quicksort: CUDA-quicksort (Manca et al. 2015), iterative form.
 *
 * The CPU only controls the iterations (paper, Box 4.1). One iteration is
 *   partition_kernel  one block per tile of TILE elements of every "big"
 *                     segment (the number of blocks follows the segment
 *                     sizes, the tile size is fixed: paper 4.1). A block
 *                     loads its tile once, splits it in shared memory into
 *                     < P, == P and > P buckets, reserves its output ranges
 *                     with one atomicAdd per bucket on the segment's
 *                     counters (paper 4.2, Box 4.3 task 2), and writes the
 *                     buckets coalesced to the other buffer (paper 4.3).
 *                     It also folds min and max of both sides into the
 *                     segment's record (atomicMin/atomicMax).
 *   plan_kernel       one block: from those counters and min/max it makes
 *                     the next list of big segments (with their tile
 *                     offsets, so the next launch needs no host work) and
 *                     appends the segments that are finished to a list of
 *                     "items" (the paper's GPU stack).
 * then the host reads four counters back and launches the next iteration.
 * Finished items are sorted / copied / filled in one finish_kernel launch
 * at the end (or when the item list is full).
 *
 * Pivots: P = midpoint of (min, max) of the segment's mapped unsigned keys
 * (rounded up). Each split at least halves max - min, so the depth is at
 * most the key width (32 or 64) whatever the input: no quadratic case on
 * sorted, zero-entropy, many-duplicates or median-of-3-killer inputs. A
 * segment with min == max is done. The price is on keys whose mapped
 * values are spread unevenly over the range (f64 in [0, 1) is spread over
 * ~26 exponents): the first levels then split off few elements.
 *
 * Equal keys: with keys only, the == P bucket is not moved at all; its
 * range in the output is filled with P afterwards (the paper's
 * WRITE_PIVOT). With values (pairs, and the (key, index) pairs of records)
 * the == P elements must move and their range is only known once every
 * block has finished, so they go with the > P side; depth stays bounded by
 * the midpoint rule and runs of equal keys end as min == max segments.
 *
 * Buffers: the input `in` (the uploaded copy, or the bench's pristine
 * copy), A and B. Iteration 0 reads `in` (mapping keys as it reads) and
 * writes B, then B -> A, A -> B, ... Every finished element ends in A, in
 * unmapped form. Segments are disjoint ranges, identical in every buffer,
 * so a finished range may be written into A while other segments are
 * still partitioned.
 *
 * In-block sort of small segments: cub::BlockRadixSort on (key - min)
 * over the bits where the segment's keys can differ, rather than the
 * paper's bitonic sort: a 4096-key segment of uniform 32-bit keys out of
 * 32M spans ~2^17 values, so 5 radix passes of 4 bits against 78 bitonic
 * compare-exchange stages (log2(4096) * (log2(4096) + 1) / 2), each a full
 * pass over shared memory with a barrier.
 *
 * Positions are 32-bit: fewer than 2^32 elements.
 *
 * The recursive variant (GPK_SORT_QUICK_RECURSIVE) is this file compiled
 * again by quick_cuda_cdp.cu with GPK_QUICK_CDP_TU and relocatable device
 * code; it replaces the first kCdpDepth iterations by device-side launches.
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

/* ------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------ */
constexpr int kThreads = 256;          /* partition and finish blocks */
constexpr int kCopyItems = 16;         /* elements per thread of a copy / fill block */
constexpr uint32_t kCopyTile = kThreads * kCopyItems;

/* Partition tile: elements per thread. 4-byte keys alone: 16 (TILE 4096,
 * 16 KiB of shared memory); anything wider: 8 (TILE 2048, <= 32 KiB). */
template <class K, class V, bool HAS_V> struct QShape {
    static constexpr int I = (sizeof(K) == 4 && !HAS_V) ? 16 : 8;
    static constexpr uint32_t TILE = (uint32_t)kThreads * I;
    /* small segments (len <= SMALL) are sorted by one block */
    static constexpr int SI = (sizeof(K) == 4 && !HAS_V) ? 16 : 8;
    static constexpr uint32_t SMALL = (uint32_t)kThreads * SI;
    static constexpr size_t SMEM = (size_t)TILE * (sizeof(K) + (HAS_V ? sizeof(V) : 0));
    /* partition blocks per SM the registers must allow (<= 64 registers
     * at 4; a few tens of bytes spill for 8-byte keys) */
    static constexpr int MIN_BLOCKS = 4;
    static_assert(SMEM <= 48 * 1024, "partition staging must fit static shared memory");
    static_assert(TILE < (1u << 21), "bucket counts are packed in 21-bit fields");
};

/* Key map: the same one-formula twiddle as the radix sort (see
 * gpk__map_u32 / gpk__map_u64 in radix_internal.h). */
template <class K> struct Twiddle {
    K pre, if_clear, if_set, post;
};

template <class K> __host__ __device__ __forceinline__ K twiddle(const Twiddle<K> &t, K x)
{
    K y = x + t.pre;
    K top = y >> (sizeof(K) * 8 - 1);
    return (y ^ (top ? t.if_set : t.if_clear)) + t.post;
}

template <class K> static Twiddle<K> twiddle_map(gpk_type type)
{
    const K sign = (K)1 << (sizeof(K) * 8 - 1);
    const K bias = sizeof(K) == 4 ? (K)0x007FFFFFu : (K)0x000FFFFFFFFFFFFFull;
    Twiddle<K> t = {0, 0, 0, 0};
    if (type == GPK_I32 || type == GPK_I64) {
        t.if_clear = sign;
        t.if_set = sign;
    } else if (type == GPK_F32 || type == GPK_F64) {
        t.if_clear = sign;
        t.if_set = (K)~(K)0;
        t.post = (K)(0 - bias);
    }
    return t;
}

template <class K> static Twiddle<K> twiddle_unmap(gpk_type type)
{
    const K sign = (K)1 << (sizeof(K) * 8 - 1);
    const K bias = sizeof(K) == 4 ? (K)0x007FFFFFu : (K)0x000FFFFFFFFFFFFFull;
    Twiddle<K> t = {0, 0, 0, 0};
    if (type == GPK_I32 || type == GPK_I64) {
        t.if_clear = sign;
        t.if_set = sign;
    } else if (type == GPK_F32 || type == GPK_F64) {
        t.pre = bias;
        t.if_clear = (K)~(K)0;
        t.if_set = sign;
    }
    return t;
}

/* ------------------------------------------------------------------------
 * Work lists in device memory
 * ------------------------------------------------------------------------ */
enum BufId : uint8_t { BUF_IN = 0, BUF_A = 1, BUF_B = 2 };
enum ItemKind : uint8_t { ITEM_SORT = 0, ITEM_COPY = 1, ITEM_FILL = 2 };

/* A segment still to partition (len > SMALL, min < max). */
template <class K> struct Seg {
    uint32_t off, len;
    K min, max;
};

/* Per big segment, filled by the partition blocks with atomics. */
template <class K> struct Part {
    uint32_t lt, gt;          /* elements reserved so far from the left / right */
    K lt_min, lt_max, gt_min, gt_max;
};

/* A finished range: sort it in one block, copy it to A, or fill it with
 * one key. key: the segment's min (SORT, the radix sort subtracts it) or
 * the constant key (FILL); end_bit: bits of (key - min) the sort needs. */
template <class K> struct Item {
    uint32_t off, len;
    K key;
    uint8_t kind, buf, end_bit, pad;
};

/* Counters the host reads back after every plan (first 16 bytes). */
struct Ctl {
    uint32_t nbig, big_tiles;      /* next iteration: segments, blocks */
    uint32_t nitems, item_blocks;  /* pending items, finish blocks */
    uint32_t overflow, pad;
    u64 min, max;                  /* of all mapped keys, from minmax_kernel */
};

/* ------------------------------------------------------------------------
 * Device helpers
 * ------------------------------------------------------------------------ */
__device__ __forceinline__ void atomic_min_k(uint32_t *p, uint32_t v) { atomicMin(p, v); }
__device__ __forceinline__ void atomic_max_k(uint32_t *p, uint32_t v) { atomicMax(p, v); }
__device__ __forceinline__ void atomic_min_k(u64 *p, u64 v) { atomicMin(p, v); }
__device__ __forceinline__ void atomic_max_k(u64 *p, u64 v) { atomicMax(p, v); }

template <class K> __host__ __device__ __forceinline__ K midpoint_up(K lo, K hi)
{
    /* lo < hi: lo + ceil((hi - lo) / 2) in (lo, hi], no overflow */
    const K d = hi - lo;
    return lo + (d >> 1) + (d & 1);
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

/* Largest s with starts[s] <= b (starts strictly increasing, starts[0] = 0). */
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
 * Min and max of all mapped keys (the first segment's range).
 * ------------------------------------------------------------------------ */
template <class K>
__global__ void __launch_bounds__(256) minmax_kernel(const K *keys, uint32_t n, Twiddle<K> map, bool raw,
                                                     Ctl *ctl)
{
    K lo = (K)~(K)0, hi = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        K k = keys[i];
        if (raw) k = twiddle(map, k);
        lo = min(lo, k);
        hi = max(hi, k);
    }
    u64 l = lo, h = hi;
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        l = min(l, (u64)__shfl_xor_sync(0xffffffffu, l, s));
        h = max(h, (u64)__shfl_xor_sync(0xffffffffu, h, s));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin(&ctl->min, l);
        atomicMax(&ctl->max, h);
    }
}

/* ------------------------------------------------------------------------
 * Partition (Box 4.3)
 * ------------------------------------------------------------------------ */
template <class K, class V> struct PartArgs {
    const Seg<K> *segs;
    const uint32_t *seg_tiles; /* first block of each segment */
    uint32_t nseg;
    Part<K> *parts;
    const K *kin;
    K *kout;
    const V *vin;
    V *vout;
    Twiddle<K> map;
    bool raw; /* kin holds unmapped keys (iteration 0) */
};

/* EQB: keys only, the == P bucket stays out of the output (filled later). */
/* MIN_BLOCKS per SM: the kernel is bound by memory and needs the loads of
 * many blocks in flight (at 90 registers only 2 blocks fit). */
template <class K, class V, bool HAS_V, bool EQB>
__global__ void __launch_bounds__(kThreads, (QShape<K, V, HAS_V>::MIN_BLOCKS)) partition_kernel(PartArgs<K, V> a)
{
    using S = QShape<K, V, HAS_V>;
    constexpr int I = S::I;
    constexpr uint32_t TILE = S::TILE;
    constexpr int W = kThreads / 32;
    static_assert(!(EQB && HAS_V), "the == P bucket is only left out when there are no values");

    __shared__ K s_keys[TILE];
    __shared__ V s_vals[HAS_V ? TILE : 1];
    __shared__ u64 s_scan[W];
    __shared__ K s_red[4][W];
    __shared__ uint32_t s_seg, s_lt_base, s_gt_base;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (tid == 0) s_seg = find_owner(a.seg_tiles, a.nseg, blockIdx.x);
    __syncthreads();
    const uint32_t si = s_seg;
    const Seg<K> sg = a.segs[si];
    const uint32_t t = blockIdx.x - a.seg_tiles[si];
    const uint32_t start = sg.off + t * TILE;
    const uint32_t valid = min(TILE, sg.len - t * TILE);
    const K pivot = midpoint_up(sg.min, sg.max);

    /* Load (striped: coalesced), classify: 0 (< P), 1 (== P, EQB), 2 (> P
     * or, without EQB, >= P). Counts packed in 21-bit fields. */
    K key[I];
    V val[HAS_V ? I : 1];
    uint8_t cls[I];
    u64 mine = 0;
    K lt_min = (K)~(K)0, lt_max = 0, gt_min = (K)~(K)0, gt_max = 0;
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t j = tid + i * kThreads;
        cls[i] = 3; /* absent */
        if (j < valid) {
            K k = a.kin[start + j];
            if (a.raw) k = twiddle(a.map, k);
            key[i] = k;
            if (HAS_V) val[i] = a.vin[start + j];
            uint8_t c;
            if (k < pivot) {
                c = 0;
                lt_min = min(lt_min, k);
                lt_max = max(lt_max, k);
            } else if (EQB && k == pivot) {
                c = 1;
            } else {
                c = 2;
                gt_min = min(gt_min, k);
                gt_max = max(gt_max, k);
            }
            cls[i] = c;
            mine += 1ull << (21 * c);
        }
    }
    u64 total;
    const u64 before = block_exclusive_scan<kThreads, u64>(mine, s_scan, &total);
    const uint32_t tot0 = (uint32_t)(total & 0x1FFFFF);
    const uint32_t tot1 = (uint32_t)((total >> 21) & 0x1FFFFF);
    const uint32_t tot2 = (uint32_t)(total >> 42);

    /* Scatter into shared memory in bucket order: [< P][== P][> P]. */
    {
        u64 run = before;
#pragma unroll
        for (int i = 0; i < I; i++) {
            const int c = cls[i];
            if (c == 3) continue;
            const uint32_t rank = (uint32_t)((run >> (21 * c)) & 0x1FFFFF);
            run += 1ull << (21 * c);
            if (EQB && c == 1) continue; /* filled with P later */
            const uint32_t pos = (c == 0 ? 0u : c == 1 ? tot0 : tot0 + tot1) + rank;
            s_keys[pos] = key[i];
            if (HAS_V) s_vals[pos] = val[i];
        }
    }

    /* Min and max of both sides. */
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        lt_min = min(lt_min, (K)__shfl_xor_sync(0xffffffffu, lt_min, s));
        lt_max = max(lt_max, (K)__shfl_xor_sync(0xffffffffu, lt_max, s));
        gt_min = min(gt_min, (K)__shfl_xor_sync(0xffffffffu, gt_min, s));
        gt_max = max(gt_max, (K)__shfl_xor_sync(0xffffffffu, gt_max, s));
    }
    if (lane == 0) {
        s_red[0][warp] = lt_min;
        s_red[1][warp] = lt_max;
        s_red[2][warp] = gt_min;
        s_red[3][warp] = gt_max;
    }
    __syncthreads();
    if (tid == 0) {
        for (int w = 1; w < W; w++) {
            lt_min = min(lt_min, s_red[0][w]);
            lt_max = max(lt_max, s_red[1][w]);
            gt_min = min(gt_min, s_red[2][w]);
            gt_max = max(gt_max, s_red[3][w]);
        }
        /* Box 4.3 task 2: one atomicAdd per bucket reserves this block's
         * ranges: < P from the left end, > P from the right end. */
        Part<K> *pt = &a.parts[si];
        uint32_t lt_base = 0, gt_old = 0;
        if (tot0) {
            lt_base = atomicAdd(&pt->lt, tot0);
            atomic_min_k(&pt->lt_min, lt_min);
            atomic_max_k(&pt->lt_max, lt_max);
        }
        if (tot2) {
            gt_old = atomicAdd(&pt->gt, tot2);
            atomic_min_k(&pt->gt_min, gt_min);
            atomic_max_k(&pt->gt_max, gt_max);
        }
        s_lt_base = sg.off + lt_base;
        /* shared position j >= tot0 + tot1 goes to gt_base + j */
        s_gt_base = sg.off + sg.len - gt_old - tot2 - tot0 - tot1;
    }
    __syncthreads();

    /* Box 4.3 task 3: consecutive threads write consecutive positions. */
    const uint32_t lt_base = s_lt_base, gt_base = s_gt_base;
    const uint32_t gt_from = tot0 + tot1;
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t j = tid + i * kThreads;
        if (j >= valid) break;
        uint32_t out;
        if (j < tot0) out = lt_base + j;
        else if (j >= gt_from) out = gt_base + j; /* modulo 2^32 on the way, exact */
        else continue;                             /* == P: EQB only */
        a.kout[out] = s_keys[j];
        if (HAS_V) a.vout[out] = s_vals[j];
    }
}

/* ------------------------------------------------------------------------
 * Plan: one block turns the parents' counters into children.
 * ------------------------------------------------------------------------ */
template <class K> struct PlanArgs {
    const Seg<K> *segs;       /* parents (NULL on the first plan) */
    const Part<K> *parts;
    uint32_t nseg;
    uint8_t child_buf;        /* where the parents' children are */
    bool init;                /* first plan: one child, the whole input */
    bool in_is_final;         /* BUF_IN is A and holds the caller's keys as they are */
    bool eqb;                 /* keys only */
    bool need_unmap;          /* keys must be unmapped on the way to A */
    bool in_raw;              /* BUF_IN holds the caller's (unmapped) keys (recursive variant) */
    uint32_t n;
    uint32_t tile, small;
    Seg<K> *next;
    uint32_t *next_tiles;
    Part<K> *next_parts;
    Item<K> *items;
    uint32_t *item_blocks;
    uint32_t cap_items;
    Ctl *ctl;
};

constexpr int kPlanThreads = 1024;

template <class K> struct Child {
    uint32_t off, len;
    K min, max;
    uint8_t buf;
    bool fill; /* the == P range of a keys-only partition */
};

/* What a child becomes: big (next iteration) or an item (blocks > 0), or
 * nothing (already final). */
template <class K>
__device__ __forceinline__ void classify(const PlanArgs<K> &a, const Child<K> &c, bool *big, uint32_t *tiles,
                                         bool *item, Item<K> *it, uint32_t *blocks)
{
    *big = false;
    *item = false;
    *tiles = 0;
    *blocks = 0;
    if (c.len == 0) return;
    const bool final_as_is = (c.buf == BUF_A && !a.need_unmap) || (c.buf == BUF_IN && a.in_is_final);
    it->off = c.off;
    it->len = c.len;
    it->buf = c.buf;
    it->end_bit = 0;
    it->pad = 0;
    if (c.fill || c.min == c.max) {
        /* the == P range was never written: it is always filled */
        if (final_as_is && !c.fill) return;
        /* keys only: the range is one key, write it without reading */
        it->kind = a.eqb ? ITEM_FILL : ITEM_COPY;
        it->key = c.min;
        *item = true;
        *blocks = (uint32_t)(((u64)c.len + kCopyTile - 1) / kCopyTile);
        return;
    }
    if (c.len <= a.small) {
        it->kind = ITEM_SORT;
        it->key = c.min;
        /* (key - min) < 2^w; one bit more keeps the padding (all ones)
         * above every real key */
        const int w = bit_width<K>((K)(c.max - c.min));
        it->end_bit = (uint8_t)min(w + 1, (int)(8 * sizeof(K)));
        *item = true;
        *blocks = 1;
        return;
    }
    *big = true;
    *tiles = (uint32_t)(((u64)c.len + a.tile - 1) / a.tile);
}

template <class K> __global__ void __launch_bounds__(kPlanThreads) plan_kernel(PlanArgs<K> a)
{
    constexpr int W = kPlanThreads / 32;
    __shared__ u64 s_scan[W];
    __shared__ uint32_t s_nbig, s_tiles, s_nitems, s_blocks;
    const int tid = threadIdx.x;
    if (tid == 0) {
        s_nbig = 0;
        s_tiles = 0;
        s_nitems = a.ctl->nitems;
        s_blocks = a.ctl->item_blocks;
    }
    __syncthreads();
    const uint32_t parents = a.init ? 1 : a.nseg;
    for (uint32_t base = 0; base < parents; base += kPlanThreads) {
        const uint32_t p = base + tid;
        Child<K> ch[3];
        int nch = 0;
        if (p < parents) {
            if (a.init) {
                ch[0] = Child<K>{0, a.n, (K)a.ctl->min, (K)a.ctl->max, BUF_IN, false};
                nch = 1;
            } else {
                const Seg<K> sg = a.segs[p];
                const Part<K> pt = a.parts[p];
                const uint32_t eq = sg.len - pt.lt - pt.gt;
                ch[0] = Child<K>{sg.off, pt.lt, pt.lt_min, pt.lt_max, a.child_buf, false};
                ch[1] = Child<K>{sg.off + pt.lt, eq, midpoint_up(sg.min, sg.max), midpoint_up(sg.min, sg.max),
                                 a.child_buf, true};
                ch[2] = Child<K>{sg.off + sg.len - pt.gt, pt.gt, pt.gt_min, pt.gt_max, a.child_buf, false};
                nch = 3; /* without EQB, eq == 0 and ch[1] is empty */
            }
        }
        bool big[3], item[3];
        uint32_t tiles[3], blocks[3];
        Item<K> its[3];
        uint32_t nb = 0, tb = 0, ni = 0, ib = 0;
#pragma unroll
        for (int c = 0; c < 3; c++) {
            big[c] = item[c] = false;
            tiles[c] = blocks[c] = 0;
            if (c < nch) classify(a, ch[c], &big[c], &tiles[c], &item[c], &its[c], &blocks[c]);
            nb += big[c];
            tb += tiles[c];
            ni += item[c];
            ib += blocks[c];
        }
        /* (count << 32 | blocks): block sums stay far below 2^32 */
        u64 tot_b, tot_i;
        const u64 ex_b = block_exclusive_scan<kPlanThreads, u64>(((u64)nb << 32) | tb, s_scan, &tot_b);
        const u64 ex_i = block_exclusive_scan<kPlanThreads, u64>(((u64)ni << 32) | ib, s_scan, &tot_i);
        uint32_t bslot = s_nbig + (uint32_t)(ex_b >> 32), btile = s_tiles + (uint32_t)ex_b;
        uint32_t islot = s_nitems + (uint32_t)(ex_i >> 32), iblk = s_blocks + (uint32_t)ex_i;
#pragma unroll
        for (int c = 0; c < 3; c++) {
            if (big[c]) {
                a.next[bslot] = Seg<K>{ch[c].off, ch[c].len, ch[c].min, ch[c].max};
                a.next_tiles[bslot] = btile;
                a.next_parts[bslot] = Part<K>{0u, 0u, (K)~(K)0, (K)0, (K)~(K)0, (K)0};
                bslot++;
                btile += tiles[c];
            }
            if (item[c]) {
                if (islot < a.cap_items) {
                    a.items[islot] = its[c];
                    a.item_blocks[islot] = iblk;
                } else {
                    a.ctl->overflow = 1; /* the host's flush rule makes this unreachable */
                }
                islot++;
                iblk += blocks[c];
            }
        }
        __syncthreads(); /* everyone has read the running totals */
        if (tid == 0) {
            s_nbig += (uint32_t)(tot_b >> 32);
            s_tiles += (uint32_t)tot_b;
            s_nitems += (uint32_t)(tot_i >> 32);
            s_blocks += (uint32_t)tot_i;
        }
        __syncthreads();
    }
    if (tid == 0) {
        a.ctl->nbig = s_nbig;
        a.ctl->big_tiles = s_tiles;
        a.ctl->nitems = min(s_nitems, a.cap_items);
        a.ctl->item_blocks = s_blocks;
    }
}

/* ------------------------------------------------------------------------
 * Finish: sort small segments in one block, copy or fill the rest into A.
 * ------------------------------------------------------------------------ */
template <class K, class V> struct FinishArgs {
    const Item<K> *items;
    const uint32_t *item_blocks;
    uint32_t nitems;
    const K *kbuf[3]; /* by BufId */
    const V *vbuf[3];
    K *kA;
    V *vA;
    Twiddle<K> map, unmap;
};

template <class K, class V, bool HAS_V>
__global__ void __launch_bounds__(kThreads) finish_kernel(FinishArgs<K, V> a)
{
    using S = QShape<K, V, HAS_V>;
    constexpr int SI = S::SI;
    using SortV = typename std::conditional<HAS_V, V, cub::NullType>::type;
    using BlockSort = cub::BlockRadixSort<K, kThreads, SI, SortV>;
    __shared__ typename BlockSort::TempStorage s_sort;
    __shared__ uint32_t s_item;

    const int tid = threadIdx.x;
    if (tid == 0) s_item = find_owner(a.item_blocks, a.nitems, blockIdx.x);
    __syncthreads();
    const Item<K> it = a.items[s_item];
    const uint32_t chunk = blockIdx.x - a.item_blocks[s_item];
    /* selected, not indexed: a dynamic index into the parameter arrays
     * would copy them to the stack */
    const K *ksrc = it.buf == BUF_IN ? a.kbuf[BUF_IN] : it.buf == BUF_A ? a.kbuf[BUF_A] : a.kbuf[BUF_B];
    const V *vsrc = it.buf == BUF_IN ? a.vbuf[BUF_IN] : it.buf == BUF_A ? a.vbuf[BUF_A] : a.vbuf[BUF_B];
    const bool raw = it.buf == BUF_IN;

    if (it.kind == ITEM_SORT) {
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
                key[i] = (K)~(K)0;
                if constexpr (HAS_V) val[i] = 0;
            }
        }
        if constexpr (HAS_V) BlockSort(s_sort).SortBlockedToStriped(key, val, 0, it.end_bit);
        else BlockSort(s_sort).SortBlockedToStriped(key, 0, it.end_bit);
        /* striped: thread t holds sorted positions t, t + T, ... */
#pragma unroll
        for (int i = 0; i < SI; i++) {
            const uint32_t j = tid + i * kThreads;
            if (j < it.len) {
                a.kA[it.off + j] = twiddle(a.unmap, (K)(key[i] + it.key));
                if constexpr (HAS_V) a.vA[it.off + j] = val[i];
            }
        }
        return;
    }
    const uint32_t from = chunk * kCopyTile;
    const uint32_t to = min(it.len, from + kCopyTile);
    if (it.kind == ITEM_FILL) {
        const K k = twiddle(a.unmap, it.key);
        for (uint32_t j = from + tid; j < to; j += kThreads) a.kA[it.off + j] = k;
        return;
    }
    /* ITEM_COPY: keys (and values) to A, mapped back; in place when
     * buf == A (only to unmap) */
    for (uint32_t j = from + tid; j < to; j += kThreads) {
        K k = ksrc[it.off + j];
        if (raw) k = twiddle(a.map, k);
        a.kA[it.off + j] = twiddle(a.unmap, k);
        if (HAS_V) a.vA[it.off + j] = vsrc[it.off + j];
    }
}

/* ------------------------------------------------------------------------
 * Records: (mapped key, index) out of the records, and the gather after.
 * ------------------------------------------------------------------------ */
template <class K>
__global__ void __launch_bounds__(256) extract_kernel(const unsigned char *rec, uint32_t n, uint32_t stride,
                                                      uint32_t key_offset, Twiddle<K> map, K *keys,
                                                      uint32_t *idx)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const unsigned char *p = rec + i * stride + key_offset;
        K k = 0;
        /* any alignment: bytes, little-endian */
#pragma unroll
        for (int b = 0; b < (int)sizeof(K); b++) k |= (K)p[b] << (8 * b);
        keys[i] = twiddle(map, k);
        idx[i] = (uint32_t)i;
    }
}

/* out record i = in record idx[i], one word per thread, so that a warp
 * reads and writes whole records contiguously. Word = 8, 4 or 1 bytes,
 * whatever divides the record size (buffers come from cudaMalloc, 256-byte
 * aligned). */
template <class Wd>
__global__ void __launch_bounds__(256) gather_kernel(const Wd *in, Wd *out, const uint32_t *idx, uint32_t n,
                                                     uint32_t words_per_rec)
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
static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Keeps the caller's current device and restores it on scope exit. */
struct DeviceGuard {
    int previous = -1;
    bool changed = false;
    cudaError_t enter(int device)
    {
        cudaError_t e = cudaGetDevice(&previous);
        if (e != cudaSuccess) return e;
        if (previous != device) {
            changed = true;
            return cudaSetDevice(device);
        }
        return cudaSuccess;
    }
    ~DeviceGuard()
    {
        if (changed) (void)cudaSetDevice(previous);
    }
};

/* Work lists carved out of the TEMP slot. Big segments have len > SMALL
 * and are disjoint, so one list holds at most n / (SMALL + 1) + 1; a plan
 * appends at most 3 items per parent, and the host flushes the items
 * before a plan could overflow (cap_items >= 3 * cap_big + 3). */
/* Recursive variant (quick_cuda_cdp.cu): segments at depths 0 ..
 * kCdpDepth - 1 are partitioned by device-side launches; the nesting of
 * node -> partition / continuation -> child node grows by 2 per level and
 * CUDA allows 24, so the segments still big at depth kCdpDepth go back to
 * the iterative loop. Its nodes take (Seg, Part) slots from a pool: big
 * segments of one depth are disjoint, so kCdpDepth * cap_big slots. Its
 * items are not flushed in between: 3 per node. */
constexpr int kCdpDepth = 10;

template <class K> struct Lists {
    Seg<K> *segs[2];
    uint32_t *tiles[2];
    Part<K> *parts[2];
    Item<K> *items;
    uint32_t *item_blocks;
    Ctl *ctl;
    uint32_t cap_big, cap_items;
    Seg<K> *pool_seg;   /* recursive only */
    Part<K> *pool_part;
    uint32_t *pool_ctr; /* [0] slots taken, [1] zero (one segment's tile start) */
    uint32_t cap_pool;
};

template <class K>
static size_t lists_bytes(size_t n, uint32_t small, bool recursive, uint32_t *cap_big, uint32_t *cap_items,
                          uint32_t *cap_pool)
{
    const size_t cb = n / ((size_t)small + 1) + 2;
    const size_t cp = recursive ? (size_t)kCdpDepth * cb : 0;
    const size_t ci = 3 * cb + 16 + 3 * cp;
    *cap_big = (uint32_t)cb;
    *cap_items = (uint32_t)ci;
    *cap_pool = (uint32_t)cp;
    return 2 * align_up(cb * sizeof(Seg<K>), 256) + 2 * align_up(cb * sizeof(uint32_t), 256) +
           2 * align_up(cb * sizeof(Part<K>), 256) + align_up(ci * sizeof(Item<K>), 256) +
           align_up(ci * sizeof(uint32_t), 256) + align_up(sizeof(Ctl), 256) +
           align_up(cp * sizeof(Seg<K>), 256) + align_up(cp * sizeof(Part<K>), 256) + 256;
}

template <class K> static Lists<K> carve_lists(void *base, size_t n, uint32_t small, bool recursive)
{
    Lists<K> l;
    (void)lists_bytes<K>(n, small, recursive, &l.cap_big, &l.cap_items, &l.cap_pool);
    char *p = (char *)base;
    for (int i = 0; i < 2; i++) {
        l.segs[i] = (Seg<K> *)p;
        p += align_up((size_t)l.cap_big * sizeof(Seg<K>), 256);
        l.tiles[i] = (uint32_t *)p;
        p += align_up((size_t)l.cap_big * sizeof(uint32_t), 256);
        l.parts[i] = (Part<K> *)p;
        p += align_up((size_t)l.cap_big * sizeof(Part<K>), 256);
    }
    l.items = (Item<K> *)p;
    p += align_up((size_t)l.cap_items * sizeof(Item<K>), 256);
    l.item_blocks = (uint32_t *)p;
    p += align_up((size_t)l.cap_items * sizeof(uint32_t), 256);
    l.ctl = (Ctl *)p;
    p += align_up(sizeof(Ctl), 256);
    l.pool_seg = (Seg<K> *)p;
    p += align_up((size_t)l.cap_pool * sizeof(Seg<K>), 256);
    l.pool_part = (Part<K> *)p;
    p += align_up((size_t)l.cap_pool * sizeof(Part<K>), 256);
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
    bool raw;            /* in holds caller keys: map on read */
    bool in_is_a;
    Twiddle<K> map, unmap;
    bool need_unmap;     /* unmap is not the identity */
};

template <class K, class V, bool HAS_V>
static gpk_status flush_items(gpk_ctx *ctx, const DevSort<K, V> &d, const Lists<K> &l, uint32_t nitems,
                              uint32_t blocks, cudaStream_t stream)
{
    if (nitems == 0 || blocks == 0) return GPK_OK;
    FinishArgs<K, V> f;
    f.items = l.items;
    f.item_blocks = l.item_blocks;
    f.nitems = nitems;
    f.kbuf[BUF_IN] = d.kin;
    f.kbuf[BUF_A] = d.kA;
    f.kbuf[BUF_B] = d.kB;
    f.vbuf[BUF_IN] = d.vin;
    f.vbuf[BUF_A] = d.vA;
    f.vbuf[BUF_B] = d.vB;
    f.kA = d.kA;
    f.vA = d.vA;
    f.map = d.map;
    f.unmap = d.unmap;
    finish_kernel<K, V, HAS_V><<<blocks, kThreads, 0, stream>>>(f);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemsetAsync(&l.ctl->nitems, 0, 2 * sizeof(uint32_t), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: finish kernel launch");
    return GPK_OK;
}

static gpk_status read_ctl(gpk_ctx *ctx, const Ctl *ctl, Ctl *out, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    static_assert(offsetof(Ctl, min) == 6 * sizeof(uint32_t) && 6 * sizeof(uint32_t) <= 4 * sizeof(unsigned long long),
                  "the counters read back are the first 6 words of Ctl and fit the pinned words");
    cudaError_t e = cudaMemcpyAsync(st->pinned, ctl, 6 * sizeof(uint32_t), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: iteration");
    memcpy(out, st->pinned, 6 * sizeof(uint32_t));
    if (out->overflow & 2)
        return gpk__fail(ctx, GPK_EDEVICE,
                         "CUDA quicksort: a device-side launch failed (dynamic parallelism: pending launch "
                         "limit or nesting depth)");
    if (out->overflow)
        return gpk__fail(ctx, GPK_EDEVICE, "CUDA quicksort: internal error (work list overflow)");
    return GPK_OK;
}

#ifdef GPK_QUICK_CDP_TU
constexpr bool kRecursive = true;
#else
constexpr bool kRecursive = false;
#endif

/* Recursive phase (defined in quick_cuda_cdp.cu, which compiles this file
 * with GPK_QUICK_CDP_TU): from the first plan's one big segment in list 0
 * down to depth kCdpDepth; what is still big then is left in list 1 and
 * *c is read back. */
template <class K, class V, bool HAS_V>
static gpk_status cdp_phase(gpk_ctx *ctx, const DevSort<K, V> &d, const Lists<K> &l, const PlanArgs<K> &pa,
                            Ctl *c, cudaStream_t stream);

/* The iterations of Box 4.1. */
template <class K, class V, bool HAS_V>
static gpk_status quicksort_device(gpk_ctx *ctx, const DevSort<K, V> &d, void *temp, cudaStream_t stream)
{
    using S = QShape<K, V, HAS_V>;
    constexpr bool EQB = !HAS_V;
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    Lists<K> l = carve_lists<K>(temp, d.n, S::SMALL, kRecursive);
    cudaError_t e;

    /* ctl: counters 0, min = all ones, max = 0 */
    e = cudaMemsetAsync(l.ctl, 0, sizeof(Ctl), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(&l.ctl->min, 0xff, sizeof(u64), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: cudaMemsetAsync");
    {
        const int blocks = (int)std::max<size_t>(1, std::min<size_t>((size_t)st->sm_count * 8,
                                                                     ((size_t)d.n + 256 * 8 - 1) / (256 * 8)));
        minmax_kernel<K><<<blocks, 256, 0, stream>>>(d.kin, d.n, d.map, d.raw, l.ctl);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: min/max kernel launch");
    }

    PlanArgs<K> pa;
    memset(&pa, 0, sizeof pa);
    pa.init = true;
    /* BUF_IN is final as it stands only when it is A and its keys are in
     * the form the caller gets back: the caller's own (raw), or mapped
     * keys whose map is the identity. */
    pa.in_is_final = d.in_is_a && (d.raw || !d.need_unmap);
    pa.eqb = EQB;
    pa.need_unmap = d.need_unmap;
    pa.in_raw = d.raw;
    pa.n = d.n;
    pa.tile = S::TILE;
    pa.small = S::SMALL;
    pa.items = l.items;
    pa.item_blocks = l.item_blocks;
    pa.cap_items = l.cap_items;
    pa.ctl = l.ctl;
    pa.next = l.segs[0];
    pa.next_tiles = l.tiles[0];
    pa.next_parts = l.parts[0];
    plan_kernel<K><<<1, kPlanThreads, 0, stream>>>(pa);
    e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: plan kernel launch");
    Ctl c;
    gpk_status s = read_ctl(ctx, l.ctl, &c, stream);
    if (s != GPK_OK) return s;

    const K *src = d.kin;
    const V *vsrc = d.vin;
    K *dst = d.kB;
    V *vdst = d.vB;
    uint8_t dst_id = BUF_B;
    bool raw = d.raw;
    int cur = 0;
    if constexpr (kRecursive) {
        if (c.nbig > 0) {
            s = cdp_phase<K, V, HAS_V>(ctx, d, l, pa, &c, stream);
            if (s != GPK_OK) return s;
            /* what is left lies in list 1 at depth kCdpDepth: in A (even) */
            static_assert(kCdpDepth % 2 == 0 && kCdpDepth > 0, "depth kCdpDepth segments are in A");
            cur = 1;
            raw = false;
            src = d.kA;
            vsrc = d.vA;
        }
    }
    for (int iter = 0; c.nbig > 0; iter++) {
        if (iter > 8 * (int)sizeof(K) + 2)
            return gpk__fail(ctx, GPK_EDEVICE, "CUDA quicksort: internal error (depth beyond the key width)");
        if ((size_t)c.nitems + 3 * (size_t)c.nbig > l.cap_items) {
            s = flush_items<K, V, HAS_V>(ctx, d, l, c.nitems, c.item_blocks, stream);
            if (s != GPK_OK) return s;
            c.nitems = c.item_blocks = 0;
        }
        PartArgs<K, V> a;
        a.segs = l.segs[cur];
        a.seg_tiles = l.tiles[cur];
        a.nseg = c.nbig;
        a.parts = l.parts[cur];
        a.kin = src;
        a.kout = dst;
        a.vin = vsrc;
        a.vout = vdst;
        a.map = d.map;
        a.raw = raw;
        partition_kernel<K, V, HAS_V, EQB><<<c.big_tiles, kThreads, 0, stream>>>(a);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: partition kernel launch");

        pa.init = false;
        pa.segs = l.segs[cur];
        pa.parts = l.parts[cur];
        pa.nseg = c.nbig;
        pa.child_buf = dst_id;
        pa.next = l.segs[cur ^ 1];
        pa.next_tiles = l.tiles[cur ^ 1];
        pa.next_parts = l.parts[cur ^ 1];
        plan_kernel<K><<<1, kPlanThreads, 0, stream>>>(pa);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: plan kernel launch");
        s = read_ctl(ctx, l.ctl, &c, stream);
        if (s != GPK_OK) return s;

        /* the children live in dst: next iteration reads them */
        cur ^= 1;
        raw = false;
        src = dst;
        vsrc = vdst;
        if (dst_id == BUF_B) {
            dst = d.kA;
            vdst = d.vA;
            dst_id = BUF_A;
        } else {
            dst = d.kB;
            vdst = d.vB;
            dst_id = BUF_B;
        }
    }
    return flush_items<K, V, HAS_V>(ctx, d, l, c.nitems, c.item_blocks, stream);
}

/* ------------------------------------------------------------------------
 * Host-pointer API
 * ------------------------------------------------------------------------ */
struct Plan {
    bool records;
    int kb, vb;          /* key bytes; value bytes (records: 4, the index) */
    size_t key_bytes, val_bytes, rec_bytes;
};

static uint32_t small_for(int kb, bool has_v)
{
    if (kb == 4) return has_v ? QShape<uint32_t, uint32_t, true>::SMALL : QShape<uint32_t, uint32_t, false>::SMALL;
    return has_v ? QShape<u64, uint32_t, true>::SMALL : QShape<u64, uint32_t, false>::SMALL;
}

static size_t temp_bytes_for(size_t n, int kb, bool has_v)
{
    uint32_t cb, ci, cp;
    const uint32_t small = small_for(kb, has_v);
    return kb == 4 ? lists_bytes<uint32_t>(n, small, kRecursive, &cb, &ci, &cp)
                   : lists_bytes<u64>(n, small, kRecursive, &cb, &ci, &cp);
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
    if (p->records && (job->stride == 0 || job->stride > 256 || job->key_offset + job->key_width > job->stride))
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
    bytes[GPK_CUDA_TEMP] = temp_bytes_for(job->n, p->kb, p->vb != 0);
    return gpk__cuda_reserve(ctx, bytes, what);
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
        const int blocks = (int)std::max<size_t>(1, std::min<size_t>((size_t)st->sm_count * 16,
                                                                     ((size_t)n + 255) / 256));
        extract_kernel<K><<<blocks, 256, 0, stream>>>((const unsigned char *)st->buf[GPK_CUDA_KEYS_C], n,
                                                      (uint32_t)job->stride, (uint32_t)job->key_offset,
                                                      twiddle_map<K>(job->key_type), (K *)st->buf[GPK_CUDA_KEYS_A],
                                                      (uint32_t *)st->buf[GPK_CUDA_VALUES_A]);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: extract kernel launch");
        DevSort<K, uint32_t> d;
        d.kin = (const K *)st->buf[GPK_CUDA_KEYS_A];
        d.vin = (const uint32_t *)st->buf[GPK_CUDA_VALUES_A];
        d.kA = (K *)st->buf[GPK_CUDA_KEYS_A];
        d.kB = (K *)st->buf[GPK_CUDA_KEYS_B];
        d.vA = (uint32_t *)st->buf[GPK_CUDA_VALUES_A];
        d.vB = (uint32_t *)st->buf[GPK_CUDA_VALUES_B];
        d.n = n;
        d.raw = false; /* mapped by the extract */
        d.in_is_a = true;
        d.map = ident;
        d.unmap = ident;
        d.need_unmap = false;
        gpk_status s = quicksort_device<K, uint32_t, true>(ctx, d, temp, stream);
        if (s != GPK_OK) return s;
        /* gather whole records, in the widest word that divides the size */
        const size_t stride = job->stride;
        const unsigned char *rin = (const unsigned char *)st->buf[GPK_CUDA_KEYS_C];
        unsigned char *rout = (unsigned char *)st->buf[GPK_CUDA_VALUES_C];
        const uint32_t *idx = (const uint32_t *)st->buf[GPK_CUDA_VALUES_A];
        const size_t words = stride % 8 == 0 ? n * (stride / 8) : stride % 4 == 0 ? n * (stride / 4) : n * stride;
        const int gblocks = (int)std::max<size_t>(1, std::min<size_t>((size_t)st->sm_count * 16, (words + 255) / 256));
        if (stride % 8 == 0)
            gather_kernel<uint64_t><<<gblocks, 256, 0, stream>>>((const uint64_t *)rin, (uint64_t *)rout, idx, n,
                                                                (uint32_t)(stride / 8));
        else if (stride % 4 == 0)
            gather_kernel<uint32_t><<<gblocks, 256, 0, stream>>>((const uint32_t *)rin, (uint32_t *)rout, idx, n,
                                                                (uint32_t)(stride / 4));
        else
            gather_kernel<unsigned char><<<gblocks, 256, 0, stream>>>(rin, rout, idx, n, (uint32_t)stride);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "quicksort: gather kernel launch");
        return GPK_OK;
    }
    const bool plain = job->key_type == GPK_U32 || job->key_type == GPK_U64;
    if (p.vb == 0 || p.vb == 4) {
        DevSort<K, uint32_t> d;
        d.kin = (const K *)kin;
        d.vin = (const uint32_t *)vin;
        d.kA = (K *)st->buf[GPK_CUDA_KEYS_A];
        d.kB = (K *)st->buf[GPK_CUDA_KEYS_B];
        d.vA = (uint32_t *)st->buf[GPK_CUDA_VALUES_A];
        d.vB = (uint32_t *)st->buf[GPK_CUDA_VALUES_B];
        d.n = n;
        d.raw = true;
        d.in_is_a = kin == st->buf[GPK_CUDA_KEYS_A];
        d.map = twiddle_map<K>(job->key_type);
        d.unmap = twiddle_unmap<K>(job->key_type);
        d.need_unmap = !plain;
        return p.vb ? quicksort_device<K, uint32_t, true>(ctx, d, temp, stream)
                    : quicksort_device<K, uint32_t, false>(ctx, d, temp, stream);
    }
    DevSort<K, uint64_t> d;
    d.kin = (const K *)kin;
    d.vin = (const uint64_t *)vin;
    d.kA = (K *)st->buf[GPK_CUDA_KEYS_A];
    d.kB = (K *)st->buf[GPK_CUDA_KEYS_B];
    d.vA = (uint64_t *)st->buf[GPK_CUDA_VALUES_A];
    d.vB = (uint64_t *)st->buf[GPK_CUDA_VALUES_B];
    d.n = n;
    d.raw = true;
    d.in_is_a = kin == st->buf[GPK_CUDA_KEYS_A];
    d.map = twiddle_map<K>(job->key_type);
    d.unmap = twiddle_unmap<K>(job->key_type);
    d.need_unmap = !plain;
    return quicksort_device<K, uint64_t, true>(ctx, d, temp, stream);
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
        e = cudaMemcpyAsync(job->base, st->buf[GPK_CUDA_VALUES_C], p.rec_bytes, cudaMemcpyDeviceToHost, stream);
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

static gpk_status entry_sort(gpk_ctx *ctx, const gpk_quick_job *job)
{
    if (job->n < 2) return GPK_OK;
    DeviceGuard guard;
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    Plan p;
    gpk_status s = setup(ctx, job, false, &p, "quicksort");
    if (s != GPK_OK) return s;
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaStream_t stream = st->stream;
    void *ka = st->buf[GPK_CUDA_KEYS_A], *va = st->buf[GPK_CUDA_VALUES_A];
    s = upload(ctx, job, p, ka, va, stream);
    if (s == GPK_OK) s = sort_once(ctx, job, p, ka, va, stream);
    if (s != GPK_OK) {
        (void)cudaStreamSynchronize(stream);
        (void)cudaGetLastError();
        return s;
    }
    return download(ctx, job, p, stream);
}

static gpk_status entry_bench(gpk_ctx *ctx, const gpk_quick_job *job, int reps, double *ms)
{
    if (!ms || reps < 1) return gpk__fail(ctx, GPK_EINVAL, "quicksort bench: reps must be >= 1");
    if (job->n < 2) {
        *ms = 0.0;
        return GPK_OK;
    }
    DeviceGuard guard;
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    Plan p;
    gpk_status s = setup(ctx, job, true, &p, "quicksort bench");
    if (s != GPK_OK) return s;
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaStream_t stream = st->stream;
    /* the pristine input stays in C (records: KEYS_C, never written) */
    void *kc = st->buf[GPK_CUDA_KEYS_C], *vc = st->buf[GPK_CUDA_VALUES_C];
    s = upload(ctx, job, p, kc, vc, stream);
    if (s != GPK_OK) return s;
    double *times = (double *)malloc(sizeof(double) * (size_t)reps);
    if (!times) return gpk__fail(ctx, GPK_ENOMEM, "quicksort bench: out of host memory");
    for (int rep = 0; rep < reps && s == GPK_OK; rep++) {
        e = cudaEventRecord(st->ev_start, stream);
        if (e != cudaSuccess) {
            s = gpk__cuda_fail(ctx, e, "cudaEventRecord");
            break;
        }
        s = sort_once(ctx, job, p, kc, vc, stream);
        if (s != GPK_OK) break;
        e = cudaEventRecord(st->ev_stop, stream);
        if (e == cudaSuccess) e = cudaEventSynchronize(st->ev_stop);
        float f = 0;
        if (e == cudaSuccess) e = cudaEventElapsedTime(&f, st->ev_start, st->ev_stop);
        if (e != cudaSuccess) {
            s = gpk__cuda_fail(ctx, e, "quicksort bench: timing");
            break;
        }
        times[rep] = f;
    }
    if (s != GPK_OK) {
        (void)cudaStreamSynchronize(stream);
        (void)cudaGetLastError();
        free(times);
        return s;
    }
    std::sort(times, times + reps);
    *ms = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    free(times);
    return download(ctx, job, p, stream);
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
