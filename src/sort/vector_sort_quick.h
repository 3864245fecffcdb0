/* The CPU sort's own vectorised sorters of keys alone (32- and 64-bit
 * integers, floats, doubles): one
 * quicksort design (vector_sort_avx512.c, its recursion shared through
 * quick_driver.h) in AVX-512 registers and in AVX2 registers
 * (vector_sort_avx2.c, for processors without AVX-512). Built on every
 * x86-64 GNU compiler, with or without Highway; chosen at run time, for
 * how many keys by radix_cpu.c (AVX512_SORT_BYTES, AVX2_SORT_BYTES). Not
 * stable: keys alone, every bit compared (equal keys are identical
 * bits). */
#ifndef GPK_VECTOR_SORT_QUICK_H
#define GPK_VECTOR_SORT_QUICK_H

#include "vector_sort.h"

#include <stddef.h>
#include <stdint.h>

/* GPK_SIMD_AVX512 (GPK_SIMD_AVX2) where the processor runs that sorter
 * and no lower level is forced (gpk__test.cpu_sort_simd), else
 * GPK_SIMD_PORTABLE. */
int gpk__avx512_sort_level(void);
int gpk__avx2_sort_level(void);

/* Sorts keys[0, n) in place in ascending order, compared as signed
 * integers if is_signed else unsigned. 0 on success; -1 (keys untouched)
 * where the sorter's level function says GPK_SIMD_PORTABLE. Allocates
 * nothing, never prints; safe on several threads at once. */
int gpk__avx512_sort32(uint32_t *keys, size_t n, int is_signed);
int gpk__avx2_sort32(uint32_t *keys, size_t n, int is_signed);
int gpk__avx512_sort64(uint64_t *keys, size_t n, int is_signed);
int gpk__avx2_sort64(uint64_t *keys, size_t n, int is_signed);

/* The sorters' one partition: keys[0, n) reordered so that those below
 * pivot (gt = 0; at most pivot, gt = 1) come first, *left their count,
 * compared as the sort of the same name compares. 0, or -1 (keys
 * untouched) where that sort would refuse. A team of two threads splits
 * its keys so and sorts each side (radix_cpu.c, quick_pair_sort). */
int gpk__avx512_split32(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx2_split32(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx512_split64(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx2_split64(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx512_split_f64(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx2_split_f64(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx512_split_f32(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);
int gpk__avx2_split_f32(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);

/* Sort the doubles (floats) whose bits are keys[0, n) in place in
 * ascending order, compared as such in AVX2 (AVX-512) registers: no pass
 * maps them to sort keys and back, and in AVX2 a compare of doubles is
 * one instruction where one of 64-bit integers takes three. The same
 * order as their sort keys' where no key is NaN or -0.0, which the caller
 * rules out; is_signed is not read. 0, or -1 (keys untouched) as
 * gpk__avx2_sort64 (gpk__avx512_sort64). */
int gpk__avx2_sort_f64(uint64_t *keys, size_t n, int is_signed);
int gpk__avx512_sort_f64(uint64_t *keys, size_t n, int is_signed);
int gpk__avx2_sort_f32(uint32_t *keys, size_t n, int is_signed);
int gpk__avx512_sort_f32(uint32_t *keys, size_t n, int is_signed);

/* out[0, count) = the count least keys of the sorted runs a[0, na) and
 * b[0, nb), compared as unsigned integers (count <= na + nb), in AVX2
 * registers, 8 keys a step. 0, or -1 (nothing written) where
 * gpk__avx2_sort_level says GPK_SIMD_PORTABLE. The runs may not overlap
 * out. Allocates nothing, never prints. */
int gpk__avx2_merge32(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out,
                      size_t count);

/* For tests: how many ranges fell back to the heap sort past the depth
 * limit (counted atomically), and a function each pivot's sample is
 * shown to before it is sorted (NULL: none), which a test uses to build
 * an input the pivot rule splits badly. */
extern size_t gpk__avx512_sort_fallbacks, gpk__avx2_sort_fallbacks;
extern void (*gpk__avx512_sort_sample_observer)(const uint32_t *sample, size_t m);
extern void (*gpk__avx2_sort_sample_observer)(const uint32_t *sample, size_t m);
extern size_t gpk__avx512_sort64_fallbacks, gpk__avx2_sort64_fallbacks;
extern void (*gpk__avx512_sort64_sample_observer)(const uint64_t *sample, size_t m);
extern void (*gpk__avx2_sort64_sample_observer)(const uint64_t *sample, size_t m);
extern size_t gpk__avx2_sort_f64_fallbacks, gpk__avx512_sort_f64_fallbacks;
extern void (*gpk__avx2_sort_f64_sample_observer)(const uint64_t *sample, size_t m);
extern void (*gpk__avx512_sort_f64_sample_observer)(const uint64_t *sample, size_t m);
extern size_t gpk__avx2_sort_f32_fallbacks, gpk__avx512_sort_f32_fallbacks;
extern void (*gpk__avx2_sort_f32_sample_observer)(const uint32_t *sample, size_t m);
extern void (*gpk__avx512_sort_f32_sample_observer)(const uint32_t *sample, size_t m);

#endif
