/* gpk__avx2_sort32, gpk__avx2_sort64, gpk__avx2_sort_f32,
 * gpk__avx2_sort_f64 (vector_sort_quick.h): a quicksort of 32-bit keys or
 * floats (8 to a register), 64-bit keys or doubles (4) in AVX2
 * registers, the design of
 * vector_sort_avx512.c. The two files mirror each other function for
 * function (the heap sort, the pivot rule, the recursion and the depth
 * limit are shared code: quick_driver.h, quick_network.h, quick_reads.h,
 * quick_keys.h); a change to one belongs in the other. Each key width's
 * instructions sit in one block, named for what they do (vmin, vgreater,
 * vpermute, ...); the code after it is the same for every width.
 *
 * - A range of more than SMALL_MAX keys is split around the median of a
 *   sample (16 keys at fixed strides, 64 from 4096 keys on) sorted by the
 *   network below. The partition is in place: UNROLL registers from each
 *   end are held first; later blocks of UNROLL registers are read from
 *   the end with less room written back. The room (keys read, not yet
 *   written back) then always equals the keys in registers, 2 * UNROLL
 *   registers' worth between blocks; the side with less room holds at
 *   most UNROLL registers' worth before a block, so after the block's
 *   loads each side holds at least UNROLL, and each of the block's
 *   UNROLL registers takes at most one register's worth of room from
 *   either side: every store in the loop has a whole register of room on
 *   its side.
 * - AVX2 has no compress. A register's keys are permuted in one
 *   instruction by a table indexed by the compare's 8-bit lane mask: the
 *   keys going left in the low lanes, those going right in the high
 *   lanes, each in lane order. The whole register is stored at the left
 *   write position and again ending at the right one; the lanes of the
 *   other side land in room that later stores overwrite. The held
 *   registers and the tail, partitioned once nothing is left to read
 *   (the room then exactly their keys), go through a buffer.
 * - Keys below the pivot go left, the rest right; the partition finds the
 *   range's least and greatest key too. All keys equal: done. The pivot
 *   the least key (nothing went left): a second partition moves its
 *   copies left, where they are done. Every partition finishes a key. A
 *   range whose sample is all one key is first read for another key:
 *   all equal, it is done unwritten.
 * - At most SMALL_MAX keys: a bitonic network on up to 16 ymm registers,
 *   padded with the greatest key.
 * - Past a depth of 2 log2(n) partitions a range is heap-sorted.
 * Functions that use AVX2 carry GNU target attributes, so the library
 * keeps its baseline; gpk__avx2_sort_level checks the processor at run
 * time. Nothing allocates; the recursion takes the smaller side. */
#include "vector_sort_quick.h"

#include "../core/test_hooks.h"

#include <stdint.h>
#include <string.h>

/* The keys this build of the file sorts: 32-bit integers here, 64-bit
 * ones where vector_sort64_avx2.c includes it, and floats or doubles
 * (QUICK_FLOATS, their bits as keys of their width) where
 * vector_sort_f32_avx2.c or vector_sort_f64_avx2.c does. */
