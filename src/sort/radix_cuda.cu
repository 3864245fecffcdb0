/* CUDA radix sort: LSD passes in the Onesweep form (Adinets & Merrill 2022).
 *
 * One sort is:
 *   histogram_kernel  one read of the keys builds the digit histogram of
 *                     every pass at once; when the bit range is detected
 *                     (b = 0) the same read takes the AND and OR of the keys
 *                     (see detect_plan; and_or_kernel reads a sample first
 *                     from 2^22 keys, or all keys when they prove narrow);
 *   bases_kernel      turns them into the first output index of each digit;
 *   onesweep_kernel   one launch per pass: a tile reads its keys, ranks them
 *                     inside the block (warp-level match, per-warp counters),
 *                     learns where its digits start in the output from the
 *                     tiles before it by decoupled look-back on per-digit
 *                     counts, stages the keys in shared memory in sorted
 *                     order and writes them out coalesced.
 * A pass reads each key once and writes it once; the key mapping of signed
 * and float keys is fused into the first pass's read and the last pass's
 * write.
 *
 * b and r are free: a pass sorts any digit of 1..11 bits with one of three
 * kernel shapes (8, 10 and 11-bit digit tables); a requested r above 11 is
 * carried out as the fewest passes of at most 11 bits that cover each r-bit
 * digit (a 2^16-entry digit table cannot live in one block's shared memory,
 * and the look-back would need 2^16 words per tile), which sorts the same.
 *
 * Sizes: any n. Tiles and look-back portions (at most kPortion keys) count
 * in 32 bits; the output positions (digit bases) are 32-bit up to 2^32
 * keys and 64-bit beyond (the pass kernel is instantiated for both offset
 * types, so the common sizes keep their 32-bit shared-memory bases).
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "gpk/cuda.h"
#include "radix_internal.h"
#include "../core/cuda_internal.h"
#include "radix_cuda_limits.h"

namespace {

/* ------------------------------------------------------------------------
 * Tuning: kernel shapes per (digit table bits, key bytes, value bytes) and
 * the default digit widths, as data in radix_cuda_tuning.h. A tuning
 * driver substitutes its own table with -DGPK_RADIX_CUDA_TUNING='"file.h"'
 * (bench/tuning/variant.py writes one).
 * ------------------------------------------------------------------------ */
struct PassShape {
    int radix_bits, key_bytes, value_bytes; /* what it is for */
    int threads, items, min_blocks;         /* the shape */
    /* pairs only: 1 loads a tile's values at its start beside its keys
     * (see onesweep_kernel), 0 after the ranking (not yet measured faster) */
    int values_early = 0;
};

/* Default pass plan: a bit range of up to max_bits bits is sorted in
 * passes of at most digit_bits bits, as few as possible and of equal width
 * (the last one narrower when they don't divide). */
struct DefaultDigits {
    unsigned key_bytes, max_bits, digit_bits;
};

#ifdef GPK_RADIX_CUDA_TUNING
#include GPK_RADIX_CUDA_TUNING
#else
#include "radix_cuda_tuning.h"
#endif

constexpr PassShape shape_for(int radix_bits, int key_bytes, int value_bytes)
{
    for (const PassShape &s : kPassShapes)
        if (s.radix_bits == radix_bits && s.key_bytes == key_bytes && s.value_bytes == value_bytes) return s;
    return PassShape{0, 0, 0, 0, 0, 0, 0};
}

/* The digit tables that exist as kernels; a pass of w bits uses the
 * smallest that holds it. */
constexpr unsigned kMaxDigitBits = 11;
static unsigned kernel_bits_for(unsigned width) { return width <= 8 ? 8 : width <= 10 ? 10 : 11; }
/* The single-launch path's largest n (GPK_RADIX_CUDA_SMALL_MAX_LOG is at most 24). */
constexpr unsigned kSmallMaxLog = 24;

#ifdef GPK_RADIX_CUDA_PORTION /* tests build small portions to exercise the portion logic */
constexpr uint32_t kPortion = GPK_RADIX_CUDA_PORTION;
#else
constexpr uint32_t kPortion = 1u << 29; /* keys per look-back portion: counts fit in 30 bits */
#endif
/* Above this many keys the passes use 64-bit output positions. */
#ifdef GPK_RADIX_CUDA_WIDE_FROM /* tests build 0 to run the 64-bit kernels on small inputs */
constexpr size_t kWideFrom = GPK_RADIX_CUDA_WIDE_FROM;
#else
constexpr size_t kWideFrom = UINT32_MAX;
#endif
/* Test builds only: every output position is moved up by this many (the
 * output pointers down by as many), so that small sorts write positions past
 * 2^32 through the 64-bit kernels, e.g. -DGPK_RADIX_CUDA_POS_OFFSET=4294966519
 * with -DGPK_RADIX_CUDA_WIDE_FROM=0. */
#ifdef GPK_RADIX_CUDA_POS_OFFSET
constexpr uint64_t kPosOffset = GPK_RADIX_CUDA_POS_OFFSET;
static_assert(kWideFrom == 0, "GPK_RADIX_CUDA_POS_OFFSET needs GPK_RADIX_CUDA_WIDE_FROM=0");
#else
constexpr uint64_t kPosOffset = 0;
#endif
constexpr uint32_t kFlagAggregate = 1u << 30;
constexpr uint32_t kNoDigit = 0xffffffffu; /* never a digit (at most 11 bits) */
constexpr uint32_t kFlagInclusive = 2u << 30;
constexpr uint32_t kCountMask = (1u << 30) - 1;
constexpr int kMaxPasses = 64;
/* Persistent pass kernels (see launch_pass) only for 8-byte keys without
 * values: the one case where the prefetch beat one block per tile
 * (docs/perf/radix.md, CUDA versions). */
static bool persistent_default(int key_bytes, bool has_values) { return key_bytes == 8 && !has_values; }

enum ValueMode { V_NONE = 0, V_LOAD = 1, V_IOTA = 2 };

/* The key maps as data (core/key_traits.h), so kernels need no switch on
 * the type. */
using gpk_key::Twiddle;
using gpk_key::twiddle;
using gpk_key::twiddle_map;
using gpk_key::twiddle_map_ordered;
using gpk_key::twiddle_unmap;
using gpk_key::twiddle_unmap_ordered;

/* The passes of one sort: pass p sorts bits [shift[p], shift[p] + width[p]). */
struct PassList {
    uint32_t count;
    uint32_t stride; /* 1 << widest pass: row length of the histogram tables */
    uint8_t shift[kMaxPasses];
    uint8_t width[kMaxPasses];
};

/* ------------------------------------------------------------------------
 * Device helpers
 * ------------------------------------------------------------------------ */
__device__ __forceinline__ uint32_t lanemask_lt()
{
    uint32_t m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/* Look-back words are read and written at device scope, past L1. */
__device__ __forceinline__ uint32_t load_relaxed(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_relaxed(uint32_t *p, uint32_t v)
{
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

template <class K> __device__ __forceinline__ uint32_t digit_of(K key, uint32_t shift, uint32_t mask)
{
    return (uint32_t)(key >> shift) & mask;
}

/* Lanes of the warp whose digit equals mine, from one ballot per digit bit
 * (cheaper than match.any.sync for narrow digits). Bits above the pass's
 * width are zero in every lane and leave the mask unchanged, so the loop
 * needs no bound check. */
template <int RB> __device__ __forceinline__ uint32_t match_digit(uint32_t d)
{
#ifdef GPK_RADIX_CUDA_MATCH_ANY
    return __match_any_sync(0xffffffffu, d);
#else
    uint32_t peers = 0xffffffffu;
#pragma unroll
    for (int b = 0; b < RB; b++) {
        /* peers &= (bit b of d set) ? ballot : ~ballot, in 4 instructions */
        asm("{\n\t"
            ".reg .pred p;\n\t"
            ".reg .b32 t;\n\t"
            "and.b32 t, %1, %2;\n\t"
            "setp.ne.u32 p, t, 0;\n\t"
            "vote.sync.ballot.b32 t, p, 0xffffffff;\n\t"
            "@!p not.b32 t, t;\n\t"
            "and.b32 %0, %0, t;\n\t"
            "}"
            : "+r"(peers)
            : "r"(d), "r"(1u << b));
    }
    return peers;
#endif
}

/* One item's rank in the warp's running count for its digit d, peers being
 * the lanes that share d: the highest of them advances the per-warp counter
 * for all, so ranks follow lane order (stability). */
__device__ __forceinline__ uint32_t rank_among_peers(uint32_t peers, uint16_t *wcount, uint32_t d, int lane,
                                                     uint32_t lt)
{
    const uint32_t below = __popc(peers & lt);
    const int leader = 31 - __clz(peers);
    uint32_t old = 0;
    if (lane == leader) {
        old = wcount[d];
        wcount[d] = (uint16_t)(old + below + 1);
    }
    return __shfl_sync(0xffffffffu, old, leader) + below;
}

template <class X> __device__ __forceinline__ X warp_inclusive_sum(X x, int lane)
{
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        X y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    return x;
}

/* ------------------------------------------------------------------------
 * Bit-range detection: AND and OR of all mapped keys.
 * ------------------------------------------------------------------------ */
template <class K>
__global__ void __launch_bounds__(256)
    and_or_kernel(const K *keys, size_t n, Twiddle<K> map, unsigned long long *out)
{
    K a = (K) ~(K)0, o = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        K x0 = keys[i], x1 = keys[i + stride], x2 = keys[i + 2 * stride], x3 = keys[i + 3 * stride];
        x0 = twiddle(map, x0);
        x1 = twiddle(map, x1);
        x2 = twiddle(map, x2);
        x3 = twiddle(map, x3);
        a &= x0 & x1 & x2 & x3;
        o |= x0 | x1 | x2 | x3;
    }
    for (; i < n; i += stride) {
        K x = twiddle(map, keys[i]);
        a &= x;
        o |= x;
    }
    unsigned long long a64 = (unsigned long long)a | (sizeof(K) == 4 ? 0xffffffff00000000ull : 0ull);
    unsigned long long o64 = (unsigned long long)o;
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        a64 &= __shfl_xor_sync(0xffffffffu, a64, s);
        o64 |= __shfl_xor_sync(0xffffffffu, o64, s);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAnd(&out[0], a64);
        atomicOr(&out[1], o64);
    }
}

/* ------------------------------------------------------------------------
 * Histograms of all passes in one read. Block-private tables in shared
 * memory; a warp whose 32 x 16 bytes hold one key value (few distinct keys
 * in long runs, e.g. PIC's second, nearly sorted sort) adds them with one
 * atomic per pass instead of 32-way conflicting ones.
 * ------------------------------------------------------------------------ */
template <class K, bool DETECT>
__global__ void __launch_bounds__(256)
    histogram_kernel(const K *keys, uint32_t n, Twiddle<K> map, PassList pl, unsigned long long *hist,
                     unsigned long long *and_or)
{
    K and_acc = (K) ~(K)0, or_acc = 0; /* DETECT: the bit range in the same read */
    extern __shared__ uint32_t table[];
    constexpr int KV = 16 / sizeof(K); /* keys per 16-byte load */
    const uint32_t entries = pl.count * pl.stride;
    for (uint32_t i = threadIdx.x; i < entries; i += blockDim.x) table[i] = 0;
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const uintptr_t addr = (uintptr_t)keys;
    uint32_t head = (uint32_t)(((16 - (addr & 15)) & 15) / sizeof(K));
    if (head > n) head = n;
    const uint32_t nvec = (n - head) / KV;
    const uint4 *vec = reinterpret_cast<const uint4 *>(keys + head);

    auto count_one = [&](K x) {
        x = twiddle(map, x);
        if (DETECT) {
            and_acc &= x;
            or_acc |= x;
        }
        for (uint32_t p = 0; p < pl.count; p++) {
            const uint32_t d = digit_of(x, pl.shift[p], (1u << pl.width[p]) - 1);
            atomicAdd(&table[p * pl.stride + d], 1u);
        }
    };
    if (blockIdx.x == 0) { /* unaligned head and the tail */
        for (uint32_t i = threadIdx.x; i < head; i += blockDim.x) count_one(keys[i]);
        for (uint32_t i = head + nvec * KV + threadIdx.x; i < n; i += blockDim.x) count_one(keys[i]);
    }

    const uint32_t warp_base = blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    const uint32_t grid_stride = gridDim.x * blockDim.x;
    for (uint32_t base = warp_base; base < nvec; base += 2 * grid_stride) {
        /* two 16-byte loads in flight per thread */
        uint4 raw[2];
        bool ok[2];
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const uint32_t v = base + u * grid_stride + lane;
            ok[u] = v < nvec;
            raw[u] = ok[u] ? vec[v] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < 2; u++) {
            K x[KV];
            memcpy(x, &raw[u], 16);
            bool same = true;
#pragma unroll
            for (int k = 1; k < KV; k++) same = same && x[k] == x[0];
            const K x_lane0 = __shfl_sync(0xffffffffu, x[0], 0);
            if (__all_sync(0xffffffffu, ok[u] && same && x[0] == x_lane0)) {
                /* the warp's 512 bytes hold one key: one add per pass */
                if (DETECT) {
                    const K m = twiddle(map, x[0]);
                    and_acc &= m;
                    or_acc |= m;
                }
                if (lane == 0) {
                    const K m = twiddle(map, x[0]);
                    for (uint32_t p = 0; p < pl.count; p++)
                        atomicAdd(&table[p * pl.stride + digit_of(m, pl.shift[p], (1u << pl.width[p]) - 1)],
                                  32u * KV);
                }
            } else if (ok[u]) {
#pragma unroll
                for (int k = 0; k < KV; k++) x[k] = twiddle(map, x[k]);
                if (DETECT) {
#pragma unroll
                    for (int k = 0; k < KV; k++) {
                        and_acc &= x[k];
                        or_acc |= x[k];
                    }
                }
                for (uint32_t p = 0; p < pl.count; p++) {
                    const uint32_t shift = pl.shift[p], mask = (1u << pl.width[p]) - 1;
                    uint32_t *row = table + p * pl.stride;
#pragma unroll
                    for (int k = 0; k < KV; k++) atomicAdd(&row[digit_of(x[k], shift, mask)], 1u);
                }
            }
        }
    }
    if (DETECT) {
        unsigned long long a64 =
            (unsigned long long)and_acc | (sizeof(K) == 4 ? 0xffffffff00000000ull : 0ull);
        unsigned long long o64 = (unsigned long long)or_acc;
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
            a64 &= __shfl_xor_sync(0xffffffffu, a64, s);
            o64 |= __shfl_xor_sync(0xffffffffu, o64, s);
        }
        if (lane == 0) {
            atomicAnd(&and_or[0], a64);
            atomicOr(&and_or[1], o64);
        }
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < entries; i += blockDim.x) {
        const uint32_t c = table[i];
        if (c) atomicAdd(&hist[i], (unsigned long long)c);
    }
}

/* ------------------------------------------------------------------------
 * Digit bases: for pass p (one block each), bases[p][d] = number of keys
 * with a smaller digit, the output index where digit d starts, as an O
 * (u32 when n <= 2^32). (Portions after the first get theirs from the pass
 * itself, see bases_next.)
 * ------------------------------------------------------------------------ */
template <class O>
__global__ void __launch_bounds__(1024)
    bases_kernel(const unsigned long long *hist, O *bases, PassList pl, unsigned long long first)
{
    typedef unsigned long long u64;
    __shared__ u64 warp_sums[32];
    const uint32_t p = blockIdx.x;
    const uint32_t digits = 1u << pl.width[p];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t d0 = 2 * threadIdx.x; /* two digits per thread: up to 2048 */
    const u64 *h = hist + p * pl.stride;
    const u64 t0 = d0 < digits ? h[d0] : 0, t1 = d0 + 1 < digits ? h[d0 + 1] : 0;
    const u64 mine = t0 + t1;
    const u64 incl = warp_inclusive_sum(mine, lane);
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    u64 before = first;
    for (int w = 0; w < warp; w++) before += warp_sums[w];
    O *b = bases + p * pl.stride;
    if (d0 < digits) b[d0] = (O)(before + incl - mine);
    if (d0 + 1 < digits) b[d0 + 1] = (O)(before + incl - mine + t0);
}

/* ------------------------------------------------------------------------
 * The Onesweep pass.
 * ------------------------------------------------------------------------ */
/* O: the type of output positions, u32 up to 2^32 keys, else u64. */
template <class K, class V, class O> struct PassArgs {
    const K *keys_in; /* this portion's keys */
    K *keys_out;      /* the whole output array */
    const V *vals_in;
    V *vals_out;
    uint32_t n;             /* keys in this portion */
    uint64_t iota_base;     /* index of the portion's first key (V_IOTA) */
    const O *bases;         /* [1 << width] first output index per digit */
    O *bases_next;          /* NULL, or the next portion's bases, written by the last tile */
    uint32_t *status;       /* [tiles][1 << width] look-back words, zeroed */
    uint32_t *tile_counter; /* zeroed */
    uint32_t shift, width;
    Twiddle<K> map_in, map_out;
    bool map_in_on, map_out_on; /* false: identity, skipped */
    bool persistent;            /* blocks loop over tiles (see launch_pass) */
    /* this pass's digit counts over all total keys (every portion), or
     * NULL: a pass with one digit is then a copy (onesweep_kernel) */
    const unsigned long long *hist_row;
    unsigned long long total;
};

/* A distributed pass of the multi-GPU sort (multi_cuda.cu): the digit
 * bases are global positions over every device's keys, and output position
 * p goes to destination j, bounds[j] <= p < bounds[j + 1], at keys[j][p]
 * (the pointer moved back by bounds[j]; a store through a UVA peer pointer
 * where j is another device). Unless it is the last pass, the pass also
 * counts the keys it sends to each destination by their next digit: the
 * destinations' digit counts of the next pass, which its global bases need
 * (in shared memory, added to one of kNextCopies tables in device memory at
 * the block's end; straight to that table where the counters would take
 * more than kNextShared words of shared memory). Passed by value to the
 * pass kernel's scattering instantiation only, which keeps a copy in shared
 * memory behind its usual tables: the owner of a position is then a few
 * shared loads (one compare for two devices). */
constexpr uint32_t kNextCopies = 64;
constexpr uint32_t kNextShared = 4096;
template <class K, class V, class O> struct Scatter {
    uint32_t k;
    O bounds[GPK_MAX_DEVICES];
    K *keys[GPK_MAX_DEVICES];
    V *vals[GPK_MAX_DEVICES];
    uint32_t next_shift, next_mask, next_digits;
    uint32_t *next_counts; /* NULL (last pass), or [kNextCopies][k][next_digits] */
    bool next_shared;
};
struct NoScatter {};
template <bool SC, class K, class V, class O> struct ScatterOf {
    using type = NoScatter;
};
template <class K, class V, class O> struct ScatterOf<true, K, V, O> {
    using type = Scatter<K, V, O>;
};

template <class K, class V, class O>
__device__ __forceinline__ uint32_t owner_of(const Scatter<K, V, O> *t, O pos)
{
    uint32_t j = 0;
    while (j + 1 < t->k && pos >= t->bounds[j + 1]) j++;
    return j;
}

/* key (mapped) goes to destination dst: count its next digit there */
template <class K, class V, class O>
__device__ __forceinline__ void count_next(const Scatter<K, V, O> *t, uint32_t *s_next, uint32_t dst, K key)
{
    if (!t->next_counts) return;
    const uint32_t e = dst * t->next_digits + ((uint32_t)(key >> t->next_shift) & t->next_mask);
    if (t->next_shared) atomicAdd(&s_next[e], 1u);
    else atomicAdd(&t->next_counts[(size_t)(blockIdx.x % kNextCopies) * t->k * t->next_digits + e], 1u);
}

/* BUILD_SWITCH(NAME): 1 when the build switch NAME is on (-DNAME, which
 * defines it as 1), else 0 (not defined, or defined as anything but 1): the
 * preprocessor's `defined` as a value a constexpr can take. Defined as 1,
 * NAME pastes into SWITCH_ON_1, which adds a leading argument and so moves
 * the 1 into second place; anything else leaves the 0 there. */
#define SWITCH_ON_1 0,
#define SWITCH_SECOND_(ignored, value, ...) value
#define SWITCH_PICK_(on_or_junk) SWITCH_SECOND_(on_or_junk 1, 0, 0)
#define SWITCH_VALUE_(value) SWITCH_PICK_(SWITCH_ON_##value)
#define BUILD_SWITCH(NAME) SWITCH_VALUE_(NAME)

