/* The search's front end (include/gpk/search.h, "the search"): argument
 * validation, defaults, names, and dispatch to a backend.
 *
 * Every backend runs the CPU implementation for now (src/search/
 * search_cpu.c): the GPU neighbourhood evaluation of the paper (one GPU
 * thread per neighbour, the fitness array copied back, selection on the CPU)
 * is future work. Because the selection rule and every random choice live
 * in the driver, a GPU evaluation will slot in without changing results.
 *
 * The library never prints or exits: failures return a status with the
 * message in gpk_last_error(ctx). */
#include "search_run.h"

#include <stdlib.h>
#include <string.h>

static const char *const algo_names[] = {"hc", "hc-first", "tabu", "its", "multistart"};
static const char *const nb_names[] = {"default", "swap", "2opt", "flip1", "flip2"};

const char *gpk_search_algo_name(gpk_search_algo a)
{
    return (unsigned)a < sizeof algo_names / sizeof *algo_names ? algo_names[a] : "unknown";
}

gpk_status gpk_search_algo_parse(const char *name, gpk_search_algo *out)
{
    if (!name || !out) return gpk__fail(NULL, GPK_EINVAL, "gpk_search_algo_parse: NULL argument");
    for (unsigned i = 0; i < sizeof algo_names / sizeof *algo_names; i++)
        if (strcmp(name, algo_names[i]) == 0) {
            *out = (gpk_search_algo)i;
            return GPK_OK;
        }
    return gpk__fail(NULL, GPK_EINVAL, "unknown search algorithm '%.40s' (hc, hc-first, tabu, its, multistart)",
                     name);
}

const char *gpk_neighbourhood_name(gpk_neighbourhood nb)
{
    return (unsigned)nb < sizeof nb_names / sizeof *nb_names ? nb_names[nb] : "unknown";
}

gpk_status gpk_neighbourhood_parse(const char *name, gpk_neighbourhood *out)
{
    if (!name || !out) return gpk__fail(NULL, GPK_EINVAL, "gpk_neighbourhood_parse: NULL argument");
    for (unsigned i = 0; i < sizeof nb_names / sizeof *nb_names; i++)
        if (strcmp(name, nb_names[i]) == 0) {
            *out = (gpk_neighbourhood)i;
            return GPK_OK;
        }
    if (strcmp(name, "2-opt") == 0) { /* the spelling the paper uses */
        *out = GPK_NB_TWO_OPT;
        return GPK_OK;
    }
    return gpk__fail(NULL, GPK_EINVAL, "unknown neighbourhood '%.40s' (default, swap, 2opt, flip1, flip2)", name);
}

void gpk_search_result_free(gpk_search_result *r)
{
    if (!r) return;
    free(r->solution);
    memset(r, 0, sizeof *r);
}

static const char *kind_name(gpk_problem_kind k)
{
    return k == GPK_PROBLEM_QAP ? "QAP" : k == GPK_PROBLEM_TSP ? "TSP" : "PPP";
}

/* Default tabu tenures (iterations a move stays tabu), chosen per problem
 * and attribute (src/search/search_cpu.c says which attribute):
 *  - QAP swap, TSP swap: 2n. The attribute is (element, position) and a
 *    move is tabu only when it would put BOTH elements back (Taillard's
 *    robust tabu search rule), a weak restriction, so the tenure is long:
 *    on QAPLIB (chr12a, tai12a, nug15, nug30, tai30a; 10 x 1000 ITS) 2n
 *    reached the optimum more often than n, and 3n or 4n did no better;
 *  - TSP 2-opt: n / 2 (at least 5) on the (i, j) pair, whose repetition is
 *    exactly the move that undoes it;
 *  - PPP 1-flip: n / 4 (at least 2) on the flipped bit (of n / 6 ... n / 2,
 *    n / 4 solved the most generated instances m = n = 21, 31, 51 within
 *    10 x 1000 ITS); PPP 2-flip: n / 10 (at least 2) on each of the two
 *    bits (tabu when either is, so each move freezes two bits). */
static uint32_t default_tenure(gpk_problem_kind kind, gpk_neighbourhood nb, uint32_t n)
{
    uint32_t t;
    if (kind == GPK_PROBLEM_PPP) t = nb == GPK_NB_FLIP1 ? n / 4 : n / 10;
    else if (nb == GPK_NB_TWO_OPT) t = n / 2 < 5 ? 5 : n / 2;
    else t = 2 * n;
    return t < 2 ? 2 : t;
}

