/* gpk__avx512_sort32, gpk__avx512_sort64, gpk__avx512_sort_f32,
 * gpk__avx512_sort_f64 (vector_sort_quick.h): a quicksort of 32-bit keys
 * or floats (16 to a register), 64-bit keys or doubles (8) in AVX-512
 * registers, where a sort's set-up
 * and each partition's fixed costs matter. Each key width's instructions
 * sit in one block, named for what they do (vmin, vcompress, ...); the
 * code after it is the same for every width.
 *
 * - A range of more than SMALL_MAX keys is split around a pivot, the
 *   median of a sample taken at fixed strides and sorted by the network
 *   below. The partition is in place: 2 * UNROLL vectors from both ends
 *   are held in registers first, so that each later block of UNROLL
 *   vectors is read from the end with less room written back (the room
 *   on each side then holds a whole vector's store), and every vector's
 *   keys below the pivot and the rest go to the left and the right write
 *   positions: compress-stored to memory, or on AMD cores, where that
 *   form is microcoded, compressed in registers and stored (a full store
 *   on the left, a masked one on the right; compress_in_memory).
 * - Keys below the pivot go left, the rest right; the partition also
 *   finds the range's least and greatest key. All keys equal: done. The
 *   pivot the least key (nothing went left): a second partition moves the
 *   keys equal to it to the left, where they are done. Every partition
 *   thus finishes at least one key, and a run of equal keys costs one
 *   pass. A range whose sample is all one key is first read for another
 *   key (quick_driver.h, all_equal): all equal, it is done unwritten.
 * - At most SMALL_MAX keys: a bitonic network on up to 32 zmm registers,
 *   loaded with masks and padded with the greatest key.
 * - Past a depth of 2 log2(n) partitions a range is heap-sorted, so no
 *   input takes quadratic time.
 * The functions that use AVX-512 carry GNU target attributes, so the rest
 * of the library keeps its baseline; gpk__avx512_sort_level checks the
 * processor at run time. Nothing here allocates: the recursion takes the
 * smaller side, its depth at most the depth limit. */
#include "vector_sort_quick.h"

#include "../core/test_hooks.h"

#include <stdint.h>

/* The keys this build of the file sorts: 32-bit integers here, 64-bit
 * ones where vector_sort64_avx512.c includes it, and floats or doubles
 * (QUICK_FLOATS, their bits as keys of their width) where
 * vector_sort_f32_avx512.c or vector_sort_f64_avx512.c does. */
#ifndef QUICK_KEY_BITS
#define QUICK_KEY_BITS 32
#endif
#if QUICK_KEY_BITS == 32 && defined(QUICK_FLOATS)
#define QUICK_KEY uint32_t
#define QUICK_ENTRY gpk__avx512_sort_f32
#define QUICK_SPLIT gpk__avx512_split_f32
#define QUICK_FALLBACKS gpk__avx512_sort_f32_fallbacks
#define SAMPLE_OBSERVER gpk__avx512_sort_f32_sample_observer
#elif QUICK_KEY_BITS == 32
#define QUICK_KEY uint32_t
#define QUICK_ENTRY gpk__avx512_sort32
#define QUICK_SPLIT gpk__avx512_split32
#define QUICK_FALLBACKS gpk__avx512_sort_fallbacks
#define SAMPLE_OBSERVER gpk__avx512_sort_sample_observer
#elif defined(QUICK_FLOATS)
#define QUICK_KEY uint64_t
#define QUICK_ENTRY gpk__avx512_sort_f64
#define QUICK_SPLIT gpk__avx512_split_f64
#define QUICK_FALLBACKS gpk__avx512_sort_f64_fallbacks
#define SAMPLE_OBSERVER gpk__avx512_sort_f64_sample_observer
#else
#define QUICK_KEY uint64_t
#define QUICK_ENTRY gpk__avx512_sort64
#define QUICK_SPLIT gpk__avx512_split64
#define QUICK_FALLBACKS gpk__avx512_sort64_fallbacks
#define SAMPLE_OBSERVER gpk__avx512_sort64_sample_observer
#endif
size_t QUICK_FALLBACKS;
void (*SAMPLE_OBSERVER)(const QUICK_KEY *sample, size_t m);