/* Ranking inside a warp: ballot per digit bit (default), or an atomicOr of
 * lane bits into a per-warp mask per digit (fewer instructions for wide
 * digits, at the price of shared atomics). */
constexpr bool kRankAtomicOr = BUILD_SWITCH(GPK_RADIX_CUDA_RANK_ATOMIC_OR);

/* Pairs stage keys and values in one buffer, one after the other (keys
 * written out first, their digits kept in registers for the values): half
 * the shared memory of two buffers, so larger tiles at the same occupancy
 * (GPK_RADIX_CUDA_TWO_STAGES builds the two-buffer form). */
constexpr bool kOneStage = !BUILD_SWITCH(GPK_RADIX_CUDA_TWO_STAGES);

/* Tuning builds: every pairs row loads its values at tile start
 * (PassShape::values_early), whatever the table says. */
constexpr bool kValuesEarlyAll = BUILD_SWITCH(GPK_RADIX_CUDA_VALUES_EARLY);

template <int RB, class K, class V, int VM, class O> struct Shape {
    static constexpr PassShape s = shape_for(RB, (int)sizeof(K), VM == V_NONE ? 0 : (int)sizeof(V));
    static constexpr int T = s.threads, I = s.items, MIN_BLOCKS = s.min_blocks;
    static constexpr int W = T / 32, D = 1 << RB, TILE = T * I;
    static constexpr int BPT = (D + T - 1) / T; /* digits per thread in per-digit phases */
    static constexpr bool ONE_STAGE = kOneStage && VM != V_NONE;
    /* loaded values (not generated indices) come in with the keys */
    static constexpr bool VALUES_EARLY = VM == V_LOAD && (kValuesEarlyAll || s.values_early != 0);
    /* shared memory: [counters] [match masks] [staged keys] [staged values] [bases] [misc] */
    static constexpr size_t COUNTERS = ((size_t)W * D * sizeof(uint16_t) + 15) / 16 * 16;
    static constexpr size_t MASKS = kRankAtomicOr ? (size_t)W * D * sizeof(uint32_t) : 0;
    static constexpr size_t KEYS =
        ((size_t)TILE * (ONE_STAGE && sizeof(V) > sizeof(K) ? sizeof(V) : sizeof(K)) + 15) / 16 * 16;
    static constexpr size_t VALS = VM == V_NONE || ONE_STAGE ? 0 : ((size_t)TILE * sizeof(V) + 15) / 16 * 16;
    static constexpr size_t BASES = (size_t)D * sizeof(O);
    static constexpr size_t MISC = (W + 2) * sizeof(uint32_t);
    static constexpr size_t SMEM = COUNTERS + MASKS + KEYS + VALS + BASES + MISC;
    /* the scattering instantiation's table (Scatter) follows */
    static constexpr size_t SCATTER_AT = (SMEM + 15) / 16 * 16;
    static constexpr size_t SMEM_SCATTER = SCATTER_AT + (sizeof(Scatter<K, V, O>) + 15) / 16 * 16;
    /* then the next-digit counters, when in shared memory */
    static_assert(T > 0, "no shape in the tuning table for this kernel");
    static_assert(T % 32 == 0 && T <= 1024, "threads per block");
    static_assert(TILE < 65536, "ranks are kept in 16-bit counters");
};

/* Phase clocks of the pass kernel (builds with -DGPK_RADIX_CUDA_PROFILE):
 * thread 0's cycles per phase, summed over blocks into g_phase_cycles
 * (the last entry counts the blocks). Without the switch the clock is an
 * empty object and its calls compile to nothing. */
#ifdef GPK_RADIX_CUDA_PROFILE
__device__ unsigned long long g_phase_cycles[8];
struct PhaseClock {
    unsigned long long cycles[7] = {0, 0, 0, 0, 0, 0, 0};
    long long last = clock64();
    __device__ __forceinline__ void mark(int k)
    {
        if (threadIdx.x == 0) {
            const long long now = clock64();
            cycles[k] += (unsigned long long)(now - last);
            last = now;
        }
    }
    __device__ __forceinline__ void flush() const
    {
        if (threadIdx.x == 0) {
            for (int k = 0; k < 7; k++) atomicAdd(&g_phase_cycles[k], cycles[k]);
            atomicAdd(&g_phase_cycles[7], 1ull);
        }
    }
};
#else
struct PhaseClock {
    __device__ __forceinline__ void mark(int) {}
    __device__ __forceinline__ void flush() const {}
};
#endif

template <class K, int I>
__device__ __forceinline__ void load_tile(K (&key)[I], const K *keys_in, uint32_t tile_start,
                                          uint32_t lane_pos, uint32_t valid, bool full)
{
    const K *src = keys_in + tile_start + lane_pos;
    if (full) {
#pragma unroll
        for (int i = 0; i < I; i++) key[i] = src[i * 32];
    } else {
#pragma unroll
        for (int i = 0; i < I; i++) key[i] = lane_pos + i * 32 < valid ? src[i * 32] : (K)0;
    }
}

template <bool UNMAP, class K, class V, class O, bool HAS_V, int T, int I, bool SC>
__device__ __forceinline__ void write_out(const PassArgs<K, V, O> &a, const K *stage_keys,
                                          const V *stage_vals, const O *s_base, uint32_t valid, bool full,
                                          const Scatter<K, V, O> *tab, uint32_t *s_next)
{
    const uint32_t dmask = (1u << a.width) - 1;
#pragma unroll
    for (int j = 0; j < I; j++) {
        const uint32_t idx = threadIdx.x + j * T;
        if (full || idx < valid) {
            const K k = stage_keys[idx];
            const O pos = s_base[digit_of(k, a.shift, dmask)] + idx;
            if constexpr (SC) {
                const uint32_t dst = owner_of(tab, pos);
                tab->keys[dst][pos] = UNMAP ? twiddle(a.map_out, k) : k;
                if (HAS_V) tab->vals[dst][pos] = stage_vals[idx];
                count_next(tab, s_next, dst, k);
            } else {
                a.keys_out[pos] = UNMAP ? twiddle(a.map_out, k) : k;
                if (HAS_V) a.vals_out[pos] = stage_vals[idx];
            }
        }
    }
}

/* The phases of onesweep_tiles. Each takes what the body computes once
 * (thread, lane and warp numbers, the digit shift and mask) and runs where
 * the body calls it, in the body's order; inlined so, they compile to the
 * PTX of one body. Check a change to them the same way (docs/architecture.md,
 * "Function length"). */

/* Clears the warp counters (and the scatter's next-digit counters), copies
 * the scatter table to shared memory and takes the block's first tile into
 * s_misc[W], for the caller to read after a barrier. Tiles are numbered in the order blocks take them, not by blockIdx, so
 * every tile a block looks back on belongs to a block that is running. */
template <class S, bool SC, class K, class V, class O>
__device__ __forceinline__ void first_tile(const PassArgs<K, V, O> &a,
                                           typename ScatterOf<SC, K, V, O>::type sc, uint16_t *counters,
                                           uint32_t *masks, uint32_t *s_misc, Scatter<K, V, O> *tab,
                                           uint32_t *s_next, int tid)
{
    constexpr int T = S::T, W = S::W, D = S::D;
    for (int i = tid; i < W * D / 2; i += T) reinterpret_cast<uint32_t *>(counters)[i] = 0;
    if (kRankAtomicOr)
        for (int i = tid; i < W * D; i += T) masks[i] = 0;
    if (tid == 0) s_misc[W] = atomicAdd(a.tile_counter, 1u);
    if constexpr (SC) {
        if (tid == 0) *tab = sc;
        if (sc.next_counts && sc.next_shared)
            for (uint32_t i = tid; i < sc.k * sc.next_digits; i += T) s_next[i] = 0;
    }
}

/* The tile's keys as ranked: the first pass's key map applied, and the
 * padding keys given the largest digit, so that they rank after every real
 * key of the tile; they are never written. */
template <class K, class V, class O, int I>
__device__ __forceinline__ void prepare_keys(K (&key)[I], const PassArgs<K, V, O> &a, uint32_t lane_pos,
                                             uint32_t valid, bool full)
{
    if (a.map_in_on) {
#pragma unroll
        for (int i = 0; i < I; i++) key[i] = twiddle(a.map_in, key[i]);
    }
    if (!full) {
#pragma unroll
        for (int i = 0; i < I; i++)
            if (lane_pos + i * 32 >= valid) key[i] = (K) ~(K)0;
    }
}

/* A full tile whose keys all share one digit (constant, few-bit and narrow
 * keys, the top digits of sorted ones) keeps its input order: its ranks are
 * its positions and its one digit counts the whole tile, so the warp-level
 * matching is skipped. Every warp posts its digit, or kNoDigit where its
 * lanes differ, before the barrier; the tile is uniform when the warps post
 * one digit (the same answer in every thread: a block-uniform branch). */
template <int W, class K, int I>
__device__ __forceinline__ bool tile_uniform(const K (&key)[I], bool full, uint32_t shift, uint32_t dmask,
                                             uint32_t *s_misc, int lane, int warp)
{
    bool uniform = false;
    if (full) {
        const uint32_t d0 = digit_of(key[0], shift, dmask);
        bool same = true;
#pragma unroll
        for (int i = 1; i < I; i++) same = same && digit_of(key[i], shift, dmask) == d0;
        const uint32_t dw = __shfl_sync(0xffffffffu, d0, 0);
        const bool warp_same = __all_sync(0xffffffffu, same && d0 == dw);
        if (lane == 0) s_misc[warp] = warp_same ? dw : kNoDigit;
        __syncthreads();
        uniform = s_misc[0] != kNoDigit;
#pragma unroll
        for (int w = 1; w < W; w++) uniform = uniform && s_misc[w] == s_misc[0];
    }
    return uniform;
}

/* Rank inside the warp, item by item in lane order = input order
 * (stability): the lanes sharing a digit agree on the highest of them,
 * which advances the warp's counter for that digit. */
template <int RB, int D, class K, int I>
__device__ __forceinline__ void rank_in_warp(uint32_t (&rank)[I], const K (&key)[I], bool uniform,
                                             uint16_t *counters, uint32_t *masks, uint32_t shift,
                                             uint32_t dmask, int lane, int warp)
{
    if (uniform) {
        /* item i of lane l is the warp's (32 i + l)-th key */
#pragma unroll
        for (int i = 0; i < I; i++) rank[i] = (uint32_t)(i * 32 + lane);
        if (lane == 0) counters[warp * D + digit_of(key[0], shift, dmask)] = (uint16_t)(32 * I);
    } else {
        uint16_t *wcount = counters + warp * D;
        const uint32_t lt = lanemask_lt();
#pragma unroll
        for (int i = 0; i < I; i++) {
            const uint32_t d = digit_of(key[i], shift, dmask);
            uint32_t peers;
            if (kRankAtomicOr) {
                uint32_t *wmask = masks + warp * D;
                atomicOr(&wmask[d], 1u << lane);
                __syncwarp();
                peers = wmask[d];
            } else {
                peers = match_digit<RB>(d);
            }
            rank[i] = rank_among_peers(peers, wcount, d, lane, lt);
            if (kRankAtomicOr && lane == 31 - __clz(peers)) masks[warp * D + d] = 0;
            __syncwarp(); /* the next item's leader may be another lane */
        }
    }
}

/* Per digit (thread t owns digits t*BPT .. t*BPT+BPT-1): the tile's totals,
 * published at once (later tiles wait on them); where each digit starts in
 * the tile (an exclusive scan over digits); and the warp counters turned
 * into each warp's first rank per digit. */
template <class S, class K, class V, class O>
__device__ __forceinline__ void digit_starts(uint32_t (&total)[S::BPT], uint32_t (&start)[S::BPT],
                                             uint16_t *counters, uint32_t *s_misc, const PassArgs<K, V, O> &a,
                                             uint32_t tile, uint32_t digits, int tid, int lane, int warp)
{
    constexpr int W = S::W, D = S::D, BPT = S::BPT;
    uint32_t my_sum = 0;
#pragma unroll
    for (int u = 0; u < BPT; u++) {
        const int d = tid * BPT + u;
        total[u] = 0;
        if (d < D) {
#pragma unroll
            for (int w = 0; w < W; w++) total[u] += counters[w * D + d];
        }
        my_sum += total[u];
    }
#pragma unroll
    for (int u = 0; u < BPT; u++) {
        const uint32_t d = tid * BPT + u;
        if (d < digits)
            store_relaxed(&a.status[(size_t)tile * digits + d],
                          (tile == 0 ? kFlagInclusive : kFlagAggregate) | total[u]);
    }
    {
        const uint32_t incl = warp_inclusive_sum(my_sum, lane);
        if (lane == 31) s_misc[warp] = incl;
        __syncthreads();
        uint32_t run = incl - my_sum;
        for (int w = 0; w < warp; w++) run += s_misc[w];
#pragma unroll
        for (int u = 0; u < BPT; u++) {
            start[u] = run;
            run += total[u];
        }
    }
#pragma unroll
    for (int u = 0; u < BPT; u++) {
        const int d = tid * BPT + u;
        if (d < D) {
            uint32_t run = start[u];
#pragma unroll
            for (int w = 0; w < W; w++) {
                const uint32_t c = counters[w * D + d];
                counters[w * D + d] = (uint16_t)run;
                run += c;
            }
        }
    }
}

/* Each key's rank in the tile (its warp's first rank for its digit added);
 * the counters, once read, cleared for the next tile; the keys staged in
 * sorted order. */
template <class S, class K>
__device__ __forceinline__ void stage_keys_ranked(uint32_t (&rank)[S::I], const K (&key)[S::I],
                                                  uint16_t *counters, K *stage_keys, uint32_t shift,
                                                  uint32_t dmask, int tid, int warp)
{
    constexpr int I = S::I, W = S::W, D = S::D, BPT = S::BPT;
#pragma unroll
    for (int i = 0; i < I; i++) rank[i] += counters[warp * D + digit_of(key[i], shift, dmask)];
    __syncthreads();
#pragma unroll
    for (int u = 0; u < BPT; u++) {
        const int d = tid * BPT + u;
        if (d < D) {
#pragma unroll
            for (int w = 0; w < W; w++) counters[w * D + d] = 0;
        }
    }
#pragma unroll
    for (int i = 0; i < I; i++) stage_keys[rank[i]] = key[i];
}

/* The tile's values into val: loaded (in flight during the look-back), taken
 * from the early load, or generated indices. Keys only: the key registers
 * are free, so the next tile's keys start loading. */
template <class S, int VM, class K, class V, class O, int NV, int NE>
__device__ __forceinline__ void values_or_next_keys(V (&val)[NV], const V (&early_val)[NE], K (&key)[S::I],
                                                    const PassArgs<K, V, O> &a, uint32_t tile_start,
                                                    uint32_t lane_pos, uint32_t valid, bool full,
                                                    uint32_t next, uint32_t tiles, uint32_t next_start,
                                                    uint32_t next_valid)
{
    constexpr int I = S::I, TILE = S::TILE;
    if (VM == V_LOAD) {
        if (S::VALUES_EARLY) {
#pragma unroll
            for (int i = 0; i < I; i++) val[i] = early_val[i];
        } else {
            const V *src = a.vals_in + tile_start + lane_pos;
#pragma unroll
            for (int i = 0; i < I; i++)
                if (full || lane_pos + i * 32 < valid) val[i] = src[i * 32];
        }
    } else if (VM == V_IOTA) {
#pragma unroll
        for (int i = 0; i < I; i++) val[i] = (V)a.iota_base + (V)(tile_start + lane_pos + i * 32);
    } else if (next < tiles) {
        load_tile<K, I>(key, a.keys_in, next_start, lane_pos, next_valid, next_valid == (uint32_t)TILE);
    }
}

/* The tile's values staged in sorted order, and, the key registers being
 * free, the next tile's keys (and early values) loaded: the same step in
 * both write-out forms. */
template <class S, class K, class V, class O, int NV, int NE>
__device__ __forceinline__ void stage_values_load_next(V *stage_vals, const uint32_t (&rank)[S::I],
                                                       const V (&val)[NV], K (&key)[S::I], V (&early_val)[NE],
                                                       const PassArgs<K, V, O> &a, uint32_t next,
                                                       uint32_t tiles, uint32_t next_start, uint32_t lane_pos,
                                                       uint32_t next_valid)
{
    constexpr int I = S::I, TILE = S::TILE;
#pragma unroll
    for (int i = 0; i < I; i++) stage_vals[rank[i]] = val[i];
    if (next < tiles) {
        load_tile<K, I>(key, a.keys_in, next_start, lane_pos, next_valid, next_valid == (uint32_t)TILE);
        if constexpr (S::VALUES_EARLY)
            load_tile<V, I>(early_val, a.vals_in, next_start, lane_pos, next_valid,
                            next_valid == (uint32_t)TILE);
    }
}

/* One-stage write-out, keys: each thread writes the staged keys idx =
 * threadIdx.x + j T and keeps their digits, two 16-bit digits a register,
 * for the values that follow through the same buffer. */
template <class S, bool SC, class K, class V, class O>
__device__ __forceinline__ void write_keys_keep_digits(uint32_t (&digs)[(S::I + 1) / 2],
                                                       const PassArgs<K, V, O> &a, const K *stage_keys,
                                                       const O *s_base, uint32_t shift, uint32_t dmask,
                                                       uint32_t valid, bool full, const Scatter<K, V, O> *tab,
                                                       uint32_t *s_next)
{
    constexpr int T = S::T, I = S::I;
#pragma unroll
    for (int j = 0; j < I; j++) {
        const uint32_t idx = threadIdx.x + j * T;
        const K k = stage_keys[idx];
        const uint32_t d = digit_of(k, shift, dmask);
        digs[j / 2] = j % 2 == 0 ? d : (digs[j / 2] | d << 16);
        if (full || idx < valid) {
            if constexpr (SC) {
                const O pos = s_base[d] + idx;
                const uint32_t dst = owner_of(tab, pos);
                tab->keys[dst][pos] = a.map_out_on ? twiddle(a.map_out, k) : k;
                count_next(tab, s_next, dst, k);
            } else {
                a.keys_out[s_base[d] + idx] = a.map_out_on ? twiddle(a.map_out, k) : k;
            }
        }
    }
}

/* One-stage write-out, values: staged in the keys' places, written with the
 * digits write_keys_keep_digits kept. */
template <class S, bool SC, class K, class V, class O>
__device__ __forceinline__ void write_values_by_digits(const uint32_t (&digs)[(S::I + 1) / 2],
                                                       const PassArgs<K, V, O> &a, const V *stage_vals,
                                                       const O *s_base, uint32_t valid, bool full,
                                                       const Scatter<K, V, O> *tab)
{
    constexpr int T = S::T, I = S::I;
#pragma unroll
    for (int j = 0; j < I; j++) {
        const uint32_t idx = threadIdx.x + j * T;
        const uint32_t d = (digs[j / 2] >> (j % 2 * 16)) & 0xFFFFu;
        if (full || idx < valid) {
            if constexpr (SC) {
                const O pos = s_base[d] + idx;
                tab->vals[owner_of(tab, pos)][pos] = stage_vals[idx];
            } else {
                a.vals_out[s_base[d] + idx] = stage_vals[idx];
            }
        }
    }
}

/* The scatter's next-digit counts, kept in shared memory, added to one of
 * the tables in device memory at the block's end. */
template <int T, class K, class V, class O>
__device__ __forceinline__ void flush_next_counts(const Scatter<K, V, O> &sc, const uint32_t *s_next, int tid)
{
    if (sc.next_counts && sc.next_shared) {
        __syncthreads();
        const uint32_t entries = sc.k * sc.next_digits;
        uint32_t *g = sc.next_counts + (size_t)(blockIdx.x % kNextCopies) * entries;
        for (uint32_t i = tid; i < entries; i += T)
            if (s_next[i]) atomicAdd(&g[i], s_next[i]);
    }
}

/* The tile out (phases 5 and 6), after the look-back has set s_base, with
 * the next tile's keys (and early values) loaded on the way. ONE_STAGE: the
 * keys out with their digits kept, then the values through the same
 * buffer. Otherwise the values staged beside the keys, then both written by
 * consecutive threads taking consecutive sorted keys, so that a warp
 * writes a few contiguous runs. */
