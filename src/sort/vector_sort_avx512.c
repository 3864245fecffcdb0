/* gpk__avx512_sort32 (vector_sort_quick32.h): a quicksort of 32-bit keys
 * in AVX-512 registers, for keys that fit the caches, where a sort's
 * set-up and each partition's fixed costs matter.
 *
 * - A range of more than SMALL_MAX keys is split around a pivot, the
 *   median of a sample taken at fixed strides and sorted by the network
 *   below. The partition is in place: 2 * UNROLL vectors from both ends
 *   are held in registers first, so that each later block of UNROLL
 *   vectors is read from the end with less room written back (the room
 *   on each side then holds a whole vector's store), and every vector is
 *   compressed in registers into its keys below the pivot and the rest,
 *   stored to the left and the right write positions. Registers are
 *   compressed and stored (a full store on the left, a masked one on the
 *   right) rather than compress-stored to memory, which is slow on AMD.
 * - Keys below the pivot go left, the rest right; the partition also
 *   finds the range's least and greatest key. All keys equal: done. The
 *   pivot the least key (nothing went left): a second partition moves the
 *   keys equal to it to the left, where they are done. Every partition
 *   thus finishes at least one key, and a run of equal keys costs one
 *   pass. A range whose sample is all one key is first read for another
 *   key (quick32_driver.h, all_equal): all equal, it is done unwritten.
 * - At most SMALL_MAX keys: a bitonic network on up to 16 zmm registers,
 *   loaded with masks and padded with the greatest key.
 * - Past a depth of 2 log2(n) partitions a range is heap-sorted, so no
 *   input takes quadratic time.
 * The functions that use AVX-512 carry GNU target attributes, so the rest
 * of the library keeps its baseline; gpk__avx512_sort_level checks the
 * processor at run time. Nothing here allocates: the recursion takes the
 * smaller side, its depth at most the depth limit. */
#include "vector_sort_quick32.h"

#include "../core/test_hooks.h"

#include <stdint.h>

size_t gpk__avx512_sort_fallbacks;
void (*gpk__avx512_sort_sample_observer)(const uint32_t *sample, size_t m);

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

#define TARGET
#define INLINE static inline

#define EMU_LANES(v, a) \
    uint32_t a[16];     \
    _mm512_storeu_si512(a, v)
static inline __m512i emu_mask_loadu(__m512i src, __mmask16 k, const uint32_t *p)
{
    EMU_LANES(src, a);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) a[i] = p[i];
    return _mm512_loadu_si512(a);
}
static inline void emu_mask_storeu(uint32_t *p, __mmask16 k, __m512i v)
{
    EMU_LANES(v, a);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) p[i] = a[i];
}
static inline __m512i emu_shuffle(__m512i v, int imm)
{
    EMU_LANES(v, a);
    uint32_t b[16];
    for (int i = 0; i < 16; i++) b[i] = a[(i & ~3) + (imm >> 2 * (i & 3) & 3)];
    return _mm512_loadu_si512(b);
}
static inline __mmask16 emu_cmpgt_epu32(__m512i x, __m512i y)
{
    const __m512i sign = _mm512_set1_epi32(INT32_MIN);
    return _mm512_cmpgt_epi32_mask(_mm512_xor_si512(x, sign), _mm512_xor_si512(y, sign));
}
static inline uint32_t emu_reduce(__m512i v, int s, int max)
{
    EMU_LANES(v, a);
    uint32_t r = a[0];
    for (int i = 1; i < 16; i++) {
        const int lt = s ? (int32_t)a[i] < (int32_t)r : a[i] < r;
        if (lt != max && a[i] != r) r = a[i];
    }
    return r;
}
#define _mm512_mask_loadu_epi32(src, k, p) emu_mask_loadu(src, k, (const uint32_t *)(p))
#define _mm512_mask_storeu_epi32(p, k, v) emu_mask_storeu((uint32_t *)(p), k, v)
#define SHUFFLE32(v, imm) emu_shuffle(v, imm)
#define _mm512_cmpgt_epu32_mask(x, y) emu_cmpgt_epu32(x, y)
#define _mm512_reduce_min_epu32(v) emu_reduce(v, 0, 0)
#define _mm512_reduce_max_epu32(v) emu_reduce(v, 0, 1)
#define _mm512_reduce_min_epi32(v) (int32_t) emu_reduce(v, 1, 0)
#define _mm512_reduce_max_epi32(v) (int32_t) emu_reduce(v, 1, 1)

int gpk__avx512_sort_level(void)
{
    const long long forced = gpk__hook(gpk__test.cpu_sort_simd, -1);
    return forced >= 0 && forced < GPK_SIMD_AVX512 ? GPK_SIMD_PORTABLE : GPK_SIMD_AVX512;
}
#define GPK_AVX512_KERNEL 1

#elif defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SHUFFLE32(v, imm) _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)(imm))
#define TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#define INLINE static inline __attribute__((always_inline)) TARGET