#ifndef QUICK_KEY_BITS
#define QUICK_KEY_BITS 32
#endif
#if QUICK_KEY_BITS == 32 && defined(QUICK_FLOATS)
#define QUICK_KEY uint32_t
#define QUICK_ENTRY gpk__avx2_sort_f32
#define QUICK_SPLIT gpk__avx2_split_f32
#define QUICK_FALLBACKS gpk__avx2_sort_f32_fallbacks
#define SAMPLE_OBSERVER gpk__avx2_sort_f32_sample_observer
#elif QUICK_KEY_BITS == 32
#define QUICK_KEY uint32_t
#define QUICK_ENTRY gpk__avx2_sort32
#define QUICK_SPLIT gpk__avx2_split32
#define QUICK_FALLBACKS gpk__avx2_sort_fallbacks
#define SAMPLE_OBSERVER gpk__avx2_sort_sample_observer
#elif defined(QUICK_FLOATS)
#define QUICK_KEY uint64_t
#define QUICK_ENTRY gpk__avx2_sort_f64
#define QUICK_SPLIT gpk__avx2_split_f64
#define QUICK_FALLBACKS gpk__avx2_sort_f64_fallbacks
#define SAMPLE_OBSERVER gpk__avx2_sort_f64_sample_observer
#else
#define QUICK_KEY uint64_t
#define QUICK_ENTRY gpk__avx2_sort64
#define QUICK_SPLIT gpk__avx2_split64
#define QUICK_FALLBACKS gpk__avx2_sort64_fallbacks
#define SAMPLE_OBSERVER gpk__avx2_sort64_sample_observer
#endif
size_t QUICK_FALLBACKS;
void (*SAMPLE_OBSERVER)(const QUICK_KEY *sample, size_t m);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,popcnt")))
#define INLINE static inline __attribute__((always_inline)) TARGET

#if QUICK_KEY_BITS == 32 && !defined(QUICK_FLOATS) /* one level function for every build */
int gpk__avx2_sort_level(void)
{
    const long long forced = gpk__hook(gpk__test.cpu_sort_simd, -1);
    if (!__builtin_cpu_supports("avx2") || (forced >= 0 && forced < GPK_SIMD_AVX2)) return GPK_SIMD_PORTABLE;
    return GPK_SIMD_AVX2;
}
#endif

/* Registers a block of the partition's main loop reads from one end; the
 * partition needs 2 * UNROLL registers of keys, at most SMALL_MAX + 1.
 * 8 rather than 4: 6-25 % less time from 2^16 to 2^20 32-bit keys on the
 * two processors measured (docs/perf/radix.md, v21). */
#ifndef UNROLL
#define UNROLL 8
#endif

#if QUICK_KEY_BITS == 32
#define QUICK_LANES 8
INLINE __m256i vset1(uint32_t x) { return _mm256_set1_epi32((int)x); }
#else
#define QUICK_LANES 4
INLINE __m256i vset1(uint64_t x) { return _mm256_set1_epi64x((long long)x); }
#endif
/* The sign bit flipped where s = 0: unsigned keys made signed, and back. */
INLINE __m256i to_signed(__m256i v, int s)
{
#ifdef QUICK_FLOATS
    return v; /* compared as floats */
#else
    return s ? v : _mm256_xor_si256(v, vset1((QUICK_KEY)1 << (QUICK_KEY_BITS - 1)));
#endif
}

#if QUICK_KEY_BITS == 32
/* For each 8-bit mask of the lanes going right, byte j of the entry is
 * the lane that goes to lane j: first the lanes whose bit is clear, then
 * those whose bit is set, each in increasing order. Generated by
 *   for m in 0..255: order = [i for i in 0..7 if not bit i of m]
 *                          + [i for i in 0..7 if bit i of m];
 *   entry = sum(order[j] << 8 j). */