template <class S, bool SC, int VM, class K, class V, class O>
__device__ __forceinline__ void write_tile(const PassArgs<K, V, O> &a, K *stage_keys, V *stage_vals,
                                           O *s_base, uint32_t shift, uint32_t dmask, uint32_t valid,
                                           bool full, const Scatter<K, V, O> *tab, uint32_t *s_next,
                                           const uint32_t (&rank)[S::I], V (&val)[VM != V_NONE ? S::I : 1],
                                           K (&key)[S::I], V (&early_val)[S::VALUES_EARLY ? S::I : 1],
                                           uint32_t next, uint32_t tiles, uint32_t next_start,
                                           uint32_t lane_pos, uint32_t next_valid, PhaseClock &clock)
{
    constexpr int T = S::T, I = S::I;
    constexpr bool HAS_V = VM != V_NONE;
    if (S::ONE_STAGE) {
        __syncthreads();
        uint32_t digs[(I + 1) / 2];
        write_keys_keep_digits<S, SC>(digs, a, stage_keys, s_base, shift, dmask, valid, full, tab, s_next);
        __syncthreads();
        stage_values_load_next<S>(stage_vals, rank, val, key, early_val, a, next, tiles, next_start, lane_pos,
                                  next_valid);
        __syncthreads();
        clock.mark(5);
        write_values_by_digits<S, SC>(digs, a, stage_vals, s_base, valid, full, tab);
    } else {
        if (HAS_V)
            stage_values_load_next<S>(stage_vals, rank, val, key, early_val, a, next, tiles, next_start,
                                      lane_pos, next_valid);
        __syncthreads();
        clock.mark(5);
        if (a.map_out_on)
            write_out<true, K, V, O, HAS_V, T, I, SC>(a, stage_keys, stage_vals, s_base, valid, full, tab,
                                                      s_next);
        else
            write_out<false, K, V, O, HAS_V, T, I, SC>(a, stage_keys, stage_vals, s_base, valid, full, tab,
                                                       s_next);
    }
    clock.mark(6);
}

/* One pass over the tiles of a, in the S::SMEM bytes of shared memory at
 * smem: the body of onesweep_kernel, and of each pass of small_sort_kernel.
 * Persistent: each block takes tiles in the order of an atomic counter until
 * none is left, and loads its next tile's keys while it finishes the
 * current one (look-back and write-out), so the load latency is hidden. */
template <int RB, class K, class V, int VM, class O, bool SC>
__device__ __forceinline__ void onesweep_tiles(PassArgs<K, V, O> a, typename ScatterOf<SC, K, V, O>::type sc,
                                               unsigned char *smem)
{
    using S = Shape<RB, K, V, VM, O>;
    constexpr int T = S::T, I = S::I, W = S::W, D = S::D, TILE = S::TILE, BPT = S::BPT;
    constexpr bool HAS_V = VM != V_NONE;
    /* values loaded with their keys at tile start (S::VALUES_EARLY): both
     * loads in flight together, none after the ranking; the values stay in
     * registers through it and go out through the staging buffer with the
     * keys' ranks as before */
    constexpr bool EARLY = S::VALUES_EARLY;

    uint16_t *counters = reinterpret_cast<uint16_t *>(smem);              /* [W][D] */
    uint32_t *masks = reinterpret_cast<uint32_t *>(smem + S::COUNTERS);   /* [W][D], atomic-or ranking */
    K *stage_keys = reinterpret_cast<K *>(smem + S::COUNTERS + S::MASKS); /* [TILE], sorted order */
    V *stage_vals = reinterpret_cast<V *>(smem + S::COUNTERS + S::MASKS + (S::ONE_STAGE ? 0 : S::KEYS));
    O *s_base = reinterpret_cast<O *>(smem + S::COUNTERS + S::MASKS + S::KEYS + S::VALS);
    uint32_t *s_misc =
        reinterpret_cast<uint32_t *>(s_base + D); /* [W] warp sums, [W] this tile, [W+1] next tile */
    Scatter<K, V, O> *tab = reinterpret_cast<Scatter<K, V, O> *>(smem + S::SCATTER_AT); /* SC only */
    uint32_t *s_next = reinterpret_cast<uint32_t *>(smem + S::SMEM_SCATTER);            /* SC, next_shared */

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t shift = a.shift, width = a.width;
    const uint32_t dmask = (1u << width) - 1, digits = 1u << width;
    const uint32_t tiles = (a.n + TILE - 1) / TILE;
    const uint32_t lane_pos = (uint32_t)warp * 32 * I + lane;
    PhaseClock clock;

    first_tile<S, SC>(a, sc, counters, masks, s_misc, tab, s_next, tid);
    __syncthreads();
    uint32_t tile = s_misc[W];
    if (tile >= tiles) return;

    K key[I];
    V early_val[EARLY ? I : 1]; /* EARLY: the values of the tile whose keys are in key[] */
    load_tile<K, I>(key, a.keys_in, tile * TILE, lane_pos, min((uint32_t)TILE, a.n - tile * TILE),
                    a.n - tile * TILE >= (uint32_t)TILE);
    if constexpr (EARLY)
        load_tile<V, I>(early_val, a.vals_in, tile * TILE, lane_pos, min((uint32_t)TILE, a.n - tile * TILE),
                        a.n - tile * TILE >= (uint32_t)TILE);
    clock.mark(0);

    while (true) {
        const uint32_t tile_start = tile * TILE;
        const uint32_t valid = min((uint32_t)TILE, a.n - tile_start);
        const bool full = valid == (uint32_t)TILE;
        /* The next tile is taken now; a block holding it while it finishes
         * this one cannot deadlock: look-back only waits on lower tiles. */
        if (tid == 0) s_misc[W + 1] = a.persistent ? atomicAdd(a.tile_counter, 1u) : tiles;

        prepare_keys(key, a, lane_pos, valid, full);
        const bool uniform = tile_uniform<W>(key, full, shift, dmask, s_misc, lane, warp);
        uint32_t rank[I];
        rank_in_warp<RB, D>(rank, key, uniform, counters, masks, shift, dmask, lane, warp);
        __syncthreads();
        clock.mark(1);

        uint32_t total[BPT], start[BPT];
        digit_starts<S>(total, start, counters, s_misc, a, tile, digits, tid, lane, warp);
        __syncthreads();
        clock.mark(2);
        stage_keys_ranked<S>(rank, key, counters, stage_keys, shift, dmask, tid, warp);
        clock.mark(3);

        const uint32_t next = s_misc[W + 1];
        const uint32_t next_start = next * TILE;
        const uint32_t next_valid = next < tiles ? min((uint32_t)TILE, a.n - next_start) : 0;
        V val[HAS_V ? I : 1];
        values_or_next_keys<S, VM>(val, early_val, key, a, tile_start, lane_pos, valid, full, next, tiles,
                                   next_start, next_valid);
        /* Decoupled look-back: sum the counts of earlier tiles, digit by
         * digit, back to the first tile that published an inclusive count.
         * In the body: as a function of its own it changes the PTX. */
        {
            uint32_t excl[BPT];
            uint32_t back[BPT];
            bool pending[BPT];
#pragma unroll
            for (int u = 0; u < BPT; u++) {
                excl[u] = 0;
                back[u] = tile;
                pending[u] = tile > 0 && tid * BPT + u < (int)digits;
            }
            bool any = false;
#pragma unroll
            for (int u = 0; u < BPT; u++) any = any || pending[u];
            while (any) {
                uint32_t word[BPT];
#pragma unroll
                for (int u = 0; u < BPT; u++)
                    if (pending[u])
                        word[u] = load_relaxed(&a.status[(size_t)(back[u] - 1) * digits + tid * BPT + u]);
                any = false;
#pragma unroll
                for (int u = 0; u < BPT; u++) {
                    if (pending[u] && word[u] != 0) {
                        excl[u] += word[u] & kCountMask;
                        if (word[u] & kFlagInclusive) pending[u] = false;
                        else back[u]--;
                    }
                    any = any || pending[u];
                }
            }
            const bool last_tile = tile + 1 == tiles;
#pragma unroll
            for (int u = 0; u < BPT; u++) {
                const uint32_t d = tid * BPT + u;
                if (d < digits) {
                    if (tile > 0)
                        store_relaxed(&a.status[(size_t)tile * digits + d],
                                      kFlagInclusive | (excl[u] + total[u]));
                    const O base = a.bases[d];
                    /* output index of sorted tile position j with digit d:
                     * s_base[d] + j (modulo 2^32 or 2^64 on the way, exact at the end) */
                    s_base[d] = base + (O)excl[u] - (O)start[u];
                    /* The next portion's digits start after this portion's:
                     * the last tile knows the portion's inclusive counts
                     * (its padding keys, all of the largest digit, excluded). */
                    if (last_tile && a.bases_next)
                        a.bases_next[d] =
                            base + (O)(excl[u] + total[u] - (d == dmask ? (uint32_t)TILE - valid : 0u));
                }
            }
        }
        clock.mark(4);
        write_tile<S, SC, VM>(a, stage_keys, stage_vals, s_base, shift, dmask, valid, full, tab, s_next, rank,
                              val, key, early_val, next, tiles, next_start, lane_pos, next_valid, clock);
        if (next >= tiles) break;
        tile = next;
    }
    if constexpr (SC) flush_next_counts<T>(sc, s_next, tid);
    clock.flush();
}

/* Does one digit hold every key of the pass (its histogram row shows the
 * whole count in one entry)? The same answer in every block. */
__device__ __forceinline__ bool one_digit_pass(const unsigned long long *row, uint32_t digits,
                                               unsigned long long total)
{
    bool hit = false;
    for (uint32_t d = threadIdx.x; d < digits; d += blockDim.x) hit = hit || row[d] == total;
    return __syncthreads_or(hit) != 0;
}

/* A pass whose keys all have one digit moves every key to its own index:
 * a copy (with the first pass's key map and the last pass's inverse), no
 * ranking, no look-back. The pass kernel's shared memory keeps few blocks
 * resident, so each thread has U loads in flight before it stores: enough
 * bytes in flight to run at copy speed. */
template <class K, class V, int VM, class O>
__device__ __forceinline__ void copy_pass(const PassArgs<K, V, O> &a)
{
    constexpr int U = 64 / (int)sizeof(K);
    const size_t chunk = (size_t)blockDim.x * U;
    const size_t step = (size_t)gridDim.x * chunk;
    const size_t out0 = (size_t)kPosOffset + (size_t)a.iota_base;
    for (size_t base = (size_t)blockIdx.x * chunk + threadIdx.x; base < a.n; base += step) {
        K k[U];
        V v[VM == V_LOAD ? U : 1];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const size_t i = base + (size_t)u * blockDim.x;
            if (i < a.n) {
                k[u] = a.keys_in[i];
                if constexpr (VM == V_LOAD) v[u] = a.vals_in[i];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const size_t i = base + (size_t)u * blockDim.x;
            if (i < a.n) {
                K x = a.map_in_on ? twiddle(a.map_in, k[u]) : k[u];
                a.keys_out[out0 + i] = a.map_out_on ? twiddle(a.map_out, x) : x;
                if constexpr (VM == V_LOAD) a.vals_out[out0 + i] = v[u];
                else if constexpr (VM == V_IOTA) a.vals_out[out0 + i] = (V)(a.iota_base + i);
            }
        }
    }
}

template <int RB, class K, class V, int VM, class O, bool SC>
__global__ void __launch_bounds__(Shape<RB, K, V, VM, O>::T, Shape<RB, K, V, VM, O>::MIN_BLOCKS)
    onesweep_kernel(PassArgs<K, V, O> a, typename ScatterOf<SC, K, V, O>::type sc)
{
    extern __shared__ __align__(16) unsigned char smem[];
    if constexpr (!SC) {
        if (a.hist_row && one_digit_pass(a.hist_row, 1u << a.width, a.total)) {
            copy_pass<K, V, VM, O>(a);
            return;
        }
    }
    onesweep_tiles<RB, K, V, VM, O, SC>(a, sc, smem);
}

/* Hybrid sort: at most 2^kHybridMaxW buckets; kBigList big-bucket ids fit
 * the context's pinned read-back words with the two counts. */
constexpr unsigned kHybridMaxW = 16;
constexpr int kBigList = 6;

/* ------------------------------------------------------------------------
 * Hybrid sort (Stehle & Jacobsen 2017, in LSD form): two stable passes by
 * the top W bits of the range leave the keys grouped in 2^W buckets in
 * input order (an MSD partition); then one block per bucket sorts it on
 * chip by the remaining bits and writes it back in place. A u32 key at
 * 2^28 (W = 16) moves 4 (histogram) + 2 x 8 (passes) + 4 (bucket starts)
 * + 8 (finish) = 32 bytes, against 36 for four LSD passes, and the finish
 * has no look-back.
 * ------------------------------------------------------------------------ */
/* Two finish shapes, one launch each over every bucket: the small one takes
 * buckets of up to 4608 keys (uniform keys: 4096 on average), the large one
 * those of up to 12288 (gaussian keys: 2.7 times the average at the peak). */
constexpr int kFinRB = 8;
constexpr int kFinSmallT = 256, kFinSmallI = 18;
constexpr int kFinLargeT = 512, kFinLargeI = 24;
constexpr uint32_t kFinSmallCap = (uint32_t)kFinSmallT * kFinSmallI;
constexpr uint32_t kFinCap = (uint32_t)kFinLargeT * kFinLargeI;

/* bucket_start[b] = index of the first key whose window bits are >= b, for
 * b in [0, 2^wbits]; keys are sorted (and mapped) by their window bits. */
template <class K>
__global__ void __launch_bounds__(256)
    bucket_starts_kernel(const K *keys, uint32_t n, uint32_t shift, uint32_t wbits, uint32_t *bucket_start)
{
    const uint32_t nb = 1u << wbits, mask = nb - 1;
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += stride) {
        const uint32_t cur = i < n ? (uint32_t)(keys[i] >> shift) & mask : nb;
        const uint32_t first = i > 0 ? ((uint32_t)(keys[i - 1] >> shift) & mask) + 1 : 0;
        for (uint32_t b = first; b <= cur; b++) bucket_start[b] = i;
        if (i == n) break; /* n may be the last representable index */
    }
}

/* big[0] = buckets over the finish's capacity, big[1] = their keys,
 * big[2..] = the first kBigList of them. */
__global__ void __launch_bounds__(256)
    big_buckets_kernel(const uint32_t *bucket_start, uint32_t nb, uint32_t *big)
{
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x) {
        const uint32_t len = bucket_start[b + 1] - bucket_start[b];
        if (len > kFinCap) {
            const uint32_t k = atomicAdd(&big[0], 1u);
            atomicAdd(&big[1], len);
            if (k < (uint32_t)kBigList) big[2 + k] = b;
        }
    }
}

/* The largest count of each of the two window digits (hist rows 0 and 1,
 * low digit first), for the skew estimate before the window passes. */
__global__ void __launch_bounds__(256)
    window_max_kernel(const unsigned long long *hist, uint32_t stride, uint32_t low_digits,
                      uint32_t high_digits, uint32_t *out)
{
    /* the hybrid runs below 2^32 keys: every count fits 32 bits */
    uint32_t lo = 0, hi = 0;
    for (uint32_t d = threadIdx.x; d < low_digits; d += blockDim.x) lo = max(lo, (uint32_t)hist[d]);
    for (uint32_t d = threadIdx.x; d < high_digits; d += blockDim.x) hi = max(hi, (uint32_t)hist[stride + d]);
    atomicMax(&out[0], lo);
    atomicMax(&out[1], hi);
}

/* The per-warp digit counts counters[w * D + d] of W warps, each made the
 * warp's first rank among the block's keys of digit d, by the first D
 * threads (thread d: digit d; D a multiple of 32); warp_sums holds W words.
 * Syncs between the count and the rewrite and after the rewrite. */
template <int W, int D>
__device__ __forceinline__ void digit_offsets(uint16_t *counters, uint32_t *warp_sums, int tid, int lane,
                                              int warp)
{
    static_assert(D % 32 == 0, "whole warps take the per-digit branches");
    uint32_t total = 0, incl = 0;
    if (tid < D) {
#pragma unroll
        for (int w = 0; w < W; w++) total += counters[w * D + tid];
        incl = warp_inclusive_sum(total, lane);
        if (lane == 31) warp_sums[warp] = incl;
    }
    __syncthreads();
    if (tid < D) {
        uint32_t run = incl - total;
        for (int w = 0; w < warp; w++) run += warp_sums[w];
#pragma unroll
        for (int w = 0; w < W; w++) {
            const uint32_t c = counters[w * D + tid];
            counters[w * D + tid] = (uint16_t)run;
            run += c;
        }
    }
    __syncthreads();
}

/* One block per bucket: stable LSD passes of up to 8 bits in shared memory
 * over bits [begin, begin + rest_bits) of the mapped keys, ranked as in the
 * Onesweep pass (warp ballots, per-warp counters), then written back in
 * place, unmapped. Buckets over the capacity are left to the caller. */
template <class K, class V, bool HAS_V, int T, int I>
__global__ void __launch_bounds__(T, T >= 512 ? 1 : 3)
    bucket_finish_kernel(K *keys, V *vals, const uint32_t *bucket_start, uint32_t begin, uint32_t rest_bits,
                         uint32_t min_len, Twiddle<K> unmap, bool unmap_on)
{
    constexpr int NW = T / 32, D = 1 << kFinRB;
    constexpr uint32_t CAP = (uint32_t)T * I;
    static_assert(T >= D, "the per-digit phase gives one digit to each of the first D threads");
    __shared__ uint16_t counters[NW * D];
    __shared__ uint32_t warp_sums[NW];
    extern __shared__ __align__(16) unsigned char smem[];
    K *sk = reinterpret_cast<K *>(smem);
    V *sv = reinterpret_cast<V *>(smem + CAP * sizeof(K));

    const uint32_t s = bucket_start[blockIdx.x];
    const uint32_t len = bucket_start[blockIdx.x + 1] - s;
    if (len <= min_len || len > CAP) return;
    if (len == 1) {
        if (unmap_on && threadIdx.x == 0) keys[s] = twiddle(unmap, keys[s]);
        return;
    }
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t lane_pos = (uint32_t)warp * 32 * I + lane;
    /* items of this warp that hold a real key in some lane */
    const int warp_first = warp * 32 * I;
    const int live = (int)len <= warp_first ? 0 : min(I, ((int)len - warp_first + 31) / 32);

    K key[I];
    V val[HAS_V ? I : 1];
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t p = lane_pos + i * 32;
        key[i] = p < len ? keys[s + p] : (K) ~(K)0;
        if constexpr (HAS_V) val[i] = p < len ? vals[s + p] : V();
    }
    for (int i = tid; i < NW * D / 2; i += T) reinterpret_cast<uint32_t *>(counters)[i] = 0;

    __syncthreads();

    const uint32_t lt = lanemask_lt();
    for (uint32_t done = 0; done < rest_bits; done += kFinRB) {
        const uint32_t shift = begin + done;
        const uint32_t dmask = (1u << min((uint32_t)kFinRB, rest_bits - done)) - 1;
        uint32_t rank[I];
        uint16_t *wcount = counters + warp * D;
#pragma unroll
        for (int i = 0; i < I; i++) {
            rank[i] = 0;
            if (i < live) { /* padding-only items rank after everything and are never written */
                const uint32_t d = digit_of(key[i], shift, dmask);
                rank[i] = rank_among_peers(match_digit<kFinRB>(d), wcount, d, lane, lt);
                __syncwarp();
            }
        }
        __syncthreads();
        digit_offsets<NW, D>(counters, warp_sums, tid, lane, warp);
#pragma unroll
        for (int i = 0; i < I; i++)
            if (i < live) rank[i] += counters[warp * D + digit_of(key[i], shift, dmask)];
        __syncthreads();
        if (tid < D)
#pragma unroll
            for (int w = 0; w < NW; w++) counters[w * D + tid] = 0;
#pragma unroll
        for (int i = 0; i < I; i++)
            if (i < live) {
                sk[rank[i]] = key[i];
                if constexpr (HAS_V) sv[rank[i]] = val[i];
            }
        __syncthreads();
        if (done + kFinRB < rest_bits) {
#pragma unroll
            for (int i = 0; i < I; i++)
                if (i < live) {
                    key[i] = sk[lane_pos + i * 32];
                    if constexpr (HAS_V) val[i] = sv[lane_pos + i * 32];
                }
            __syncthreads();
        }
    }
