/* The CPU sort's vectorised per-core sorter: a vectorised quicksort
 * (Highway's vqsort, found at configure time: GPK_HAVE_VECTOR_SORT) on the
 * unsigned or signed bits of the keys, at the best instruction set the
 * processor has (AVX-512 or AVX2), chosen at run time. Not stable, so only
 * for keys alone (equal keys are identical bits) or for composites of a
 * key and its index, which no two items share (pairs, permutations).
 * Without it every call answers "not available" and the radix sort, the
 * portable path and the reference, sorts everything. */
#ifndef GPK_VECTOR_SORT_H
#define GPK_VECTOR_SORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Instruction-set levels, lowest first; gpk__test.cpu_sort_simd forces one
 * (at most the processor's). */
enum { GPK_SIMD_PORTABLE = 0, GPK_SIMD_AVX2 = 1, GPK_SIMD_AVX512 = 2 };

#ifdef GPK_HAVE_VECTOR_SORT
/* The level the vector sorter runs at now (a forced level applied):
 * GPK_SIMD_PORTABLE where there is none worth using. */
int gpk__vector_sort_level(void);

/* Sorts keys[0, n) in place: width 4 or 8 bytes, compared as signed
 * integers if is_signed else unsigned, in descending order if descending.
 * 0 on success; -1 (keys untouched) when the sorter cannot run, and the
 * caller sorts another way. Never prints, never throws. Safe on several
 * threads at once (each has its own buffer). */
int gpk__vector_sort(void *keys, size_t n, unsigned width, int is_signed, int descending);

/* Sorts items[0, n) in place in ascending order. Composites of a key
 * above its index are distinct, so their order is the stable order of the
 * keys. 0, or -1 (items untouched) as gpk__vector_sort. */
int gpk__vector_sort_items(uint64_t *items, size_t n);
#else
static inline int gpk__vector_sort_level(void) { return GPK_SIMD_PORTABLE; }
static inline int gpk__vector_sort(void *keys, size_t n, unsigned width, int is_signed, int descending)
{
    (void)keys, (void)n, (void)width, (void)is_signed, (void)descending;
    return -1;
}
static inline int gpk__vector_sort_items(uint64_t *items, size_t n)
{
    (void)items, (void)n;
    return -1;
}
#endif

/* "portable", "avx2" or "avx512". */
static inline const char *gpk__simd_level_name(int level)
{
    return level == GPK_SIMD_AVX512 ? "avx512" : level == GPK_SIMD_AVX2 ? "avx2" : "portable";
}

#ifdef __cplusplus
}
#endif

#endif
