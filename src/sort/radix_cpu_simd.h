/* Vector small sorts for the CPU radix sort, chosen at run time.
 *
 * sort_rec (radix_cpu.c) ends its MSD recursion on keys without values in
 * buckets of up to gpk__cpu_leaf_keys() keys, sorted here by a bitonic
 * network in one or two vector registers. Mapped keys are unsigned, so the
 * networks compare unsigned lanes. Not stable, which keys alone do not
 * need: equal mapped keys are identical bit patterns. */
#ifndef GPK_RADIX_CPU_SIMD_H
#define GPK_RADIX_CPU_SIMD_H

#include <stddef.h>
#include <stdint.h>

enum { GPK_CPU_ISA_PORTABLE = 0, GPK_CPU_ISA_AVX2 = 1, GPK_CPU_ISA_AVX512 = 2 };

/* The instruction set the sort uses: the best the CPU has, capped by
 * gpk__cpu_force_isa. */
int gpk__cpu_isa(void);

/* Test hook: caps the instruction set at level (GPK_CPU_ISA_*, never above
 * what the CPU has); -1 lifts the cap. Returns the level now in use. */
int gpk__cpu_force_isa(int level);

/* The most keys of width kw (4 or 8) one small sort takes at isa; 0 for
 * the portable path, which has none (sort_rec's insertion sort instead). */
size_t gpk__cpu_leaf_keys(int isa, unsigned kw);

/* Sorts the m <= gpk__cpu_leaf_keys(isa, kw) keys at src ascending into
 * dst (dst may be src). */
void gpk__cpu_leaf_sort32(int isa, uint32_t *dst, const uint32_t *src, size_t m);
void gpk__cpu_leaf_sort64(int isa, uint64_t *dst, const uint64_t *src, size_t m);

#endif