#pragma unroll
    for (int j = 0; j < I; j++) {
        const uint32_t idx = tid + j * T;
        if (idx < len) {
            const K k = sk[idx];
            keys[s + idx] = unmap_on ? twiddle(unmap, k) : k;
            if constexpr (HAS_V) vals[s + idx] = sv[idx];
        }
    }
}

/* ------------------------------------------------------------------------
 * Host side
 * ------------------------------------------------------------------------ */
static uint32_t div_up(size_t a, size_t b) { return (uint32_t)((a + b - 1) / b); }

/* Which passes sort [begin, end) with r-bit digits (r = 0: the table's choice). */
static void make_plan(unsigned begin, unsigned end, unsigned radix_bits, unsigned key_bytes, PassList *pl)
{
    memset(pl, 0, sizeof *pl);
    const unsigned bits = end - begin;
    if (bits == 0) return;
    unsigned r = radix_bits;
    if (r == 0) {
        unsigned widest = 8;
        for (const DefaultDigits &d : kDefaultDigits)
            if (d.key_bytes == key_bytes && bits <= d.max_bits) {
                widest = d.digit_bits;
                break;
            }
        const unsigned passes = (bits + widest - 1) / widest;
        r = (bits + passes - 1) / passes;
    }
    unsigned widest = 0;
    for (unsigned lo = begin; lo < end; lo += r) {
        const unsigned w = std::min(r, end - lo);
        /* a digit wider than the widest kernel: the fewest narrower passes,
         * lowest bits first, which sorts the same */
        const unsigned parts = (w + kMaxDigitBits - 1) / kMaxDigitBits;
        unsigned sub_lo = lo;
        for (unsigned k = 0; k < parts; k++) {
            const unsigned sw = w / parts + (k < w % parts ? 1 : 0);
            pl->shift[pl->count] = (uint8_t)sub_lo;
            pl->width[pl->count] = (uint8_t)sw;
            pl->count++;
            sub_lo += sw;
            widest = std::max(widest, sw);
        }
    }
    pl->stride = 1u << widest;
}

/* Status words needed by the largest look-back table of any pass kernel for
 * these key/value widths, for one portion of min(n, kPortion) keys. */
static size_t status_bytes_max(size_t n, int kb, int vb, unsigned max_bits)
{
    const size_t pn = std::min(n, (size_t)kPortion);
    size_t most = 0;
    for (const PassShape &s : kPassShapes) {
        if (s.key_bytes != kb || s.value_bytes != vb) continue;
        if ((unsigned)s.radix_bits > kernel_bits_for(max_bits)) continue; /* no pass of this call uses it */
        const size_t tiles = (pn + (size_t)s.threads * s.items - 1) / ((size_t)s.threads * s.items);
        size_t bytes = tiles * ((size_t)1 << s.radix_bits) * sizeof(uint32_t);
        /* the single-launch path (8-bit digits) alternates two tables */
        if (s.radix_bits == 8 && n <= ((size_t)1 << kSmallMaxLog)) bytes *= 2;
        most = std::max(most, bytes);
    }
    return most;
}

/* Work memory of one sort, carved out of one block. */
struct Temp {
    unsigned long long *hist; /* [pass][stride] digit counts of all keys */
    void *bases;              /* [portion][pass][stride] first output index per digit (u32 or u64) */
    uint32_t *counters, *status;
    unsigned long long *and_or;
    uint32_t *bucket_start; /* hybrid: [2^kHybridMaxW + 1] first index of every bucket */
    uint32_t *big;          /* hybrid: [8] big-bucket count, their keys, up to kBigList ids */
    size_t status_bytes;
};

static size_t hybrid_table_bytes()
{
    return gpk__align_up((((size_t)1 << kHybridMaxW) + 1) * sizeof(uint32_t), 256);
}

/* The tables' extent: passes x 2^bits digits. A plan's tables are indexed
 * [pass][stride] with stride = 2^(its widest digit), so a plan fits tables
 * of at least its passes and its widest digit. The defaults fit every plan
 * (the detected ones and the hybrid's included). */
struct TableSize {
    size_t passes = kMaxPasses;
    unsigned bits = kMaxDigitBits;
    bool hybrid = true; /* the hybrid's bucket table too */
};

static size_t table_bytes(size_t portions, const TableSize &ts)
{
    return gpk__align_up(portions * ts.passes * ((size_t)1 << ts.bits) * sizeof(uint64_t), 256);
}

/* max_bits: the widest digit any pass of the call may have (the look-back
 * table grows with it: 8 times larger for 11-bit digits than for 8-bit). */
static size_t temp_bytes(size_t n, int kb, int vb, unsigned max_bits = kMaxDigitBits,
                         const TableSize &ts = TableSize())
{
    const size_t portions = std::max<size_t>(1, div_up(n, kPortion));
    return table_bytes(1, ts) + table_bytes(portions, ts) +
        gpk__align_up(portions * ts.passes * sizeof(uint32_t), 256) +
        gpk__align_up(status_bytes_max(n, kb, vb, max_bits), 256) + 256 +
        (ts.hybrid ? hybrid_table_bytes() + 256 : 0);
}

/* hist: [pass][stride] over all keys; bases: [portion][pass][stride]. */
static Temp carve_temp(void *base, size_t n, int kb, int vb, unsigned max_bits = kMaxDigitBits,
                       const TableSize &ts = TableSize())
{
    const size_t portions = std::max<size_t>(1, div_up(n, kPortion));
    char *p = (char *)base;
    Temp t;
    t.hist = (unsigned long long *)p;
    p += table_bytes(1, ts);
    t.bases = p;
    p += table_bytes(portions, ts);
    t.counters = (uint32_t *)p;
    p += gpk__align_up(portions * ts.passes * sizeof(uint32_t), 256);
    t.status_bytes = gpk__align_up(status_bytes_max(n, kb, vb, max_bits), 256);
    t.status = (uint32_t *)p;
    p += t.status_bytes;
    t.and_or = (unsigned long long *)p;
    p += 256;
    t.bucket_start = ts.hybrid ? (uint32_t *)p : NULL;
    p += ts.hybrid ? hybrid_table_bytes() : 0;
    t.big = ts.hybrid ? (uint32_t *)p : NULL;
    return t;
}

/* Grid form of the pass kernel. */
static bool use_persistent(int key_bytes, bool has_values)
{
    return persistent_default(key_bytes, has_values);
}

/* The multi-GPU sort's scattering passes: persistent blocks for keys
 * without values, so that the next-digit counters go to device memory once
 * per resident block, not once per tile (per tile, a pass over 2^30 u32
 * keys would add 2^30 / 6144 tiles x 512 counters = 9e7 atomics; the
 * persistent form cost u32 keys about 2 % on one GPU, pairs 30 %). */
static bool dist_persistent(bool has_values) { return !has_values; }

/* A kernel's launch set-up, remembered per device: the shared-memory
 * attribute and the occupancy query cost more host time than a small
 * launch (the partition-first plans issue hundreds of bucket sorts of a
 * few passes each, and asking every launch cost tens of microseconds of
 * host time a bucket sort: docs/perf/radix.md). The attribute is only ever raised,
 * under one lock, so that it never falls below what a remembered size
 * needs; the occupancy is kept for the last size asked. Devices from
 * kSetupDevices on ask every time. */
constexpr int kSetupDevices = 64;
struct LaunchSetup {
    std::atomic<uint32_t> smem_set[kSetupDevices];  /* the attribute's value on the device (0: not set) */
    std::atomic<uint64_t> occupancy[kSetupDevices]; /* (shared memory << 32) | blocks per SM + 1; 0: none */
};
static std::mutex launch_setup_lock;

static cudaError_t launch_setup(LaunchSetup &memo, const void *kernel, int threads, size_t smem, int *per_sm)
{
    int device = -1;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return e;
    if (device < 0 || device >= kSetupDevices || smem > UINT32_MAX) {
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        return e == cudaSuccess ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem)
                                : e;
    }
    if (memo.smem_set[device].load(std::memory_order_acquire) < smem) {
        std::lock_guard<std::mutex> hold(launch_setup_lock);
        if (memo.smem_set[device].load(std::memory_order_relaxed) < smem) {
            e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            if (e != cudaSuccess) return e;
            memo.smem_set[device].store((uint32_t)smem, std::memory_order_release);
        }
    }
    const uint64_t known = memo.occupancy[device].load(std::memory_order_relaxed);
    if (known && (known >> 32) == smem) {
        *per_sm = (int)(uint32_t)known - 1;
        return cudaSuccess;
    }
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem);
    if (e == cudaSuccess && *per_sm >= 0)
        memo.occupancy[device].store(((uint64_t)smem << 32) | (uint32_t)(*per_sm + 1),
                                     std::memory_order_relaxed);
    return e;
}

template <int RB, class K, class V, int VM, class O, bool SC>
static cudaError_t launch_pass(const PassArgs<K, V, O> &a, const typename ScatterOf<SC, K, V, O>::type &sc,
                               int sm_count, cudaStream_t stream)
{
    using S = Shape<RB, K, V, VM, O>;
    auto kernel = onesweep_kernel<RB, K, V, VM, O, SC>;
    size_t smem = S::SMEM;
    if constexpr (SC)
        smem = S::SMEM_SCATTER + (sc.next_counts && sc.next_shared ? sc.k * sc.next_digits * 4 : 0);
    static LaunchSetup memo;
    int per_sm = 0;
    cudaError_t e = launch_setup(memo, (const void *)kernel, S::T, smem, &per_sm);
    if (e != cudaSuccess) return e;
    /* Persistent: as many blocks as run at once, each looping over tiles
     * handed out by an atomic counter and loading the next tile's keys
     * during the current one's look-back. Otherwise one block per tile
     * (still numbered by the counter), which leaves the registers of the
     * prefetch to occupancy; which wins depends on the shape (see
     * docs/perf/radix.md). */
    const uint32_t tiles = div_up(a.n, S::TILE);
    const uint32_t resident = (uint32_t)std::max(1, per_sm) * (uint32_t)sm_count;
    PassArgs<K, V, O> b = a;
    b.persistent = SC ? dist_persistent(VM != V_NONE) : use_persistent((int)sizeof(K), VM != V_NONE);
    const uint32_t blocks = b.persistent ? std::min<uint32_t>(tiles, resident) : tiles;
    kernel<<<blocks, S::T, smem, stream>>>(b, sc);
    return cudaGetLastError();
}

template <int RB, class K, class V, int VM, class O>
static cudaError_t memset_status(const PassArgs<K, V, O> &a, cudaStream_t stream)
{
    using S = Shape<RB, K, V, VM, O>;
    const size_t words = (size_t)div_up(a.n, S::TILE) << a.width;
    return cudaMemsetAsync(a.status, 0, words * sizeof(uint32_t), stream);
}

template <class K, class V, int VM, class O, bool SC = false>
static cudaError_t run_pass(const PassArgs<K, V, O> &a, int sm_count, cudaStream_t stream,
                            const typename ScatterOf<SC, K, V, O>::type &sc = {})
{
    cudaError_t e;
    switch (kernel_bits_for(a.width)) {
    case 8:
        e = memset_status<8, K, V, VM, O>(a, stream);
        return e != cudaSuccess ? e : launch_pass<8, K, V, VM, O, SC>(a, sc, sm_count, stream);
    case 10:
        e = memset_status<10, K, V, VM, O>(a, stream);
        return e != cudaSuccess ? e : launch_pass<10, K, V, VM, O, SC>(a, sc, sm_count, stream);
    default:
        e = memset_status<11, K, V, VM, O>(a, stream);
        return e != cudaSuccess ? e : launch_pass<11, K, V, VM, O, SC>(a, sc, sm_count, stream);
    }
}

/* Where every pass reads and writes: bufs[p] is pass p's input, bufs[p+1]
 * its output. */
struct Route {
    const void *keys[kMaxPasses + 1];
    const void *vals[kMaxPasses + 1];
};

/* A sort request in device memory. */
struct DeviceJob {
    gpk_type type;
    int kb, vb; /* key bytes, value bytes (0: none) */
    int vmode;  /* V_NONE, V_LOAD or V_IOTA (sigma: input positions, u32 or u64 as vb) */
    size_t n;
    /* false: the first pass reads keys already mapped / the last pass
     * leaves them mapped (the hybrid sort's window passes and fallbacks) */
    bool map_in = true, map_out = true;
    /* output positions up to this many (the multi-GPU sort's last pass
     * writes global positions), else n */
    size_t positions = 0;
    /* the separate launches even where the small path would apply (the
     * multi-GPU sort's bucket sorts run side by side on several streams;
     * one cooperative launch would take every SM) */
    bool no_small = false;
    /* descending order, folded into the first pass's map and the last
     * pass's unmap (key_bits: the keys' significant bits, 0 for all) */
    bool desc = false;
    unsigned key_bits = 0;
};

/* The job's map to sort keys and its inverse; whether the passes apply
 * them (the plain unsigned types ascending need none). */
template <class K> static Twiddle<K> job_map(const DeviceJob &job)
{
    return twiddle_map_ordered<K>(job.type, job.desc, job.key_bits);
}
template <class K> static Twiddle<K> job_unmap(const DeviceJob &job)
{
    return twiddle_unmap_ordered<K>(job.type, job.desc, job.key_bits);
}
static bool job_plain(const DeviceJob &job)
{
    return !job.desc && (job.type == GPK_U32 || job.type == GPK_U64);
}

/* 64-bit output positions (the O of the pass kernels and the bases) */
static bool wide_positions(const DeviceJob &job) { return std::max(job.n, job.positions) > kWideFrom; }

/* Picks the route for buffers in -> out with spares alt1, alt2 so that the
 * last pass lands in out without a copy where possible. *copy_from is the
 * buffer to copy to out afterwards (one pass in place), else NULL. */
static void route_buffers(const void *in, void *out, void *alt1, void *alt2, int passes, const void **bufs,
                          const void **copy_from)
{
    *copy_from = NULL;
    bufs[0] = in;
    if (in != out || passes % 2 == 0) {
        /* pass p writes out when an even number of passes follow it */
        for (int p = 0; p < passes; p++) bufs[p + 1] = ((passes - 1 - p) % 2 == 0) ? out : alt1;
    } else if (passes >= 3) {
        /* in place, odd count: one detour through alt2 fixes the parity */
        bufs[1] = alt1;
        bufs[2] = alt2;
        for (int p = 2; p < passes; p++) bufs[p + 1] = ((passes - 1 - p) % 2 == 0) ? out : alt1;
    } else {
        bufs[1] = alt1;
        *copy_from = alt1;
    }
}

/* The bit range [begin, end) where the mapped keys differ, from the AND and
 * OR in t.and_or (waits for the stream). */
template <class K>
static gpk_status read_range(gpk_ctx *ctx, Temp &t, cudaStream_t stream, unsigned *begin, unsigned *end,
                             unsigned long long *varying = NULL)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e =
        cudaMemcpyAsync(st->pinned, t.and_or, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bit-range read-back");
    unsigned long long and_all = st->pinned[0], or_all = st->pinned[1];
    if (sizeof(K) == 4) { /* the kernels pad 32-bit ANDs with ones above bit 31 */
        and_all &= 0xffffffffull;
        or_all &= 0xffffffffull;
    }
    gpk__radix_range_from_masks(and_all, or_all, begin, end);
    if (varying) *varying = and_all ^ or_all;
    return GPK_OK;
}

