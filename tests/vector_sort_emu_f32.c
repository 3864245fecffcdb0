/* The AVX-512 quicksort of floats (src/sort/vector_sort_f32_avx512.c) on
 * SIMDe's portable AVX-512, under test_vector_sort's names emu_sort_f32*:
 * a translation unit of its own (see vector_sort_emu32.c), calling the
 * 32-bit build's level function, emu_sort_level. Built where SIMDe is
 * found. */
#ifndef GPK_AVX512_EMULATE
#define GPK_AVX512_EMULATE 1
#endif
#define gpk__avx512_sort_level emu_sort_level
#define gpk__avx512_sort_f32 emu_sort_f32
#define gpk__avx512_split_f32 emu_split_f32
#define gpk__avx512_sort_f32_fallbacks emu_sort_f32_fallbacks
#define gpk__avx512_sort_f32_sample_observer emu_sort_f32_sample_observer
#include "../src/sort/vector_sort_f32_avx512.c"
