/* Internals of the search (include/gpk/search.h, "the search"): the
 * validated, resolved parameters that src/search/search.c hands to a
 * backend's implementation. */
#ifndef GPK_SEARCH_RUN_H
#define GPK_SEARCH_RUN_H

#include "../core/internal.h"
#include "gpk/search.h"

typedef struct gpk__search_cfg {
    gpk_problem_kind kind;
    const gpk_qap *qap;
    const gpk_tsp *tsp;
    const gpk_ppp *ppp;
    gpk_neighbourhood nb;   /* resolved: never GPK_NB_DEFAULT */
    gpk_search_algo algo;
    uint32_t n;             /* solution length */
    uint64_t iters;         /* resolved per algo (HC: 0 = unlimited) */
    uint32_t global_iters;  /* ITS / MULTISTART, resolved */
    uint32_t tenure;        /* TABU / ITS / MULTISTART, resolved */
    uint32_t starts;        /* MULTISTART, resolved */
    uint32_t perturb;       /* ITS: random moves between rounds */
    uint64_t seed;
    const uint32_t *start;  /* validated, or NULL */
    void (*progress)(const gpk_search_progress *p, void *user);
    void *user;
    uint64_t progress_every; /* resolved, >= 1 */
    int threads;             /* the context's CPU threads, >= 1 */
} gpk__search_cfg;

/* The CPU implementation: fills r (solution allocated here). */
gpk_status gpk__search_cpu(gpk_ctx *ctx, const gpk__search_cfg *cfg, gpk_search_result *r);

#endif