template <class K>
static gpk_status detect_range(gpk_ctx *ctx, const DeviceJob &job, const void *keys, Temp &t,
                               cudaStream_t stream, unsigned *begin, unsigned *end,
                               unsigned long long *varying = NULL)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e = cudaMemsetAsync(&t.and_or[0], 0xff, sizeof(unsigned long long), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(&t.and_or[1], 0, sizeof(unsigned long long), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: cudaMemsetAsync");
    const int blocks =
        (int)std::max<size_t>(1, std::min<size_t>((size_t)st->sm_count * 8, (job.n + 1023) / 1024));
    and_or_kernel<K><<<blocks, 256, 0, stream>>>((const K *)keys, job.n, job_map<K>(job), t.and_or);
    e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bit-range kernel launch");
    return read_range<K>(ctx, t, stream, begin, end, varying);
}

/* The digit histograms of every pass in one read of keys, and the first
 * portion's digit bases. */
template <class K, bool DETECT = false>
static gpk_status run_histogram(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const void *keys,
                                Temp &t, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    const size_t n = job.n;
    const uint32_t portions = div_up(n, kPortion);
    const size_t row = (size_t)pl.count * pl.stride;
    cudaError_t e = cudaMemsetAsync(t.hist, 0, row * sizeof(unsigned long long), stream);
    if (DETECT && e == cudaSuccess)
        e = cudaMemsetAsync(&t.and_or[0], 0xff, sizeof(unsigned long long), stream);
    if (DETECT && e == cudaSuccess) e = cudaMemsetAsync(&t.and_or[1], 0, sizeof(unsigned long long), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: cudaMemsetAsync");
    const Twiddle<K> map = job_map<K>(job);
    const Twiddle<K> none = {0, 0, 0, 0};
    const size_t smem = row * sizeof(uint32_t);
    static LaunchSetup memo;
    int per_sm = 0;
    e = launch_setup(memo, (const void *)histogram_kernel<K, DETECT>, 256, smem, &per_sm);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: histogram kernel setup");
    for (uint32_t q = 0; q < portions; q++) {
        const uint32_t pn = (uint32_t)std::min((size_t)kPortion, n - (size_t)q * kPortion);
        const int blocks = std::max(
            1, std::min(st->sm_count * std::max(per_sm, 1), (int)div_up(pn, 256 * 16 / sizeof(K) * 2)));
        histogram_kernel<K, DETECT><<<blocks, 256, smem, stream>>>(
            (const K *)keys + (size_t)q * kPortion, pn, job.map_in ? map : none, pl, t.hist, t.and_or);
        e = cudaGetLastError();
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: histogram kernel launch");
    }
    if (wide_positions(job))
        bases_kernel<uint64_t><<<pl.count, 1024, 0, stream>>>(t.hist, (uint64_t *)t.bases, pl, kPosOffset);
    else bases_kernel<uint32_t><<<pl.count, 1024, 0, stream>>>(t.hist, (uint32_t *)t.bases, pl, 0);
    e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bases kernel launch");
    return GPK_OK;
}

/* ------------------------------------------------------------------------
 * One tile in one block: inputs of at most one pass tile (a few thousand
 * keys) are sorted by a single block of one launch, the keys in registers
 * and shared memory through every pass: no histogram, no look-back, no
 * grid barrier, no table to clear. Each pass ranks the keys as
 * onesweep_tiles does (warp-level matching, per-warp counters), stages them
 * in shared memory in sorted order and reads them back in the load layout,
 * which is then the next pass's input order. Padding keys take the largest
 * digit of every pass, so they stay behind every real key.
 * ------------------------------------------------------------------------ */
template <class K> struct TileArgs {
    const K *keys_in;
    K *keys_out;
    const void *vals_in; /* V_LOAD */
    void *vals_out;
    uint32_t n;
    PassList pl;
    Twiddle<K> map_in, map_out;
    bool map_in_on, map_out_on;
};

/* 1024 threads of 4 keys: each pass ranks 4 keys a thread one after the
 * other, where a pass tile's shape would rank 12 to 24; a tiny sort is
 * latency, not bandwidth. */
constexpr int kTileSortThreads = 1024, kTileSortKeys = 4096;
template <class K, class V, int VM> struct TileSmem {
    static constexpr int T = kTileSortThreads, I = kTileSortKeys / T, W = T / 32, TILE = T * I;
    static constexpr size_t COUNTERS = ((size_t)W * 256 * sizeof(uint16_t) + 15) / 16 * 16;
    static constexpr size_t KEYS = ((size_t)TILE * sizeof(K) + 15) / 16 * 16;
    static constexpr size_t VALS = VM == V_NONE ? 0 : ((size_t)TILE * sizeof(V) + 15) / 16 * 16;
    static constexpr size_t BYTES = COUNTERS + KEYS + VALS + (size_t)W * sizeof(uint32_t);
};

template <class K, class V, int VM>
__global__ void __launch_bounds__(kTileSortThreads) tile_sort_kernel(TileArgs<K> a)
{
    using M = TileSmem<K, V, VM>;
    constexpr int T = M::T, I = M::I, W = M::W, D = 256;
    constexpr bool HAS_V = VM != V_NONE;
    static_assert(T >= D, "a thread per digit");
    extern __shared__ __align__(16) unsigned char smem[];
    uint16_t *counters = reinterpret_cast<uint16_t *>(smem); /* [W][D] */
    K *sk = reinterpret_cast<K *>(smem + M::COUNTERS);
    V *sv = reinterpret_cast<V *>(smem + M::COUNTERS + M::KEYS);
    uint32_t *s_warp = reinterpret_cast<uint32_t *>(smem + M::COUNTERS + M::KEYS + M::VALS);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t lane_pos = (uint32_t)warp * 32 * I + lane;
    K key[I];
    V val[HAS_V ? I : 1];
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t idx = lane_pos + i * 32;
        if (idx < a.n) {
            const K k = a.keys_in[idx];
            key[i] = a.map_in_on ? twiddle(a.map_in, k) : k;
        } else {
            key[i] = (K) ~(K)0;
        }
        if constexpr (VM == V_LOAD) val[i] = idx < a.n ? static_cast<const V *>(a.vals_in)[idx] : (V)0;
        else if constexpr (VM == V_IOTA) val[i] = (V)idx;
    }
    for (int c = tid; c < W * D / 2; c += T) reinterpret_cast<uint32_t *>(counters)[c] = 0;
    __syncthreads();

    for (uint32_t p = 0; p < a.pl.count; p++) {
        const uint32_t shift = a.pl.shift[p], dmask = (1u << a.pl.width[p]) - 1;
        uint32_t rank[I];
        {
            uint16_t *wcount = counters + warp * D;
            const uint32_t lt = lanemask_lt();
#pragma unroll
            for (int i = 0; i < I; i++) {
                const uint32_t d = digit_of(key[i], shift, dmask);
                rank[i] = rank_among_peers(match_digit<8>(d), wcount, d, lane, lt);
                __syncwarp();
            }
        }
        __syncthreads();
        digit_offsets<W, D>(counters, s_warp, tid, lane, warp);
#pragma unroll
        for (int i = 0; i < I; i++) rank[i] += counters[warp * D + digit_of(key[i], shift, dmask)];
        __syncthreads();
        if (tid < D)
            for (int w = 0; w < W; w++) counters[w * D + tid] = 0;
#pragma unroll
        for (int i = 0; i < I; i++) {
            sk[rank[i]] = key[i];
            if constexpr (HAS_V) sv[rank[i]] = val[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < I; i++) {
            key[i] = sk[lane_pos + i * 32];
            if constexpr (HAS_V) val[i] = sv[lane_pos + i * 32];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < I; i++) {
        const uint32_t idx = lane_pos + i * 32;
        if (idx < a.n) {
            a.keys_out[idx] = a.map_out_on ? twiddle(a.map_out, key[i]) : key[i];
            if constexpr (HAS_V) static_cast<V *>(a.vals_out)[idx] = val[i];
        }
    }
}

template <class K, class V, int VM> static cudaError_t launch_tile(const TileArgs<K> &a, cudaStream_t stream)
{
    using M = TileSmem<K, V, VM>;
    auto kernel = tile_sort_kernel<K, V, VM>;
    static LaunchSetup memo;
    int per_sm = 0;
    cudaError_t e = launch_setup(memo, (const void *)kernel, M::T, M::BYTES, &per_sm);
    if (e != cudaSuccess) return e;
    if (per_sm < 1) return cudaErrorNotSupported;
    kernel<<<1, M::T, M::BYTES, stream>>>(a);
    return cudaGetLastError();
}

/* Does the one-block sort take a whole call of n keys of kb bytes (values
 * of vb bytes, 0 for none) with this plan? The tests of run_tile, made
 * before any temp is asked for: where it does, the call needs no temp (and
 * asks for 1 byte, as CUB's single-tile path). The caller has set the
 * device. */
template <class K, class V, int VM> static bool tile_kernel_fits()
{
    using M = TileSmem<K, V, VM>;
    static LaunchSetup memo;
    int per_sm = 0;
    const cudaError_t e =
        launch_setup(memo, (const void *)tile_sort_kernel<K, V, VM>, M::T, M::BYTES, &per_sm);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e == cudaSuccess && per_sm >= 1;
}

/* The plan and size the one-block sort can take at all (n > 0). */
static bool tile_plan_ok(gpk_ctx *ctx, size_t n, const PassList &pl)
{
    return gpk__radix_cuda_limits(ctx)->small_max_log > 0 && n > 0 && n <= (size_t)kTileSortKeys &&
        pl.count > 0 && pl.stride <= 256 && kPosOffset == 0;
}

static bool tile_takes(gpk_ctx *ctx, size_t n, int kb, int vb, const PassList &pl)
{
    if (n < 2 || !tile_plan_ok(ctx, n, pl)) return false;
    if (kb == 4)
        return vb == 0 ? tile_kernel_fits<uint32_t, uint32_t, V_NONE>()
            : vb == 4  ? tile_kernel_fits<uint32_t, uint32_t, V_LOAD>()
                       : tile_kernel_fits<uint32_t, uint64_t, V_LOAD>();
    return vb == 0 ? tile_kernel_fits<uint64_t, uint32_t, V_NONE>()
        : vb == 4  ? tile_kernel_fits<uint64_t, uint32_t, V_LOAD>()
                   : tile_kernel_fits<uint64_t, uint64_t, V_LOAD>();
}

/* The whole sort of run_passes_o as one block, where n fits its tile (4096
 * keys) and every digit has at most 8 bits; *ran says whether
 * it did. Off with the small path (test hook radix_cuda_small=0), so that the
 * separate launches stay testable at every size. */
template <class K, class V>
static gpk_status run_tile(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const Route &route,
                           cudaStream_t stream, bool *ran)
{
    *ran = false;
    const int vm = job.vmode;
    if (job.no_small || !tile_plan_ok(ctx, job.n, pl) || job.positions > job.n) return GPK_OK;
    const bool plain = job_plain(job);
    TileArgs<K> a;
    memset(&a, 0, sizeof a);
    a.keys_in = (const K *)route.keys[0];
    a.keys_out = (K *)const_cast<void *>(route.keys[pl.count]);
    a.vals_in = route.vals[0];
    a.vals_out = const_cast<void *>(route.vals[pl.count]);
    a.n = (uint32_t)job.n;
    a.pl = pl;
    a.map_in = job_map<K>(job);
    a.map_out = job_unmap<K>(job);
    a.map_in_on = !plain && job.map_in;
    a.map_out_on = !plain && job.map_out;
    cudaError_t e;
    if constexpr (sizeof(V) == 4) {
        if (vm == V_NONE) e = launch_tile<K, V, V_NONE>(a, stream);
        else if (vm == V_IOTA) e = launch_tile<K, V, V_IOTA>(a, stream);
        else e = launch_tile<K, V, V_LOAD>(a, stream);
    } else {
        if (vm == V_IOTA) e = launch_tile<K, V, V_IOTA>(a, stream);
        else e = launch_tile<K, V, V_LOAD>(a, stream);
    }
    if (e == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        return GPK_OK;
    }
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: one-tile launch");
    *ran = true;
    ctx->last_sort_path = "radix-tile";
    return GPK_OK;
}

/* ------------------------------------------------------------------------
 * Small inputs in one launch (GPK_RADIX_CUDA_SMALL_MAX_LOG; docs/perf/radix.md,
 * "CUDA backend: small sizes in one launch"). Below about 2^20 keys a sort
 * costs what its stream operations cost, not what it moves: histogram,
 * bases, and per pass a look-back memset and a pass kernel (12 for u32
 * keys, as many as CUB's Onesweep issues). Here one cooperative launch,
 * every block resident, runs them all with a grid barrier wherever a step
 * reads what other blocks wrote:
 *   clear the tables | histograms of every pass | pass 0 | pass 1 | ...
 * Each pass is onesweep_tiles, as in onesweep_kernel; every block scans
 * the pass's digit bases from the histogram into its shared memory, and the
 * passes alternate between two look-back tables, the next one cleared
 * during the current pass. Digits of up to 8 bits (the 8-bit table), 32-bit
 * positions, one look-back portion.
 * ------------------------------------------------------------------------ */
namespace cg = cooperative_groups;

/* histogram entries (passes x digits) of every plan whose digits have at
 * most 8 bits: 8 x 256 for 64-bit keys */
constexpr uint32_t kSmallTable = 2048;

template <class K> struct SmallArgs {
    Route route; /* pass p reads route.*[p] and writes route.*[p + 1] */
    PassList pl;
    uint32_t n;
    Twiddle<K> hist_map, map_in, map_out;
    bool map_in_on, map_out_on;
    unsigned long long *hist; /* [pass][stride] */
    uint32_t *status;         /* two look-back tables of `region` words */
    uint32_t region;
    uint32_t *counters; /* [pass] tile counters */
};

/* Shared memory: the pass's S::SMEM, then the bases of the current pass
 * and the warp sums of their scan; the histogram tables use the front
 * before the first pass. */
template <class S> struct SmallSmem {
    static constexpr size_t BASES_AT = (S::SMEM + 15) / 16 * 16;
    static constexpr size_t END = BASES_AT + (256 + 32) * sizeof(uint32_t);
    static constexpr size_t BYTES = END > kSmallTable * sizeof(uint32_t) ? END
                                                                         : kSmallTable * sizeof(uint32_t);
};

/* VM0: the first pass's value mode (V_IOTA for sigma), VM: the others'. */
template <class K, class V, int VM0, int VM>
__global__ void __launch_bounds__(Shape<8, K, V, VM, uint32_t>::T, Shape<8, K, V, VM, uint32_t>::MIN_BLOCKS)
    small_sort_kernel(const __grid_constant__ SmallArgs<K> a)
{
    using S = Shape<8, K, V, VM, uint32_t>;
    static_assert(Shape<8, K, V, VM0, uint32_t>::SMEM == S::SMEM &&
                      Shape<8, K, V, VM0, uint32_t>::T == S::T &&
                      Shape<8, K, V, VM0, uint32_t>::TILE == S::TILE,
                  "one shape for every pass");
    static_assert(S::T >= 256, "the bases take one digit a thread");
    constexpr int T = S::T;
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *table = reinterpret_cast<uint32_t *>(smem);
    uint32_t *s_bases = reinterpret_cast<uint32_t *>(smem + SmallSmem<S>::BASES_AT);
    uint32_t *s_warp = s_bases + 256;
    cg::grid_group grid = cg::this_grid();
    const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t gid = blockIdx.x * T + tid, gsz = gridDim.x * T;
    const uint32_t passes = a.pl.count, stride = a.pl.stride, entries = passes * stride;

    for (uint32_t i = gid; i < entries; i += gsz) a.hist[i] = 0;
    for (uint32_t i = gid; i < passes; i += gsz) a.counters[i] = 0;
    for (uint32_t i = gid; i < a.region; i += gsz) a.status[i] = 0;
    for (uint32_t i = tid; i < entries; i += T) table[i] = 0;
    grid.sync();

    const K *keys = static_cast<const K *>(a.route.keys[0]);
    for (uint32_t i = gid; i < a.n; i += gsz) {
        const K x = twiddle(a.hist_map, keys[i]);
        for (uint32_t p = 0; p < passes; p++)
            atomicAdd(&table[p * stride + digit_of(x, a.pl.shift[p], (1u << a.pl.width[p]) - 1)], 1u);
    }
    __syncthreads();
    for (uint32_t i = tid; i < entries; i += T)
        if (table[i]) atomicAdd(&a.hist[i], (unsigned long long)table[i]);

    const uint32_t tiles = (a.n + S::TILE - 1) / S::TILE;
    for (uint32_t p = 0; p < passes; p++) {
        grid.sync();        /* the histograms, or the previous pass's output, are complete */
        if (p + 1 < passes) /* the table pass p - 1 used, for pass p + 1 */
            for (uint32_t i = gid; i < a.region; i += gsz) a.status[(size_t)((p + 1) % 2) * a.region + i] = 0;
        const uint32_t digits = 1u << a.pl.width[p];
        const uint32_t c = tid < digits ? (uint32_t)a.hist[(size_t)p * stride + tid] : 0u;
        const uint32_t incl = warp_inclusive_sum(c, (int)lane);
        if (lane == 31) s_warp[warp] = incl;
        __syncthreads();
        uint32_t before = 0;
        for (uint32_t w = 0; w < warp; w++) before += s_warp[w];
        if (tid < digits) s_bases[tid] = before + incl - c;
        __syncthreads();

        PassArgs<K, V, uint32_t> pa;
        pa.keys_in = static_cast<const K *>(a.route.keys[p]);
        pa.keys_out = static_cast<K *>(const_cast<void *>(a.route.keys[p + 1]));
        pa.vals_in = static_cast<const V *>(a.route.vals[p]);
        pa.vals_out = static_cast<V *>(const_cast<void *>(a.route.vals[p + 1]));
        pa.n = a.n;
        pa.iota_base = 0;
        pa.bases = s_bases;
        pa.bases_next = NULL;
        pa.status = a.status + (size_t)(p % 2) * a.region;
        pa.tile_counter = a.counters + p;
        pa.shift = a.pl.shift[p];
        pa.width = a.pl.width[p];
        pa.map_in = a.map_in;
        pa.map_out = a.map_out;
        pa.map_in_on = a.map_in_on && p == 0;
        pa.map_out_on = a.map_out_on && p + 1 == passes;
        pa.persistent = tiles > gridDim.x;
        pa.hist_row = NULL;
        pa.total = a.n;
        if constexpr (VM0 == VM) {
            onesweep_tiles<8, K, V, VM, uint32_t, false>(pa, NoScatter(), smem);
        } else {
            if (p == 0) onesweep_tiles<8, K, V, VM0, uint32_t, false>(pa, NoScatter(), smem);
            else onesweep_tiles<8, K, V, VM, uint32_t, false>(pa, NoScatter(), smem);
        }
    }
}

/* cudaErrorNotSupported: this kernel cannot be resident on the device. */
template <class K, class V, int VM0, int VM>
static cudaError_t launch_small(const SmallArgs<K> &a, int sm_count, cudaStream_t stream)
{
    using S = Shape<8, K, V, VM, uint32_t>;
    auto kernel = small_sort_kernel<K, V, VM0, VM>;
    constexpr size_t smem = SmallSmem<S>::BYTES;
    /* asked once per device: the attribute and the occupancy query cost
     * more host time than this whole sort */
    static LaunchSetup memo;
    int per_sm = 0;
    cudaError_t e = launch_setup(memo, (const void *)kernel, S::T, smem, &per_sm);
    if (e != cudaSuccess) return e;
    if (per_sm < 1) return cudaErrorNotSupported;
    const uint32_t tiles = div_up(a.n, S::TILE);
    const uint32_t blocks = std::min<uint32_t>(tiles, (uint32_t)per_sm * (uint32_t)sm_count);
    void *args[] = {const_cast<SmallArgs<K> *>(&a)};
    return cudaLaunchCooperativeKernel((const void *)kernel, dim3(blocks), dim3(S::T), args, smem, stream);
}

/* The whole sort of run_passes_o in one launch, where it applies (see
 * above); *ran says whether it did. A launch the device refuses leaves the
 * stream as it was, and the caller runs the separate launches. */
template <class K, class V>
static gpk_status run_small(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const Route &route,
                            Temp &t, cudaStream_t stream, bool *ran)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    *ran = false;
    const size_t n = job.n;
    if (job.no_small) return GPK_OK;
    const gpk_radix_cuda_limits *lim = gpk__radix_cuda_limits(ctx);
    const int max_log = job.vmode == V_NONE ? lim->small_max_log : lim->small_values_max_log;
    if (max_log <= 0 || n == 0 || n > ((size_t)1 << max_log) || n > kPortion || wide_positions(job) ||
        kPosOffset != 0 || pl.count == 0 || pl.stride > 256 || (size_t)pl.count * pl.stride > kSmallTable)
        return GPK_OK;
    const bool plain = job_plain(job);
    const Twiddle<K> map = job_map<K>(job), none = {0, 0, 0, 0};
    SmallArgs<K> a;
    memset(&a, 0, sizeof a);
    a.route = route;
    a.pl = pl;
    a.n = (uint32_t)n;
    a.hist_map = job.map_in ? map : none;
    a.map_in = map;
    a.map_out = job_unmap<K>(job);
    a.map_in_on = !plain && job.map_in;
    a.map_out_on = !plain && job.map_out;
    a.hist = t.hist;
    a.counters = t.counters;
    a.status = t.status;
    /* one look-back table: a word per digit and tile of the shape that runs */
    int tile = Shape<8, K, V, V_LOAD, uint32_t>::TILE;
    if constexpr (sizeof(V) == 4)
        if (job.vmode == V_NONE) tile = Shape<8, K, V, V_NONE, uint32_t>::TILE;
    const size_t region = (size_t)div_up(n, (size_t)tile) * pl.stride;
    if (2 * region * sizeof(uint32_t) > t.status_bytes) return GPK_OK;
    a.region = (uint32_t)region;
    cudaError_t e;
    if constexpr (sizeof(V) == 4) {
        if (job.vmode == V_NONE) e = launch_small<K, V, V_NONE, V_NONE>(a, st->sm_count, stream);
        else if (job.vmode == V_IOTA) e = launch_small<K, V, V_IOTA, V_LOAD>(a, st->sm_count, stream);
        else e = launch_small<K, V, V_LOAD, V_LOAD>(a, st->sm_count, stream);
    } else {
        if (job.vmode == V_IOTA) e = launch_small<K, V, V_IOTA, V_LOAD>(a, st->sm_count, stream);
        else e = launch_small<K, V, V_LOAD, V_LOAD>(a, st->sm_count, stream);
    }
    if (e == cudaErrorCooperativeLaunchTooLarge || e == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        return GPK_OK;
    }
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: small-sort launch");
    *ran = true;
    ctx->last_sort_path = "radix-small";
    return GPK_OK;
}

/* A pass of the multi-GPU sort's distributed plan (gpk_radix_dist): it
 * writes every device's output or every device's spare. */
struct DistPass {
    const gpk_radix_dist *j;
    bool to_out;
    uint32_t *next_counts; /* Scatter::next_counts */
};

/* The passes: histograms and bases (unless have_bases: run_histogram ran
 * for this plan and these keys), then one Onesweep launch per pass and
 * portion. route gives the buffers of every pass. O: the position type,
 * which run_histogram chose by the same test (wide_positions). Passes
 * [first, end) of the list run (end 0: all); with dist, they scatter to
 * the devices of the multi-GPU sort (their bases are global positions, set
 * by the caller). */
template <class K, class V, class O>
static gpk_status run_passes_o(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const Route &route,
                               Temp &t, cudaStream_t stream, bool have_bases, uint32_t first, uint32_t end,
                               const DistPass *dist)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    const size_t n = job.n;
    const uint32_t portions = div_up(n, kPortion);
    const size_t row = (size_t)pl.count * pl.stride;
    if constexpr (sizeof(O) == 4) {
        if (!dist && first == 0 && (end == 0 || end == pl.count)) {
            bool ran = false;
            gpk_status s = run_tile<K, V>(ctx, job, pl, route, stream, &ran);
            if (s == GPK_OK && !ran) s = run_small<K, V>(ctx, job, pl, route, t, stream, &ran);
            if (s != GPK_OK || ran) return s;
        }
    }
    if (!have_bases) {
        const gpk_status s = run_histogram<K>(ctx, job, pl, route.keys[0], t, stream);
        if (s != GPK_OK) return s;
    }
    cudaError_t e = cudaMemsetAsync(t.counters, 0, (size_t)portions * pl.count * sizeof(uint32_t), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: cudaMemsetAsync");
    const Twiddle<K> map = job_map<K>(job), unmap = job_unmap<K>(job);
    const Twiddle<K> none = {0, 0, 0, 0};
    const bool plain = job_plain(job);

    if (end == 0) end = pl.count;
    for (uint32_t p = first; p < end; p++) {
        for (uint32_t q = 0; q < portions; q++) {
            PassArgs<K, V, O> a;
            O *bases = (O *)t.bases;
            a.keys_in = (const K *)route.keys[p] + (size_t)q * kPortion;
            a.keys_out = (K *)route.keys[p + 1] - kPosOffset;
            a.vals_in = job.vb ? (const V *)route.vals[p] + (size_t)q * kPortion : NULL;
            a.vals_out = job.vb ? (V *)route.vals[p + 1] - kPosOffset : NULL;
            a.n = (uint32_t)std::min((size_t)kPortion, n - (size_t)q * kPortion);
            a.iota_base = (uint64_t)q * kPortion;
            a.bases = bases + q * row + (size_t)p * pl.stride;
            a.bases_next = q + 1 < portions ? bases + (q + 1) * row + (size_t)p * pl.stride : NULL;
            a.status = t.status;
            a.tile_counter = t.counters + q * pl.count + p;
            a.shift = pl.shift[p];
            a.width = pl.width[p];
            /* the counts are known here when run_histogram counted this plan */
            a.hist_row = have_bases || dist ? NULL : t.hist + (size_t)p * pl.stride;
            a.total = n;
            a.map_in = p == 0 ? map : none;
            a.map_out = p + 1 == pl.count ? unmap : none;
            a.map_in_on = !plain && p == 0 && job.map_in;
            a.map_out_on = !plain && p + 1 == pl.count && job.map_out;
            if (dist) {
                const gpk_radix_dist *dj = dist->j;
                Scatter<K, V, O> sc;
                memset(&sc, 0, sizeof sc);
                sc.k = (uint32_t)dj->k;
                for (int j = 0; j < dj->k; j++) {
                    const uint64_t from = dj->bounds[j] + kPosOffset;
                    void *kd = dist->to_out ? dj->keys_out[j] : dj->keys_alt[j];
                    void *vd = dist->to_out ? dj->values_out[j] : dj->values_alt[j];
                    sc.bounds[j] = (O)from;
                    /* indexed by global position: moved back by the
                     * destination's first one (never dereferenced there) */
                    sc.keys[j] = (K *)((uintptr_t)kd - (uintptr_t)(from * sizeof(K)));
                    sc.vals[j] = job.vb ? (V *)((uintptr_t)vd - (uintptr_t)(from * sizeof(V))) : NULL;
                }
                if (dist->next_counts) {
                    sc.next_shift = pl.shift[p + 1];
                    sc.next_mask = (1u << pl.width[p + 1]) - 1;
                    sc.next_digits = 1u << pl.width[p + 1];
                    sc.next_counts = dist->next_counts;
                    sc.next_shared = sc.k * sc.next_digits <= kNextShared;
                }
                if constexpr (sizeof(V) == 4) {
                    if (job.vmode == V_NONE) e = run_pass<K, V, V_NONE, O, true>(a, st->sm_count, stream, sc);
                    else e = run_pass<K, V, V_LOAD, O, true>(a, st->sm_count, stream, sc);
                } else {
                    e = run_pass<K, V, V_LOAD, O, true>(a, st->sm_count, stream, sc);
                }
                if (e != cudaSuccess)
                    return gpk__cuda_fail(ctx, e, "radix sort: scattering pass kernel launch");
                continue;
            }
            /* keys only dispatch with the 4-byte value type alone */
            if constexpr (sizeof(V) == 4) {
                if (job.vmode == V_NONE) e = run_pass<K, V, V_NONE, O>(a, st->sm_count, stream);
                else if (job.vmode == V_IOTA && p == 0)
                    e = run_pass<K, V, V_IOTA, O>(a, st->sm_count, stream);
                else e = run_pass<K, V, V_LOAD, O>(a, st->sm_count, stream);
            } else {
                if (job.vmode == V_IOTA && p == 0) e = run_pass<K, V, V_IOTA, O>(a, st->sm_count, stream);
                else e = run_pass<K, V, V_LOAD, O>(a, st->sm_count, stream);
            }
            if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: pass kernel launch");
        }
    }
    return GPK_OK;
}

template <class K, class V>
static gpk_status run_passes(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const Route &route,
                             Temp &t, cudaStream_t stream, bool have_bases = false, uint32_t first = 0,
                             uint32_t end = 0, const DistPass *dist = NULL)
{
    if (wide_positions(job))
        return run_passes_o<K, V, uint64_t>(ctx, job, pl, route, t, stream, have_bases, first, end, dist);
    return run_passes_o<K, V, uint32_t>(ctx, job, pl, route, t, stream, have_bases, first, end, dist);
}

template <class K>
static gpk_status run_passes_k(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const Route &route,
                               Temp &t, cudaStream_t stream, bool have_bases, uint32_t first, uint32_t end,
                               const DistPass *dist)
{
    if (job.vb == 8)
        return run_passes<K, uint64_t>(ctx, job, pl, route, t, stream, have_bases, first, end, dist);
    return run_passes<K, uint32_t>(ctx, job, pl, route, t, stream, have_bases, first, end, dist);
}

static gpk_status dispatch_passes(gpk_ctx *ctx, const DeviceJob &job, const PassList &pl, const Route &route,
                                  Temp &t, cudaStream_t stream, bool have_bases = false, uint32_t first = 0,
                                  uint32_t end = 0, const DistPass *dist = NULL)
{
    if (job.kb == 8)
        return run_passes_k<uint64_t>(ctx, job, pl, route, t, stream, have_bases, first, end, dist);
    return run_passes_k<uint32_t>(ctx, job, pl, route, t, stream, have_bases, first, end, dist);
}

/* Is pl rows k0 .. k0 + pl.count - 1 of full (the same digits)? */
static bool plan_rows_of(const PassList &full, const PassList &pl, uint32_t *k0)
{
    if (pl.count == 0 || pl.stride != full.stride) return false;
    for (uint32_t k = 0; k + pl.count <= full.count; k++) {
        bool same = true;
        for (uint32_t p = 0; p < pl.count && same; p++)
            same = full.shift[k + p] == pl.shift[p] && full.width[k + p] == pl.width[p];
        if (same) {
            *k0 = k;
            return true;
        }
    }
    return false;
}

/* The plan for [begin, end) in *pl; true when it is a run of full's passes,
 * or as many of full's passes as that plan cover [begin, end), which then
 * replace it (they sort the same: the bits around the range are equal in
 * every key). f32 keys in [0, 1) (30 bits) thus sort as full's four 8-bit
 * digits. */
static bool plan_on_rows(const PassList &full, unsigned begin, unsigned end, unsigned radix_bits,
                         unsigned key_bytes, PassList *pl)
{
    make_plan(begin, end, radix_bits, key_bytes, pl);
    uint32_t k0 = 0, k1 = 0;
    if (plan_rows_of(full, *pl, &k0)) return true;
    if (end <= begin) return false;
    k0 = full.count;
    for (uint32_t k = 0; k < full.count; k++)
        if (full.shift[k] + full.width[k] > begin && full.shift[k] < end) {
            k0 = std::min(k0, k);
            k1 = k;
        }
    if (k0 == full.count || k1 + 1 - k0 != pl->count) return false;
    PassList cover = full;
    cover.count = pl->count;
    for (uint32_t p = 0; p < cover.count; p++) {
        cover.shift[p] = full.shift[k0 + p];
        cover.width[p] = full.width[k0 + p];
    }
    *pl = cover;
    return true;
}

/* A pass whose digit bits are the same in every key (no bit of it in
 * varying, the XOR of the keys' AND and OR) leaves the order as it is:
 * dropped from the plan. Interior digits only; the range already excludes
 * the constant bits at both ends. */
static void drop_constant_passes(PassList *pl, unsigned long long varying)
{
    uint32_t kept = 0;
    for (uint32_t p = 0; p < pl->count; p++) {
        const unsigned long long digit = (pl->width[p] >= 64 ? ~0ull : ((1ull << pl->width[p]) - 1))
            << pl->shift[p];
        if ((varying & digit) == 0) continue;
        pl->shift[kept] = pl->shift[p];
        pl->width[kept] = pl->width[p];
        kept++;
    }
    pl->count = kept;
}

/* From 2^25 keys (tests lower it: radix_cuda_sample_from_log) the
 * detection first reads a sample of the first kRangeSample keys. */
constexpr size_t kRangeSample = (size_t)1 << 16;
/* Below 2^23 keys (tests move it: radix_cuda_detect_from_log) no detection: the passes
 * over every bit cost less than the detection's round trip to the host
 * (docs/perf/radix.md, "detection in the histogram's read"). */
static size_t detect_from()
{
    const int lg = (int)gpk__hook(gpk__test.radix_cuda_detect_from_log, 23);
    return lg < 0 || lg > 62 ? ((size_t)1 << 23) : (size_t)1 << lg;
}
static size_t range_sample_from()
{
    const int lg = (int)gpk__hook(gpk__test.radix_cuda_sample_from_log, 25);
    return lg < 0 || lg > 62 ? ((size_t)1 << 25) : (size_t)1 << lg;
}

/* Bit-range detection (b = 0) and the plan for [0, most_bits). The AND and
 * OR of the keys are taken in the histogram kernel's read, which counts the
 * digits of the plan for the whole range [0, most_bits): when the detected
 * range's plan is a run of those passes (the top and bottom digits vary, as
 * in most inputs) their bases are ready (*have_bases) and the keys are read
 * once less than with a separate detection. Otherwise (narrow keys) the
 * passes count their own histogram. From range_sample_from() keys the range of
 * a sample of the first keys picks the way first, so narrow keys do not pay
 * a histogram they cannot use. The test hook radix_cuda_fused_detect=0: separate
 * detection, as before (for the benchmark's comparison). */
template <class K>
static gpk_status detect_plan(gpk_ctx *ctx, const DeviceJob &job, const void *keys, Temp &t,
                              cudaStream_t stream, unsigned radix_bits, unsigned most_bits, unsigned *begin,
                              unsigned *end, PassList *pl, bool *have_bases)
{
    *have_bases = false;
    PassList full;
    make_plan(0, most_bits, radix_bits, (unsigned)sizeof(K), &full);
    if (job.n < detect_from()) { /* every bit: cheaper than the round trip */
        *begin = 0;
        *end = most_bits;
        *pl = full;
        return GPK_OK;
    }
    uint32_t k0 = 0;
    bool fuse = full.count > 0 && gpk__hook(gpk__test.radix_cuda_fused_detect, 1) != 0 &&
        gpk__hook(gpk__test.radix_cuda_hybrid, 0) == 0; /* the hybrid counts its own digits */
    if (fuse && job.n >= range_sample_from()) {
        DeviceJob sample = job;
        sample.n = std::min(job.n, kRangeSample);
        unsigned sb = 0, se = 0;
        const gpk_status s = detect_range<K>(ctx, sample, keys, t, stream, &sb, &se);
        if (s != GPK_OK) return s;
        se = std::min(se, most_bits);
        if (sb >= se) sb = se = 0;
        PassList sp;
        fuse = plan_on_rows(full, sb, se, radix_bits, (unsigned)sizeof(K), &sp);
    }
    gpk_status s = fuse ? run_histogram<K, true>(ctx, job, full, keys, t, stream) : GPK_OK;
    unsigned long long varying = ~0ull;
    if (s == GPK_OK)
        s = fuse ? read_range<K>(ctx, t, stream, begin, end, &varying)
                 : detect_range<K>(ctx, job, keys, t, stream, begin, end, &varying);
    if (s != GPK_OK) return s;
    *end = std::min(*end, most_bits);
    if (*begin >= *end) *begin = *end = 0;
    const bool on_rows = plan_on_rows(full, *begin, *end, radix_bits, (unsigned)sizeof(K), pl);
    drop_constant_passes(pl, varying);
    if (fuse && on_rows && plan_rows_of(full, *pl, &k0)) {
        if (k0 > 0) { /* the bases of rows k0.. where the passes expect rows 0.. */
            const unsigned long long *rows = t.hist + (size_t)k0 * full.stride;
            if (wide_positions(job))
                bases_kernel<uint64_t>
                    <<<pl->count, 1024, 0, stream>>>(rows, (uint64_t *)t.bases, *pl, kPosOffset);
            else bases_kernel<uint32_t><<<pl->count, 1024, 0, stream>>>(rows, (uint32_t *)t.bases, *pl, 0);
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bases kernel launch");
        }
        *have_bases = true;
    }
    return GPK_OK;
}

static gpk_status dispatch_detect_plan(gpk_ctx *ctx, const DeviceJob &job, const void *keys, Temp &t,
                                       cudaStream_t stream, unsigned radix_bits, unsigned most_bits,
                                       unsigned *begin, unsigned *end, PassList *pl, bool *have_bases)
{
    if (job.kb == 8)
        return detect_plan<uint64_t>(ctx, job, keys, t, stream, radix_bits, most_bits, begin, end, pl,
                                     have_bases);
    return detect_plan<uint32_t>(ctx, job, keys, t, stream, radix_bits, most_bits, begin, end, pl,
                                 have_bases);
}

/* ------------------------------------------------------------------------
 * Hybrid sort, host side.
 * ------------------------------------------------------------------------ */
struct HybridPlan {
    unsigned wbits; /* window: the top wbits bits of [begin, end) */
    unsigned begin, end;
    PassList window; /* its two passes */
};

/* The hybrid path (opt-in, test hook radix_cuda_hybrid: -1 for pairs and sigma, 1
 * for keys too) applies to 4-byte keys, r left to the library, from
 * 2^radix_cuda_hybrid_min_log keys, when the range leaves bits for the
 * finish and 2^16 buckets hold n at radix_cuda_hybrid_fill keys each on
 * average. */
static bool hybrid_pick(const DeviceJob &job, unsigned begin, unsigned end, unsigned radix_bits,
                        HybridPlan *h)
{
    /* 32-bit bucket starts and grid-stride loops: the hybrid stays at or
     * below 2^31 keys (the LSD passes take the larger ones) */
    if (job.kb != 4 || (job.vb != 0 && job.vb != 4) || radix_bits != 0 || job.n > ((size_t)1 << 31))
        return false;
    /* 0 (default): never, since it won only on uniform pairs and sigma at
     * 2^28 and lost at 2^24, on gaussian and sorted keys (docs/perf/radix.md);
     * -1: pairs and sigma; 1: keys too */
    const int mode = (int)gpk__hook(gpk__test.radix_cuda_hybrid, 0);
    if (mode == 0 || (mode < 0 && job.vb == 0)) return false;
    const int min_log = (int)gpk__hook(gpk__test.radix_cuda_hybrid_min_log, 24);
    if (min_log < 0 || min_log > 40 || job.n < ((size_t)1 << min_log)) return false;
    const size_t fill =
        (size_t)std::max(2, std::min((int)kFinCap, (int)gpk__hook(gpk__test.radix_cuda_hybrid_fill, 4096)));
    const unsigned bits = end - begin;
    unsigned w = 2;
    while (w < kHybridMaxW && (job.n >> w) > fill) w++;
    if ((job.n >> w) > fill || w >= bits || bits - w > 3 * kFinRB) return false;
    h->wbits = w;
    h->begin = begin;
    h->end = end;
    make_plan(end - w, end, (w + 1) / 2, 4, &h->window);
    return h->window.count == 2;
}

/* A stable LSD sort of keys[0, n) (already mapped) by bits [b0, b1), values
 * along, through the spares; the keys end unmapped in keys. */
template <class K, class V>
static gpk_status lsd_premapped(gpk_ctx *ctx, const DeviceJob &job, K *keys, V *vals, K *kalt, V *valt,
                                size_t n, unsigned b0, unsigned b1, Temp &t, cudaStream_t stream)
{
    DeviceJob j = job;
    j.n = n;
    j.map_in = false;
    j.map_out = true;
    if (j.vmode == V_IOTA) j.vmode = V_LOAD; /* the window passes made the positions */
    PassList pl;
    make_plan(b0, b1, 0, (unsigned)sizeof(K), &pl);
    Route r;
    for (uint32_t p = 0; p <= pl.count; p++) {
        r.keys[p] = p % 2 == 0 ? (const void *)keys : (const void *)kalt;
        r.vals[p] = p % 2 == 0 ? (const void *)vals : (const void *)valt;
    }
    gpk_status s = run_passes<K, V>(ctx, j, pl, r, t, stream);
    if (s != GPK_OK || pl.count % 2 == 0) return s;
    cudaError_t e = cudaMemcpyAsync(keys, kalt, n * sizeof(K), cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess && job.vb)
        e = cudaMemcpyAsync(vals, valt, n * sizeof(V), cudaMemcpyDeviceToDevice, stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "radix sort: cudaMemcpyAsync");
}

template <class K, class V, bool HAS_V, int T, int I>
static cudaError_t launch_finish_shape(K *keys, V *vals, uint32_t nb, const uint32_t *bucket_start,
                                       unsigned begin, unsigned rest, uint32_t min_len, Twiddle<K> unmap,
                                       bool unmap_on, cudaStream_t stream)
{
    auto kernel = bucket_finish_kernel<K, V, HAS_V, T, I>;
    const size_t smem = (size_t)T * I * (sizeof(K) + (HAS_V ? sizeof(V) : 0));
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    kernel<<<nb, T, smem, stream>>>(keys, vals, bucket_start, begin, rest, min_len, unmap, unmap_on);
    return cudaGetLastError();
}

/* Both shapes: the small one for buckets up to its capacity (and single
 * keys), the large one above. */
template <class K, class V, bool HAS_V>
static cudaError_t launch_finish(K *keys, V *vals, uint32_t nb, const uint32_t *bucket_start, unsigned begin,
                                 unsigned rest, Twiddle<K> unmap, bool unmap_on, cudaStream_t stream)
{
    cudaError_t e = launch_finish_shape<K, V, HAS_V, kFinSmallT, kFinSmallI>(
        keys, vals, nb, bucket_start, begin, rest, 0, unmap, unmap_on, stream);
    if (e != cudaSuccess) return e;
    return launch_finish_shape<K, V, HAS_V, kFinLargeT, kFinLargeI>(keys, vals, nb, bucket_start, begin, rest,
                                                                    kFinSmallCap, unmap, unmap_on, stream);
}

/* kin -> kalt -> kout by the window, the bucket starts, then the finish in
 * place in kout. Buckets over the finish's capacity (skewed keys): up to
 * kBigList of them are sorted by LSD passes of their own; more, and the
 * whole array is, by every bit (stable: equal keys are still in input
 * order after the window passes). Reads two counters back (one wait). */
template <class K, class V>
static gpk_status run_hybrid(gpk_ctx *ctx, const DeviceJob &job, const HybridPlan &h, const void *kin,
                             void *kout, void *kalt, const void *vin, void *vout, void *valt, Temp &t,
                             cudaStream_t stream, bool *declined)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    const uint32_t n = (uint32_t)job.n;
    DeviceJob wj = job;
    wj.map_out = false;
    *declined = false;
    /* Skew first: with the window digits' counts L (low) and H (high),
     * the largest bucket is about max L x max H / n if the digits are
     * independent. Past the large finish's capacity (floats in [0, 1),
     * whose top bits are a few exponents) the hybrid would send most keys
     * to its fallbacks: decline, and the caller runs the LSD passes. */
    gpk_status s = run_histogram<K>(ctx, wj, h.window, kin, t, stream);
    if (s != GPK_OK) return s;
    cudaError_t e = cudaMemsetAsync(t.big, 0, 2 * sizeof(uint32_t), stream);
    if (e == cudaSuccess) {
        window_max_kernel<<<1, 256, 0, stream>>>(t.hist, h.window.stride, 1u << h.window.width[0],
                                                 1u << h.window.width[1], t.big);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(st->pinned, t.big, 2 * sizeof(uint32_t), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: window histogram");
    {
        uint32_t mx[2];
        memcpy(mx, st->pinned, sizeof mx);
        const double est = (double)mx[0] * (double)mx[1] / (double)n;
        if (est > 0.9 * kFinCap) {
            *declined = true;
            return GPK_OK;
        }
    }
    Route r;
    r.keys[0] = kin;
    r.keys[1] = kalt;
    r.keys[2] = kout;
    r.vals[0] = vin;
    r.vals[1] = valt;
    r.vals[2] = vout;
    s = run_passes<K, V>(ctx, wj, h.window, r, t, stream, true);
    if (s != GPK_OK) return s;

    const uint32_t nb = 1u << h.wbits;
    const int blocks = std::max(1, std::min(st->sm_count * 8, (int)div_up((size_t)n + 1, 256 * 4)));
    bucket_starts_kernel<K>
        <<<blocks, 256, 0, stream>>>((const K *)kout, n, h.end - h.wbits, h.wbits, t.bucket_start);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemsetAsync(t.big, 0, 2 * sizeof(uint32_t), stream);
    if (e == cudaSuccess) {
        big_buckets_kernel<<<std::max(1u, std::min(div_up(nb, 256), 1024u)), 256, 0, stream>>>(t.bucket_start,
                                                                                               nb, t.big);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(st->pinned, t.big, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                            stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bucket starts");
    uint32_t big[8];
    memcpy(big, st->pinned, sizeof big);

    const bool plain = job_plain(job);
    const Twiddle<K> unmap = job_unmap<K>(job);
    K *keys = (K *)kout;
    V *vals = (V *)vout;
    ctx->last_sort_path = big[0] ? "radix-hybrid+lsd" : "radix-hybrid";
    if (big[0] > (uint32_t)kBigList) /* skewed: the window passes bought nothing */
        return lsd_premapped<K, V>(ctx, job, keys, vals, (K *)kalt, (V *)valt, n, h.begin, h.end, t, stream);

    const unsigned rest = h.end - h.wbits - h.begin;
    e = job.vb
        ? launch_finish<K, V, true>(keys, vals, nb, t.bucket_start, h.begin, rest, unmap, !plain, stream)
        : launch_finish<K, V, false>(keys, vals, nb, t.bucket_start, h.begin, rest, unmap, !plain, stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bucket finish launch");
    if (big[0] == 0) return GPK_OK;
    /* the starts of the big buckets: one more read-back */
    uint32_t ends[2 * kBigList];
    for (uint32_t k = 0; k < big[0]; k++) {
        e = cudaMemcpyAsync(&ends[2 * k], t.bucket_start + big[2 + k], 2 * sizeof(uint32_t),
                            cudaMemcpyDeviceToHost, stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bucket read-back");
    }
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: bucket read-back");
    for (uint32_t k = 0; k < big[0]; k++) {
        const uint32_t b0 = ends[2 * k], len = ends[2 * k + 1] - b0;
        s = lsd_premapped<K, V>(ctx, job, keys + b0, vals ? vals + b0 : NULL, (K *)kalt + b0,
                                valt ? (V *)valt + b0 : NULL, len, h.begin, h.end - h.wbits, t, stream);
        if (s != GPK_OK) return s;
    }
    return GPK_OK;
}

/* declined: the keys are too skewed for the hybrid; nothing was written,
 * the caller runs the LSD passes. */
static gpk_status dispatch_hybrid(gpk_ctx *ctx, const DeviceJob &job, const HybridPlan &h, const void *kin,
                                  void *kout, void *kalt, const void *vin, void *vout, void *valt, Temp &t,
                                  cudaStream_t stream, bool *declined)
{
    return run_hybrid<uint32_t, uint32_t>(ctx, job, h, kin, kout, kalt, vin, vout, valt, t, stream, declined);
}

/* ------------------------------------------------------------------------
 * Host-pointer API: upload, sort, download. The caller's arrays are only
 * written after every kernel has finished without error.
 * ------------------------------------------------------------------------ */
/* Host arrays from 64 MiB up pass through the context's pinned staging,
 * copied on all threads (src/core/cuda_staging.c): a pageable cudaMemcpy
 * moves a fraction of what pinned memory does (docs/perf/radix.md). */
static bool staged_copy(size_t bytes) { return bytes >= ((size_t)64 << 20); }

static gpk_status upload(gpk_ctx *ctx, void *d_dst, const void *src, size_t bytes, cudaStream_t stream)
{
    if (staged_copy(bytes)) return gpk__cuda_copy_to_device(ctx, d_dst, src, bytes, stream);
    const cudaError_t e = cudaMemcpyAsync(d_dst, src, bytes, cudaMemcpyHostToDevice, stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "radix sort: copy to device");
}

static gpk_status download_one(gpk_ctx *ctx, void *dst, const void *d_src, size_t bytes, cudaStream_t stream)
{
    if (staged_copy(bytes)) return gpk__cuda_copy_to_host(ctx, dst, d_src, bytes, stream);
    cudaError_t e = cudaMemcpyAsync(dst, d_src, bytes, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "radix sort: copy to host");
}

/* A host-array call on the device: its job, the context's buffers it
 * reserved (keys[i], vals[i]: A, B and, with three, C) and its temp, the
 * input uploaded into A. Keeps ctx's device current while in scope. */
struct HostPlan {
    DeviceGuard guard;
    DeviceJob job;
    size_t key_bytes, val_bytes;
    cudaStream_t stream;
    void *keys[3], *vals[3];
    Temp t;
};

/* Makes ctx's device current, reserves `buffers` key and value buffers of
 * job's size and the temp (what: the caller in messages) and uploads the
 * keys (and values) into A. */
static gpk_status host_start(gpk_ctx *ctx, const gpk_radix_job *job, HostPlan *hp, int buffers,
                             const char *what)
{
    const cudaError_t e = hp->guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    if (!ctx->cuda) return gpk__fail(ctx, GPK_EINVAL, "CUDA radix sort: context has no CUDA state");
    hp->job.type = job->key_type;
    hp->job.kb = (int)job->key_width;
    hp->job.vb = job->values ? (int)job->value_width : job->sigma ? (int)job->sigma_width : 0;
    hp->job.vmode = job->values ? V_LOAD : job->sigma ? V_IOTA : V_NONE;
    hp->job.n = job->n;
    hp->key_bytes = job->n * job->key_width;
    hp->val_bytes = job->n * (size_t)hp->job.vb;
    size_t bytes[GPK_CUDA_SLOTS] = {0};
    for (int i = 0; i < buffers; i++) {
        bytes[GPK_CUDA_KEYS_A + i] = hp->key_bytes;
        if (hp->job.vb) bytes[GPK_CUDA_VALUES_A + i] = hp->val_bytes;
    }
    bytes[GPK_CUDA_TEMP] = temp_bytes(job->n, hp->job.kb, hp->job.vb);
    gpk_status s = gpk__cuda_reserve(ctx, bytes, what);
    if (s != GPK_OK) return s;
    const gpk_cuda_state *st = (const gpk_cuda_state *)ctx->cuda;
    hp->stream = st->stream;
    for (int i = 0; i < 3; i++) {
        hp->keys[i] = st->buf[GPK_CUDA_KEYS_A + i];
        hp->vals[i] = st->buf[GPK_CUDA_VALUES_A + i];
    }
    hp->t = carve_temp(st->buf[GPK_CUDA_TEMP], job->n, hp->job.kb, hp->job.vb);
    s = upload(ctx, hp->keys[0], job->keys, hp->key_bytes, hp->stream);
    if (s == GPK_OK && job->values) s = upload(ctx, hp->vals[0], job->values, hp->val_bytes, hp->stream);
    return s;
}

static gpk_status download(gpk_ctx *ctx, const gpk_radix_job *job, const HostPlan &hp, const void *keys,
                           const void *vals, cudaStream_t stream)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: kernels");
    /* Everything ran: from here on the results replace the caller's data. */
    gpk_status s = download_one(ctx, job->keys, keys, hp.key_bytes, stream);
    if (s == GPK_OK && job->values) s = download_one(ctx, job->values, vals, hp.val_bytes, stream);
    if (s == GPK_OK && job->sigma) s = download_one(ctx, job->sigma, vals, hp.val_bytes, stream);
    return s;
}

} // namespace

#ifdef GPK_RADIX_CUDA_PROFILE
/* Tuning builds only: the summed phase clocks of every pass kernel since
 * the last call (7 phases, then the number of blocks), then reset. */
extern "C" int gpk__radix_cuda_profile(unsigned long long out[8])
{
    if (cudaMemcpyFromSymbol(out, g_phase_cycles, sizeof(unsigned long long) * 8) != cudaSuccess) return -1;
    const unsigned long long zero[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    return cudaMemcpyToSymbol(g_phase_cycles, zero, sizeof zero) == cudaSuccess ? 0 : -1;
}
#endif

extern "C" gpk_status gpk__radix_sort_cuda(gpk_ctx *ctx, const gpk_radix_job *job)
{
    HostPlan hp;
    gpk_status s = host_start(ctx, job, &hp, 2, "radix sort");
    if (s != GPK_OK) return s;
    const cudaStream_t stream = hp.stream;
    void *ka = hp.keys[0], *kbuf = hp.keys[1], *va = hp.vals[0], *vbuf = hp.vals[1];
    Temp &t = hp.t;

    unsigned begin = 0, end = job->key_bits;
    PassList pl;
    bool have_bases = false;
    if (job->key_bits == 0)
        s = dispatch_detect_plan(ctx, hp.job, ka, t, stream, job->radix_bits, 8 * (unsigned)job->key_width,
                                 &begin, &end, &pl, &have_bases);
    else make_plan(begin, end, job->radix_bits, job->key_width, &pl);
    if (s != GPK_OK) return s;
    if (pl.count == 0) {
        /* all keys equal: the order stays, sigma is the identity */
        const cudaError_t e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort");
        if (job->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, job->n);
        return GPK_OK;
    }
    HybridPlan hy;
    bool declined = true;
    if (hybrid_pick(hp.job, begin, end, job->radix_bits, &hy)) {
        s = dispatch_hybrid(ctx, hp.job, hy, ka, ka, kbuf, va, va, vbuf, t, stream, &declined);
        if (s != GPK_OK) {
            (void)cudaStreamSynchronize(stream);
            return s;
        }
        if (!declined) return download(ctx, job, hp, ka, va, stream);
    }
    ctx->last_sort_path = "radix-onesweep";
    /* The uploaded copy may be overwritten: ping-pong A -> B -> A ... */
    Route route;
    route.keys[0] = ka;
    route.vals[0] = va;
    for (uint32_t p = 0; p < pl.count; p++) {
        route.keys[p + 1] = (p % 2 == 0) ? kbuf : ka;
        route.vals[p + 1] = (p % 2 == 0) ? vbuf : va;
    }
    s = dispatch_passes(ctx, hp.job, pl, route, t, stream, have_bases);
    if (s != GPK_OK) {
        (void)cudaStreamSynchronize(stream);
        return s;
    }
    return download(ctx, job, hp, route.keys[pl.count], route.vals[pl.count], stream);
}

extern "C" gpk_status gpk__radix_bench_cuda(gpk_ctx *ctx, const gpk_radix_job *job, int reps, double *ms)
{
    if (!ms || reps < 1) return gpk__fail(ctx, GPK_EINVAL, "radix bench: reps must be >= 1");
    if (job->n < 2) {
        *ms = 0.0;
        if (job->sigma && job->n == 1) gpk__sigma_iota(job->sigma, job->sigma_width, 0, 1);
        return GPK_OK;
    }
    HostPlan hp;
    /* A holds the pristine input, B the output, C the spare of every rep */
    gpk_status s = host_start(ctx, job, &hp, 3, "radix bench");
    if (s != GPK_OK) return s;
    const gpk_cuda_state *st = (const gpk_cuda_state *)ctx->cuda;
    const cudaStream_t stream = hp.stream;
    void *ka = hp.keys[0], *kout = hp.keys[1], *kalt = hp.keys[2];
    void *va = hp.vals[0], *vout = hp.vals[1], *valt = hp.vals[2];
    Temp &t = hp.t;

    double *times = (double *)malloc(sizeof(double) * (size_t)reps);
    if (!times) return gpk__fail(ctx, GPK_ENOMEM, "radix bench: out of host memory");
    PassList pl;
    memset(&pl, 0, sizeof pl);
    for (int rep = 0; rep < reps && s == GPK_OK; rep++) {
        const cudaError_t e = cudaEventRecord(st->ev_start, stream);
        if (e != cudaSuccess) {
            s = gpk__cuda_fail(ctx, e, "cudaEventRecord");
            break;
        }
        unsigned begin = 0, end = job->key_bits;
        bool have_bases = false;
        if (job->key_bits == 0)
            s = dispatch_detect_plan(ctx, hp.job, ka, t, stream, job->radix_bits,
                                     8 * (unsigned)job->key_width, &begin, &end, &pl, &have_bases);
        else make_plan(begin, end, job->radix_bits, job->key_width, &pl);
        if (s != GPK_OK) break;
        HybridPlan hy;
        bool declined = true;
        if (pl.count > 0 && hybrid_pick(hp.job, begin, end, job->radix_bits, &hy)) {
            s = dispatch_hybrid(ctx, hp.job, hy, ka, kout, kalt, va, vout, valt, t, stream, &declined);
            if (s != GPK_OK) break;
        }
        if (pl.count > 0 && declined) {
            ctx->last_sort_path = "radix-onesweep";
            Route route;
            const void *copy_from = NULL;
            route_buffers(ka, kout, kalt, NULL, (int)pl.count, route.keys, &copy_from);
            route_buffers(va, vout, valt, NULL, (int)pl.count, route.vals, &copy_from);
            s = dispatch_passes(ctx, hp.job, pl, route, t, stream, have_bases);
            if (s != GPK_OK) break;
        }
        s = gpk__cuda_rep_end(ctx, stream, &times[rep], "radix bench: timing");
        if (s != GPK_OK) break;
    }
    if (s != GPK_OK) {
        (void)cudaStreamSynchronize(stream);
        free(times);
        return s;
    }
    *ms = gpk__median_ms(times, reps);
    free(times);
    if (pl.count == 0) {
        if (job->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, job->n);
        return GPK_OK;
    }
    return download(ctx, job, hp, kout, vout, stream);
}

/* ------------------------------------------------------------------------
 * Device-pointer API
 * ------------------------------------------------------------------------ */
namespace {

/* One device-API call: its arrays and how it was asked. */
struct DeviceCall {
    gpk_type type;
    size_t kb; /* key bytes */
    int vb;    /* value bytes, 0: keys only */
    const void *kin, *vin;
    void *kout, *vout;
    size_t n;
    unsigned flags;
    cudaStream_t stream;
    const char *fn;
    unsigned begin_bit;
    bool internal; /* the library's own call: no small path, no overlap check */
    bool keys_in_place() const { return kin == kout; }
    bool vals_in_place() const { return vb && vin == vout; }
};

/* The call's options, checked, with key_bits resolved, in *o. */
static gpk_status check_options(gpk_ctx *ctx, const DeviceCall &c, const gpk_radix_opts *opts,
                                gpk_radix_opts *o)
{
    *o = GPK_RADIX_OPTS_INIT;
    if (opts) *o = *opts;
    GPK_CHECK(gpk__radix_bits_check(ctx, c.fn, c.type, o));
    if (c.flags & ~GPK_CUDA_DETECT_BITS)
        return gpk__fail(ctx, GPK_EINVAL, "%s: unknown flags 0x%x", c.fn, c.flags);
    if (o->descending != 0 && o->descending != 1)
        return gpk__fail(ctx, GPK_EINVAL, "%s: descending must be 0 or 1, not %d", c.fn, o->descending);
    const unsigned most_bits = o->key_bits ? o->key_bits : (unsigned)(8 * c.kb);
    if (c.begin_bit >= most_bits && c.n > 0)
        return gpk__fail(ctx, GPK_EINVAL, "%s: bits [%u, %u) are empty", c.fn, c.begin_bit, most_bits);
    return GPK_OK;
}

/* The temp of a call: spares for keys and values (two where in place, for
 * the parity detour), then the work tables; sized for the most passes the
 * request can need, so the size does not depend on the data. */
struct TempPlan {
    unsigned most_bits; /* the end of the bit range */
    PassList worst;     /* the plan of the whole range */
    size_t key_spare, val_spare;
    int key_spares, val_spares;
    unsigned widest; /* the widest digit a pass can have */
    TableSize ts;
    bool tile_only; /* one block sorts it all: no temp */
    size_t need;
};

static void plan_temp(gpk_ctx *ctx, const DeviceCall &c, const gpk_radix_opts &o, TempPlan *tp)
{
    const size_t n = c.n, kb = c.kb;
    const int vb = c.vb;
    const bool detect = (c.flags & GPK_CUDA_DETECT_BITS) != 0;
    tp->most_bits = o.key_bits ? o.key_bits : (unsigned)(8 * kb);
    make_plan(c.begin_bit, tp->most_bits, o.radix_bits, (unsigned)kb, &tp->worst);
    const PassList &worst = tp->worst;
    tp->key_spare = gpk__align_up(n * kb, 256);
    tp->val_spare = gpk__align_up(n * (size_t)vb, 256);
    /* In place, an odd pass count of 3 or more takes the detour spare; the
     * count is that of `worst` unless the bit range is detected (any count
     * up to it then). One spare less is 2^33 u32 keys on an 80 GB card. */
    const bool may_detour = detect ? worst.count >= 3 : worst.count >= 3 && worst.count % 2;
    tp->key_spares = n < 2 ? 0 : (c.keys_in_place() && may_detour) ? 2 : 1;
    tp->val_spares = (n < 2 || !vb) ? 0 : (c.vals_in_place() && may_detour) ? 2 : 1;
    /* the look-back tables for the widest digit a pass can have: the
     * default plan's (8 bits) unless the range is detected (its plan may
     * take up to 11) or the opt-in hybrid may run (its fallbacks too) */
    tp->widest = 0;
    for (uint32_t p = 0; p < worst.count; p++) tp->widest = std::max(tp->widest, (unsigned)worst.width[p]);
    /* the histogram, bases and counters tables: the fixed ones where the
     * plan is only known on the device (detected range, the hybrid), else
     * the plan's own passes x digits */
    tp->ts = TableSize();
    if (detect || (!c.internal && gpk__hook(gpk__test.radix_cuda_hybrid, 0) != 0)) {
        tp->widest = kMaxDigitBits;
    } else {
        tp->ts.passes = std::max<uint32_t>(1, worst.count);
        tp->ts.bits = std::max(1u, tp->widest);
        tp->ts.hybrid = false;
    }
    tp->tile_only = false;
    if (!c.internal && !detect && n <= (size_t)kTileSortKeys) {
        DeviceGuard probe;
        if (probe.enter(ctx->device) == cudaSuccess) tp->tile_only = tile_takes(ctx, n, (int)kb, vb, worst);
    }
    tp->need = tp->tile_only ? 1
                             : tp->key_spares * tp->key_spare + tp->val_spares * tp->val_spare +
            temp_bytes(n, (int)kb, vb, tp->widest, tp->ts);
}

/* The arrays of a call with temp: set where there are keys, and (the
 * public calls) no two sharing memory, but for in == out, which sorts in
 * place (any other sharing between the caller's arrays and the temp
 * corrupts them; the library's own callers lay out their buffers
 * themselves). */
static gpk_status check_arrays(gpk_ctx *ctx, const DeviceCall &c, const void *d_temp, size_t need)
{
    if (c.n > 0 && (!c.kin || !c.kout)) return gpk__fail(ctx, GPK_EINVAL, "%s: a key pointer is NULL", c.fn);
    if (c.n > 0 && c.vb && (!c.vin || !c.vout))
        return gpk__fail(ctx, GPK_EINVAL, "%s: a value pointer is NULL", c.fn);
    if (c.internal) return GPK_OK;
    const size_t kn = c.n * c.kb, vn = c.n * (size_t)c.vb;
    const struct {
        const void *p;
        size_t len;
        const char *name;
    } buf[5] = {{c.kin, kn, "d_keys_in"},
                {c.keys_in_place() ? NULL : c.kout, kn, "d_keys_out"},
                {c.vb ? c.vin : NULL, vn, "d_values_in"},
                {c.vb && !c.vals_in_place() ? c.vout : NULL, vn, "d_values_out"},
                {d_temp, need, "d_temp"}};
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (gpk__overlap(buf[i].p, buf[i].len, buf[j].p, buf[j].len))
                return gpk__fail(ctx, GPK_EINVAL, "%s: %s and %s overlap", c.fn, buf[i].name, buf[j].name);
    return GPK_OK;
}

/* The one-block sort of a call that tile_takes accepted: in to out in one
 * launch (in place too: the block reads every key before it writes one). */
static gpk_status run_tile_call(gpk_ctx *ctx, const DeviceCall &c, const DeviceJob &job, const PassList &pl)
{
    Route route;
    for (uint32_t i = 0; i <= pl.count; i++) {
        route.keys[i] = i == 0 ? c.kin : c.kout;
        route.vals[i] = !c.vb ? NULL : i == 0 ? c.vin : c.vout;
    }
    bool ran = false;
    gpk_status s = GPK_OK;
    if (c.kb == 8)
        s = c.vb == 8 ? run_tile<uint64_t, uint64_t>(ctx, job, pl, route, c.stream, &ran)
                      : run_tile<uint64_t, uint32_t>(ctx, job, pl, route, c.stream, &ran);
    else
        s = c.vb == 8 ? run_tile<uint32_t, uint64_t>(ctx, job, pl, route, c.stream, &ran)
                      : run_tile<uint32_t, uint32_t>(ctx, job, pl, route, c.stream, &ran);
    if (s == GPK_OK && !ran)
        return gpk__fail(ctx, GPK_EDEVICE, "radix sort: the one-block sort declined a call sized for it");
    return s;
}

/* The sort of a checked call in d_temp, laid out as tp says. */
static gpk_status run_device_sort(gpk_ctx *ctx, const DeviceCall &c, const gpk_radix_opts &o,
                                  const TempPlan &tp, void *d_temp)
{
    const size_t n = c.n, kb = c.kb;
    const int vb = c.vb;
    DeviceGuard guard;
    cudaError_t e = guard.enter(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");

    char *p = (char *)d_temp;
    void *kalt1 = tp.key_spares >= 1 ? p : NULL;
    void *kalt2 = tp.key_spares >= 2 ? p + tp.key_spare : NULL;
    p += tp.key_spares * tp.key_spare;
    void *valt1 = tp.val_spares >= 1 ? p : NULL;
    void *valt2 = tp.val_spares >= 2 ? p + tp.val_spare : NULL;
    p += tp.val_spares * tp.val_spare;
    Temp t = tp.tile_only ? Temp() : carve_temp(p, n, (int)kb, vb, tp.widest, tp.ts);

    DeviceJob job;
    job.type = c.type;
    job.kb = (int)kb;
    job.vb = vb;
    job.vmode = vb ? V_LOAD : V_NONE;
    job.n = n;
    job.no_small = c.internal;
    /* descending: the first pass maps the keys to descending sort keys and
     * the last maps them back (core/key_traits.h, twiddle_map_ordered) */
    job.desc = o.descending != 0;
    job.key_bits = o.key_bits;

    unsigned begin = c.begin_bit, end = tp.most_bits;
    PassList pl;
    bool have_bases = false;
    if (n >= 2 && (c.flags & GPK_CUDA_DETECT_BITS)) {
        gpk_status s = dispatch_detect_plan(ctx, job, c.kin, t, c.stream, o.radix_bits, tp.most_bits, &begin,
                                            &end, &pl, &have_bases);
        if (s != GPK_OK) return s;
    } else {
        make_plan(begin, end, o.radix_bits, (unsigned)kb, &pl);
    }
    if (n < 2 || pl.count == 0) {
        /* nothing to reorder */
        if (n > 0 && !c.keys_in_place())
            e = cudaMemcpyAsync(c.kout, c.kin, n * kb, cudaMemcpyDeviceToDevice, c.stream);
        if (e == cudaSuccess && n > 0 && vb && !c.vals_in_place())
            e = cudaMemcpyAsync(c.vout, c.vin, n * vb, cudaMemcpyDeviceToDevice, c.stream);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: cudaMemcpyAsync");
        return GPK_OK;
    }
    if (tp.tile_only) return run_tile_call(ctx, c, job, pl);
    HybridPlan hy;
    if (!c.internal && tp.ts.hybrid && hybrid_pick(job, begin, end, o.radix_bits, &hy)) {
        bool declined = false;
        gpk_status s = dispatch_hybrid(ctx, job, hy, c.kin, c.kout, kalt1, vb ? c.vin : NULL,
                                       vb ? c.vout : NULL, valt1, t, c.stream, &declined);
        if (s != GPK_OK || !declined) return s;
    }
    ctx->last_sort_path = "radix-onesweep";
    Route route;
    const void *key_copy = NULL, *val_copy = NULL;
    route_buffers(c.kin, c.kout, kalt1, kalt2, (int)pl.count, route.keys, &key_copy);
    if (vb) route_buffers(c.vin, c.vout, valt1, valt2, (int)pl.count, route.vals, &val_copy);
    gpk_status s = dispatch_passes(ctx, job, pl, route, t, c.stream, have_bases);
    if (s != GPK_OK) return s;
    if (key_copy) e = cudaMemcpyAsync(c.kout, key_copy, n * kb, cudaMemcpyDeviceToDevice, c.stream);
    if (e == cudaSuccess && val_copy)
        e = cudaMemcpyAsync(c.vout, val_copy, n * vb, cudaMemcpyDeviceToDevice, c.stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "radix sort: cudaMemcpyAsync");
    return GPK_OK;
}

static gpk_status device_sort(gpk_ctx *ctx, void *d_temp, size_t *temp_size, gpk_type key_type,
                              const void *d_keys_in, void *d_keys_out, size_t value_width,
                              const void *d_values_in, void *d_values_out, size_t n,
                              const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream, const char *fn,
                              unsigned begin_bit = 0, bool internal = false)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    if (ctx->backend != GPK_BACKEND_CUDA || !ctx->cuda)
        return gpk__fail(ctx, GPK_EINVAL, "%s: ctx is not a CUDA context", fn);
    if (!temp_size) return gpk__fail(ctx, GPK_EINVAL, "%s: temp_bytes is NULL", fn);
    const size_t kb = gpk_type_size(key_type);
    if (kb == 0) return gpk__fail(ctx, GPK_EINVAL, "%s: unknown key type %d", fn, (int)key_type);
    if (value_width != 0 && value_width != 4 && value_width != 8)
        return gpk__fail(ctx, GPK_EINVAL, "%s: values must be 4 or 8 bytes wide, not %zu", fn, value_width);
    const DeviceCall c = {key_type, kb,    (int)value_width, d_keys_in, d_values_in, d_keys_out, d_values_out,
                          n,        flags, stream,           fn,        begin_bit,   internal};
    gpk_radix_opts o;
    GPK_CHECK(check_options(ctx, c, opts, &o));
    TempPlan tp;
    plan_temp(ctx, c, o, &tp);
    if (!d_temp) {
        *temp_size = tp.need;
        return GPK_OK;
    }
    if (*temp_size < tp.need)
        return gpk__fail(ctx, GPK_EINVAL,
                         "%s: temp_bytes is %zu, this call needs %zu (ask with d_temp = NULL)", fn,
                         *temp_size, tp.need);
    GPK_CHECK(check_arrays(ctx, c, d_temp, tp.need));
    return run_device_sort(ctx, c, o, tp, d_temp);
}

} // namespace

/* The pairs calls take 4- or 8-byte values (device_sort also takes 0: keys). */
static gpk_status pairs_width(gpk_ctx *ctx, size_t value_width, const char *fn)
{
    if (!ctx || value_width == 4 || value_width == 8) return GPK_OK;
    gpk__clear_error(ctx);
    return gpk__fail(ctx, GPK_EINVAL, "%s: value_width must be 4 or 8, not %zu", fn, value_width);
}

extern "C" gpk_status gpk_cuda_sort_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                         const void *d_keys_in, void *d_keys_out, size_t n,
                                         const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream)
{
    return device_sort(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, 0, NULL, NULL, n, opts,
                       flags, stream, "gpk_cuda_sort_keys");
}

extern "C" gpk_status gpk_cuda_sort_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                          const void *d_keys_in, void *d_keys_out, size_t value_width,
                                          const void *d_values_in, void *d_values_out, size_t n,
                                          const gpk_radix_opts *opts, unsigned flags, cudaStream_t stream)
{
    GPK_CHECK(pairs_width(ctx, value_width, "gpk_cuda_sort_pairs"));
    return device_sort(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in,
                       d_values_out, n, opts, flags, stream, "gpk_cuda_sort_pairs");
}

/* The device-pointer sort by the bits [begin, end) of the mapped key only
 * (gpk/cuda.h's _bits calls; the multi-GPU and MPI sorts' partition-first
 * plans): always the separate Onesweep launches (no hybrid, no
 * single-launch path), so that several run side by side on different
 * streams. */
static gpk_status sort_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                            const void *d_keys_in, void *d_keys_out, size_t value_width,
                            const void *d_values_in, void *d_values_out, size_t n, unsigned begin,
                            unsigned end, cudaStream_t stream, const char *fn, int descending = 0)
{
    const size_t kb = gpk_type_size(key_type);
    if (ctx && kb && !(begin < end && end <= 8 * kb)) {
        gpk__clear_error(ctx);
        return gpk__fail(ctx, GPK_EINVAL, "%s: bits [%u, %u) are not a range within the %u bits of %s", fn,
                         begin, end, (unsigned)(8 * kb), gpk_type_name(key_type));
    }
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = end;
    o.descending = descending;
    return device_sort(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in,
                       d_values_out, n, &o, 0, stream, fn, begin, true);
}

extern "C" gpk_status gpk__radix_cuda_sort_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                                gpk_type key_type, const void *d_keys_in, void *d_keys_out,
                                                size_t value_width, const void *d_values_in,
                                                void *d_values_out, size_t n, unsigned begin, unsigned end,
                                                int descending, void *stream)
{
    return sort_bits(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in,
                     d_values_out, n, begin, end, (cudaStream_t)stream, "multi-device sort (bucket)",
                     descending);
}

extern "C" gpk_status gpk_cuda_sort_keys_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                              gpk_type key_type, const void *d_keys_in, void *d_keys_out,
                                              size_t n, unsigned begin_bit, unsigned end_bit,
                                              cudaStream_t stream)
{
    return sort_bits(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, 0, NULL, NULL, n, begin_bit,
                     end_bit, stream, "gpk_cuda_sort_keys_bits");
}

extern "C" gpk_status gpk_cuda_sort_pairs_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                               gpk_type key_type, const void *d_keys_in, void *d_keys_out,
                                               size_t value_width, const void *d_values_in,
                                               void *d_values_out, size_t n, unsigned begin_bit,
                                               unsigned end_bit, cudaStream_t stream)
{
    GPK_CHECK(pairs_width(ctx, value_width, "gpk_cuda_sort_pairs_bits"));
    return sort_bits(ctx, d_temp, temp_bytes, key_type, d_keys_in, d_keys_out, value_width, d_values_in,
                     d_values_out, n, begin_bit, end_bit, stream, "gpk_cuda_sort_pairs_bits");
}