int gpk__avx512_sort_level(void)
{
    const int native = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    const long long forced = gpk__hook(gpk__test.cpu_sort_simd, -1);
    if (!native || (forced >= 0 && forced < GPK_SIMD_AVX512)) return GPK_SIMD_PORTABLE;
    return GPK_SIMD_AVX512;
}
#define GPK_AVX512_KERNEL 1
#endif

#ifdef GPK_AVX512_KERNEL

/* Ranges of at most this many keys go to the network (16 registers). */
#define SMALL_MAX 256
/* Vectors a block of the partition's main loop reads from one end. */
#define UNROLL 4

/* Comparisons as unsigned (s = 0) or signed (s = 1) 32-bit integers; s is
 * a constant wherever these are inlined. */
INLINE __m512i vmin(__m512i a, __m512i b, int s)
{
    return s ? _mm512_min_epi32(a, b) : _mm512_min_epu32(a, b);
}
INLINE __m512i vmax(__m512i a, __m512i b, int s)
{
    return s ? _mm512_max_epi32(a, b) : _mm512_max_epu32(a, b);
}
/* Lanes of a at least b (gt = 0) or above b (gt = 1). */
INLINE __mmask16 vcmp_right(__m512i a, __m512i b, int s, int gt)
{
    if (s) return gt ? _mm512_cmpgt_epi32_mask(a, b) : _mm512_cmpge_epi32_mask(a, b);
    return gt ? _mm512_cmpgt_epu32_mask(a, b) : _mm512_cmpge_epu32_mask(a, b);
}
static inline uint32_t greatest(int s) { return s ? (uint32_t)INT32_MAX : UINT32_MAX; }
static inline int less(uint32_t a, uint32_t b, int s) { return s ? (int32_t)a < (int32_t)b : a < b; }

/* One layer of comparators inside a register: lane i against p's lane i
 * (p a permutation of v pairing lanes), the lanes in hi (the higher of
 * each pair) take the greater key. */
INLINE __m512i layer(__m512i v, __m512i p, __mmask16 hi, int s)
{
    return _mm512_mask_blend_epi32(hi, vmin(v, p, s), vmax(v, p, s));
}
/* Partners i ^ d. */
INLINE __m512i xor1(__m512i v) { return SHUFFLE32(v, 0xB1); }
INLINE __m512i xor2(__m512i v) { return SHUFFLE32(v, 0x4E); }
INLINE __m512i xor4(__m512i v) { return _mm512_shuffle_i32x4(v, v, 0xB1); }
INLINE __m512i xor8(__m512i v) { return _mm512_shuffle_i32x4(v, v, 0x4E); }
INLINE __m512i reverse16(__m512i v)
{
    return _mm512_permutexvar_epi32(_mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                    v);
}

/* One register sorted ascending: bitonic merges of 2, 4, 8 and 16 lanes,
 * each beginning with lane i against lane i ^ (k - 1) of its block of k
 * (the "flip", which keeps every comparator ascending). */
INLINE __m512i sort_register(__m512i v, int s)
{
    const __m512i rev8 = _mm512_set_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    v = layer(v, xor1(v), 0xAAAA, s);
    v = layer(v, SHUFFLE32(v, 0x1B), 0xCCCC, s);
    v = layer(v, xor1(v), 0xAAAA, s);
    v = layer(v, _mm512_permutexvar_epi32(rev8, v), 0xF0F0, s);
    v = layer(v, xor2(v), 0xCCCC, s);
    v = layer(v, xor1(v), 0xAAAA, s);
    v = layer(v, reverse16(v), 0xFF00, s);
    v = layer(v, xor4(v), 0xF0F0, s);
    v = layer(v, xor2(v), 0xCCCC, s);
    return layer(v, xor1(v), 0xAAAA, s);
}

#define QUICK32_VEC __m512i
#define QUICK32_LANES 16
/* The pieces of quick32_network.h. */
INLINE __m512i lanes_xor(__m512i v, int d)
{
    return d == 1 ? xor1(v) : d == 2 ? xor2(v) : d == 4 ? xor4(v) : xor8(v);
}
INLINE __m512i lanes_reversed(__m512i v, int b)
{
    const __m512i rev8 = _mm512_set_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    return b == 2 ? xor1(v)
        : b == 4  ? SHUFFLE32(v, 0x1B)
        : b == 8  ? _mm512_permutexvar_epi32(rev8, v)
                  : reverse16(v);
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
#include "quick32_network.h"

/* The lanes of a register that hold keys k, ..., k + 15 of n. */
static inline __mmask16 lanes_from(size_t k, size_t n)
{
    return k >= n ? 0 : n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1);
}

/* keys[0, n) (n <= 16 r) sorted in r registers, padded with the greatest
 * key; masked loads and stores touch no memory past n. */
INLINE void sort_small_r(uint32_t *keys, size_t n, int r, int s)
{
    __m512i v[16];
    const __m512i pad = _mm512_set1_epi32((int)greatest(s));
#pragma GCC unroll 16
    for (int i = 0; i < r; i++)
        v[i] = _mm512_mask_loadu_epi32(pad, lanes_from(16 * (size_t)i, n), keys + 16 * i);
    sort_registers(v, r, s);
#pragma GCC unroll 16
    for (int i = 0; i < r; i++) _mm512_mask_storeu_epi32(keys + 16 * i, lanes_from(16 * (size_t)i, n), v[i]);
}