static const uint64_t perm_table[256] = {
    0x0706050403020100u, 0x0007060504030201u, 0x0107060504030200u, 0x0100070605040302u, 0x0207060504030100u,
    0x0200070605040301u, 0x0201070605040300u, 0x0201000706050403u, 0x0307060504020100u, 0x0300070605040201u,
    0x0301070605040200u, 0x0301000706050402u, 0x0302070605040100u, 0x0302000706050401u, 0x0302010706050400u,
    0x0302010007060504u, 0x0407060503020100u, 0x0400070605030201u, 0x0401070605030200u, 0x0401000706050302u,
    0x0402070605030100u, 0x0402000706050301u, 0x0402010706050300u, 0x0402010007060503u, 0x0403070605020100u,
    0x0403000706050201u, 0x0403010706050200u, 0x0403010007060502u, 0x0403020706050100u, 0x0403020007060501u,
    0x0403020107060500u, 0x0403020100070605u, 0x0507060403020100u, 0x0500070604030201u, 0x0501070604030200u,
    0x0501000706040302u, 0x0502070604030100u, 0x0502000706040301u, 0x0502010706040300u, 0x0502010007060403u,
    0x0503070604020100u, 0x0503000706040201u, 0x0503010706040200u, 0x0503010007060402u, 0x0503020706040100u,
    0x0503020007060401u, 0x0503020107060400u, 0x0503020100070604u, 0x0504070603020100u, 0x0504000706030201u,
    0x0504010706030200u, 0x0504010007060302u, 0x0504020706030100u, 0x0504020007060301u, 0x0504020107060300u,
    0x0504020100070603u, 0x0504030706020100u, 0x0504030007060201u, 0x0504030107060200u, 0x0504030100070602u,
    0x0504030207060100u, 0x0504030200070601u, 0x0504030201070600u, 0x0504030201000706u, 0x0607050403020100u,
    0x0600070504030201u, 0x0601070504030200u, 0x0601000705040302u, 0x0602070504030100u, 0x0602000705040301u,
    0x0602010705040300u, 0x0602010007050403u, 0x0603070504020100u, 0x0603000705040201u, 0x0603010705040200u,
    0x0603010007050402u, 0x0603020705040100u, 0x0603020007050401u, 0x0603020107050400u, 0x0603020100070504u,
    0x0604070503020100u, 0x0604000705030201u, 0x0604010705030200u, 0x0604010007050302u, 0x0604020705030100u,
    0x0604020007050301u, 0x0604020107050300u, 0x0604020100070503u, 0x0604030705020100u, 0x0604030007050201u,
    0x0604030107050200u, 0x0604030100070502u, 0x0604030207050100u, 0x0604030200070501u, 0x0604030201070500u,
    0x0604030201000705u, 0x0605070403020100u, 0x0605000704030201u, 0x0605010704030200u, 0x0605010007040302u,
    0x0605020704030100u, 0x0605020007040301u, 0x0605020107040300u, 0x0605020100070403u, 0x0605030704020100u,
    0x0605030007040201u, 0x0605030107040200u, 0x0605030100070402u, 0x0605030207040100u, 0x0605030200070401u,
    0x0605030201070400u, 0x0605030201000704u, 0x0605040703020100u, 0x0605040007030201u, 0x0605040107030200u,
    0x0605040100070302u, 0x0605040207030100u, 0x0605040200070301u, 0x0605040201070300u, 0x0605040201000703u,
    0x0605040307020100u, 0x0605040300070201u, 0x0605040301070200u, 0x0605040301000702u, 0x0605040302070100u,
    0x0605040302000701u, 0x0605040302010700u, 0x0605040302010007u, 0x0706050403020100u, 0x0700060504030201u,
    0x0701060504030200u, 0x0701000605040302u, 0x0702060504030100u, 0x0702000605040301u, 0x0702010605040300u,
    0x0702010006050403u, 0x0703060504020100u, 0x0703000605040201u, 0x0703010605040200u, 0x0703010006050402u,
    0x0703020605040100u, 0x0703020006050401u, 0x0703020106050400u, 0x0703020100060504u, 0x0704060503020100u,
    0x0704000605030201u, 0x0704010605030200u, 0x0704010006050302u, 0x0704020605030100u, 0x0704020006050301u,
    0x0704020106050300u, 0x0704020100060503u, 0x0704030605020100u, 0x0704030006050201u, 0x0704030106050200u,
    0x0704030100060502u, 0x0704030206050100u, 0x0704030200060501u, 0x0704030201060500u, 0x0704030201000605u,
    0x0705060403020100u, 0x0705000604030201u, 0x0705010604030200u, 0x0705010006040302u, 0x0705020604030100u,
    0x0705020006040301u, 0x0705020106040300u, 0x0705020100060403u, 0x0705030604020100u, 0x0705030006040201u,
    0x0705030106040200u, 0x0705030100060402u, 0x0705030206040100u, 0x0705030200060401u, 0x0705030201060400u,
    0x0705030201000604u, 0x0705040603020100u, 0x0705040006030201u, 0x0705040106030200u, 0x0705040100060302u,
    0x0705040206030100u, 0x0705040200060301u, 0x0705040201060300u, 0x0705040201000603u, 0x0705040306020100u,
    0x0705040300060201u, 0x0705040301060200u, 0x0705040301000602u, 0x0705040302060100u, 0x0705040302000601u,
    0x0705040302010600u, 0x0705040302010006u, 0x0706050403020100u, 0x0706000504030201u, 0x0706010504030200u,
    0x0706010005040302u, 0x0706020504030100u, 0x0706020005040301u, 0x0706020105040300u, 0x0706020100050403u,
    0x0706030504020100u, 0x0706030005040201u, 0x0706030105040200u, 0x0706030100050402u, 0x0706030205040100u,
    0x0706030200050401u, 0x0706030201050400u, 0x0706030201000504u, 0x0706040503020100u, 0x0706040005030201u,
    0x0706040105030200u, 0x0706040100050302u, 0x0706040205030100u, 0x0706040200050301u, 0x0706040201050300u,
    0x0706040201000503u, 0x0706040305020100u, 0x0706040300050201u, 0x0706040301050200u, 0x0706040301000502u,
    0x0706040302050100u, 0x0706040302000501u, 0x0706040302010500u, 0x0706040302010005u, 0x0706050403020100u,
    0x0706050004030201u, 0x0706050104030200u, 0x0706050100040302u, 0x0706050204030100u, 0x0706050200040301u,
    0x0706050201040300u, 0x0706050201000403u, 0x0706050304020100u, 0x0706050300040201u, 0x0706050301040200u,
    0x0706050301000402u, 0x0706050302040100u, 0x0706050302000401u, 0x0706050302010400u, 0x0706050302010004u,
    0x0706050403020100u, 0x0706050400030201u, 0x0706050401030200u, 0x0706050401000302u, 0x0706050402030100u,
    0x0706050402000301u, 0x0706050402010300u, 0x0706050402010003u, 0x0706050403020100u, 0x0706050403000201u,
    0x0706050403010200u, 0x0706050403010002u, 0x0706050403020100u, 0x0706050403020001u, 0x0706050403020100u,
    0x0706050403020100u,
};