#if defined(GPK_AVX512_EMULATE)
/* The kernel on SIMDe's portable AVX-512, for tests on processors
 * without AVX-512: tests/test_vector_sort.c compiles this file again so
 * (where SIMDe is found at configure time), and a whole build with
 * -DGPK_AVX512_EMULATE in its C flags sorts through it (test_radix then
 * reaches the library's calls of the kernel). What SIMDe 0.7 lacks is
 * spelled out. */
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
typedef simde__mmask16 __mmask16;
typedef simde__mmask8 __mmask8;

#define TARGET
#define INLINE static inline

/* v's lanes of W bits in a[]. */
#define EMU_LANES(W, v, a)  \
    uint##W##_t a[512 / W]; \
    _mm512_storeu_si512(a, v)
#define EMU_WIDTH(W)                                                                       \
    static inline __m512i emu_mask_loadu##W(__m512i src, unsigned k, const uint##W##_t *p) \
    {                                                                                      \
        EMU_LANES(W, src, a);                                                              \
        for (int i = 0; i < 512 / W; i++)                                                  \
            if (k >> i & 1) a[i] = p[i];                                                   \
        return _mm512_loadu_si512(a);                                                      \
    }                                                                                      \
    static inline void emu_mask_storeu##W(uint##W##_t *p, unsigned k, __m512i v)           \
    {                                                                                      \
        EMU_LANES(W, v, a);                                                                \
        for (int i = 0; i < 512 / W; i++)                                                  \
            if (k >> i & 1) p[i] = a[i];                                                   \
    }                                                                                      \
    static inline uint##W##_t emu_reduce##W(__m512i v, int s, int max)                     \
    {                                                                                      \
        EMU_LANES(W, v, a);                                                                \
        uint##W##_t r = a[0];                                                              \
        for (int i = 1; i < 512 / W; i++) {                                                \
            const int lt = s ? (int##W##_t)a[i] < (int##W##_t)r : a[i] < r;                \
            if (lt != max && a[i] != r) r = a[i];                                          \
        }                                                                                  \
        return r;                                                                          \
    }
EMU_WIDTH(32)
EMU_WIDTH(64)
static inline __m512i emu_shuffle(__m512i v, int imm)
{
    EMU_LANES(32, v, a);
    uint32_t b[16];
    for (int i = 0; i < 16; i++) b[i] = a[(i & ~3) + (imm >> 2 * (i & 3) & 3)];
    return _mm512_loadu_si512(b);
}
static inline __mmask16 emu_cmpgt_epu32(__m512i x, __m512i y)
{
    const __m512i sign = _mm512_set1_epi32(INT32_MIN);
    return _mm512_cmpgt_epi32_mask(_mm512_xor_si512(x, sign), _mm512_xor_si512(y, sign));
}
static inline __mmask8 emu_cmpgt_epu64(__m512i x, __m512i y)
{
    const __m512i sign = _mm512_set1_epi64(INT64_MIN);
    return _mm512_cmpgt_epi64_mask(_mm512_xor_si512(x, sign), _mm512_xor_si512(y, sign));
}
#define _mm512_mask_loadu_epi32(src, k, p) emu_mask_loadu32(src, k, (const uint32_t *)(p))
#define _mm512_mask_storeu_epi32(p, k, v) emu_mask_storeu32((uint32_t *)(p), k, v)
#define _mm512_mask_loadu_epi64(src, k, p) emu_mask_loadu64(src, k, (const uint64_t *)(p))
#define _mm512_mask_storeu_epi64(p, k, v) emu_mask_storeu64((uint64_t *)(p), k, v)
#define SHUFFLE32(v, imm) emu_shuffle(v, imm)
/* the same 128-bit blocks moved as _mm512_shuffle_i32x4's */
#define _mm512_shuffle_i64x2(a, b, imm) _mm512_shuffle_i32x4(a, b, imm)
#define _mm512_cmpgt_epu32_mask(x, y) emu_cmpgt_epu32(x, y)
#define _mm512_cmpgt_epu64_mask(x, y) emu_cmpgt_epu64(x, y)
#define _mm512_reduce_min_epu32(v) emu_reduce32(v, 0, 0)
#define _mm512_reduce_max_epu32(v) emu_reduce32(v, 0, 1)
#define _mm512_reduce_min_epi32(v) (int32_t) emu_reduce32(v, 1, 0)
#define _mm512_reduce_max_epi32(v) (int32_t) emu_reduce32(v, 1, 1)
#define _mm512_reduce_min_epu64(v) emu_reduce64(v, 0, 0)
#define _mm512_reduce_max_epu64(v) emu_reduce64(v, 0, 1)
#define _mm512_reduce_min_epi64(v) (int64_t) emu_reduce64(v, 1, 0)
#define _mm512_reduce_max_epi64(v) (int64_t) emu_reduce64(v, 1, 1)

#if QUICK_KEY_BITS == 32 && !defined(QUICK_FLOATS) /* one level function for every build */
int gpk__avx512_sort_level(void)
{
    const long long forced = gpk__hook(gpk__test.cpu_sort_simd, -1);
    return forced >= 0 && forced < GPK_SIMD_AVX512 ? GPK_SIMD_PORTABLE : GPK_SIMD_AVX512;
}
#endif
#define GPK_AVX512_KERNEL 1

#elif defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SHUFFLE32(v, imm) _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)(imm))
#define TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#define INLINE static inline __attribute__((always_inline)) TARGET

#if QUICK_KEY_BITS == 32 && !defined(QUICK_FLOATS)
int gpk__avx512_sort_level(void)
{
    const int native = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    const long long forced = gpk__hook(gpk__test.cpu_sort_simd, -1);
    if (!native || (forced >= 0 && forced < GPK_SIMD_AVX512)) return GPK_SIMD_PORTABLE;
    return GPK_SIMD_AVX512;
}
#endif
#define GPK_AVX512_KERNEL 1
#endif

#ifdef GPK_AVX512_KERNEL

#include "quick_keys.h"

/* Vectors a block of the partition's main loop reads from one end: 8
 * rather than 4 with the 32-register network below, 2-13 % less time
 * (docs/perf/radix.md, v23). */
#ifndef UNROLL
#define UNROLL 8
#endif

/* The width's instructions, each named for what it does; s = 1 compares
 * as signed integers, 0 as unsigned, and is a constant wherever these are
 * inlined. EPI(op) and EPU(op) name an intrinsic at the width, signed
 * and unsigned (_mm512_min_epi32, _mm512_min_epu64, ...), EPI_MASK and
 * EPU_MASK the compares (_mm512_cmpgt_epi32_mask, ...). */
#if QUICK_KEY_BITS == 32
#define QUICK_LANES 16
#define EPI(op) _mm512_##op##_epi32
#define EPU(op) _mm512_##op##_epu32
#define EPI_MASK(op) _mm512_##op##_epi32_mask
#define EPU_MASK(op) _mm512_##op##_epu32_mask
typedef __mmask16 lane_mask;
typedef int reduced; /* what the reductions return */
INLINE __m512i vset1(uint32_t x) { return _mm512_set1_epi32((int)x); }
#else
#define QUICK_LANES 8
#define EPI(op) _mm512_##op##_epi64
#define EPU(op) _mm512_##op##_epu64
#define EPI_MASK(op) _mm512_##op##_epi64_mask
#define EPU_MASK(op) _mm512_##op##_epu64_mask
typedef __mmask8 lane_mask;
typedef long long reduced;
INLINE __m512i vset1(uint64_t x) { return _mm512_set1_epi64((long long)x); }
#endif
#ifdef QUICK_FLOATS
/* Floats or doubles (neither NaN nor -0.0: gpk__avx512_sort_f32,
 * gpk__avx512_sort_f64) compared as such; s plays no part. FP(op) names
 * the intrinsic at the width (_mm512_min_ps, _mm512_min_pd, ...),
 * FP_MASK the compare (_mm512_cmp_ps_mask, ...). */
#if QUICK_KEY_BITS == 32
#define FP(op) _mm512_##op##_ps
#define FP_MASK(op) _mm512_##op##_ps_mask
#define AS_FP(x) _mm512_castsi512_ps(x)
#define FROM_FP(x) _mm512_castps_si512(x)
#else
#define FP(op) _mm512_##op##_pd
#define FP_MASK(op) _mm512_##op##_pd_mask
#define AS_FP(x) _mm512_castsi512_pd(x)
#define FROM_FP(x) _mm512_castpd_si512(x)
#endif
INLINE __m512i vmin(__m512i a, __m512i b, int s) { return FROM_FP(FP(min)(AS_FP(a), AS_FP(b))); }
INLINE __m512i vmax(__m512i a, __m512i b, int s) { return FROM_FP(FP(max)(AS_FP(a), AS_FP(b))); }
/* Lanes of a at least b (gt = 0) or above b (gt = 1). */
INLINE lane_mask vcmp_right(__m512i a, __m512i b, int s, int gt)
{
    return gt ? FP_MASK(cmp)(AS_FP(a), AS_FP(b), _CMP_GT_OQ) : FP_MASK(cmp)(AS_FP(a), AS_FP(b), _CMP_GE_OQ);
}
/* The least (greatest) lane by less(). */
INLINE QUICK_KEY reduce_floats(__m512i v, int max)
{
    QUICK_KEY a[QUICK_LANES];
    _mm512_storeu_si512(a, v);
    QUICK_KEY r = a[0];
    for (int i = 1; i < QUICK_LANES; i++)
        if (max ? less(r, a[i], 0) : less(a[i], r, 0)) r = a[i];
    return r;
}
INLINE QUICK_KEY vreduce_min(__m512i v, int s) { return reduce_floats(v, 0); }
INLINE QUICK_KEY vreduce_max(__m512i v, int s) { return reduce_floats(v, 1); }
#else
INLINE __m512i vmin(__m512i a, __m512i b, int s) { return s ? EPI(min)(a, b) : EPU(min)(a, b); }
INLINE __m512i vmax(__m512i a, __m512i b, int s) { return s ? EPI(max)(a, b) : EPU(max)(a, b); }
/* Lanes of a at least b (gt = 0) or above b (gt = 1). */
INLINE lane_mask vcmp_right(__m512i a, __m512i b, int s, int gt)
{
    if (s) return gt ? EPI_MASK(cmpgt)(a, b) : EPI_MASK(cmpge)(a, b);
    return gt ? EPU_MASK(cmpgt)(a, b) : EPU_MASK(cmpge)(a, b);
}
INLINE QUICK_KEY vreduce_min(__m512i v, int s)
{
    return (QUICK_KEY)(s ? EPI(reduce_min)(v) : (reduced)EPU(reduce_min)(v));
}
INLINE QUICK_KEY vreduce_max(__m512i v, int s)
{
    return (QUICK_KEY)(s ? EPI(reduce_max)(v) : (reduced)EPU(reduce_max)(v));
}
#endif
INLINE __m512i vcompress(lane_mask m, __m512i v) { return EPI(maskz_compress)(m, v); }
INLINE __m512i vload_lanes(__m512i src, lane_mask m, const QUICK_KEY *p)
{
    return EPI(mask_loadu)(src, m, p);
}
INLINE void vstore_lanes(QUICK_KEY *p, lane_mask m, __m512i v) { EPI(mask_storeu)(p, m, v); }
#if QUICK_KEY_BITS == 32
/* The pieces of quick_network.h. */
INLINE __m512i lanes_xor(__m512i v, int d)
{
    return d == 1 ? SHUFFLE32(v, 0xB1)
        : d == 2  ? SHUFFLE32(v, 0x4E)
        : d == 4  ? _mm512_shuffle_i32x4(v, v, 0xB1)
                  : _mm512_shuffle_i32x4(v, v, 0x4E);
}
INLINE __m512i lanes_reversed(__m512i v, int b)
{
    const __m512i rev8 = _mm512_set_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i rev16 = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return b == 2 ? SHUFFLE32(v, 0xB1)
        : b == 4  ? SHUFFLE32(v, 0x1B)
        : b == 8  ? _mm512_permutexvar_epi32(rev8, v)
                  : _mm512_permutexvar_epi32(rev16, v);
}
INLINE __m512i blend_upper(__m512i lo, __m512i hi, int d)
{
    const __mmask16 m = d == 1 ? 0xAAAA : d == 2 ? 0xCCCC : d == 4 ? 0xF0F0 : 0xFF00;
    return _mm512_mask_blend_epi32(m, lo, hi);
}
INLINE __m512i interleave_lo(__m512i a, __m512i b)
{
    return _mm512_permutex2var_epi32(
        a, _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0), b);
}
INLINE __m512i interleave_hi(__m512i a, __m512i b)
{
    return _mm512_permutex2var_epi32(
        a, _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8), b);
}
#else
/* The pieces of quick_network.h: a 64-bit lane is two 32-bit ones. */
INLINE __m512i lanes_xor(__m512i v, int d)
{
    return d == 1 ? SHUFFLE32(v, 0x4E)
        : d == 2  ? _mm512_shuffle_i64x2(v, v, 0xB1)
                  : _mm512_shuffle_i64x2(v, v, 0x4E);
}
INLINE __m512i lanes_reversed(__m512i v, int b)
{
    const __m512i rev4 = _mm512_set_epi64(4, 5, 6, 7, 0, 1, 2, 3);
    const __m512i rev8 = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    return b == 2 ? SHUFFLE32(v, 0x4E)
        : b == 4  ? _mm512_permutexvar_epi64(rev4, v)
                  : _mm512_permutexvar_epi64(rev8, v);
}
INLINE __m512i blend_upper(__m512i lo, __m512i hi, int d)
{
    const __mmask8 m = d == 1 ? 0xAA : d == 2 ? 0xCC : 0xF0;
    return _mm512_mask_blend_epi64(m, lo, hi);
}
INLINE __m512i interleave_lo(__m512i a, __m512i b)
{
    return _mm512_permutex2var_epi64(a, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), b);
}
INLINE __m512i interleave_hi(__m512i a, __m512i b)
{
    return _mm512_permutex2var_epi64(a, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), b);
}
#endif
#define QUICK_VEC __m512i
#include "quick_network.h"

