/* Parallel local search (Luong, Melab & Talbi 2009): the problems.
 *
 * This header holds the problem layer the search framework builds on:
 * instance readers (QAPLIB, TSPLIB95), a seeded generator for the permuted
 * perceptron problem, full and incremental evaluations, and the paper's
 * index bijection for the swap neighbourhood. The search algorithms (hill
 * climbing, tabu, iterated tabu, multistart) and the GPU neighbourhood
 * evaluation come next (issue 5).
 *
 * Readers need no context: on failure they return the status and keep the
 * message, "FILE:LINE: what", in gpk_last_error(NULL). Every cost is exact
 * integer arithmetic (int64_t). */
#ifndef GPK_SEARCH_H
#define GPK_SEARCH_H

#include "gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the swap neighbourhood's index bijection (paper, equations 1-6) ----
 * The n(n-1)/2 swaps (i, j), 0 <= i < j < n, numbered k = 0 .. n(n-1)/2 - 1
 * in the paper's order; exact for every n < 2^32 (integer square root, no
 * floating point). */
GPK_API void gpk_swap_index_to_pair(uint64_t n, uint64_t k, uint32_t *i, uint32_t *j);
GPK_API uint64_t gpk_swap_pair_to_index(uint64_t n, uint32_t i, uint32_t j);

/* ---- QAP (QAPLIB .dat: n, matrix A, matrix B; free-form whitespace) ---- */
typedef struct gpk_qap {
    uint32_t n;
    int64_t *a, *b;   /* n x n, row-major */
    char name[64];    /* file name without directory and extension */
} gpk_qap;

GPK_API gpk_status gpk_qap_load(const char *path, gpk_qap *out);
/* The same from memory (fuzzing, tests); name labels the messages. */
GPK_API gpk_status gpk_qap_parse(const char *text, size_t len, const char *name, gpk_qap *out);
GPK_API void gpk_qap_free(gpk_qap *q);
/* p: permutation of 0..n-1, p[i] = location of facility i.
 * cost = sum_i sum_j A[i][j] * B[p[i]][p[j]]. */
GPK_API int64_t gpk_qap_cost(const gpk_qap *q, const uint32_t *p);
/* Cost change of exchanging p[r] and p[s] (r != s), O(n), for any A, B
 * (not only symmetric ones). */
GPK_API int64_t gpk_qap_swap_delta(const gpk_qap *q, const uint32_t *p, uint32_t r, uint32_t s);
/* Taillard's update: delta is an n x n table with delta[u*n+v] (u < v) the
 * cost change of exchanging p[u], p[v] for the permutation before the move;
 * p_after is the permutation after exchanging r and s. Afterwards delta
 * holds the changes for p_after: O(1) per pair disjoint from {r, s}, O(n)
 * for the others. Entries with u >= v are not used. */
GPK_API void gpk_qap_delta_update(const gpk_qap *q, const uint32_t *p_after, int64_t *delta, uint32_t r,
                                  uint32_t s);
/* QAPLIB .sln: "n cost", then the 1-based permutation; *p gets it 0-based
 * (n entries, allocated here, free()). */
GPK_API gpk_status gpk_qap_load_solution(const char *path, uint32_t *n, int64_t *cost, uint32_t **p);

/* ---- TSP (TSPLIB95 symmetric instances) ---- */
typedef enum gpk_tsp_weight {
    GPK_TSP_EUC_2D = 0,
    GPK_TSP_CEIL_2D = 1,
    GPK_TSP_ATT = 2,
    GPK_TSP_GEO = 3,
    GPK_TSP_EXPLICIT = 4  /* FULL_MATRIX, UPPER_ROW, LOWER_DIAG_ROW, UPPER_DIAG_ROW */
} gpk_tsp_weight;

typedef struct gpk_tsp {
    uint32_t n;
    gpk_tsp_weight weight;
    double *x, *y;        /* coordinates (NULL for EXPLICIT) */
    int32_t *matrix;      /* n x n distances: EXPLICIT always; others when n is small
                             enough (GPK_TSP_MATRIX_MAX), else NULL: computed on the fly */
    char name[64];
} gpk_tsp;
#define GPK_TSP_MATRIX_MAX 20000u

GPK_API gpk_status gpk_tsp_load(const char *path, gpk_tsp *out);
GPK_API gpk_status gpk_tsp_parse(const char *text, size_t len, const char *name, gpk_tsp *out);
GPK_API void gpk_tsp_free(gpk_tsp *t);
/* TSPLIB95 distance between cities i and j (0-based). */
GPK_API int32_t gpk_tsp_dist(const gpk_tsp *t, uint32_t i, uint32_t j);
/* tour: permutation of 0..n-1; length of the closed tour. */
GPK_API int64_t gpk_tsp_tour_length(const gpk_tsp *t, const uint32_t *tour);
/* 2-opt: reverse tour[i+1 .. j] (0 <= i < j < n); the length change. */
GPK_API int64_t gpk_tsp_two_opt_delta(const gpk_tsp *t, const uint32_t *tour, uint32_t i, uint32_t j);
/* swap: exchange tour[i] and tour[j] (i != j); the length change. */
GPK_API int64_t gpk_tsp_swap_delta(const gpk_tsp *t, const uint32_t *tour, uint32_t i, uint32_t j);
/* TSPLIB .tour (TOUR_SECTION, 1-based, ended by -1); *tour 0-based, n entries, free(). */
GPK_API gpk_status gpk_tsp_load_tour(const char *path, uint32_t *n, uint32_t **tour);

/* ---- PPP: the permuted perceptron problem (data README) ---- */
typedef struct gpk_ppp {
    uint32_t m, n;        /* n odd */
    uint64_t seed;
    int8_t *a;            /* m x n, +-1, row-major; rows negated so that A V >= 0 */
    int8_t *secret;       /* V, n entries +-1 */
    uint32_t *hist;       /* H: hist[v] = rows with (A V)_i = v, v = 0 .. n */
} gpk_ppp;

/* The instance named "m-n-seed": the same on every machine. n odd, m >= 1. */
GPK_API gpk_status gpk_ppp_generate(uint32_t m, uint32_t n, uint64_t seed, gpk_ppp *out);
GPK_API void gpk_ppp_free(gpk_ppp *p);
/* y = A v (m entries). */
GPK_API void gpk_ppp_product(const gpk_ppp *p, const int8_t *v, int32_t *y);
/* fitness = 30 * sum_i (|Y_i| - Y_i) + sum_j |H[j] - H'(Y)[j]|; 0 solves it.
 * H' counts the Y_i over every value -n..n; H is zero below 0. */
GPK_API int64_t gpk_ppp_fitness(const gpk_ppp *p, const int32_t *y);
/* Fitness change of flipping v[j] (1-flip), and v[j], v[k] (2-flip, j != k),
 * given y = A v; O(m). */
GPK_API int64_t gpk_ppp_flip_delta(const gpk_ppp *p, const int32_t *y, const int8_t *v, uint32_t j);
GPK_API int64_t gpk_ppp_flip2_delta(const gpk_ppp *p, const int32_t *y, const int8_t *v, uint32_t j, uint32_t k);
/* Applies the flip of v[j] to v and y in O(m). */
GPK_API void gpk_ppp_apply_flip(const gpk_ppp *p, int32_t *y, int8_t *v, uint32_t j);

#ifdef __cplusplus
}
#endif
#endif