/* The 32-bit keys' instructions, each named for what it does; s = 1
 * compares as signed integers, 0 as unsigned, and is a constant wherever
 * these are inlined. */
#ifndef QUICK_FLOATS /* floats: after both widths' blocks */
INLINE __m256i vmin(__m256i a, __m256i b, int s)
{
    return s ? _mm256_min_epi32(a, b) : _mm256_min_epu32(a, b);
}
INLINE __m256i vmax(__m256i a, __m256i b, int s)
{
    return s ? _mm256_max_epi32(a, b) : _mm256_max_epu32(a, b);
}
/* a above b, lane by lane, as signed integers: a mask of the lanes. */
INLINE unsigned vgreater(__m256i a, __m256i b)
{
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b)));
}
#endif
INLINE __m256i vload_low(const uint32_t *p, __m256i mask)
{
    return _mm256_maskload_epi32((const int *)p, mask);
}
/* The pieces of quick_network.h. */
INLINE __m256i lanes_xor(__m256i v, int d)
{
    return d == 1 ? _mm256_shuffle_epi32(v, 0xB1)
        : d == 2  ? _mm256_shuffle_epi32(v, 0x4E)
                  : _mm256_permute2x128_si256(v, v, 0x01);
}
INLINE __m256i lanes_reversed(__m256i v, int b)
{
    return b == 2 ? _mm256_shuffle_epi32(v, 0xB1)
        : b == 4  ? _mm256_shuffle_epi32(v, 0x1B)
                  : _mm256_permutevar8x32_epi32(v, _mm256_set_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
INLINE __m256i blend_upper(__m256i lo, __m256i hi, int d)
{
    return d == 1 ? _mm256_blend_epi32(lo, hi, 0xAA)
        : d == 2  ? _mm256_blend_epi32(lo, hi, 0xCC)
                  : _mm256_blend_epi32(lo, hi, 0xF0);
}
/* unpacklo / unpackhi interleave within each 128-bit half */
INLINE __m256i interleave_lo(__m256i a, __m256i b)
{
    return _mm256_permute2x128_si256(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b), 0x20);
}
INLINE __m256i interleave_hi(__m256i a, __m256i b)
{
    return _mm256_permute2x128_si256(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b), 0x31);
}
#else
/* For each 4-bit mask of the lanes going right, the 32-bit halves of
 * the lanes in the order of perm_table's entries: byte j of an entry is
 * the half that goes to half j. Generated by
 *   for m in 0..15: order = [i for i in 0..3 if not bit i of m]
 *                         + [i for i in 0..3 if bit i of m];
 *   halves = [2 i, 2 i + 1 for i in order];
 *   entry = sum(halves[j] << 8 j). */
