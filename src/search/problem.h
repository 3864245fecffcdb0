/* The problem contract of the local search: everything the front end
 * (search.c), the driver (search_cpu.c) and the public problem calls that
 * the CLI, Python and MPI layers use need to know about one problem. Each
 * problem file (qap.c, tsp.c, ppp.c) defines one table (gpk__<name>_ops);
 * the registry in search.c declares and lists them. A kind without a table is GPK_EINVAL
 * everywhere, never taken for another problem.
 *
 * The neighbourhood scans themselves (search_cpu.c, search_cuda.cu) stay
 * specialised per neighbourhood: a call through a pointer per neighbour
 * would cost the scan its speed. */
#ifndef GPK_SEARCH_PROBLEM_H
#define GPK_SEARCH_PROBLEM_H

#include "gpk/search.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The neighbourhood nb as a bit of gpk__problem_ops.nbs. */
#define GPK__NB_BIT(nb) (1u << (unsigned)(nb))

typedef struct gpk__problem_ops {
    gpk_problem_kind kind;
    const char *name;             /* in messages: "QAP" */
    const char *command;          /* gpk_problem_name and the CLI command: "qap" */
    uint32_t n_min;               /* the smallest solution length a search accepts */
    int binary;                   /* solutions are 0/1 bits (else a permutation of 0..n-1) */
    int zero_solves;              /* cost 0 is optimal: the searches stop when they reach it */
    gpk_neighbourhood default_nb; /* what GPK_NB_DEFAULT stands for */
    gpk_neighbourhood paper_nb;   /* the paper's (Luong, Melab & Talbi 2009) */
    unsigned nbs;                 /* GPK__NB_BIT of every neighbourhood that applies */
    const char *nb_list;          /* the same in words, for messages: "swap, 2opt or or2opt" */
    /* GPK_SEARCH_AUTO on this problem with no time limit and no iteration
     * count searches this many seconds (0: no limit). */
    double auto_seconds;
    /* What GPK_SEARCH_AUTO stands for with the resolved neighbourhood nb. */
    gpk_search_algo (*auto_algo)(gpk_neighbourhood nb);
    /* The problem's instance in pb, checked: its solution length, name and,
     * when fingerprint is not NULL (it reads all the data: the MPI ranks
     * compare it once per call, a search need not), a hash of its data. On
     * a missing or incomplete instance: GPK_EINVAL and what is wrong in why
     * (no message recorded). */
    gpk_status (*describe)(const gpk_search_problem *pb, gpk_search_problem_info *info, uint64_t *fingerprint,
                           const char **why);
    /* The full evaluation of a solution (result format); GPK_ENOMEM when
     * it needs memory it cannot get. */
    gpk_status (*cost)(const gpk_search_problem *pb, const uint32_t *solution, int64_t *cost);
    /* Default tabu tenure (search.c, default_tenure, says why each). */
    uint32_t (*default_tenure)(gpk_neighbourhood nb, uint32_t n);
    /* The global iterations of an ITS / multistart run by default. */
    uint32_t (*default_global_iters)(gpk_search_algo algo, uint32_t n);
    /* Per-move tenure draws when the caller fixed no tenure (NULL: the
     * fixed default): sets tenure, tenure_spread and tenure_cube. */
    void (*tenure_draw)(uint32_t n, uint32_t *tenure, uint32_t *spread, uint32_t *cube);
} gpk__problem_ops;

/* The table of kind, or NULL when no problem has that kind. */
const gpk__problem_ops *gpk__problem(gpk_problem_kind kind);

/* The paper's 10 global iterations (10 x 1000), whatever the algorithm and
 * n: default_global_iters of the problems that keep it. */
uint32_t gpk__paper_global_iters(gpk_search_algo algo, uint32_t n);

/* Instances' fingerprints: gpk__fingerprint (core/internal.h). */

#ifdef __cplusplus
}
#endif
#endif
