/* The CPU sort's own vectorised sorter of 32-bit keys alone in AVX2
 * registers (vector_sort_avx2.c): the AVX-512 quicksort's design
 * (vector_sort_avx512.h) on 8 lanes, for processors without AVX-512,
 * where in the caches it beats the radix passes and vqsort's AVX2 code.
 * Built on every x86-64 GNU compiler, with or without Highway; chosen at
 * run time. Not stable: keys alone, every bit compared. */
#ifndef GPK_VECTOR_SORT_AVX2_H
#define GPK_VECTOR_SORT_AVX2_H

#include "vector_sort.h"

#include <stddef.h>
#include <stdint.h>

/* GPK_SIMD_AVX2 where the processor runs the sorter and the portable
 * level is not forced (gpk__test.cpu_sort_simd), else GPK_SIMD_PORTABLE. */
int gpk__avx2_sort_level(void);

/* Sorts keys[0, n) in place in ascending order, compared as signed
 * integers if is_signed else unsigned. 0 on success; -1 (keys untouched)
 * where gpk__avx2_sort_level is GPK_SIMD_PORTABLE. Allocates nothing,
 * never prints; safe on several threads at once. */
int gpk__avx2_sort32(uint32_t *keys, size_t n, int is_signed);

/* For tests, as gpk__avx512_sort_fallbacks and its sample observer: heap
 * sorts past the depth limit, and a function each pivot's sample is shown
 * to before it is sorted (NULL: none). */
extern size_t gpk__avx2_sort_fallbacks;
extern void (*gpk__avx2_sort_sample_observer)(const uint32_t *sample, size_t m);

#endif