static const uint64_t perm_table[16] = {
    0x0706050403020100u, 0x0100070605040302u, 0x0302070605040100u, 0x0302010007060504u,
    0x0504070603020100u, 0x0504010007060302u, 0x0504030207060100u, 0x0504030201000706u,
    0x0706050403020100u, 0x0706010005040302u, 0x0706030205040100u, 0x0706030201000504u,
    0x0706050403020100u, 0x0706050401000302u, 0x0706050403020100u, 0x0706050403020100u,
};
/* The 64-bit keys' instructions. AVX2 has neither a minimum nor a
 * maximum of 64-bit integers, nor an unsigned compare: a signed compare
 * and blends, and unsigned keys compared with their sign bits flipped
 * (the network runs on keys so flipped: NETWORK_IN). */
#ifndef QUICK_FLOATS /* doubles: after both widths' blocks */
INLINE __m256i vmin(__m256i a, __m256i b, int s)
{
    return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(to_signed(a, s), to_signed(b, s)));
}
INLINE __m256i vmax(__m256i a, __m256i b, int s)
{
    return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(to_signed(a, s), to_signed(b, s)));
}
INLINE unsigned vgreater(__m256i a, __m256i b)
{
    return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(a, b)));
}
#endif
INLINE __m256i vload_low(const uint64_t *p, __m256i mask)
{
    return _mm256_maskload_epi64((const long long *)p, mask);
}
/* The pieces of quick_network.h: a 64-bit lane is two 32-bit ones. */
INLINE __m256i lanes_xor(__m256i v, int d)
{
    return d == 1 ? _mm256_shuffle_epi32(v, 0x4E) : _mm256_permute4x64_epi64(v, 0x4E);
}
INLINE __m256i lanes_reversed(__m256i v, int b)
{
    return b == 2 ? _mm256_shuffle_epi32(v, 0x4E) : _mm256_permute4x64_epi64(v, 0x1B);
}
INLINE __m256i blend_upper(__m256i lo, __m256i hi, int d)
{
    return d == 1 ? _mm256_blend_epi32(lo, hi, 0xCC) : _mm256_blend_epi32(lo, hi, 0xF0);
}
INLINE __m256i interleave_lo(__m256i a, __m256i b)
{
    return _mm256_permute2x128_si256(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b), 0x20);
}
INLINE __m256i interleave_hi(__m256i a, __m256i b)
{
    return _mm256_permute2x128_si256(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b), 0x31);
}
#endif
#ifdef QUICK_FLOATS
/* Floats or doubles (neither NaN nor -0.0: gpk__avx2_sort_f32,
 * gpk__avx2_sort_f64) compared as such, by the instructions AVX2 has for
 * them (one each, where 64-bit integers take a compare and blends); s
 * plays no part. FP(op) names the intrinsic at the width (_mm256_min_ps,
 * _mm256_min_pd, ...). */