/* Ranges of at most SMALL_MAX keys go to the network, on up to
 * SMALL_REGS registers: 32 (512 32-bit keys, 256 64-bit ones), a
 * partition level fewer than 16 at 3-18 % less time over 2^12 to 2^24
 * keys with UNROLL 8 (docs/perf/radix.md, v23); a build may set 16. */
#ifndef SMALL_REGS
#define SMALL_REGS 32
#endif
#define SMALL_MAX (SMALL_REGS * QUICK_LANES)
/* The pivot's sample from QUICK_SAMPLE_FROM keys on (quick_driver.h; 64
 * keys below): 256 keys (16 or 32 registers), a more even split than
 * 64's where a range is larger than the cache, and a sort of them that
 * costs a partition of a smaller range a good part of its time: from
 * 2^18 keys on, 2-10 % less time than from 4096 on over 2^12 to 2^24
 * keys (docs/perf/radix.md, v24). */
#define QUICK_SAMPLE 256
#ifndef QUICK_SAMPLE_FROM
#define QUICK_SAMPLE_FROM ((size_t)1 << 18)
#endif

/* The lanes of a register that hold keys k, ..., k + QUICK_LANES - 1 of n. */
static inline lane_mask lanes_from(size_t k, size_t n)
{
    return k >= n ? 0 : n - k >= QUICK_LANES ? (lane_mask)-1 : (lane_mask)((1u << (n - k)) - 1);
}

