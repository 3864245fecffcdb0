/* Vector small sorts for the CPU radix sort (see radix_cpu_simd.h).
 *
 * A bitonic network on L lanes: for k = 2, 4, ..., L and j = k/2, ..., 1,
 * every lane i meets lane i ^ j and keeps the smaller or the larger key.
 * Lane i keeps the larger where exactly one of (i & j) and (i & k) is set
 * (its block of k lanes ascends when i & k is clear). Lane patterns as
 * bit masks: PAT(j) has bit i set where i & j != 0. Two registers (up to
 * 2L keys) are each sorted, the second reversed, and min / max of the pair
 * leave the lower and upper halves as bitonic sequences, each finished by
 * the j = L/2 .. 1 stages with every block ascending.
 *
 * Each instruction set's functions carry their own target attribute; the
 * library is built for the baseline and gpk__cpu_isa picks at run time. */
#include "radix_cpu_simd.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define GPK_CPU_SIMD_X86 1
#include <immintrin.h>
#endif

#define PAT(j) ((j) == 1 ? 0xAAAAu : (j) == 2 ? 0xCCCCu : (j) == 4 ? 0xF0F0u : (j) == 8 ? 0xFF00u : 0u)

/* -1: not detected yet. */
static atomic_int detected_isa = -1;
static atomic_int isa_cap = GPK_CPU_ISA_AVX512;

static int detect_isa(void)
{
#ifdef GPK_CPU_SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return GPK_CPU_ISA_AVX512;
    if (__builtin_cpu_supports("avx2")) return GPK_CPU_ISA_AVX2;
#endif
    return GPK_CPU_ISA_PORTABLE;
}

int gpk__cpu_isa(void)
{
    int d = atomic_load_explicit(&detected_isa, memory_order_relaxed);
    if (d < 0) {
        d = detect_isa();
        atomic_store_explicit(&detected_isa, d, memory_order_relaxed);
    }
    int cap = atomic_load_explicit(&isa_cap, memory_order_relaxed);
    return d < cap ? d : cap;
}

int gpk__cpu_force_isa(int level)
{
    atomic_store_explicit(&isa_cap, level < 0 ? GPK_CPU_ISA_AVX512 : level, memory_order_relaxed);
    return gpk__cpu_isa();
}

size_t gpk__cpu_leaf_keys(int isa, unsigned kw)
{
    if (isa == GPK_CPU_ISA_AVX512) return kw == 4 ? 64 : 32;
    if (isa == GPK_CPU_ISA_AVX2) return kw == 4 ? 32 : 16;
    return 0;
}

/* The network's stages, written out so that every index vector and lane
 * mask is a constant. TM(j, k, L): the lanes that keep the larger key. */
#define TM(j, k, L) ((PAT(j) ^ PAT(k)) & ((1u << (L)) - 1))
#define SORT4_L(S, v, L) (v = S(v, 1, TM(1, 2, L)), v = S(v, 2, TM(2, 4, L)), v = S(v, 1, TM(1, 4, L)))
#define SORT8_L(S, v, L)                                                                       \
    (SORT4_L(S, v, L), v = S(v, 4, TM(4, 8, L)), v = S(v, 2, TM(2, 8, L)), v = S(v, 1, TM(1, 8, L)))
#define SORT4(S, v) SORT4_L(S, v, 4)
#define SORT8(S, v) SORT8_L(S, v, 8)
#define SORT16(S, v)                                                                           \
    (SORT8_L(S, v, 16), v = S(v, 8, TM(8, 16, 16)), v = S(v, 4, TM(4, 16, 16)),                 \
     v = S(v, 2, TM(2, 16, 16)), v = S(v, 1, TM(1, 16, 16)))
#define CLEAN4(S, v) (v = S(v, 2, PAT(2) & 15u), v = S(v, 1, PAT(1) & 15u))
#define CLEAN8(S, v) (v = S(v, 4, PAT(4) & 255u), v = S(v, 2, PAT(2) & 255u), v = S(v, 1, PAT(1) & 255u))
#define CLEAN16(S, v) (v = S(v, 8, PAT(8)), v = S(v, 4, PAT(4)), v = S(v, 2, PAT(2)), v = S(v, 1, PAT(1)))