/* For the CUDA quicksort's records (quick_cuda.cu): a stable sort of n
 * mapped unsigned keys by their bits [begin, end), 2 <= end - begin <= 22,
 * in exactly two passes (keys -> keys_alt -> keys), with the input
 * positions as values, generated by the first pass (-> vals_alt -> vals).
 * temp: gpk__radix_cuda_window_temp(n, key_bytes) bytes. */
extern "C" size_t gpk__radix_cuda_window_temp(size_t n, int key_bytes) { return temp_bytes(n, key_bytes, 4); }

extern "C" gpk_status gpk__radix_cuda_window_sort(gpk_ctx *ctx, void *temp, size_t n, int key_bytes,
                                                  void *keys, void *keys_alt, uint32_t *vals,
                                                  uint32_t *vals_alt, unsigned begin, unsigned end,
                                                  cudaStream_t stream)
{
    const unsigned bits = end > begin ? end - begin : 0;
    if ((key_bytes != 4 && key_bytes != 8) || bits < 2 || bits > 2 * kMaxDigitBits ||
        end > 8u * (unsigned)key_bytes || n > UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "radix window sort: %d-byte keys, bits [%u, %u), n = %zu",
                         key_bytes, begin, end, n);
    PassList pl;
    make_plan(begin, end, (bits + 1) / 2, (unsigned)key_bytes, &pl);
    if (pl.count != 2)
        return gpk__fail(ctx, GPK_EDEVICE, "radix window sort: internal error (%u passes)", pl.count);
    Temp t = carve_temp(temp, n, key_bytes, 4);
    DeviceJob job;
    job.type = key_bytes == 8 ? GPK_U64 : GPK_U32;
    job.kb = key_bytes;
    job.vb = 4;
    job.vmode = V_IOTA;
    job.n = n;
    Route route;
    route.keys[0] = keys;
    route.keys[1] = keys_alt;
    route.keys[2] = keys;
    route.vals[0] = vals; /* not read: the first pass generates the positions */
    route.vals[1] = vals_alt;
    route.vals[2] = vals;
    return dispatch_passes(ctx, job, pl, route, t, stream);
}