/* keys[0, n) (n <= QUICK_LANES r) sorted in r registers, padded with the
 * greatest key; masked loads and stores touch no memory past n. */
INLINE void sort_small_r(QUICK_KEY *keys, size_t n, int r, int s)
{
    __m512i v[SMALL_REGS];
    const __m512i pad = vset1(greatest(s));
#pragma GCC unroll 32
    for (int i = 0; i < r; i++)
        v[i] = vload_lanes(pad, lanes_from(QUICK_LANES * (size_t)i, n), keys + QUICK_LANES * i);
    sort_registers(v, r, s);
#pragma GCC unroll 32
    for (int i = 0; i < r; i++)
        vstore_lanes(keys + QUICK_LANES * i, lanes_from(QUICK_LANES * (size_t)i, n), v[i]);
}

/* sample[0, QUICK_LANES r) sorted in r registers. */
INLINE void sort_sample(QUICK_KEY *sample, int r, int s)
{
    __m512i v[QUICK_SAMPLE / QUICK_LANES];
#pragma GCC unroll 8
    for (int i = 0; i < r; i++) v[i] = _mm512_loadu_si512(sample + QUICK_LANES * i);
    sort_registers(v, r, s);
#pragma GCC unroll 8
    for (int i = 0; i < r; i++) _mm512_storeu_si512(sample + QUICK_LANES * i, v[i]);
}