#ifdef GPK_CPU_SIMD_X86

/* A leaf of four registers, 4L keys: each register sorted, pairs merged
 * into two sorted runs of 2L, those merged. Merging runs A and B: A[i]
 * against B reversed leaves the smaller half and the larger half each
 * bitonic; a bitonic run of 2L takes one stage between its registers (j =
 * L), then each register's clean. The four registers' networks are
 * independent, so they overlap. cnt: keys in a register, may be <= 0 or
 * above L (the loads pad with all-ones, the stores write cnt keys). */
#define MERGE2(V, VMIN, VMAX, VREV, CLEANV, a, b)                                              \
    do {                                                                                       \
        V t_ = VREV(b);                                                                        \
        b = VMAX(a, t_);                                                                       \
        a = VMIN(a, t_);                                                                       \
        CLEANV(a);                                                                             \
        CLEANV(b);                                                                             \
    } while (0)
#define DEFINE_LEAF4(NAME, ATTR, KT, V, L, LOAD, STORE, VMIN, VMAX, VREV, SORTV, CLEANV)        \
    static ATTR void NAME(KT *dst, const KT *src, size_t m)                                    \
    {                                                                                          \
        const long c = (long)m;                                                                \
        V r0 = LOAD(src, c), r1 = LOAD(src + (L), c - (L));                                    \
        V r2 = LOAD(src + 2 * (L), c - 2 * (L)), r3 = LOAD(src + 3 * (L), c - 3 * (L));        \
        SORTV(r0);                                                                             \
        SORTV(r1);                                                                             \
        SORTV(r2);                                                                             \
        SORTV(r3);                                                                             \
        MERGE2(V, VMIN, VMAX, VREV, CLEANV, r0, r1);                                           \
        MERGE2(V, VMIN, VMAX, VREV, CLEANV, r2, r3);                                           \
        V t2 = VREV(r3), t3 = VREV(r2);                                                        \
        V l0 = VMIN(r0, t2), h0 = VMAX(r0, t2), l1 = VMIN(r1, t3), h1 = VMAX(r1, t3);         \
        r0 = VMIN(l0, l1);                                                                     \
        r1 = VMAX(l0, l1);                                                                     \
        r2 = VMIN(h0, h1);                                                                     \
        r3 = VMAX(h0, h1);                                                                     \
        CLEANV(r0);                                                                            \
        CLEANV(r1);                                                                            \
        CLEANV(r2);                                                                            \
        CLEANV(r3);                                                                            \
        STORE(dst, c, r0);                                                                     \
        STORE(dst + (L), c - (L), r1);                                                         \
        STORE(dst + 2 * (L), c - 2 * (L), r2);                                                 \
        STORE(dst + 3 * (L), c - 3 * (L), r3);                                                 \
    }

/* The first cnt of L lanes as a bit mask (cnt may be <= 0 or > L). */
#define FIRST_LANES(cnt, L) ((cnt) <= 0 ? 0u : (cnt) >= (L) ? (1u << (L)) - 1 : (1u << (cnt)) - 1)

/* ---- AVX-512F: 16 x u32, 8 x u64 per register. */
#define T512 __attribute__((target("avx512f")))

/* Fixed shuffles (j is a constant after inlining): one cycle within a
 * 128-bit lane. The lanes are chosen by a bitwise select with a constant
 * vector rather than a mask register. */
static inline T512 __m512i stage512_32(__m512i v, unsigned j, unsigned takemax)
{
    __m512i p = j == 1   ? _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0xB1)
                : j == 2 ? _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0x4E)
                : j == 4 ? _mm512_shuffle_i32x4(v, v, 0xB1)
                         : _mm512_shuffle_i32x4(v, v, 0x4E);
    const __m512i sel = _mm512_maskz_mov_epi32((__mmask16)takemax, _mm512_set1_epi32(-1));
    return _mm512_ternarylogic_epi32(sel, _mm512_max_epu32(v, p), _mm512_min_epu32(v, p), 0xCA);
}