/* ------------------------------------------------------------------------
 * The multi-GPU sort's distributed LSD plan (radix_internal.h,
 * gpk_radix_dist): every pass of every device scatters its keys to their
 * global positions on the devices that own them.
 * ------------------------------------------------------------------------ */
namespace {

/* The same plan on every device: every bit of [0, key_bits), the tuned
 * digits (the shard API does not detect the bit range). */
static void dist_plan(const gpk_radix_dist *j, PassList *pl)
{
    const unsigned bits = j->key_bits ? j->key_bits : 8 * j->key_width;
    make_plan(0, bits, j->radix_bits, j->key_width, pl);
}

static size_t dist_share(const gpk_radix_dist *j) { return j->bounds[j->self + 1] - j->bounds[j->self]; }

static size_t dist_next_words(int k) { return (size_t)kNextCopies * (size_t)k << kMaxDigitBits; }

struct DistBuffers {
    Temp t;
    uint32_t *next_copies;
    unsigned long long *next_sums;
};

/* temp: [spare keys | spare values | tables | next-digit counters and sums] */
static DistBuffers dist_buffers(const gpk_radix_dist *j)
{
    const size_t m = dist_share(j), most = std::max(j->n, m);
    char *p = (char *)j->temp + gpk__align_up(m * j->key_width, 256) + gpk__align_up(m * j->value_width, 256);
    DistBuffers b;
    b.t = carve_temp(p, most, (int)j->key_width, (int)j->value_width);
    p += temp_bytes(most, (int)j->key_width, (int)j->value_width);
    b.next_copies = (uint32_t *)p;
    p += gpk__align_up(dist_next_words(j->k) * sizeof(uint32_t), 256);
    b.next_sums = (unsigned long long *)p;
    return b;
}

template <class O>
__global__ void global_bases_kernel(const unsigned long long *from, O *to, uint32_t digits,
                                    unsigned long long offset)
{
    const uint32_t d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d < digits) to[d] = (O)(from[d] + offset);
}

