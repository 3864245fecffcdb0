/* The keys' order as the vectorised quicksorts compare them outside the
 * registers (the heap sort, the partition's least and greatest key,
 * padding), shared by vector_sort_avx2.c and vector_sort_avx512.c.
 * Included after QUICK_KEY and QUICK_KEY_BITS (and, for floats or doubles
 * compared as such, QUICK_FLOATS) are defined. s = 1 compares the keys as
 * signed integers, 0 as unsigned; floats ignore it. */
#include <string.h>

#if QUICK_KEY_BITS == 32
typedef int32_t signed_key;
#else
typedef int64_t signed_key;
#endif

#ifdef QUICK_FLOATS
#if QUICK_KEY_BITS == 32
typedef float key_float;
#define KEY_INFINITY 0x7F800000u
#else
typedef double key_float;
#define KEY_INFINITY 0x7FF0000000000000u
#endif
/* The greatest key: +infinity (the keys hold no NaN). */
static inline QUICK_KEY greatest(int s) { return KEY_INFINITY; }
static inline int less(QUICK_KEY a, QUICK_KEY b, int s)
{
    key_float x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x < y;
}
#else
static inline QUICK_KEY greatest(int s) { return s ? (QUICK_KEY)-1 >> 1 : (QUICK_KEY)-1; }
static inline int less(QUICK_KEY a, QUICK_KEY b, int s) { return s ? (signed_key)a < (signed_key)b : a < b; }
#endif
