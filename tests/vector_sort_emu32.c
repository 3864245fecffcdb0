/* The AVX-512 quicksort of 32-bit keys (src/sort/vector_sort_avx512.c)
 * on SIMDe's portable AVX-512, under test_vector_sort's names emu_*: a
 * translation unit of its own, as the 64-bit build's (vector_sort_emu64.c)
 * has the same static names. The level function, defined by this build
 * only, is shared with the 64-bit one. Built where SIMDe is found. */
#ifndef GPK_AVX512_EMULATE
#define GPK_AVX512_EMULATE 1
#endif
#define gpk__avx512_sort_level emu_sort_level
#define gpk__avx512_sort32 emu_sort32
#define gpk__avx512_split32 emu_split32
#define gpk__avx512_sort_fallbacks emu_sort_fallbacks
#define gpk__avx512_sort_sample_observer emu_sort_sample_observer
#include "../src/sort/vector_sort_avx512.c"
