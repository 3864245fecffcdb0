/* The AVX-512 quicksort of 64-bit keys (src/sort/vector_sort64_avx512.c)
 * on SIMDe's portable AVX-512, under test_vector_sort's names emu_*64: a
 * translation unit of its own (see vector_sort_emu32.c). This build
 * defines no level function; it calls the 32-bit build's, emu_sort_level.
 * Built where SIMDe is found. */
#ifndef GPK_AVX512_EMULATE
#define GPK_AVX512_EMULATE 1
#endif
#define gpk__avx512_sort_level emu_sort_level
#define gpk__avx512_sort64 emu_sort64
#define gpk__avx512_split64 emu_split64
#define gpk__avx512_sort64_fallbacks emu_sort64_fallbacks
#define gpk__avx512_sort64_sample_observer emu_sort64_sample_observer
#include "../src/sort/vector_sort64_avx512.c"
