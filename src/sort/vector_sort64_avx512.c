/* gpk__avx512_sort64 (vector_sort_quick.h): vector_sort_avx512.c's
 * quicksort built for 64-bit keys, 8 to a register. */
#define QUICK_KEY_BITS 64
#include "vector_sort_avx512.c"
