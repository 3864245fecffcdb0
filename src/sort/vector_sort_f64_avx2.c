/* gpk__avx2_sort_f64 (vector_sort_quick.h): vector_sort_avx2.c's
 * quicksort built for doubles, 4 to a register, compared by AVX2's
 * double instructions (a minimum, a maximum or a compare apiece, where
 * 64-bit integers take a compare and blends). */
#define QUICK_KEY_BITS 64
#define QUICK_FLOATS 1
#include "vector_sort_avx2.c"
