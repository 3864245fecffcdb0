/* Test helpers of the local search (tests/test_search_algos.c,
 * tests/test_mpi_search.c): a solution's cost evaluated from scratch. */
#ifndef GPK_SEARCH_TESTUTIL_H
#define GPK_SEARCH_TESTUTIL_H

#include <stdint.h>
#include <stdlib.h>

#include "gpk/search.h"

static inline int64_t full_cost(const gpk_search_problem *pb, const uint32_t *sol)
{
    if (pb->kind == GPK_PROBLEM_QAP) return gpk_qap_cost(pb->qap, sol);
    if (pb->kind == GPK_PROBLEM_TSP) return gpk_tsp_tour_length(pb->tsp, sol);
    const gpk_ppp *p = pb->ppp;
    int8_t *v = malloc(p->n);
    int32_t *y = malloc(p->m * sizeof *y);
    for (uint32_t i = 0; i < p->n; i++) v[i] = sol[i] ? 1 : -1;
    gpk_ppp_product(p, v, y);
    const int64_t f = gpk_ppp_fitness(p, y);
    free(v);
    free(y);
    return f;
}

#endif