#if QUICK_KEY_BITS == 32
#define FP(op) _mm256_##op##_ps
#define AS_FP(x) _mm256_castsi256_ps(x)
#define FROM_FP(x) _mm256_castps_si256(x)
#else
#define FP(op) _mm256_##op##_pd
#define AS_FP(x) _mm256_castsi256_pd(x)
#define FROM_FP(x) _mm256_castpd_si256(x)
#endif
INLINE __m256i vmin(__m256i a, __m256i b, int s) { return FROM_FP(FP(min)(AS_FP(a), AS_FP(b))); }
INLINE __m256i vmax(__m256i a, __m256i b, int s) { return FROM_FP(FP(max)(AS_FP(a), AS_FP(b))); }
/* a above b, lane by lane: a mask of the lanes. */
INLINE unsigned vgreater(__m256i a, __m256i b)
{
    return (unsigned)FP(movemask)(FP(cmp)(AS_FP(a), AS_FP(b), _CMP_GT_OQ));
}
#endif
/* v's lanes in the order the width's perm_table gives for the lane mask m
 * of the lanes going right. */
INLINE __m256i vpermute(__m256i v, unsigned m)
{
    return _mm256_permutevar8x32_epi32(
        v, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&perm_table[m])));
}
#include "quick_keys.h"
#define QUICK_VEC __m256i
#include "quick_network.h"

/* Where the network's comparisons cost least: 32-bit keys as they are
 * (AVX2 compares them unsigned too), 64-bit ones as signed integers,
 * unsigned keys flipped into them on the way in and out. */
#if QUICK_KEY_BITS == 32 || defined(QUICK_FLOATS)
#define NETWORK_S(s) (s)
#define NETWORK_IN(v, s) (v)
#else
#define NETWORK_S(s) 1
#define NETWORK_IN(v, s) to_signed(v, s)
#endif

/* Ranges of at most this many keys go to the network (16 registers: 32
 * spill AVX2's 16 and were 20 % slower, docs/perf/radix.md, v22). */
#define SMALL_REGS 16
#define SMALL_MAX (SMALL_REGS * QUICK_LANES)
/* The pivot's sample from 4096 keys on (quick_driver.h). */
#define QUICK_SAMPLE 64

/* The lanes below c (0 <= c <= QUICK_LANES), as a mask for a masked load. */
static const int32_t lane_ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
INLINE __m256i low_lanes(size_t c)
{
    return _mm256_loadu_si256((const __m256i *)(lane_ramp + 8 - c * (QUICK_KEY_BITS / 32)));
}

/* keys[0, n) (n <= QUICK_LANES r) sorted in r registers, padded with the
 * greatest key. They go through a buffer on the stack: masked stores
 * (vpmaskmovd) are slow on AMD processors, plain copies are not. */
INLINE void sort_small_r(QUICK_KEY *keys, size_t n, int r, int s)
{
    QUICK_KEY buf[QUICK_LANES * 16] __attribute__((aligned(32)));
    __m256i v[16];
    const __m256i pad = vset1(greatest(s));
#pragma GCC unroll 16
    for (int i = 0; i < r; i++) _mm256_store_si256((__m256i *)(buf + QUICK_LANES * i), pad);
    memcpy(buf, keys, n * sizeof(QUICK_KEY));
#pragma GCC unroll 16
    for (int i = 0; i < r; i++)
        v[i] = NETWORK_IN(_mm256_load_si256((const __m256i *)(buf + QUICK_LANES * i)), s);
    sort_registers(v, r, NETWORK_S(s));
#pragma GCC unroll 16
    for (int i = 0; i < r; i++) _mm256_store_si256((__m256i *)(buf + QUICK_LANES * i), NETWORK_IN(v[i], s));
    memcpy(keys, buf, n * sizeof(QUICK_KEY));
}

