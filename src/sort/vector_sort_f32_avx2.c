/* gpk__avx2_sort_f32 (vector_sort_quick.h): vector_sort_avx2.c's
 * quicksort built for floats, 8 to a register, compared by AVX2's float
 * instructions, so that no pass maps them to sort keys and back. */
#define QUICK_KEY_BITS 32
#define QUICK_FLOATS 1
#include "vector_sort_avx2.c"
