/* The swap-index bijection's arithmetic, shared by the host
 * (bijection.c: gpk_swap_index_to_pair) and the device (search_cuda.cu).
 * The derivation is in bijection.c. */
#ifndef GPK_SEARCH_BIJECTION_INLINE_H
#define GPK_SEARCH_BIJECTION_INLINE_H

#include <stdint.h>

#ifdef __CUDACC__
#define SEARCH_HD __host__ __device__
#else
#define SEARCH_HD
#endif

/* floor(sqrt(x)) for any 64-bit x, bit by bit (no floating point). */
static inline SEARCH_HD uint64_t search_isqrt64(uint64_t x)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    /* Jump to the highest power of 4 <= x in a few steps rather than up to
     * 31: the GPU kernels and the tests call this once per neighbour. */
    if (x < ((uint64_t)1 << 32)) bit = (uint64_t)1 << 30;
    if (x < ((uint64_t)1 << 16)) bit = (uint64_t)1 << 14;
    while (bit > x) bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

/* Neighbour k of n (k < n(n-1)/2, n < 2^32) -> the swap (i, j), i < j. */
static inline SEARCH_HD void search_index_to_pair(uint64_t n, uint64_t k, uint32_t *i, uint32_t *j)
{
    uint64_t m = n * (n - 1) / 2; /* n < 2^32: n (n - 1) < 2^64 */
    uint64_t x = m - k - 1;       /* equation (3) */
    /* 2x < 2^64 since m < 2^63, and s < 2^32 so s (s + 1) < 2^64. */
    uint64_t s = search_isqrt64(2 * x);
    uint64_t t = (s * (s + 1) / 2 <= x) ? s : s - 1; /* equations (4)-(5) */
    uint64_t ii = n - 2 - t;                         /* equation (2) */
    /* Equation (6); the intermediate values wrap harmlessly modulo 2^64
     * because the result is small. */
    uint64_t jj = k - ii * (n - 1) + ii * (ii + 1) / 2 + 1;
    *i = (uint32_t)ii;
    *j = (uint32_t)jj;
}

#endif