/* Where the partition stands: keys [0, l) are written left, [r, n)
 * right; [lr, rr) not read yet. */
typedef struct {
    size_t l, r;
    __m512i lo, hi; /* the least and greatest keys read, lane by lane */
    int in_memory;  /* compress_in_memory() */
} part_state;

/* Whether the partition compress-stores each side's keys to memory
 * (vpcompressd with a memory operand), as on Intel cores it is faster
 * than compressing in registers and storing (u32 2^20-2^24 18 % less
 * time, docs/perf/radix.md, v23), or compresses in registers, as on AMD
 * cores, where the memory form is microcoded. The test hook
 * cpu_compress_store forces either (1 memory, 0 registers). */
static inline int compress_in_memory(void)
{
    const long long forced = gpk__hook(gpk__test.cpu_compress_store, -1);
    if (forced >= 0) return forced != 0;
#if defined(__x86_64__) && defined(__GNUC__)
    return !__builtin_cpu_is("amd");
#else
    return 0;
#endif
}

/* One register of keys into the partition: the lanes in `valid` below the
 * pivot (gt = 0) or at most it (gt = 1) to the left, the others to the
 * right. full: the left side has room for a whole register's store. */
INLINE void part_register(QUICK_KEY *keys, part_state *P, __m512i v, __m512i pv, lane_mask valid, int s,
                          int gt, int full)
{
    const lane_mask right = vcmp_right(v, pv, s, gt) & valid, left = (lane_mask)(~right & valid);
    /* one count: valid is a constant wherever this is inlined */
    const unsigned nr = (unsigned)__builtin_popcount(right), nl = (unsigned)__builtin_popcount(valid) - nr;
    if (P->in_memory) {
        EPI(mask_compressstoreu)(keys + P->l, left, v);
        P->l += nl;
        P->r -= nr;
        EPI(mask_compressstoreu)(keys + P->r, right, v);
    } else {
        const __m512i L = vcompress(left, v), R = vcompress(right, v);
        if (full) _mm512_storeu_si512(keys + P->l, L);
        else vstore_lanes(keys + P->l, (lane_mask)((1u << nl) - 1), L);
        P->l += nl;
        P->r -= nr;
        vstore_lanes(keys + P->r, (lane_mask)((1u << nr) - 1), R);
    }
    P->lo = vmin(P->lo, v, s);
    P->hi = vmax(P->hi, v, s);
}