__global__ void next_sums_kernel(const uint32_t *copies, unsigned long long *sums, uint32_t entries)
{
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= entries) return;
    unsigned long long sum = 0;
    for (uint32_t c = 0; c < kNextCopies; c++) sum += copies[(size_t)c * entries + e];
    sums[e] = sum;
}

} // namespace

extern "C" unsigned gpk__radix_cuda_dist_plan(const gpk_radix_dist *j, unsigned *digits)
{
    PassList pl;
    dist_plan(j, &pl);
    for (uint32_t p = 0; p < pl.count; p++) digits[p] = 1u << pl.width[p];
    return pl.count;
}

extern "C" size_t gpk__radix_cuda_dist_temp(size_t n, size_t m, unsigned key_width, unsigned value_width,
                                            int k)
{
    const size_t most = std::max(n, m);
    return gpk__align_up(m * key_width, 256) + gpk__align_up(m * value_width, 256) +
        temp_bytes(most, (int)key_width, (int)value_width) +
        gpk__align_up(dist_next_words(k) * sizeof(uint32_t), 256) +
        gpk__align_up(((size_t)k << kMaxDigitBits) * sizeof(unsigned long long), 256);
}

extern "C" void gpk__radix_cuda_dist_spare(void *temp, size_t m, unsigned key_width, void **keys,
                                           void **values)
{
    *keys = temp;
    *values = (char *)temp + gpk__align_up(m * key_width, 256);
}

extern "C" gpk_status gpk__radix_cuda_dist_count(gpk_ctx *ctx, const gpk_radix_dist *j,
                                                 unsigned long long *counts)
{
    PassList pl;
    dist_plan(j, &pl);
    if (pl.count == 0) return gpk__fail(ctx, GPK_EINVAL, "multi-device sort: no bits to sort");
    const uint32_t digits = 1u << pl.width[0];
    if (j->n == 0) {
        memset(counts, 0, digits * sizeof *counts);
        return GPK_OK;
    }
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    DistBuffers b = dist_buffers(j);
    DeviceJob job;
    job.type = j->key_type;
    job.kb = (int)j->key_width;
    job.vb = 0;
    job.vmode = V_NONE;
    job.n = j->n;
    job.positions = j->total;
    PassList first = pl; /* the first pass's digits only: the others' counts change as the keys move */
    first.count = 1;
    gpk_status s = j->key_width == 8 ? run_histogram<uint64_t>(ctx, job, first, j->keys, b.t, st->stream)
                                     : run_histogram<uint32_t>(ctx, job, first, j->keys, b.t, st->stream);
    if (s != GPK_OK) return s;
    const cudaError_t e =
        cudaMemcpyAsync(counts, b.t.hist, digits * sizeof *counts, cudaMemcpyDeviceToHost, st->stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "multi-device sort: digit counts to the host");
}

extern "C" gpk_status gpk__radix_cuda_dist_pass(gpk_ctx *ctx, const gpk_radix_dist *j, unsigned p,
                                                const unsigned long long *bases, unsigned long long *next)
{
    PassList pl;
    dist_plan(j, &pl);
    if (p >= pl.count) return gpk__fail(ctx, GPK_EINVAL, "multi-device sort: pass %u of %u", p, pl.count);
    const bool last = p + 1 == pl.count;
    const uint32_t digits = 1u << pl.width[p];
    const uint32_t entries = last ? 0 : (uint32_t)j->k << pl.width[p + 1];
    /* pass p reads the shard (p = 0), else what pass p - 1 wrote here: the
     * output where an even number of passes followed it, else the spare */
    const size_t n = p == 0 ? j->n : dist_share(j);
    if (n == 0) {
        if (!last) memset(next, 0, entries * sizeof *next);
        return GPK_OK;
    }
    const bool prev_to_out = p > 0 && (pl.count - p) % 2 == 0;
    Route r;
    memset(&r, 0, sizeof r);
    r.keys[p] = p == 0 ? j->keys : prev_to_out ? j->keys_out[j->self] : j->keys_alt[j->self];
    r.vals[p] = p == 0 ? j->values : prev_to_out ? j->values_out[j->self] : j->values_alt[j->self];
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    DistBuffers b = dist_buffers(j);
    DeviceJob job;
    job.type = j->key_type;
    job.kb = (int)j->key_width;
    job.vb = (int)j->value_width;
    job.vmode = j->value_width ? V_LOAD : V_NONE;
    job.n = n;
    job.positions = j->total;
    /* this pass's global bases (portion 0; later portions chain from them)
     * through the histogram's row of the pass, which is not read again */
    unsigned long long *row = b.t.hist + (size_t)p * pl.stride;
    cudaError_t e = cudaMemcpyAsync(row, bases, digits * sizeof *bases, cudaMemcpyHostToDevice, st->stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "multi-device sort: digit bases to the device");
    if (wide_positions(job))
        global_bases_kernel<uint64_t><<<div_up(digits, 256), 256, 0, st->stream>>>(
            row, (uint64_t *)b.t.bases + (size_t)p * pl.stride, digits, kPosOffset);
    else
        global_bases_kernel<uint32_t><<<div_up(digits, 256), 256, 0, st->stream>>>(
            row, (uint32_t *)b.t.bases + (size_t)p * pl.stride, digits, 0);
    e = cudaGetLastError();
    if (e == cudaSuccess && !last)
        e = cudaMemsetAsync(b.next_copies, 0, (size_t)kNextCopies * entries * sizeof(uint32_t), st->stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "multi-device sort: bases");
    DistPass dp;
    dp.j = j;
    dp.to_out = (pl.count - 1 - p) % 2 == 0;
    dp.next_counts = last ? NULL : b.next_copies;
    gpk_status s = dispatch_passes(ctx, job, pl, r, b.t, st->stream, true, p, p + 1, &dp);
    if (s != GPK_OK || last) return s;
    next_sums_kernel<<<div_up(entries, 256), 256, 0, st->stream>>>(b.next_copies, b.next_sums, entries);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(next, b.next_sums, entries * sizeof *next, cudaMemcpyDeviceToHost, st->stream);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "multi-device sort: next digit counts");
}