/* sample[0, QUICK_LANES r) sorted in r registers. */
INLINE void sort_sample(QUICK_KEY *sample, int r, int s)
{
    __m256i v[16];
#pragma GCC unroll 16
    for (int i = 0; i < r; i++)
        v[i] = NETWORK_IN(_mm256_loadu_si256((const __m256i *)(sample + QUICK_LANES * i)), s);
    sort_registers(v, r, NETWORK_S(s));
#pragma GCC unroll 16
    for (int i = 0; i < r; i++)
        _mm256_storeu_si256((__m256i *)(sample + QUICK_LANES * i), NETWORK_IN(v[i], s));
}

/* Where the partition stands: keys [0, l) are written left, [r, n)
 * right; [lr, rr) not read yet. */
typedef struct {
    size_t l, r;
    __m256i lo, hi; /* the least and greatest keys read, lane by lane, made signed (to_signed) */
} part_state;

/* One register of keys into the partition: of the lanes in `valid` (the
 * low ones), those below the pivot (gt = 0) or at most it (gt = 1) to
 * the left, the others to the right; the whole register is stored at
 * out + P->l and ending at out + P->r, which must each have a register's
 * room. pvx: the pivot made signed (to_signed), as the compares are. */
INLINE void part_register(QUICK_KEY *out, part_state *P, __m256i v, __m256i pvx, unsigned valid, int s,
                          int gt)
{
    const __m256i x = to_signed(v, s);
    const unsigned right = (gt ? vgreater(x, pvx) : ~vgreater(pvx, x)) & valid;
    /* one count: valid is a constant wherever this is inlined */
    const unsigned nr = (unsigned)__builtin_popcount(right), nl = (unsigned)__builtin_popcount(valid) - nr;
    const __m256i w = vpermute(v, right);
    _mm256_storeu_si256((__m256i *)(out + P->l), w);
    _mm256_storeu_si256((__m256i *)(out + P->r - QUICK_LANES), w);
    P->l += nl;
    P->r -= nr;
    P->lo = vmin(P->lo, x, 1);
    P->hi = vmax(P->hi, x, 1);
}

/* A whole register of keys into the partition, and a register loaded, as
 * quick_reads.h has them. */
INLINE void part_full(QUICK_KEY *keys, part_state *P, __m256i v, __m256i pvx, int s, int gt)
{
    part_register(keys, P, v, pvx, (1u << QUICK_LANES) - 1, s, gt);
}
INLINE __m256i quick_load(const QUICK_KEY *p) { return _mm256_loadu_si256((const __m256i *)p); }
#include "quick_reads.h"

/* keys[0, n) (n >= 2 * UNROLL registers) partitioned around the pivot:
 * the number of keys put left; *lo, *hi the least and greatest key. */
INLINE size_t partition(QUICK_KEY *keys, size_t n, QUICK_KEY pivot, int s, int gt, QUICK_KEY *lo,
                        QUICK_KEY *hi)
{
    const __m256i pv = vset1(pivot), pvx = to_signed(pv, s);
    part_state P = {0, n, pvx, pvx};
    const size_t rem = n % QUICK_LANES, rr = n - rem;
    const __m256i tm = low_lanes(rem);
    const __m256i tail = _mm256_blendv_epi8(pv, vload_low(keys + rr, tm), tm);
    __m256i held[2 * UNROLL];
    partition_reads(keys, rr, &P, held, pvx, s, gt);
    /* Everything read: the room left, [P.l, P.r), is exactly the keys
     * held, too tight for whole stores. They are partitioned into a
     * buffer on the stack, whose sides have a register's slack, and
     * copied into the room (masked stores are slow on AMD). */
    enum { HELD = QUICK_LANES * (2 * UNROLL + 1), CAP = 2 * HELD };
    QUICK_KEY buf[CAP];
    part_state B = {0, CAP, P.lo, P.hi};
    for (int i = 0; i < 2 * UNROLL; i++) part_register(buf, &B, held[i], pvx, (1u << QUICK_LANES) - 1, s, gt);
    part_register(buf, &B, tail, pvx, (1u << rem) - 1, s, gt);
    memcpy(keys + P.l, buf, B.l * sizeof(QUICK_KEY));
    memcpy(keys + P.l + B.l, buf + B.r, (CAP - B.r) * sizeof(QUICK_KEY));
    QUICK_KEY a[QUICK_LANES], b[QUICK_LANES];
    _mm256_storeu_si256((__m256i *)a, to_signed(B.lo, s));
    _mm256_storeu_si256((__m256i *)b, to_signed(B.hi, s));
    *lo = a[0];
    *hi = b[0];
    for (int i = 1; i < QUICK_LANES; i++) {
        if (less(a[i], *lo, s)) *lo = a[i];
        if (less(*hi, b[i], s)) *hi = b[i];
    }
    return P.l + B.l;
}

