/* One city's best or2opt move (gpk__tsp_ls_best_move, search_run.h, gives
 * the moves, codes and ties), one body for the host (tsp_ls.c) and the GPU
 * (search_cuda.cu), so that both find the same move. The includer defines
 * first:
 *   LS_FN            the functions' qualifiers (static inline, or
 *                    static __device__ __forceinline__);
 *   ls_dist_ctx      the type that holds the instance;
 *   ls_dist(P, a, b) the distance between cities a and b, an int32_t.
 * The tour is t (n cities), pos its inverse. */
#ifndef GPK_SEARCH_TSP_LS_MOVE_INLINE_H
#define GPK_SEARCH_TSP_LS_MOVE_INLINE_H

#include <stdint.h>

LS_FN uint32_t ls_next(const uint32_t *t, const uint32_t *pos, uint32_t n, uint32_t c)
{
    const uint32_t p = pos[c] + 1;
    return t[p == n ? 0 : p];
}

LS_FN uint32_t ls_prev(const uint32_t *t, const uint32_t *pos, uint32_t n, uint32_t c)
{
    const uint32_t p = pos[c];
    return t[p == 0 ? n - 1 : p - 1];
}

/* The cities a reversal of the path from..to moves: the shorter side. */
LS_FN uint32_t ls_span(const uint32_t *pos, uint32_t n, uint32_t from, uint32_t to)
{
    const uint32_t len = (pos[to] + n - pos[from]) % n + 1;
    return len < n - len ? len : n - len;
}

LS_FN void ls_keep(gpk__ls_move *m, int64_t d, uint32_t code)
{
    if (d < m->d || (d == m->d && d < 0 && code < m->code)) {
        m->d = d;
        m->code = code;
    }
}

LS_FN gpk__ls_move ls_best_move(ls_dist_ctx P, uint32_t n, const uint32_t *nbs, const int32_t *nds,
                                uint32_t k, const uint32_t *t, const uint32_t *pos, uint32_t a)
{
    const uint32_t *nb = nbs + (size_t)a * k;
    const int32_t *nd = nds + (size_t)a * k;
    const int bound = n > 2 * GPK__TSP_LS_MAX_REVERSAL;
    gpk__ls_move m = {0, GPK__LS_NONE, 0};
    for (uint32_t dir = 0; dir < 2; dir++) {
        const uint32_t b = dir ? ls_prev(t, pos, n, a) : ls_next(t, pos, n, a);
        const int32_t dab = ls_dist(P, a, b);
        for (uint32_t i = 0; i < k; i++) {
            const uint32_t c = nb[i];
            if (nd[i] >= dab) break;
            const uint32_t d = dir ? ls_prev(t, pos, n, c) : ls_next(t, pos, n, c);
            if (c == b || d == a) continue;
            m.evaluated++;
            const int64_t delta = (int64_t)nd[i] + ls_dist(P, b, d) - dab - ls_dist(P, c, d);
            if (delta < 0 && (!bound || ls_span(pos, n, b, c) <= GPK__TSP_LS_MAX_REVERSAL))
                ls_keep(&m, delta, dir * k + i);
        }
    }
    for (uint32_t len = 1; len <= 3 && n >= len + 3; len++) {
        for (uint32_t end = 0; end < 2; end++) {
            if (len == 1 && end) break;
            const uint32_t seg = len == 1 ? 0 : 1 + 2 * (len - 2) + end;
            uint32_t s1 = a, s2 = a, mid = a;
            for (uint32_t j = 1; j < len; j++) {
                if (end) s1 = ls_prev(t, pos, n, s1);
                else s2 = ls_next(t, pos, n, s2);
                if (j == 1) mid = end ? s1 : s2;
            }
            const uint32_t p = ls_prev(t, pos, n, s1), q = ls_next(t, pos, n, s2);
            const int64_t g0 = (int64_t)ls_dist(P, p, s1) + ls_dist(P, s2, q) - ls_dist(P, p, q);
            if (g0 <= 0) continue;
            for (uint32_t i = 0; i < k; i++) {
                const uint32_t c = nb[i];
                if (nd[i] >= g0) break;
                if (c == s1 || c == s2 || c == mid) continue;
                for (uint32_t side = 0; side < 2; side++) {
                    const uint32_t x = side ? ls_prev(t, pos, n, c) : c, y = side ? c : ls_next(t, pos, n, c);
                    if (x == s1 || x == s2 || x == mid || y == s1 || y == s2 || y == mid || y == p) continue;
                    const int64_t dxy = ls_dist(P, x, y);
                    for (uint32_t rev = 0; rev < 2; rev++) {
                        m.evaluated++;
                        const int64_t add = rev ? (int64_t)ls_dist(P, x, s2) + ls_dist(P, s1, y)
                                                : (int64_t)ls_dist(P, x, s1) + ls_dist(P, s2, y);
                        const int64_t delta = add - dxy - g0;
                        if (delta < 0 && (!bound || ls_span(pos, n, s1, x) <= GPK__TSP_LS_MAX_REVERSAL))
                            ls_keep(&m, delta, 2 * k + ((seg * k + i) * 2 + side) * 2 + rev);
                    }
                }
            }
        }
    }
    return m;
}

#endif