static inline T512 __m512i stage512_64(__m512i v, unsigned j, unsigned takemax)
{
    __m512i p = j == 1   ? _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0x4E)
                : j == 2 ? _mm512_shuffle_i32x4(v, v, 0xB1)
                         : _mm512_shuffle_i32x4(v, v, 0x4E);
    const __m512i sel = _mm512_maskz_mov_epi64((__mmask8)takemax, _mm512_set1_epi64(-1));
    return _mm512_ternarylogic_epi64(sel, _mm512_max_epu64(v, p), _mm512_min_epu64(v, p), 0xCA);
}

#define LOAD512_32(p, cnt) _mm512_mask_loadu_epi32(_mm512_set1_epi32(-1), (__mmask16)FIRST_LANES(cnt, 16), p)
#define STORE512_32(p, cnt, v) _mm512_mask_storeu_epi32(p, (__mmask16)FIRST_LANES(cnt, 16), v)
#define REV512_32(v) _mm512_permutexvar_epi32(_mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), v)
#define SORT512_32(v) SORT16(stage512_32, v)
#define CLEAN512_32(v) CLEAN16(stage512_32, v)
DEFINE_LEAF4(leaf512_32, T512, uint32_t, __m512i, 16, LOAD512_32, STORE512_32, _mm512_min_epu32,
             _mm512_max_epu32, REV512_32, SORT512_32, CLEAN512_32)

#define LOAD512_64(p, cnt) _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), (__mmask8)FIRST_LANES(cnt, 8), p)
#define STORE512_64(p, cnt, v) _mm512_mask_storeu_epi64(p, (__mmask8)FIRST_LANES(cnt, 8), v)
#define REV512_64(v) _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), v)
#define SORT512_64(v) SORT8(stage512_64, v)
#define CLEAN512_64(v) CLEAN8(stage512_64, v)
DEFINE_LEAF4(leaf512_64, T512, uint64_t, __m512i, 8, LOAD512_64, STORE512_64, _mm512_min_epu64,
             _mm512_max_epu64, REV512_64, SORT512_64, CLEAN512_64)

/* ---- AVX2: 8 x u32, 4 x u64 per register. Lane choices as vectors; u64
 * keys are held with the sign bit flipped, since AVX2 compares 64-bit
 * lanes signed only. */
#define T256 __attribute__((target("avx2")))

static inline T256 __m256i lanes256_32(unsigned bits)
{
    const __m256i bit = _mm256_set_epi32(128, 64, 32, 16, 8, 4, 2, 1);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)bits), bit), bit);
}

static inline T256 __m256i lanes256_64(unsigned bits)
{
    const __m256i bit = _mm256_set_epi64x(8, 4, 2, 1);
    return _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(bits), bit), bit);
}

static inline T256 __m256i stage256_32(__m256i v, unsigned j, unsigned takemax)
{
    __m256i p = j == 1   ? _mm256_shuffle_epi32(v, 0xB1)
                : j == 2 ? _mm256_shuffle_epi32(v, 0x4E)
                         : _mm256_permute4x64_epi64(v, 0x4E);
    return _mm256_blendv_epi8(_mm256_min_epu32(v, p), _mm256_max_epu32(v, p), lanes256_32(takemax));
}

static inline T256 __m256i min256_64(__m256i a, __m256i b)
{
    return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b));
}

static inline T256 __m256i max256_64(__m256i a, __m256i b)
{
    return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b));
}

static inline T256 __m256i stage256_64(__m256i v, unsigned j, unsigned takemax)
{
    __m256i p = j == 1 ? _mm256_shuffle_epi32(v, 0x4E) : _mm256_permute4x64_epi64(v, 0x4E);
    __m256i gt = _mm256_cmpgt_epi64(v, p);
    __m256i mn = _mm256_blendv_epi8(v, p, gt), mx = _mm256_blendv_epi8(p, v, gt);
    return _mm256_blendv_epi8(mn, mx, lanes256_64(takemax));
}

static inline T256 __m256i load256_32(const uint32_t *p, long cnt)
{
    const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cnt < 0 ? 0 : cnt > 8 ? 8 : cnt)),
                                          _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0));
    return _mm256_blendv_epi8(_mm256_set1_epi32(-1), _mm256_maskload_epi32((const int *)p, in), in);
}