#if QUICK_KEY_BITS == 32 && !defined(QUICK_FLOATS) /* the merge: 32-bit integers only */
/* The next 8 keys of the sorted run r[0, n) from *i on: a last partial
 * register padded with UINT32_MAX, and all UINT32_MAX once the run is
 * used up. */
INLINE __m256i run_block(const uint32_t *r, size_t n, size_t *i)
{
    if (*i + 8 <= n) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(r + *i));
        *i += 8;
        return v;
    }
    uint32_t pad[8] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
                       UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    for (size_t k = 0; *i < n; k++) pad[k] = r[(*i)++];
    return _mm256_loadu_si256((const __m256i *)pad);
}

/* Two sorted registers (unsigned keys) merged: the 8 least keys to *lo,
 * the 8 greatest to *hi, each sorted. */
INLINE void merge_pair(__m256i *lo, __m256i *hi)
{
    const __m256i b = lanes_reversed(*hi, 8);
    __m256i l = _mm256_min_epu32(*lo, b), h = _mm256_max_epu32(*lo, b); /* each bitonic */
#pragma GCC unroll 3
    for (int d = 4; d >= 1; d /= 2) {
        l = lane_layer(l, d, 0);
        h = lane_layer(h, d, 0);
    }
    *lo = l;
    *hi = h;
}

/* gpk__avx2_merge32's body. Each step merges the register carried over
 * with the next 8 keys of the run whose next key is less, writes the 8
 * least and carries the rest: every key not yet loaded is then at least
 * each key written. The padding (UINT32_MAX) sorts after every real key
 * and is never among the count written, since count <= na + nb; a real
 * UINT32_MAX beside it is the same bits. */
TARGET static void merge_runs(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out,
                              size_t count)
{
    size_t ia = 0, ib = 0, o = 0;
    __m256i lo = run_block(a, na, &ia), hi = run_block(b, nb, &ib);
    for (;;) {
        merge_pair(&lo, &hi);
        if (count - o < 8) {
            uint32_t last[8];
            _mm256_storeu_si256((__m256i *)last, lo);
            memcpy(out + o, last, (count - o) * 4);
            return;
        }
        _mm256_storeu_si256((__m256i *)(out + o), lo);
        if ((o += 8) == count) return;
        const uint32_t ha = ia < na ? a[ia] : UINT32_MAX, hb = ib < nb ? b[ib] : UINT32_MAX;
        const int from_a = ha <= hb;
        lo = hi;
        hi = from_a ? run_block(a, na, &ia) : run_block(b, nb, &ib);
    }
}

#endif /* the merge */

#define QUICK_KERNEL 1
#endif /* x86-64 and a GNU compiler */

#if QUICK_KEY_BITS == 32 && !defined(QUICK_FLOATS)
int gpk__avx2_merge32(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out, size_t count)
{
#ifdef QUICK_KERNEL
    if (gpk__avx2_sort_level() != GPK_SIMD_AVX2 || count > na + nb) return -1;
    if (count) merge_runs(a, na, b, nb, out, count);
    return 0;
#else
    (void)a, (void)na, (void)b, (void)nb, (void)out, (void)count;
    return -1;
#endif
}

#endif

#define QUICK_LEVEL gpk__avx2_sort_level
#define QUICK_ISA GPK_SIMD_AVX2
#include "quick_driver.h"
