/* gpk__avx2_sort64 (vector_sort_quick.h): vector_sort_avx2.c's quicksort
 * built for 64-bit keys, 4 to a register. */
#define QUICK_KEY_BITS 64
#include "vector_sort_avx2.c"