static inline T256 void store256_32(uint32_t *p, long cnt, __m256i v)
{
    const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cnt < 0 ? 0 : cnt > 8 ? 8 : cnt)),
                                          _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0));
    _mm256_maskstore_epi32((int *)p, in, v);
}

static inline T256 __m256i load256_64(const uint64_t *p, long cnt)
{
    const __m256i in = _mm256_cmpgt_epi64(_mm256_set1_epi64x(cnt < 0 ? 0 : cnt > 4 ? 4 : cnt),
                                          _mm256_set_epi64x(3, 2, 1, 0));
    __m256i v = _mm256_blendv_epi8(_mm256_set1_epi64x(-1), _mm256_maskload_epi64((const long long *)p, in), in);
    return _mm256_xor_si256(v, _mm256_set1_epi64x((long long)0x8000000000000000ull));
}

static inline T256 void store256_64(uint64_t *p, long cnt, __m256i v)
{
    const __m256i in = _mm256_cmpgt_epi64(_mm256_set1_epi64x(cnt < 0 ? 0 : cnt > 4 ? 4 : cnt),
                                          _mm256_set_epi64x(3, 2, 1, 0));
    _mm256_maskstore_epi64((long long *)p, in,
                           _mm256_xor_si256(v, _mm256_set1_epi64x((long long)0x8000000000000000ull)));
}

#define REV256_32(v) _mm256_permutevar8x32_epi32(v, _mm256_set_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define SORT256_32(v) SORT8(stage256_32, v)
#define CLEAN256_32(v) CLEAN8(stage256_32, v)
DEFINE_LEAF4(leaf256_32, T256, uint32_t, __m256i, 8, load256_32, store256_32, _mm256_min_epu32,
             _mm256_max_epu32, REV256_32, SORT256_32, CLEAN256_32)

#define REV256_64(v) _mm256_permute4x64_epi64(v, 0x1B)
#define SORT256_64(v) SORT4(stage256_64, v)
#define CLEAN256_64(v) CLEAN4(stage256_64, v)
DEFINE_LEAF4(leaf256_64, T256, uint64_t, __m256i, 4, load256_64, store256_64, min256_64, max256_64,
             REV256_64, SORT256_64, CLEAN256_64)

#endif /* GPK_CPU_SIMD_X86 */

/* The portable path never calls these (its leaf size is 0); an insertion
 * sort keeps them total all the same. */
#define DEFINE_LEAF_PORTABLE(NAME, KT)                                                         \
    static void NAME(KT *dst, const KT *src, size_t m)                                         \
    {                                                                                          \
        if (dst != src) memmove(dst, src, m * sizeof *dst);                                    \
        for (size_t i = 1; i < m; i++) {                                                       \
            KT x = dst[i];                                                                     \
            size_t j = i;                                                                      \
            for (; j > 0 && dst[j - 1] > x; j--) dst[j] = dst[j - 1];                          \
            dst[j] = x;                                                                        \
        }                                                                                      \
    }
DEFINE_LEAF_PORTABLE(leaf_portable32, uint32_t)
DEFINE_LEAF_PORTABLE(leaf_portable64, uint64_t)

void gpk__cpu_leaf_sort32(int isa, uint32_t *dst, const uint32_t *src, size_t m)
{
#ifdef GPK_CPU_SIMD_X86
    if (isa == GPK_CPU_ISA_AVX512) {
        leaf512_32(dst, src, m);
        return;
    }
    if (isa == GPK_CPU_ISA_AVX2) {
        leaf256_32(dst, src, m);
        return;
    }
#endif
    (void)isa;
    leaf_portable32(dst, src, m);
}

void gpk__cpu_leaf_sort64(int isa, uint64_t *dst, const uint64_t *src, size_t m)
{
#ifdef GPK_CPU_SIMD_X86
    if (isa == GPK_CPU_ISA_AVX512) {
        leaf512_64(dst, src, m);
        return;
    }
    if (isa == GPK_CPU_ISA_AVX2) {
        leaf256_64(dst, src, m);
        return;
    }
#endif
    (void)isa;
    leaf_portable64(dst, src, m);
}