/* A whole register of keys into the partition, and a register loaded, as
 * quick_reads.h has them. */
INLINE void part_full(QUICK_KEY *keys, part_state *P, __m512i v, __m512i pv, int s, int gt)
{
    part_register(keys, P, v, pv, (lane_mask)-1, s, gt, 1);
}
INLINE __m512i quick_load(const QUICK_KEY *p) { return _mm512_loadu_si512(p); }
#include "quick_reads.h"

/* keys[0, n) (n > 2 * UNROLL + 1 registers) partitioned around pv: the
 * number of keys put left; *lo, *hi the least and greatest key. */
INLINE size_t partition(QUICK_KEY *keys, size_t n, QUICK_KEY pivot, int s, int gt, QUICK_KEY *lo,
                        QUICK_KEY *hi)
{
    const __m512i pv = vset1(pivot);
    part_state P = {0, n, pv, pv, compress_in_memory()};
    const size_t rem = n % QUICK_LANES, rr = n - rem;
    const __m512i tail = vload_lanes(pv, lanes_from(0, rem), keys + rr);
    __m512i held[2 * UNROLL];
    partition_reads(keys, rr, &P, held, pv, s, gt);
    /* Everything read: the room left is [P.l, P.r), as many keys as held. */
    for (int i = 0; i < 2 * UNROLL; i++) part_register(keys, &P, held[i], pv, (lane_mask)-1, s, gt, 0);
    part_register(keys, &P, tail, pv, lanes_from(0, rem), s, gt, 0);
    *lo = vreduce_min(P.lo, s);
    *hi = vreduce_max(P.hi, s);
    return P.l;
}

#define QUICK_KERNEL 1
#endif /* GPK_AVX512_KERNEL */

#define QUICK_LEVEL gpk__avx512_sort_level
#define QUICK_ISA GPK_SIMD_AVX512
#include "quick_driver.h"
