/* The swap neighbourhood's index bijection (Luong, Melab & Talbi 2009,
 * section 4.3, equations 1-6).
 *
 * Order (the paper's): the swaps (i, j), i < j, are numbered row by row of
 * the upper triangle of an n x n matrix:
 *   (0,1)=0, (0,2)=1, ..., (0,n-1)=n-2, (1,2)=n-1, ..., (n-2,n-1)=m-1
 * with m = n(n-1)/2, i.e. equation (1)
 *   f(i, j) = i (n - 1) + (j - 1) - i (i + 1) / 2.
 * The paper's example n = 6, (2, 3) -> 9 holds.
 *
 * The inverse follows equations (2)-(6): X = m - k - 1 neighbours follow k
 * (3); the largest t with t (t + 1) / 2 <= X (4, 5) gives i = n - 2 - t (2)
 * and j from (1) (6). The paper computes t with a floating-point square root
 * and an epsilon fudge because GPU sqrt is inexact; here t comes from an
 * exact integer square root, so the map is exact for every n < 2^32 and every
 * k < m (m < 2^63). 8X + 1 of equation (5) would overflow 64 bits for large
 * n, so we take s = isqrt(2X) instead: t is s or s - 1 (t (t + 1) <= 2X <
 * (s + 1)^2), and one comparison decides. */
#include "gpk/search.h"
#include "bijection_inline.h"

void gpk_swap_index_to_pair(uint64_t n, uint64_t k, uint32_t *i, uint32_t *j)
{
    search_index_to_pair(n, k, i, j);
}

uint64_t gpk_swap_pair_to_index(uint64_t n, uint32_t i, uint32_t j)
{
    /* A swap is unordered: accept (j, i) for (i, j). */
    if (i > j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    uint64_t a = i, b = j;
    return a * (n - 1) + (b - 1) - a * (a + 1) / 2; /* equation (1) */
}