/* The median of a sample of keys[0, n) (n > SMALL_MAX): 16 keys at equal
 * strides, 64 from 4096 keys on; *flat: whether the sample's keys are all
 * equal. */
INLINE uint32_t pivot_of(const uint32_t *keys, size_t n, int s, int *flat)
{
    uint32_t sample[64];
    const size_t m = n >= 4096 ? 64 : 16, stride = n / m;
    for (size_t i = 0; i < m; i++) sample[i] = keys[i * stride + stride / 2];
    if (gpk__avx512_sort_sample_observer) gpk__avx512_sort_sample_observer(sample, m);
    __m512i v[4];
    if (m == 16) {
        v[0] = sort_register(_mm512_loadu_si512(sample), s);
        _mm512_storeu_si512(sample, v[0]);
    } else {
        for (int i = 0; i < 4; i++) v[i] = _mm512_loadu_si512(sample + 16 * i);
        sort_registers(v, 4, s);
        for (int i = 0; i < 4; i++) _mm512_storeu_si512(sample + 16 * i, v[i]);
    }
    *flat = sample[0] == sample[m - 1];
    return sample[m / 2];
}

/* Where the partition stands: keys [0, l) are written left, [r, n)
 * right; [lr, rr) not read yet. */
typedef struct {
    size_t l, r;
    __m512i lo, hi; /* the least and greatest keys read, lane by lane */
} part_state;

/* One register of keys into the partition: the lanes in `valid` below the
 * pivot (gt = 0) or at most it (gt = 1) to the left, the others to the
 * right. full: the left side has room for a whole register's store. */
INLINE void part_register(uint32_t *keys, part_state *P, __m512i v, __m512i pv, __mmask16 valid, int s,
                          int gt, int full)
{
    const __mmask16 right = vcmp_right(v, pv, s, gt) & valid, left = (__mmask16)(~right & valid);
    /* one count: valid is a constant wherever this is inlined */
    const unsigned nr = (unsigned)__builtin_popcount(right), nl = (unsigned)__builtin_popcount(valid) - nr;
    const __m512i L = _mm512_maskz_compress_epi32(left, v), R = _mm512_maskz_compress_epi32(right, v);
    if (full) _mm512_storeu_si512(keys + P->l, L);
    else _mm512_mask_storeu_epi32(keys + P->l, (__mmask16)((1u << nl) - 1), L);
    P->l += nl;
    P->r -= nr;
    _mm512_mask_storeu_epi32(keys + P->r, (__mmask16)((1u << nr) - 1), R);
    P->lo = vmin(P->lo, v, s);
    P->hi = vmax(P->hi, v, s);
}

/* A whole register of keys into the partition, and a register loaded, as
 * quick32_reads.h has them. */
INLINE void part_full(uint32_t *keys, part_state *P, __m512i v, __m512i pv, int s, int gt)
{
    part_register(keys, P, v, pv, 0xFFFF, s, gt, 1);
}
INLINE __m512i quick32_load(const uint32_t *p) { return _mm512_loadu_si512(p); }
#include "quick32_reads.h"

/* keys[0, n) (n > 2 * UNROLL + 1 registers) partitioned around pv: the
 * number of keys put left; *lo, *hi the least and greatest key. */
INLINE size_t partition(uint32_t *keys, size_t n, uint32_t pivot, int s, int gt, uint32_t *lo, uint32_t *hi)
{
    const __m512i pv = _mm512_set1_epi32((int)pivot);
    part_state P = {0, n, pv, pv};
    const size_t rem = n % 16, rr = n - rem;
    const __m512i tail = _mm512_mask_loadu_epi32(pv, lanes_from(0, rem), keys + rr);
    __m512i held[2 * UNROLL];
    partition_reads(keys, rr, &P, held, pv, s, gt);
    /* Everything read: the room left is [P.l, P.r), as many keys as held. */
    for (int i = 0; i < 2 * UNROLL; i++) part_register(keys, &P, held[i], pv, 0xFFFF, s, gt, 0);
    part_register(keys, &P, tail, pv, lanes_from(0, rem), s, gt, 0);
    *lo = (uint32_t)(s ? _mm512_reduce_min_epi32(P.lo) : (int)_mm512_reduce_min_epu32(P.lo));
    *hi = (uint32_t)(s ? _mm512_reduce_max_epi32(P.hi) : (int)_mm512_reduce_max_epu32(P.hi));
    return P.l;
}

#define QUICK32_KERNEL 1
#endif /* GPK_AVX512_KERNEL */

#define QUICK32_ENTRY gpk__avx512_sort32
#define QUICK32_LEVEL gpk__avx512_sort_level
#define QUICK32_ISA GPK_SIMD_AVX512
#define QUICK32_FALLBACKS gpk__avx512_sort_fallbacks
#include "quick32_driver.h"