gpk_status gpk_search_run(gpk_ctx *ctx, const gpk_search_problem *problem, const gpk_search_opts *opts,
                          gpk_search_result *result)
{
    if (!ctx) return gpk__fail(NULL, GPK_EINVAL, "gpk_search_run: ctx is NULL");
    if (!problem || !opts || !result)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: NULL %s",
                         !problem ? "problem" : !opts ? "opts" : "result");
    memset(result, 0, sizeof *result);
    gpk__search_cfg c;
    memset(&c, 0, sizeof c);
    c.kind = problem->kind;
    uint32_t n_min;
    switch (problem->kind) {
    case GPK_PROBLEM_QAP:
        if (!problem->qap) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: QAP problem with a NULL qap instance");
        c.qap = problem->qap;
        c.n = c.qap->n;
        if (!c.qap->a || !c.qap->b) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: QAP instance without matrices");
        n_min = 2;
        break;
    case GPK_PROBLEM_TSP:
        if (!problem->tsp) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: TSP problem with a NULL tsp instance");
        c.tsp = problem->tsp;
        c.n = c.tsp->n;
        n_min = 3; /* a tour; below 4 cities every tour has the same length, the search just stops */
        break;
    case GPK_PROBLEM_PPP:
        if (!problem->ppp) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: PPP problem with a NULL ppp instance");
        c.ppp = problem->ppp;
        c.n = c.ppp->n;
        if (!c.ppp->a || !c.ppp->hist || c.ppp->m == 0)
            return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: PPP instance not generated (no matrix)");
        n_min = 2;
        break;
    default:
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: unknown problem kind %d", (int)problem->kind);
    }
    if (c.n < n_min)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: %s with n = %u: at least %u needed", kind_name(c.kind), c.n,
                         n_min);

    c.nb = opts->nb;
    if (c.nb == GPK_NB_DEFAULT)
        c.nb = c.kind == GPK_PROBLEM_QAP ? GPK_NB_SWAP : c.kind == GPK_PROBLEM_TSP ? GPK_NB_TWO_OPT : GPK_NB_FLIP1;
    int nb_ok = c.kind == GPK_PROBLEM_QAP   ? c.nb == GPK_NB_SWAP
                : c.kind == GPK_PROBLEM_TSP ? (c.nb == GPK_NB_SWAP || c.nb == GPK_NB_TWO_OPT)
                                            : (c.nb == GPK_NB_FLIP1 || c.nb == GPK_NB_FLIP2);
    if (!nb_ok)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: neighbourhood '%s' does not apply to %s (%s)",
                         gpk_neighbourhood_name(c.nb), kind_name(c.kind),
                         c.kind == GPK_PROBLEM_QAP   ? "swap"
                         : c.kind == GPK_PROBLEM_TSP ? "swap or 2opt"
                                                     : "flip1 or flip2");

    c.algo = opts->algo;
    if ((unsigned)c.algo > GPK_SEARCH_MULTISTART)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: unknown algorithm %d", (int)opts->algo);
    switch (c.algo) {
    case GPK_SEARCH_HC_BEST:
    case GPK_SEARCH_HC_FIRST: c.iters = opts->iters; break; /* 0: until a local optimum */
    case GPK_SEARCH_TABU: c.iters = opts->iters ? opts->iters : 10000; break;
    default: c.iters = opts->iters ? opts->iters : 1000; break; /* the paper's 10 x 1000 */
    }
    c.global_iters = opts->global_iters ? opts->global_iters : 10;
    c.tenure = opts->tenure ? opts->tenure : default_tenure(c.kind, c.nb, c.n);
    c.threads = ctx->threads >= 1 ? ctx->threads : 1;
    c.starts = opts->starts ? opts->starts : (uint32_t)c.threads;
    /* ITS perturbation: enough random moves to leave the basin of the best
     * solution, few enough to keep most of its structure. Measured on QAPLIB
     * (50 seeds each): 5 moves took chr12a from 38/50 optimal runs (3 moves)
     * to 50/50 and had12 from 35 to 47, with no loss on nug30, tai30a. */
    c.perturb = c.n / 6 < 5 ? 5 : c.n / 6;
    c.seed = opts->seed;
    c.progress = opts->progress;
    c.user = opts->user;
    c.progress_every = opts->progress_every ? opts->progress_every : 1000;

    if (opts->start) {
        const uint32_t *s = opts->start;
        if (c.kind == GPK_PROBLEM_PPP) {
            for (uint32_t i = 0; i < c.n; i++)
                if (s[i] > 1)
                    return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: start solution: bit %u is %u, not 0 or 1", i,
                                     s[i]);
        } else {
            unsigned char *seen = calloc(c.n, 1);
            if (!seen) return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory (n = %u)", c.n);
            for (uint32_t i = 0; i < c.n; i++) {
                if (s[i] >= c.n || seen[s[i]]) {
                    gpk_status st =
                        gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: start solution is not a permutation of 0..%u: "
                                                   "entry %u is %u (%s)",
                                  c.n - 1, i, s[i], s[i] >= c.n ? "out of range" : "repeated");
                    free(seen);
                    return st;
                }
                seen[s[i]] = 1;
            }
            free(seen);
        }
        c.start = s;
    }
    /* Every backend: the CPU implementation (GPU evaluation: future work). */
    return gpk__search_cpu(ctx, &c, result);
}
